#include "master/am_messages.h"

#include <climits>

namespace shoal {
namespace {

// Runs `read`, turning a JSON type error into a refusal that names the message.
template <typename T, typename F>
Result<T> Decode(const char* what, const Json& body, F read) {
  if (!body.is_object()) return InvalidArgument(std::string("a ") + what + " message must be a JSON object");
  try {
    return Result<T>(read());
  } catch (const Json::exception& e) {
    return InvalidArgument(std::string("a malformed ") + what + " message: " + e.what());
  }
}

// An int from JSON that came over the network: an integer that fits, never a float cast
// (which is undefined for values out of range) nor a silently wrapped int64.
Result<int> ToInt(const Json& value, const std::string& field) {
  bool fits = value.is_number_unsigned() ? value.get<uint64_t>() <= static_cast<uint64_t>(INT_MAX)
              : value.is_number_integer() ? value.get<int64_t>() >= INT_MIN && value.get<int64_t>() <= INT_MAX
                                          : false;
  if (!fits) return InvalidArgument("\"" + field + "\" must be an integer between " + std::to_string(INT_MIN) + " and " +
                                    std::to_string(INT_MAX));
  return static_cast<int>(value.get<int64_t>());
}

Result<int> IntField(const Json& body, const char* name, int fallback) {
  auto it = body.find(name);
  if (it == body.end()) return fallback;
  return ToInt(*it, name);
}

Result<std::vector<int>> IntList(const Json& body, const char* name) {
  std::vector<int> values;
  auto it = body.find(name);
  if (it == body.end()) return values;
  if (!it->is_array()) return InvalidArgument(std::string("\"") + name + "\" must be a list of integers");
  for (const Json& item : *it) {
    ASSIGN_OR_RETURN(int value, ToInt(item, name));
    values.push_back(value);
  }
  return values;
}

// An int64 field of a sample or metric point: absent stays absent; present, it must fit.
Status CheckInt64(const Json& object, const char* name, const std::string& where) {
  auto it = object.find(name);
  if (it == object.end() || it->is_null() || it->is_number_integer()) {
    if (it != object.end() && it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      return InvalidArgument(where + "." + name + " is out of range");
    }
    return Status::Ok();
  }
  return InvalidArgument(where + "." + name + " must be an integer");
}

Status CheckNumber(const Json& object, const char* name, const std::string& where) {
  auto it = object.find(name);
  if (it == object.end() || it->is_null() || it->is_number()) return Status::Ok();
  return InvalidArgument(where + "." + name + " must be a number");
}

// A heartbeat's resource sample: {t, cpu, rss, progress, gpu_util, gpu_mem}.
Status CheckSample(const Json& sample) {
  if (!sample.is_object()) return InvalidArgument("the heartbeat's sample must be an object");
  for (const char* name : {"t", "rss", "gpu_mem"}) RETURN_IF_ERROR(CheckInt64(sample, name, "sample"));
  for (const char* name : {"cpu", "progress", "gpu_util"}) RETURN_IF_ERROR(CheckNumber(sample, name, "sample"));
  return Status::Ok();
}

// A metric point: {t, step, name, value}.
Status CheckMetric(const Json& point) {
  if (!point.is_object()) return InvalidArgument("each metric point must be an object");
  for (const char* name : {"t", "step"}) RETURN_IF_ERROR(CheckInt64(point, name, "metric"));
  RETURN_IF_ERROR(CheckNumber(point, "value", "metric"));
  if (!point.contains("name") || !point["name"].is_string()) return InvalidArgument("each metric point needs a \"name\"");
  return Status::Ok();
}

}  // namespace

Result<TaskRef> TaskFromBody(const Json& body) {
  if (!body.is_object() || !body.contains("role") || !body["role"].is_string() || !body.contains("index") ||
      !body["index"].is_number_integer()) {
    return InvalidArgument("the message must name its task with \"role\" (text) and \"index\" (integer)");
  }
  ASSIGN_OR_RETURN(int index, ToInt(body["index"], "index"));
  return TaskRef{body["role"].get<std::string>(), index};
}

Result<RegisterMessage> RegisterFromBody(const Json& body) {
  return Decode<RegisterMessage>("register", body, [&]() -> Result<RegisterMessage> {
    RegisterMessage m;
    m.host = body.value("host", m.host);
    ASSIGN_OR_RETURN(m.ports, IntList(body, "ports"));
    if (body.contains("gpus") && body["gpus"].is_array()) {
      ASSIGN_OR_RETURN(m.gpus, IntList(body, "gpus"));
    }
    return m;
  });
}

Result<StartedMessage> StartedFromBody(const Json& body) {
  return Decode<StartedMessage>("started", body, [&]() -> Result<StartedMessage> {
    ASSIGN_OR_RETURN(int pid, IntField(body, "pid", 0));
    return StartedMessage{pid, body.value("board_url", "")};
  });
}

Result<HeartbeatData> HeartbeatFromBody(const Json& body) {
  return Decode<HeartbeatData>("heartbeat", body, [&]() -> Result<HeartbeatData> {
    HeartbeatData data;
    data.progress = body.value("progress", -1.0);
    if (body.contains("sample") && !body["sample"].is_null()) {
      RETURN_IF_ERROR(CheckSample(body["sample"]));
      data.sample = body["sample"];
    }
    if (body.contains("metrics") && body["metrics"].is_array()) {
      for (const Json& point : body["metrics"]) RETURN_IF_ERROR(CheckMetric(point));
      data.metrics = body["metrics"];
    }
    data.rtt_ms = body.value("rtt_ms", -1.0);
    data.uploading = body.value("uploading", false);
    return data;
  });
}

Result<ExitMessage> ExitFromBody(const Json& body) {
  return Decode<ExitMessage>("exited", body, [&]() -> Result<ExitMessage> {
    ASSIGN_OR_RETURN(int exit_code, IntField(body, "exit_code", 255));
    ASSIGN_OR_RETURN(int signal, IntField(body, "signal", 0));
    return ExitMessage{{exit_code, signal}, body.value("message", "")};
  });
}

}  // namespace shoal
