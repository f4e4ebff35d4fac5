#include "protocol/field_reader.h"

#include <cmath>

namespace shoal::protocol {

FieldReader::FieldReader(const Json& value, std::string path)
    : object_(value.is_object() ? &value : nullptr), path_(std::move(path)) {
  if (!object_) status_ = InvalidArgument(path_ + " must be a JSON object");
}

void FieldReader::Fail(const std::string& field, const std::string& problem) {
  if (status_.ok()) status_ = InvalidArgument(PathOf(field) + " " + problem);
}

const Json* FieldReader::Raw(const char* field) const {
  if (!object_) return nullptr;
  auto it = object_->find(field);
  return it == object_->end() ? nullptr : &*it;
}

bool FieldReader::Has(const char* field) const {
  const Json* value = Raw(field);
  return value && !value->is_null();
}

std::optional<int64_t> FieldReader::AsInt64(const Json& value) {
  if (value.is_number_unsigned()) {
    uint64_t v = value.get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(v);
  }
  if (value.is_number_integer()) return value.get<int64_t>();
  return std::nullopt;
}

std::string FieldReader::String(const char* field, std::string fallback) {
  const Json* value = Raw(field);
  if (!value || value->is_null()) return fallback;
  if (!value->is_string()) {
    Fail(field, "must be a string");
    return fallback;
  }
  return value->get<std::string>();
}

std::string FieldReader::RequiredString(const char* field) {
  if (!Has(field)) {
    if (object_) Fail(field, "is missing (a string)");
    return "";
  }
  return String(field);
}

bool FieldReader::Bool(const char* field, bool fallback) {
  const Json* value = Raw(field);
  if (!value || value->is_null()) return fallback;
  if (!value->is_boolean()) {
    Fail(field, "must be true or false");
    return fallback;
  }
  return value->get<bool>();
}

std::optional<int64_t> FieldReader::OptionalInt64(const char* field, int64_t lo, int64_t hi) {
  const Json* value = Raw(field);
  if (!value || value->is_null()) return std::nullopt;
  std::optional<int64_t> v = AsInt64(*value);
  if (!v || *v < lo || *v > hi) {
    Fail(field, "must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
    return std::nullopt;
  }
  return v;
}

int64_t FieldReader::Int64(const char* field, int64_t fallback, int64_t lo, int64_t hi) {
  return OptionalInt64(field, lo, hi).value_or(fallback);
}

int FieldReader::Int(const char* field, int fallback, int64_t lo, int64_t hi) {
  lo = std::max<int64_t>(lo, std::numeric_limits<int>::min());
  hi = std::min<int64_t>(hi, std::numeric_limits<int>::max());
  return static_cast<int>(Int64(field, fallback, lo, hi));
}

int FieldReader::RequiredInt(const char* field, int64_t lo, int64_t hi) {
  if (!Has(field)) {
    if (object_) Fail(field, "is missing (an integer)");
    return 0;
  }
  return Int(field, 0, lo, hi);
}

std::optional<double> FieldReader::OptionalNumber(const char* field, double lo, double hi) {
  const Json* value = Raw(field);
  if (!value || value->is_null()) return std::nullopt;
  if (!value->is_number() || !std::isfinite(value->get<double>()) || value->get<double>() < lo ||
      value->get<double>() > hi) {
    Fail(field, "must be a number from " + Json(lo).dump() + " to " + Json(hi).dump());
    return std::nullopt;
  }
  return value->get<double>();
}

double FieldReader::Number(const char* field, double fallback, double lo, double hi) {
  return OptionalNumber(field, lo, hi).value_or(fallback);
}

double FieldReader::RequiredNumber(const char* field, double lo, double hi) {
  if (!Has(field)) {
    if (object_) Fail(field, "is missing (a number)");
    return 0;
  }
  return Number(field, 0, lo, hi);
}

std::optional<std::vector<int>> FieldReader::OptionalIntList(const char* field, int64_t lo, int64_t hi) {
  const Json* items = Array(field, "must be a list of integers");
  if (!items) return std::nullopt;
  std::vector<int> out;
  for (const Json& item : *items) {
    std::optional<int64_t> v = AsInt64(item);
    if (!v || *v < lo || *v > hi || *v < std::numeric_limits<int>::min() || *v > std::numeric_limits<int>::max()) {
      Fail(field, "must be a list of integers from " + std::to_string(lo) + " to " + std::to_string(hi));
      return std::nullopt;
    }
    out.push_back(static_cast<int>(*v));
  }
  return out;
}

std::vector<int> FieldReader::IntList(const char* field, int64_t lo, int64_t hi) {
  return OptionalIntList(field, lo, hi).value_or(std::vector<int>{});
}

std::vector<std::string> FieldReader::StringList(const char* field) {
  std::vector<std::string> out;
  const Json* items = Array(field, "must be a list of strings");
  if (!items) return out;
  for (const Json& item : *items) {
    if (!item.is_string()) {
      Fail(field, "must be a list of strings");
      return {};
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

std::map<std::string, std::string> FieldReader::StringMap(const char* field) {
  std::map<std::string, std::string> out;
  const Json* object = Object(field);
  if (!object) return out;
  for (const auto& [key, value] : object->items()) {
    if (!value.is_string()) {
      Fail(field + std::string(".") + key, "must be a string");
      return {};
    }
    out[key] = value.get<std::string>();
  }
  return out;
}

const Json* FieldReader::Array(const char* field, const char* problem) {
  const Json* value = Raw(field);
  if (!value || value->is_null()) return nullptr;
  if (!value->is_array()) {
    Fail(field, problem);
    return nullptr;
  }
  return value;
}

const Json* FieldReader::Object(const char* field) {
  const Json* value = Raw(field);
  if (!value || value->is_null()) return nullptr;
  if (!value->is_object()) {
    Fail(field, "must be an object");
    return nullptr;
  }
  return value;
}

}  // namespace shoal::protocol
