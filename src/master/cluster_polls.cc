#include "master/cluster_polls.h"

#include <algorithm>
#include <charconv>

#include "protocol/task_messages.h"

namespace shoal {

ParkingRule ParkClusterPolls(std::function<bool()> settled) {
  return [settled = std::move(settled)](const FramedRequest& request) -> std::optional<ParkedWait> {
    if (request.method != "GET") return std::nullopt;
    std::string_view target = request.target;
    if (target.substr(0, target.find('?')) != protocol::kClusterPath) return std::nullopt;
    std::optional<std::string_view> text = QueryParameter(target, "wait_ms");
    int64_t wait_ms = 0;
    if (!text || std::from_chars(text->data(), text->data() + text->size(), wait_ms).ec != std::errc() || wait_ms <= 0) {
      return std::nullopt;  // no wait (or a malformed one, which the handler refuses)
    }
    return ParkedWait{
        .ready = settled,
        .deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::min<int64_t>(wait_ms, 30'000)),
        .served_params = {"wait_ms"},
    };
  };
}

}  // namespace shoal
