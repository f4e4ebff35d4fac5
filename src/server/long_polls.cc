#include "server/long_polls.h"

#include <algorithm>
#include <charconv>

namespace shoal {
namespace {

constexpr std::string_view kJobPath = "/api/v1/jobs/";
constexpr int64_t kMaxWaitMs = 60'000;  // as JobManager::Get

std::optional<int64_t> NumberIn(std::optional<std::string_view> text) {
  if (!text) return std::nullopt;
  int64_t value = 0;
  auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (error != std::errc() || end != text->data() + text->size()) return std::nullopt;
  return value;
}

}  // namespace

ParkingRule ParkJobWaits(JobManager& jobs) {
  return [&jobs](const FramedRequest& request) -> std::optional<ParkedWait> {
    if (request.method != "GET") return std::nullopt;
    std::string_view target = request.target;
    std::string_view path = target.substr(0, target.find('?'));
    if (!path.starts_with(kJobPath)) return std::nullopt;
    std::string id(path.substr(kJobPath.size()));
    if (id.empty() || id.find('/') != std::string::npos) return std::nullopt;
    std::optional<int64_t> version = NumberIn(QueryParameter(target, "wait_version"));
    std::optional<int64_t> wait_ms = NumberIn(QueryParameter(target, "wait_ms"));
    if (!version || *version <= 0 || !wait_ms || *wait_ms <= 0) return std::nullopt;  // no wait: the handler decides
    int64_t waited = std::min(*wait_ms, kMaxWaitMs);
    return ParkedWait{
        .ready = [&jobs, id, version = *version] { return jobs.HasNewerThan(id, version); },
        .deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(waited),
        .served_params = {"wait_ms"},
    };
  };
}

}  // namespace shoal
