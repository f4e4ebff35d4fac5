// Retry with exponential back-off for S3 requests.
//
// Contract:
//  - SendWithRetry builds a fresh request for each try (it is re-signed: the date
//    changes), sends it, and retries while the outcome is transient: no reply (broken or
//    refused connection, timeout), HTTP 429, 5xx, or an error code that means throttling
//    (SlowDown, Throttling, RequestTimeout...). It waits base * 2^try (capped, with
//    jitter from `random`) between tries, through `sleep`, so tests run instantly with a
//    fake clock. After max_attempts it returns the last reply, or the last Status with
//    "(after N tries)" added.
//  - A non-transient reply (2xx, 3xx, 4xx) is returned at once.
// Thread-safety: reentrant; the callables must be safe where they are used.
#pragma once

#include <cstdint>
#include <functional>

#include "storage/s3/http_transport.h"

namespace shoal::storage {

struct RetryPolicy {
  int max_attempts = 5;
  int64_t base_ms = 100;
  int64_t max_wait_ms = 5000;
  std::function<void(int64_t)> sleep;       // default: std::this_thread::sleep_for
  std::function<double()> random;           // in [0, 1); default: a thread-local PRNG
};

bool IsTransientReply(const HttpResponse& response);
// The wait before try number `attempt` (1 = the first retry).
int64_t BackoffMillis(const RetryPolicy& policy, int attempt, double random01);

Result<HttpResponse> SendWithRetry(HttpTransport& transport, const std::function<HttpRequest()>& build,
                                   const RetryPolicy& policy);

}  // namespace shoal::storage
