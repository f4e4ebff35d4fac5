#include "server/job_record.h"

#include <cstdlib>

namespace shoal {

std::string JobIdFor(int64_t seq) { return "job-" + std::to_string(seq); }

int64_t JobSeqFromId(const std::string& id) {
  std::string digits = id.starts_with("job-") ? id.substr(4) : id;
  if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos) return 0;
  return std::strtoll(digits.c_str(), nullptr, 10);
}

protocol::JobSummary JobRecord::Summary() const {
  return protocol::JobSummary{.id = id,
                              .name = spec.name,
                              .user = spec.user,
                              .framework = spec.framework,
                              .state = state,
                              .message = message,
                              .progress = progress,
                              .attempt = attempts.empty() ? 0 : attempts.back().number,
                              .max_attempts = spec.max_attempts,
                              .tasks = spec.TotalTasks(),
                              .created_ms = created_ms,
                              .started_ms = started_ms,
                              .finished_ms = finished_ms,
                              .queue = spec.queue,
                              .priority = spec.priority,
                              .wait_reason = state == JobState::kQueued ? wait_reason : "",
                              .expected_start_ms = state == JobState::kQueued ? expected_start_ms : 0};
}

protocol::JobDetail JobRecord::Detail() const {
  protocol::JobDetail detail{.summary = Summary(), .spec = spec, .version = version, .attempts = attempts};
  for (const auto& attempt : attempts) {
    for (protocol::SavedModelView entry : attempt.saved_models) {
      entry.attempt = attempt.number;
      detail.saved_models.push_back(std::move(entry));
    }
  }
  detail.board_url = attempts.empty() ? "" : attempts.back().board_url;
  return detail;
}

JobRecord JobRecord::FromDetail(int64_t seq, protocol::JobDetail detail) {
  JobRecord job;
  job.seq = seq;
  job.id = JobIdFor(seq);
  job.spec = std::move(detail.spec);
  job.state = detail.summary.state;
  job.message = std::move(detail.summary.message);
  job.created_ms = detail.summary.created_ms;
  job.started_ms = detail.summary.started_ms;
  job.finished_ms = detail.summary.finished_ms;
  job.progress = detail.summary.progress;
  job.version = std::max<int64_t>(1, detail.version);
  job.attempts = std::move(detail.attempts);
  return job;
}

}  // namespace shoal
