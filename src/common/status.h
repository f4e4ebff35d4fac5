// Status and Result<T>: how every fallible call in Shoal reports failure.
//
// Contract:
//  - A Status is OK or carries one of a few codes plus a sentence meant for a user:
//    what went wrong, naming the thing, and where possible what to do about it.
//  - Result<T> holds either a T or a non-OK Status. Accessing value() of an error
//    Result is a programming error: it aborts with the status, in every build.
//  - No exceptions cross module or thread boundaries; code that calls a throwing
//    library converts at the boundary.
//  - The codes say what a caller may do next: kInvalidArgument and kNotFound are the
//    user's to fix (the CLI exits 2), kUnavailable and kTimeout may be retried,
//    kAborted means the peer or attempt is gone and must be rebuilt, kInternal is a bug.
// Thread-safety: value types; no shared state.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace shoal {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,   // bad input from the user: fix the input
  kNotFound,          // the named thing does not exist
  kAlreadyExists,     // the named thing exists already
  kFailedPrecondition,// the system is not in a state that allows the call
  kResourceExhausted, // too big for the capacity, or disk/memory full
  kUnavailable,       // a service or peer cannot be reached now: retry may help
  kTimeout,           // a deadline passed: retry may help
  kAborted,           // the peer or attempt is gone: rebuild, then retry
  kPermissionDenied,  // the caller may not do this: show who may
  kInternal,          // a bug in Shoal
};

const char* StatusCodeName(StatusCode code);

class Status;
// Prints the status of a Result whose value() was taken without a value, and aborts.
[[noreturn]] void DieOnBadResultAccess(const Status& status);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "InvalidArgument: message", or "OK".
  std::string ToString() const;

  // Returns a copy whose message is "prefix: message".
  Status WithContext(const std::string& prefix) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
inline Status FailedPrecondition(std::string m) { return {StatusCode::kFailedPrecondition, std::move(m)}; }
inline Status PermissionDenied(std::string m) { return {StatusCode::kPermissionDenied, std::move(m)}; }
inline Status ResourceExhausted(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }
inline Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status Timeout(std::string m) { return {StatusCode::kTimeout, std::move(m)}; }
inline Status Aborted(std::string m) { return {StatusCode::kAborted, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    if (status_.ok()) status_ = Status(StatusCode::kInternal, "a Result was made from an OK status without a value");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  T& value() & { CheckOk(); return *value_; }
  const T& value() const& { CheckOk(); return *value_; }
  T&& value() && { CheckOk(); return std::move(*value_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  void CheckOk() const {
    if (!value_.has_value()) DieOnBadResultAccess(status_);
  }
  std::optional<T> value_;
  Status status_;
};

}  // namespace shoal

#define SHOAL_CONCAT_INNER(a, b) a##b
#define SHOAL_CONCAT(a, b) SHOAL_CONCAT_INNER(a, b)

// RETURN_IF_ERROR(expr): returns the Status of expr from the enclosing function if not OK.
#define RETURN_IF_ERROR(expr)                      \
  do {                                             \
    ::shoal::Status _shoal_status = (expr);        \
    if (!_shoal_status.ok()) return _shoal_status; \
  } while (0)

// ASSIGN_OR_RETURN(lhs, expr): evaluates a Result; returns its Status on error,
// otherwise assigns (or declares, e.g. `auto x`) lhs from the value.
#define ASSIGN_OR_RETURN(lhs, expr) ASSIGN_OR_RETURN_IMPL(SHOAL_CONCAT(_shoal_result_, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.status();         \
  lhs = std::move(tmp).value()
