#include "collective/reduce.h"

#include <cstdint>

namespace shoal::collective {
namespace {

// Kept as plain loops over __restrict pointers so the compiler vectorises them.
template <typename T, typename F>
void Apply(void* acc_v, const void* in_v, size_t n, F f) {
  T* __restrict acc = static_cast<T*>(acc_v);
  const T* __restrict in = static_cast<const T*>(in_v);
  for (size_t i = 0; i < n; ++i) acc[i] = f(acc[i], in[i]);
}

template <typename T>
void ReduceTyped(ReduceOp op, void* acc, const void* in, size_t n) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAverage:
      Apply<T>(acc, in, n, [](T a, T b) { return a + b; });
      return;
    case ReduceOp::kMin:
      Apply<T>(acc, in, n, [](T a, T b) { return b < a ? b : a; });
      return;
    case ReduceOp::kMax:
      Apply<T>(acc, in, n, [](T a, T b) { return a < b ? b : a; });
      return;
  }
}

template <typename T>
void ScaleTyped(void* data_v, size_t n, int divisor) {
  T* data = static_cast<T*>(data_v);
  const T d = static_cast<T>(divisor);
  for (size_t i = 0; i < n; ++i) data[i] = data[i] / d;
}

}  // namespace

void Reduce(DataType type, ReduceOp op, void* acc, const void* in, size_t n) {
  switch (type) {
    case DataType::kFloat32: return ReduceTyped<float>(op, acc, in, n);
    case DataType::kFloat64: return ReduceTyped<double>(op, acc, in, n);
    case DataType::kInt32: return ReduceTyped<int32_t>(op, acc, in, n);
    case DataType::kInt64: return ReduceTyped<int64_t>(op, acc, in, n);
  }
}

void Scale(DataType type, void* data, size_t n, int divisor) {
  if (divisor == 1) return;
  switch (type) {
    case DataType::kFloat32: return ScaleTyped<float>(data, n, divisor);
    case DataType::kFloat64: return ScaleTyped<double>(data, n, divisor);
    case DataType::kInt32: return ScaleTyped<int32_t>(data, n, divisor);
    case DataType::kInt64: return ScaleTyped<int64_t>(data, n, divisor);
  }
}

void CopyBytes(void* dst_bytes, const void* src_bytes, size_t n) {
  char* dst = static_cast<char*>(dst_bytes);
  const char* src = static_cast<const char*>(src_bytes);
  constexpr size_t kBlock = 256;
  while (n >= kBlock) {
    __builtin_memcpy(dst, src, kBlock);  // a fixed size: inlined as vector moves
    dst += kBlock;
    src += kBlock;
    n -= kBlock;
  }
  while (n >= 16) {
    __builtin_memcpy(dst, src, 16);
    dst += 16;
    src += 16;
    n -= 16;
  }
  for (size_t i = 0; i < n; ++i) dst[i] = src[i];
}

}  // namespace shoal::collective
