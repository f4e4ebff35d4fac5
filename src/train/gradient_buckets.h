// GradientBuckets: sums a replica's flat gradient buffer across workers in buckets while
// the backward pass is still producing it, as PyTorch DDP overlaps its reduction with
// backward. The backward pass computes the last layers' gradients first; their bucket is
// summed on the reducer's own thread while earlier layers are still being differentiated.
//
// Contract:
//  - The buffer [0, size) is cut into buckets at blob boundaries, in layout order, each
//    of at least `bucket_floats` floats (the last may be smaller); the range after the
//    last blob (the trainer's loss and stop flag) is a bucket of its own.
//  - A bucket is summed (`reduce(data, n)`) once every learnable blob in it is Ready and,
//    when it holds anything else (state blobs, the tail), once Finish has been called.
//  - Buckets are summed in a fixed order, last bucket first, on one thread of this
//    object's own, so every worker issues the same collectives in the same order whatever
//    order its gradients became ready in. Summing a bucket equals summing the whole buffer
//    element by element, so the result does not depend on the bucket size with 2 workers
//    (sum order is a + b either way), and is the same on every run of one layout.
//  - Start begins an iteration (every blob pending); Ready(blob) may be called from any
//    thread, once per learnable blob per iteration (a blob never reported, e.g. one off
//    the loss's path, is taken as ready by Finish); Finish waits until every bucket has
//    been summed and returns the first error `reduce` gave (later buckets are then not
//    sent: the collectives have failed).
// Thread-safety: Ready from any thread; Start and Finish from the training thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "common/status.h"

namespace shoal::train {

struct BlobRange {
  int64_t offset = 0, numel = 0;
  bool learnable = true;  // false: its bucket also waits for Finish
};

class GradientBuckets {
 public:
  using Reduce = std::function<Status(float* data, size_t n)>;
  // `blobs`: the buffer's blobs in layout order, each owning its range (shared blobs
  // appear once); `size`: the whole buffer, blobs and tail.
  GradientBuckets(float* buffer, int64_t size, const std::vector<BlobRange>& blobs, int64_t bucket_floats,
                  Reduce reduce);
  ~GradientBuckets();
  GradientBuckets(const GradientBuckets&) = delete;
  GradientBuckets& operator=(const GradientBuckets&) = delete;

  void Start();
  void Ready(int blob);
  Status Finish();

  int bucket_count() const { return static_cast<int>(buckets_.size()); }

 private:
  struct Bucket {
    int64_t offset = 0, numel = 0;
    int learnable = 0;       // learnable blobs in it
    bool waits_for_finish = false;
    int pending = 0;         // this iteration: learnable blobs not yet ready
  };
  void Run();
  // Whether the bucket order_[next_] may be summed now.
  bool SendableLocked() const;

  float* buffer_;
  Reduce reduce_;
  std::vector<Bucket> buckets_;  // in layout order; the tail, if any, last
  std::vector<int> order_;       // the order they are summed in: blob buckets last first, then the tail
  std::vector<int> bucket_of_blob_;
  std::vector<bool> blob_ready_;
  std::vector<bool> learnable_;

  std::mutex mu_;
  std::condition_variable changed_;
  int next_ = -1;  // index in order_ of the next bucket to sum; order_.size(): all summed; -1: no iteration
  bool finishing_ = false;
  bool stop_ = false;
  Status error_;
  std::thread thread_;
};

}  // namespace shoal::train
