#include "train/gradient_buckets.h"

#include <algorithm>

namespace shoal::train {

GradientBuckets::GradientBuckets(float* buffer, int64_t size, const std::vector<BlobRange>& blobs,
                                 int64_t bucket_floats, Reduce reduce)
    : buffer_(buffer), reduce_(std::move(reduce)) {
  int64_t covered = 0;
  for (size_t i = 0; i < blobs.size(); ++i) {
    if (buckets_.empty() || buckets_.back().numel >= bucket_floats) {
      buckets_.push_back(Bucket{covered, 0});
    }
    Bucket& bucket = buckets_.back();
    const int64_t end = std::max(covered, blobs[i].offset + blobs[i].numel);
    bucket.numel = end - bucket.offset;
    covered = end;
    if (blobs[i].learnable) {
      ++bucket.learnable;
    } else {
      bucket.waits_for_finish = true;
    }
    bucket_of_blob_.push_back(static_cast<int>(buckets_.size()) - 1);
    learnable_.push_back(blobs[i].learnable);
  }
  // Blob buckets last one first (the order backward produces them), then the tail.
  for (int b = static_cast<int>(buckets_.size()) - 1; b >= 0; --b) order_.push_back(b);
  if (size > covered) {
    buckets_.push_back(Bucket{covered, size - covered, 0, true});
    order_.push_back(static_cast<int>(buckets_.size()) - 1);
  }
  blob_ready_.assign(blobs.size(), true);
  thread_ = std::thread([this] { Run(); });
}

GradientBuckets::~GradientBuckets() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void GradientBuckets::Start() {
  std::lock_guard lock(mu_);
  for (Bucket& bucket : buckets_) bucket.pending = bucket.learnable;
  for (size_t i = 0; i < blob_ready_.size(); ++i) blob_ready_[i] = !learnable_[i];
  finishing_ = false;
  error_ = Status::Ok();
  next_ = 0;
}

void GradientBuckets::Ready(int blob) {
  {
    std::lock_guard lock(mu_);
    if (blob < 0 || blob >= static_cast<int>(blob_ready_.size()) || blob_ready_[blob]) return;
    blob_ready_[blob] = true;
    --buckets_[bucket_of_blob_[blob]].pending;
  }
  changed_.notify_all();
}

Status GradientBuckets::Finish() {
  std::unique_lock lock(mu_);
  finishing_ = true;
  changed_.notify_all();
  changed_.wait(lock, [this] { return next_ < 0 || next_ >= static_cast<int>(order_.size()); });
  next_ = -1;
  return error_;
}

bool GradientBuckets::SendableLocked() const {
  if (next_ < 0 || next_ >= static_cast<int>(order_.size())) return false;
  const Bucket& bucket = buckets_[order_[next_]];
  return finishing_ || (bucket.pending == 0 && !bucket.waits_for_finish);
}

void GradientBuckets::Run() {
  std::unique_lock lock(mu_);
  while (true) {
    changed_.wait(lock, [this] { return stop_ || SendableLocked(); });
    if (stop_) return;
    const Bucket& bucket = buckets_[order_[next_]];
    lock.unlock();
    Status summed = reduce_(buffer_ + bucket.offset, static_cast<size_t>(bucket.numel));
    lock.lock();
    if (summed.ok()) {
      ++next_;
    } else {
      error_ = std::move(summed);
      next_ = static_cast<int>(order_.size());  // the collectives failed: send nothing more
    }
    changed_.notify_all();
  }
}

}  // namespace shoal::train
