// Wait reasons: the sentences that tell a user why a queued job has not started, built
// from the numbers the scheduling policy looked at. Kept apart from the policy so that
// the policy reads as arithmetic and the words are tested on their own.
//
// Contract: every function returns a lowercase clause with no trailing period; the
// policy joins clauses with "; ". Amounts are printed as users write them ("1.5 CPUs",
// "8G of memory", "2 GPUs").
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "scheduling/schedule_policy.h"

namespace shoal::wait_reasons {

// "needs 4 CPUs (1.5 free) and 2 GPUs (none free)": only the resources that are short.
std::string Short(const Resources& need, const Resources& free);
// "expected to start around 2026-12-03 14:05 UTC, when running jobs end (by their
// estimates)" (an absolute time: the words change only when the estimate does), or with no
// start known, "starts when running jobs end (they have no estimates)".
std::string ExpectedStart(std::optional<int64_t> start_ms, int64_t now_ms);
// "first in queue research" / "3rd in queue research, behind job-41".
std::string Position(const std::string& queue, int position, const std::string& first_ahead);
// "queue research uses 8 of its guaranteed 8 CPUs" in the resource the job needs most of.
std::string QueueUse(const QueueSpec& queue, const Resources& used, const Resources& capacity, const Resources& need);
// "queue research may use at most 16 CPUs (its max) and uses 14; this job needs 4".
std::string OverQueueMax(const QueueSpec& queue, const Resources& used, const Resources& capacity, const Resources& need);
// "ann uses 6 of the 8 CPUs queue research allows each user, and this job needs 4".
std::string OverUserLimit(const std::string& user, const QueueSpec& queue, const Resources& used, const Resources& need);
// "would delay job-41, which is reserved to start first (this job has no estimate; ...)".
std::string WouldDelay(const std::string& reserved_job, bool has_estimate);

}  // namespace shoal::wait_reasons
