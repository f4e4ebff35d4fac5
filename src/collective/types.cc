#include "collective/types.h"

#include <algorithm>

namespace shoal::collective {

size_t ElementSize(DataType type) {
  switch (type) {
    case DataType::kFloat32: return 4;
    case DataType::kFloat64: return 8;
    case DataType::kInt32: return 4;
    case DataType::kInt64: return 8;
  }
  return 0;
}

const char* DataTypeName(DataType type) {
  switch (type) {
    case DataType::kFloat32: return "float32";
    case DataType::kFloat64: return "float64";
    case DataType::kInt32: return "int32";
    case DataType::kInt64: return "int64";
  }
  return "?";
}

const char* ReduceOpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "sum";
    case ReduceOp::kAverage: return "average";
    case ReduceOp::kMin: return "min";
    case ReduceOp::kMax: return "max";
  }
  return "?";
}

int64_t MillisLeft(Deadline deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return std::max<int64_t>(0, left.count());
}

}  // namespace shoal::collective
