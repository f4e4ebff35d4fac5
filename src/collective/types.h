// Element types, reduction operators and deadlines shared by every collective.
//
// Contract:
//  - DataType names the element type of a buffer; ReduceOp names how elements from
//    different ranks combine. kAverage is a sum divided by the world size (integer
//    division, truncating toward zero, for integer types).
//  - Deadline is an absolute point on the steady clock; every blocking call in this
//    library takes one, so no call can wait forever.
// Thread-safety: plain values and pure functions.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace shoal::collective {

enum class DataType { kFloat32, kFloat64, kInt32, kInt64 };
enum class ReduceOp { kSum, kAverage, kMin, kMax };

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

size_t ElementSize(DataType type);
const char* DataTypeName(DataType type);
const char* ReduceOpName(ReduceOp op);

// Maps a C++ element type to its DataType (float, double, int32_t, int64_t).
template <typename T> struct DataTypeOf;
template <> struct DataTypeOf<float> { static constexpr DataType value = DataType::kFloat32; };
template <> struct DataTypeOf<double> { static constexpr DataType value = DataType::kFloat64; };
template <> struct DataTypeOf<int32_t> { static constexpr DataType value = DataType::kInt32; };
template <> struct DataTypeOf<int64_t> { static constexpr DataType value = DataType::kInt64; };

// Milliseconds left until `deadline` (0 when it has passed).
int64_t MillisLeft(Deadline deadline);

}  // namespace shoal::collective
