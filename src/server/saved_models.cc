#include "server/saved_models.h"

#include <algorithm>
#include <ctime>

namespace shoal {
namespace {

protocol::SavedModelView* Named(SavedModels& entries, const std::string& name) {
  auto it = std::find_if(entries.begin(), entries.end(), [&](const auto& e) { return e.name == name; });
  return it == entries.end() ? nullptr : &*it;
}

}  // namespace

protocol::SavedModelView NewSaveRequest(const SavedModels& entries, int64_t now_ms) {
  time_t seconds = static_cast<time_t>(now_ms / 1000);
  tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &utc);
  std::string name = stamp;
  auto taken = [&](const std::string& n) {
    return std::any_of(entries.begin(), entries.end(), [&](const auto& e) { return e.name == n; });
  };
  for (int n = 2; taken(name); ++n) name = std::string(stamp) + "-" + std::to_string(n);
  return protocol::SavedModelView{.name = name, .requested_ms = now_ms, .state = SaveState::kRequested};
}

void ApplySavedModelUpdate(SavedModels& entries, const protocol::SavedModelUpdate& update, int64_t now_ms) {
  protocol::SavedModelView* entry = Named(entries, update.name);
  if (!entry) {
    entries.push_back(protocol::SavedModelView{.name = update.name, .requested_ms = now_ms});
    entry = &entries.back();
  }
  entry->state = update.state;
  entry->updated_ms = now_ms;
  if (!update.uri.empty()) entry->uri = update.uri;
  if (!update.message.empty()) entry->message = update.message;
}

std::vector<protocol::SaveRequest> PendingSaveRequests(const SavedModels& entries) {
  std::vector<protocol::SaveRequest> pending;
  for (const auto& e : entries) {
    if (e.state == SaveState::kRequested) pending.push_back({e.name, e.requested_ms});
  }
  return pending;
}

}  // namespace shoal
