// Element-wise reduction kernels: the arithmetic under every reducing collective.
//
// Contract:
//  - Reduce(type, op, acc, in, n): acc[i] = op(acc[i], in[i]) for i < n. kAverage
//    accumulates like kSum; call Scale afterwards (once, on the final sum).
//  - Scale(type, data, n, divisor): data[i] /= divisor (truncating for integers).
//  - CopyBytes(dst, src, n): memcpy with vector moves and never `rep movsb`, which
//    glibc's memcpy picks from a few KiB and which runs ten times slower on this
//    project's AMD EPYC machines when source and destination share their offset
//    within a page (page-aligned buffers and ring positions often do).
//  - The buffers may not overlap. Both kernels are commutative for a given pair of
//    operands, so two ranks that combine the same two buffers get bitwise-equal results.
// Thread-safety: pure functions over caller-owned memory.
#pragma once

#include <cstddef>

#include "collective/types.h"

namespace shoal::collective {

void Reduce(DataType type, ReduceOp op, void* acc, const void* in, size_t n);
void Scale(DataType type, void* data, size_t n, int divisor);
void CopyBytes(void* dst, const void* src, size_t n);

}  // namespace shoal::collective
