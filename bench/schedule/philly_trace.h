// PhillyTrace: reads the per-job Philly trace (Microsoft's Philly cluster, msr-fiddle/
// philly-traces, as the Pollux artifact cuts it per job: petuum/adaptdl,
// simulator/traces/philly.csv; docs/benchmarks.md) and cuts from it the slice that
// bench/schedule replays.
//
// Contract:
//  - ReadPhillyTrace accepts exactly the header `timestamp,duration,num_gpus,gpu_time,cluster`
//    and rows of that shape (blank lines are skipped). Any other line is an error that names
//    the file and the line number; nothing is guessed.
//  - A timestamp ("2017-10-23 07:01:55") is naive local time. It becomes a plain count of
//    seconds since 1970-01-01 00:00:00 by calendar arithmetic alone (days from the civil
//    date, no time zone), so a daylight-saving change can neither move nor reorder jobs.
//  - Durations are whole seconds (the trace's are; a fraction is rounded to the nearest).
//  - SliceWeek keeps the rows submitted in [start, start + days) of one VC ("" keeps every
//    VC), sorted by submission time then row order (a total, deterministic order), with
//    submissions counted in seconds from the first submission of the slice.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace shoal::bench {

struct TraceRow {
  int64_t submit_s = 0;    // seconds since 1970-01-01 of the naive timestamp, or of the slice's start
  int64_t duration_s = 0;  // run time, queueing excluded
  int num_gpus = 0;
  std::string vc;  // the virtual cluster ("cluster" column)
  int row = 0;     // 1-based data row in the file, the last tie-breaker
};

// Reads every row of the file at `path`.
Result<std::vector<TraceRow>> ReadPhillyTrace(const std::string& path);

// "2017-10-23" or "2017-10-23 07:01:55" -> seconds since 1970-01-01 00:00:00, no time zone.
Result<int64_t> ParseNaiveTime(const std::string& text);

std::vector<TraceRow> SliceWeek(const std::vector<TraceRow>& rows, const std::string& vc, int64_t start_s, int days);

}  // namespace shoal::bench
