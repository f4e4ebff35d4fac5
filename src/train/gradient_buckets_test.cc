#include "train/gradient_buckets.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace shoal::train {
namespace {

// What the reducer was asked to sum, in order, as (offset, floats); it doubles each value
// (a stand-in for "summed with one other worker holding the same gradient").
struct Recorder {
  std::mutex mu;
  std::vector<std::pair<int64_t, size_t>> calls;
  float* base = nullptr;
  Status answer;
  GradientBuckets::Reduce Reduce() {
    return [this](float* data, size_t n) {
      std::lock_guard lock(mu);
      calls.emplace_back(data - base, n);
      for (size_t i = 0; i < n; ++i) data[i] *= 2;
      return answer;
    };
  }
  size_t Count() {
    std::lock_guard lock(mu);
    return calls.size();
  }
};

bool WaitUntil(const std::function<bool()>& condition) {
  for (int i = 0; i < 2000 && !condition(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return condition();
}

// LeNet's shape: conv1 (500 + 20), conv2 (25,000 + 50), ip1 (400,000 + 500), ip2 (5,000 + 10),
// then the trainer's loss and stop flag.
std::vector<BlobRange> LeNet() {
  std::vector<BlobRange> blobs;
  int64_t offset = 0;
  for (int64_t n : {500, 20, 25000, 50, 400000, 500, 5000, 10}) {
    blobs.push_back(BlobRange{offset, n, true});
    offset += n;
  }
  return blobs;
}
constexpr int64_t kLeNetFloats = 431080;

TEST(GradientBuckets, TheLastLayersBucketIsSummedWhileEarlierGradientsAreStillComing) {
  std::vector<float> grads(kLeNetFloats + 2, 1.0f);
  Recorder recorder;
  recorder.base = grads.data();
  GradientBuckets buckets(grads.data(), kLeNetFloats + 2, LeNet(), 262144, recorder.Reduce());
  ASSERT_EQ(buckets.bucket_count(), 3) << "conv1..ip1's weights, ip1's bias..ip2, the tail";
  buckets.Start();
  for (int blob : {7, 6, 5}) buckets.Ready(blob);  // backward: ip2, then ip1's bias
  ASSERT_TRUE(WaitUntil([&] { return recorder.Count() == 1; })) << "ip2's bucket is summed before backward ends";
  EXPECT_EQ(recorder.calls[0], std::make_pair(int64_t{425570}, size_t{5510}));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(recorder.Count(), 1u) << "conv1..ip1's bucket waits for its blobs";
  for (int blob : {4, 3, 2, 1, 0}) buckets.Ready(blob);
  ASSERT_TRUE(WaitUntil([&] { return recorder.Count() == 2; }));
  EXPECT_EQ(recorder.calls[1], std::make_pair(int64_t{0}, size_t{425570}));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(recorder.Count(), 2u) << "the tail (loss, stop flag) waits for Finish";
  ASSERT_TRUE(buckets.Finish().ok());
  ASSERT_EQ(recorder.calls.size(), 3u);
  EXPECT_EQ(recorder.calls[2], std::make_pair(int64_t{kLeNetFloats}, size_t{2}));
  for (float g : grads) ASSERT_EQ(g, 2.0f) << "every float summed exactly once";
}

TEST(GradientBuckets, EveryWorkerSumsInTheSameOrderWhateverOrderItsGradientsCameIn) {
  std::vector<float> grads(kLeNetFloats + 2, 1.0f);
  Recorder recorder;
  recorder.base = grads.data();
  GradientBuckets buckets(grads.data(), kLeNetFloats + 2, LeNet(), 262144, recorder.Reduce());
  buckets.Start();
  for (int blob : {0, 1, 2, 3, 4}) buckets.Ready(blob);  // the first bucket is ready first
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(recorder.Count(), 0u) << "the last bucket goes first";
  for (int blob : {5, 6, 7, 7, 6}) buckets.Ready(blob);  // a repeat changes nothing
  ASSERT_TRUE(buckets.Finish().ok());
  ASSERT_EQ(recorder.calls.size(), 3u);
  EXPECT_EQ(recorder.calls[0].first, 425570);
  EXPECT_EQ(recorder.calls[1].first, 0);
  EXPECT_EQ(recorder.calls[2].first, kLeNetFloats);
}

TEST(GradientBuckets, BlobsNeverReportedAndStateBlobsAreSummedAtFinishEveryIteration) {
  std::vector<BlobRange> blobs = {{0, 10, true}, {10, 3, false}, {13, 10, true}, {23, 10, true}};
  std::vector<float> grads(35, 1.0f);
  Recorder recorder;
  recorder.base = grads.data();
  GradientBuckets buckets(grads.data(), 35, blobs, 10, recorder.Reduce());
  ASSERT_EQ(buckets.bucket_count(), 4) << "[0,10), [10,23) with the state blob, [23,33), the tail";
  for (int iteration = 1; iteration <= 3; ++iteration) {
    recorder.calls.clear();
    std::fill(grads.begin(), grads.end(), 1.0f);
    buckets.Start();
    buckets.Ready(2);  // blob 3 (off the loss's path) and blob 0 never report
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(recorder.Count(), 0u) << "blob 3's bucket comes first and is not ready";
    ASSERT_TRUE(buckets.Finish().ok());
    ASSERT_EQ(recorder.calls.size(), 4u) << "iteration " << iteration;
    EXPECT_EQ(recorder.calls[0], std::make_pair(int64_t{23}, size_t{10}));
    EXPECT_EQ(recorder.calls[1], std::make_pair(int64_t{10}, size_t{13}));
    EXPECT_EQ(recorder.calls[2], std::make_pair(int64_t{0}, size_t{10}));
    EXPECT_EQ(recorder.calls[3], std::make_pair(int64_t{33}, size_t{2}));
    for (float g : grads) ASSERT_EQ(g, 2.0f);
  }
}

TEST(GradientBuckets, AFailedSumEndsTheIterationWithItsErrorAndSendsNothingMore) {
  std::vector<float> grads(kLeNetFloats + 2, 1.0f);
  Recorder recorder;
  recorder.base = grads.data();
  recorder.answer = Unavailable("rank 1 closed its connection");
  GradientBuckets buckets(grads.data(), kLeNetFloats + 2, LeNet(), 262144, recorder.Reduce());
  buckets.Start();
  for (int blob = 7; blob >= 0; --blob) buckets.Ready(blob);
  Status finished = buckets.Finish();
  EXPECT_EQ(finished.message(), "rank 1 closed its connection");
  EXPECT_EQ(recorder.Count(), 1u) << "the collectives failed: no later bucket is sent";
}

TEST(GradientBuckets, ANetWithNoBlobsSumsItsTailOnly) {
  std::vector<float> grads(2, 1.0f);
  Recorder recorder;
  recorder.base = grads.data();
  GradientBuckets buckets(grads.data(), 2, {}, 262144, recorder.Reduce());
  buckets.Start();
  ASSERT_TRUE(buckets.Finish().ok());
  EXPECT_EQ(recorder.calls, (std::vector<std::pair<int64_t, size_t>>{{0, 2}}));
}

}  // namespace
}  // namespace shoal::train
