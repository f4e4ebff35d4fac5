// QueueCredit: what each queue is owed for time it spent below its guarantee because its
// waiting jobs were too large to start within it. Jobs come in sizes: a queue guaranteed
// 18 GPUs whose jobs take 8 or 16 holds 16 at best; a queue guaranteed less than one of
// its jobs holds nothing while every job it has would borrow. Its credit lets such a queue
// start a job beyond its guarantee as if within it, until what it then holds beyond its
// guarantee has paid back what it was short: over time it gets its guarantee.
//
// Contract:
//  - Credit is in share x milliseconds (shares as guarantees are: a queue's dominant share
//    of the cluster). Advance(input) first integrates the rates set at its last call over
//    the time to input.now_ms, then sets each queue's rate from `input` for the time until
//    its next call. The first call only sets rates.
//  - A queue with a guarantee whose smallest waiting job would take it beyond its guarantee
//    (with what its running jobs hold, jobs being preempted included; in dominant share)
//    gains (guarantee - share): credit while it is below its guarantee, debt while above.
//    Otherwise, a queue above its guarantee spends its credit at (share - guarantee), down
//    to zero (borrowing without credit costs nothing); a queue with a waiting job that fits
//    within its guarantee keeps its credit as it is (the guarantee itself starts that job);
//    a queue with no waiting job loses its credit (it was kept from nothing) and keeps its
//    debt, paid back while it waits below its guarantee later. Queues without a guarantee,
//    or no longer configured, have none.
//  - credit() is what Schedule reads as ScheduleInput::queue_credit
//    (scheduling/schedule_policy.h); it holds only queues whose credit is not zero.
//  - Credit lives in memory: a restarted server starts every queue at zero.
// Thread-safety: none; one owner (the server's scheduler, or the replay).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "scheduling/schedule_policy.h"

namespace shoal {

class QueueCredit {
 public:
  // `input.config` must be set.
  void Advance(const ScheduleInput& input);

  const std::map<std::string, double>& credit() const { return credit_; }

 private:
  struct Rate {
    double per_ms = 0;           // what the queue gains per millisecond until the next call
    bool stops_at_zero = false;  // it spends credit, and never goes into debt so
    bool drops_credit = false;   // it loses its credit (not its debt)
  };
  std::map<std::string, Rate> rate_;
  std::optional<int64_t> last_ms_;
  std::map<std::string, double> credit_;
};

}  // namespace shoal
