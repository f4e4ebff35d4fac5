// The job history's tables for JobStore: created in a new history, upgraded in one an
// older server wrote.
//
// Contract:
//  - EnsureJobStoreSchema brings the database to kJobStoreSchemaVersion in one
//    transaction (all or nothing); a history already there costs one small read.
//  - Version 1 (no version row): the jobs table with its state and user indexes.
//  - Version 2 adds job_counts (how many jobs per state, per user and per name), kept by
//    triggers in the database, so an older server writing to an upgraded history keeps
//    the counts right; and narrow indexes the list pages through instead of the rows
//    (each also holds the row's seq): jobs_by_name (name, state, user), jobs_by_seq
//    (seq, name) and jobs_by_user_state (user, state). Upgrading a history of 1,000,000
//    jobs takes seconds, once; it is logged.
//  - Version 3 adds job_names, an FTS5 trigram index (case-sensitive) of the distinct
//    names, filled from job_counts and kept by a trigger on it, for name searches of 3
//    characters or more.
//  - The version is the 'jobs' row of schema_versions (the file is shared with
//    SeriesStore, so SQLite's user_version is left alone).
// Thread-safety: the caller owns the connection and serialises its use.
#pragma once

#include <string>

#include "common/status.h"

struct sqlite3;

namespace shoal {

inline constexpr int kJobStoreSchemaVersion = 3;

// `what` names the database in errors ("job history '/home/.../shoal.db'").
Status EnsureJobStoreSchema(sqlite3* db, const std::string& what);

}  // namespace shoal
