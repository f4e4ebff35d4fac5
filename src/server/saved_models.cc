#include "server/saved_models.h"

#include <ctime>

namespace shoal {
namespace {

bool HasName(const Json& entries, const std::string& name) {
  for (const Json& entry : entries) {
    if (entry.value("name", "") == name) return true;
  }
  return false;
}

}  // namespace

Json NewSaveRequest(const Json& entries, int64_t now_ms) {
  time_t seconds = static_cast<time_t>(now_ms / 1000);
  tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &utc);
  std::string name = stamp;
  for (int n = 2; HasName(entries, name); ++n) name = std::string(stamp) + "-" + std::to_string(n);
  return Json{{"name", name}, {"requested_ms", now_ms}, {"state", Name(SaveState::kRequested)}};
}

void ApplySavedModelUpdate(Json& entries, const protocol::SavedModelUpdate& update, int64_t now_ms) {
  Json* entry = nullptr;
  for (Json& e : entries) {
    if (e.value("name", "") == update.name) entry = &e;
  }
  if (!entry) {
    entries.push_back(Json{{"name", update.name}, {"requested_ms", now_ms}});
    entry = &entries.back();
  }
  (*entry)["state"] = Name(update.state);
  (*entry)["updated_ms"] = now_ms;
  if (!update.uri.empty()) (*entry)["uri"] = update.uri;
  if (!update.message.empty()) (*entry)["message"] = update.message;
}

Json PendingSaveRequests(const Json& entries) {
  Json pending = Json::array();
  for (const Json& e : entries) {
    if (e.value("state", "") == Name(SaveState::kRequested)) {
      pending.push_back(Json{{"name", e.value("name", "")}, {"requested_ms", e.value("requested_ms", int64_t{0})}});
    }
  }
  return pending;
}

}  // namespace shoal
