#include "server/request_metrics.h"

#include <regex>
#include <vector>

namespace shoal {

std::string RouteLabel(const std::string& path) {
  static const std::vector<std::pair<std::regex, std::string>> routes = [] {
    std::vector<std::pair<std::regex, std::string>> r;
    for (const char* exact : {"/api/v1/health", "/api/v1/cluster", "/api/v1/jobs", "/api/v1/shutdown", "/metrics"}) {
      r.emplace_back(std::regex(std::string(exact)), exact);
    }
    r.emplace_back(std::regex("/api/v1/jobs/[^/]+"), "/api/v1/jobs/:id");
    r.emplace_back(std::regex("/api/v1/jobs/[^/]+/(kill|logs|logs/raw|logs/search|series|save-model)"), "");
    r.emplace_back(std::regex("/internal/v1/jobs/[^/]+/attempts/[0-9]+"), "/internal/v1/jobs/:id/attempts/:n");
    r.emplace_back(std::regex("/internal/v1/jobs/[^/]+/attempts/[0-9]+/report"), "/internal/v1/jobs/:id/attempts/:n/report");
    r.emplace_back(std::regex("/(jobs/[^/]+)?"), "/ (page)");
    r.emplace_back(std::regex("/static/[A-Za-z0-9_.-]+"), "/static/:file");
    return r;
  }();
  std::smatch match;
  for (const auto& [pattern, label] : routes) {
    if (!std::regex_match(path, match, pattern)) continue;
    if (!label.empty()) return label;
    return "/api/v1/jobs/:id/" + match[1].str();  // the sub-routes of a job keep their name
  }
  return "other";
}

void RequestMetrics::Observe(const std::string& method, const std::string& path, double seconds) {
  Histogram* histogram;
  {
    std::lock_guard lock(mutex_);
    auto& slot = by_route_[{method, RouteLabel(path)}];
    if (!slot) slot = std::make_unique<Histogram>();
    histogram = slot.get();
  }
  histogram->Observe(seconds);
}

std::map<std::pair<std::string, std::string>, HistogramSnapshot> RequestMetrics::Families() const {
  std::lock_guard lock(mutex_);
  std::map<std::pair<std::string, std::string>, HistogramSnapshot> out;
  for (const auto& [key, histogram] : by_route_) out[key] = histogram->Snapshot();
  return out;
}

}  // namespace shoal
