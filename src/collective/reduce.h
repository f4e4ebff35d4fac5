// Element-wise reduction kernels: the arithmetic under every reducing collective.
//
// Contract:
//  - Reduce(type, op, acc, in, n): acc[i] = op(acc[i], in[i]) for i < n. kAverage
//    accumulates like kSum; call Scale afterwards (once, on the final sum).
//  - Scale(type, data, n, divisor): data[i] /= divisor (truncating for integers).
//  - The buffers may not overlap. Both kernels are commutative for a given pair of
//    operands, so two ranks that combine the same two buffers get bitwise-equal results.
// Thread-safety: pure functions over caller-owned memory.
#pragma once

#include <cstddef>

#include "collective/types.h"

namespace shoal::collective {

void Reduce(DataType type, ReduceOp op, void* acc, const void* in, size_t n);
void Scale(DataType type, void* data, size_t n, int divisor);

}  // namespace shoal::collective
