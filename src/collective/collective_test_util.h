// Test helpers for collectives: run N ranks as threads over the in-process
// transport, and make deterministic per-rank inputs with exactly known reductions.
// Test-only; not part of the library.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "collective/communicator.h"
#include "collective/rendezvous/memory_store.h"
#include "collective/transport/inproc/device.h"

namespace shoal::collective::testing {

// Small integers: every sum of up to 7 of them is exact in float32.
template <typename T>
T InputValue(int rank, size_t i) {
  return static_cast<T>(static_cast<int>((rank * 7 + i * 13 + (i >> 7)) % 31) - 15);
}

template <typename T>
std::vector<T> Input(int rank, size_t count) {
  std::vector<T> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = InputValue<T>(rank, i);
  return v;
}

// The plain serial reduction the collectives are checked against.
template <typename T>
std::vector<T> SerialReduce(int size, size_t count, ReduceOp op) {
  std::vector<T> out = Input<T>(0, count);
  for (int r = 1; r < size; ++r) {
    auto in = Input<T>(r, count);
    for (size_t i = 0; i < count; ++i) {
      switch (op) {
        case ReduceOp::kSum:
        case ReduceOp::kAverage: out[i] += in[i]; break;
        case ReduceOp::kMin: out[i] = std::min(out[i], in[i]); break;
        case ReduceOp::kMax: out[i] = std::max(out[i], in[i]); break;
      }
    }
  }
  if (op == ReduceOp::kAverage)
    for (auto& x : out) x = x / static_cast<T>(size);
  return out;
}

// Runs `size` ranks over `device`, each calling body(rank, comm) on its own thread.
inline void RunOnDevice(transport::inproc::Device& device, int size, const Options& options,
                        const std::function<void(int, Communicator&)>& body) {
  MemoryStore store;
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      auto comm = Communicator::Create(device, store, r, size, options);
      ASSERT_TRUE(comm.ok()) << comm.status().ToString();
      body(r, **comm);
    });
  }
  for (auto& t : threads) t.join();
}

// Runs body(comm) on `size` threads, one communicator each, over one in-process device.
inline void RunRanks(int size, const std::function<void(Communicator&)>& body, Options options = {}) {
  transport::inproc::Device device(size);
  RunOnDevice(device, size, options, [&](int, Communicator& comm) { body(comm); });
}

}  // namespace shoal::collective::testing
