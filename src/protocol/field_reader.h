// FieldReader: the protocol's decoders read JSON objects through it, so that no decoder
// throws and every refusal names the field ("heartbeat.sample.rss must be an integer").
//
// Contract:
//  - Construct over any JSON value with the path of the message ("heartbeat"); a value
//    that is not an object is refused at once.
//  - Each getter returns the field's value, or its fallback when the field is absent (or
//    null); a present field of the wrong type or out of range records an error naming
//    "<path>.<field>" and returns the fallback. Required getters record an error when
//    the field is absent too. Only the first error is kept.
//  - Integers must be JSON integers that fit (a float is never cast); numbers must be
//    finite and within the given range.
//  - status() is OK when every read succeeded; decoders return it when it is not.
// Thread-safety: one reader per message.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/status.h"

namespace shoal::protocol {

class FieldReader {
 public:
  FieldReader(const Json& value, std::string path);

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  const std::string& path() const { return path_; }
  // "<path>.<field>", for nested readers and messages.
  std::string PathOf(const std::string& field) const { return path_ + "." + field; }
  // Records an error about `field` (the first one wins).
  void Fail(const std::string& field, const std::string& problem);
  // Records a nested reader's error as it stands (the first one wins).
  void Keep(const Status& nested) {
    if (status_.ok()) status_ = nested;
  }

  bool Has(const char* field) const;
  std::string String(const char* field, std::string fallback = "");
  std::string RequiredString(const char* field);
  bool Bool(const char* field, bool fallback);
  int Int(const char* field, int fallback, int64_t lo = std::numeric_limits<int>::min(),
          int64_t hi = std::numeric_limits<int>::max());
  int RequiredInt(const char* field, int64_t lo = std::numeric_limits<int>::min(),
                  int64_t hi = std::numeric_limits<int>::max());
  int64_t Int64(const char* field, int64_t fallback, int64_t lo = std::numeric_limits<int64_t>::min(),
                int64_t hi = std::numeric_limits<int64_t>::max());
  std::optional<int64_t> OptionalInt64(const char* field, int64_t lo = std::numeric_limits<int64_t>::min(),
                                       int64_t hi = std::numeric_limits<int64_t>::max());
  double Number(const char* field, double fallback, double lo = -std::numeric_limits<double>::max(),
                double hi = std::numeric_limits<double>::max());
  double RequiredNumber(const char* field, double lo = -std::numeric_limits<double>::max(),
                        double hi = std::numeric_limits<double>::max());
  std::optional<double> OptionalNumber(const char* field, double lo = -std::numeric_limits<double>::max(),
                                       double hi = std::numeric_limits<double>::max());
  std::vector<int> IntList(const char* field, int64_t lo = std::numeric_limits<int>::min(),
                           int64_t hi = std::numeric_limits<int>::max());
  std::optional<std::vector<int>> OptionalIntList(const char* field, int64_t lo = std::numeric_limits<int>::min(),
                                                  int64_t hi = std::numeric_limits<int>::max());
  std::vector<std::string> StringList(const char* field);
  std::map<std::string, std::string> StringMap(const char* field);
  // The field's array (nullptr when absent or null; `problem` recorded when not an array).
  const Json* Array(const char* field, const char* problem = "must be an array");
  // The field's object (nullptr when absent or null; an error when not an object).
  const Json* Object(const char* field);
  // The field's raw value, whatever it is (nullptr when absent).
  const Json* Raw(const char* field) const;

  // Reads an enum through its name table (protocol/states.h's Parse<E>).
  template <typename E, typename ParseFn>
  E Enum(const char* field, E fallback, ParseFn parse, const char* names) {
    const Json* value = Raw(field);
    if (!value || value->is_null()) return fallback;
    if (value->is_string()) {
      if (auto parsed = parse(value->get_ref<const std::string&>())) return *parsed;
    }
    Fail(field, std::string("must be one of ") + names);
    return fallback;
  }

  // Decodes each element of the array `field` with decode(element, "<path>.<field>[i]"),
  // which returns Result<T>; the first refusal is kept.
  template <typename T, typename DecodeFn>
  std::vector<T> List(const char* field, DecodeFn decode) {
    std::vector<T> out;
    const Json* items = Array(field);
    if (!items) return out;
    for (size_t i = 0; i < items->size() && ok(); ++i) {
      Result<T> item = decode((*items)[i], PathOf(field) + "[" + std::to_string(i) + "]");
      if (!item.ok()) {
        Keep(item.status());
        break;
      }
      out.push_back(std::move(item).value());
    }
    return out;
  }

 private:
  static std::optional<int64_t> AsInt64(const Json& value);
  const Json* object_;  // null when the value was not an object
  std::string path_;
  Status status_;
};

}  // namespace shoal::protocol
