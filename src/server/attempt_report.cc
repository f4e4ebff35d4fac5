#include "server/attempt_report.h"

#include <cmath>

namespace shoal {
namespace {

// Reads an optional string field; a value of another type is an error naming it.
Result<std::optional<std::string>> OptionalString(const Json& object, const char* field, const std::string& where) {
  auto it = object.find(field);
  if (it == object.end() || it->is_null()) return std::optional<std::string>();
  if (!it->is_string()) return InvalidArgument(where + "\"" + field + "\" must be a string");
  return std::optional<std::string>(it->get<std::string>());
}

Result<std::string> BoardUrl(const Json& value) {
  if (value.is_null()) return std::string();
  if (!value.is_string()) return InvalidArgument("the report's \"board_url\" must be a string URL");
  std::string url = value.get<std::string>();
  if (url.empty()) return url;
  if (url.size() > 2048 || !(url.starts_with("http://") || url.starts_with("https://"))) {
    return InvalidArgument("the report's \"board_url\" must be an http:// or https:// URL of at most 2048 characters");
  }
  return url;
}

Result<SavedModelUpdate> SavedModel(const Json& entry, const std::string& where) {
  if (!entry.is_object()) return InvalidArgument(where + " must be an object");
  SavedModelUpdate update;
  ASSIGN_OR_RETURN(auto name, OptionalString(entry, "name", where + ": "));
  ASSIGN_OR_RETURN(auto state, OptionalString(entry, "state", where + ": "));
  ASSIGN_OR_RETURN(auto uri, OptionalString(entry, "uri", where + ": "));
  ASSIGN_OR_RETURN(auto message, OptionalString(entry, "message", where + ": "));
  if (!name || name->empty()) return InvalidArgument(where + ": \"name\" must name the save request");
  if (!state || (*state != "requested" && *state != "uploading" && *state != "saved" && *state != "failed")) {
    return InvalidArgument(where + ": \"state\" must be requested, uploading, saved or failed");
  }
  return SavedModelUpdate{*name, *state, uri.value_or(""), message.value_or("")};
}

}  // namespace

Result<AttemptReport> ParseAttemptReport(const Json& report) {
  if (!report.is_object()) return InvalidArgument("a report must be a JSON object");
  AttemptReport parsed;
  auto tasks = report.find("tasks");
  if (tasks == report.end() || !tasks->is_array()) return InvalidArgument("a report needs \"tasks\", an array");
  for (size_t i = 0; i < tasks->size(); ++i) {
    const Json& task = (*tasks)[i];
    std::string where = "the report's tasks[" + std::to_string(i) + "]";
    if (!task.is_object()) return InvalidArgument(where + " must be an object");
    if (task.contains("progress") && !task["progress"].is_number()) return InvalidArgument(where + ".progress must be a number");
    if (task.contains("service") && !task["service"].is_boolean()) return InvalidArgument(where + ".service must be true or false");
    if (task.contains("state") && !task["state"].is_string()) return InvalidArgument(where + ".state must be a string");
    auto rtt = task.find("heartbeat_rtt_ms");
    if (rtt == task.end() || rtt->is_null()) continue;
    if (!rtt->is_number()) return InvalidArgument(where + ".heartbeat_rtt_ms must be a number");
    if (!std::isfinite(rtt->get<double>()) || rtt->get<double>() < 0) continue;  // -1: no round trip yet
    parsed.heartbeat_rtts_ms.push_back(rtt->get<double>());
  }
  parsed.tasks = *tasks;
  ASSIGN_OR_RETURN(parsed.state, OptionalString(report, "state", "the report's "));
  ASSIGN_OR_RETURN(parsed.message, OptionalString(report, "message", "the report's "));
  ASSIGN_OR_RETURN(parsed.am_addr, OptionalString(report, "am_addr", "the report's "));
  if (auto final = report.find("final"); final != report.end() && !final->is_null()) {
    if (!final->is_boolean()) return InvalidArgument("the report's \"final\" must be true or false");
    parsed.final = final->get<bool>();
  }
  if (auto series = report.find("series"); series != report.end()) {
    ASSIGN_OR_RETURN(parsed.series, ParseSeries(*series));
  }
  if (auto board = report.find("board_url"); board != report.end()) {
    ASSIGN_OR_RETURN(std::string url, BoardUrl(*board));
    parsed.board_url = url;
  }
  if (auto saved = report.find("saved_models"); saved != report.end() && !saved->is_null()) {
    if (!saved->is_array()) return InvalidArgument("the report's \"saved_models\" must be an array");
    for (size_t i = 0; i < saved->size(); ++i) {
      ASSIGN_OR_RETURN(SavedModelUpdate update, SavedModel((*saved)[i], "the report's saved_models[" + std::to_string(i) + "]"));
      parsed.saved_models.push_back(std::move(update));
    }
  }
  return parsed;
}

}  // namespace shoal
