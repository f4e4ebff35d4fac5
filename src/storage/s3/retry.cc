#include "storage/s3/retry.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

#include "storage/s3/s3_xml.h"

namespace shoal::storage {

bool IsTransientReply(const HttpResponse& response) {
  if (response.status == 429 || response.status >= 500) return true;
  if (response.status == 400 || response.status == 403) {
    std::string code = ParseS3Error(response.body).code;
    return code == "SlowDown" || code == "Throttling" || code == "ThrottlingException" ||
           code == "RequestTimeout" || code == "RequestTimeTooSkewed" || code == "RequestLimitExceeded";
  }
  return false;
}

int64_t BackoffMillis(const RetryPolicy& policy, int attempt, double random01) {
  int64_t wait = policy.base_ms << std::min(attempt - 1, 20);
  wait = std::min(wait, policy.max_wait_ms);
  // "Equal jitter": half fixed, half random, so concurrent clients spread out.
  return wait / 2 + static_cast<int64_t>(random01 * static_cast<double>(wait / 2));
}

Result<HttpResponse> SendWithRetry(HttpTransport& transport, const std::function<HttpRequest()>& build,
                                   const RetryPolicy& policy) {
  auto sleep = policy.sleep ? policy.sleep
                            : [](int64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); };
  auto random = policy.random ? policy.random : [] {
    thread_local std::mt19937 gen(std::random_device{}());
    return std::uniform_real_distribution<double>(0, 1)(gen);
  };
  int attempts = std::max(policy.max_attempts, 1);
  for (int attempt = 1;; ++attempt) {
    Result<HttpResponse> reply = transport.Send(build());
    bool transient = reply.ok() ? IsTransientReply(*reply)
                                : (reply.status().code() == StatusCode::kUnavailable ||
                                   reply.status().code() == StatusCode::kTimeout);
    if (!transient) return reply;
    if (attempt >= attempts) {
      if (reply.ok()) return reply;
      return Status(reply.status().code(),
                    reply.status().message() + " (after " + std::to_string(attempts) + " tries)");
    }
    sleep(BackoffMillis(policy, attempt, random()));
  }
}

}  // namespace shoal::storage
