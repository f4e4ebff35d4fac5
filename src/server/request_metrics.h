// RequestMetrics: the latency of every HTTP request the server answers, by method and
// route, for GET /metrics (shoal_api_request_duration_seconds).
//
// Contract:
//  - RouteLabel maps a request path onto its route pattern ("/api/v1/jobs/:id/logs"), so
//    job ids never become labels; paths no route serves become "other".
//  - Observe records one request; Families returns a snapshot per (method, route).
// Thread-safety: safe from any thread (an internal mutex; histograms lock themselves).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "server/histogram.h"

namespace shoal {

std::string RouteLabel(const std::string& path);

class RequestMetrics {
 public:
  void Observe(const std::string& method, const std::string& path, double seconds);
  // (method, route) -> histogram.
  std::map<std::pair<std::string, std::string>, HistogramSnapshot> Families() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, std::unique_ptr<Histogram>> by_route_;  // GUARDED_BY(mutex_)
};

}  // namespace shoal
