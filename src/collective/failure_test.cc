// The error model over the in-process transport: a dead rank, a silent rank and a
// broken communicator must produce errors within the timeout, never a hang, and a
// rebuilt communicator must work again.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <span>

#include "collective/allreduce.h"
#include "collective/barrier.h"
#include "collective/collective_test_util.h"

namespace shoal::collective {
namespace {

using std::chrono::milliseconds;
using testing::RunOnDevice;

TEST(FailureTest, KilledRankMidAllreduceFailsEveryoneAtOnceAndNamesIt) {
  const int n = 4;
  Options options;
  // A hang guard only: a death is noticed at once (kAborted, "lost rank 2"); a rank that
  // merely waited for its deadline would fail with kTimeout instead.
  options.timeout = milliseconds(30000);
  options.chunk_bytes = 4096;
  transport::inproc::Device device(n);
  std::atomic<int> done_iterations{0};
  std::vector<Status> errors(n);
  std::thread killer([&] {
    while (done_iterations.load() < 8) std::this_thread::yield();
    device.Kill(2);
  });
  RunOnDevice(device, n, options, [&](int r, Communicator& comm) {
    std::vector<float> data(1 << 18, 1.0f);
    while (true) {
      Status s = Allreduce(comm, std::span<float>(data), ReduceOp::kMax);
      if (!s.ok()) {
        errors[r] = s;
        return;
      }
      done_iterations++;
    }
  });
  killer.join();
  for (int r = 0; r < n; ++r) {
    if (r == 2) continue;
    EXPECT_EQ(errors[r].code(), StatusCode::kAborted) << errors[r].ToString();
    // Directly, or quoted in the abort of a peer that noticed first.
    EXPECT_NE(errors[r].message().find("lost rank 2"), std::string::npos) << errors[r].ToString();
  }
}

TEST(FailureTest, SilentRankTimesOutAndLaterCallersFailFast) {
  const int n = 3;
  Options options;
  // The codes tell the cases apart: the waiting ranks time out (kTimeout naming the
  // silent rank, or kAborted quoting the peer that timed out first), and the late rank
  // hears their abort (kAborted) instead of waiting for a deadline of its own.
  options.timeout = milliseconds(1500);
  transport::inproc::Device device(n);
  std::vector<Status> errors(n);
  std::mutex mu;
  std::condition_variable cv;
  int gave_up = 0;
  RunOnDevice(device, n, options, [&](int r, Communicator& comm) {
    if (r == 2) {  // silent until both others have given up on it
      std::unique_lock lock(mu);
      ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(60), [&] { return gave_up == 2; })) << "hang guard";
    }
    int64_t x = r;
    errors[r] = Allreduce(comm, &x, 1, DataType::kInt64, ReduceOp::kSum);
    // Whatever happened, the communicator is now unusable until rebuilt: the late
    // rank may even have completed (its peer's data was already buffered), but its
    // next call fails at once.
    if (errors[r].ok()) errors[r] = Barrier(comm);
    if (r != 2) {
      std::lock_guard lock(mu);
      ++gave_up;
      cv.notify_all();
    }
    Status again = Barrier(comm);
    EXPECT_EQ(again.code(), StatusCode::kFailedPrecondition) << again.ToString();
  });
  // Rank 1 exchanges with rank 2 in recursive doubling; rank 0 waits on rank 1. Whichever
  // deadline passes first (threads start at different times on a loaded machine) times
  // out and aborts the other: either way both name the silent rank 2.
  EXPECT_TRUE(errors[0].code() == StatusCode::kTimeout || errors[1].code() == StatusCode::kTimeout)
      << errors[0].ToString() << " / " << errors[1].ToString();
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(errors[r].code() == StatusCode::kTimeout || errors[r].code() == StatusCode::kAborted)
        << errors[r].ToString();
    EXPECT_NE(errors[r].message().find("rank 2 (stopped"), std::string::npos) << errors[r].ToString();
  }
  // The late rank finds its peers gone and fails at once: their abort, not a timeout.
  EXPECT_EQ(errors[2].code(), StatusCode::kAborted) << errors[2].ToString();
  EXPECT_NE(errors[2].message().find("aborted: "), std::string::npos) << errors[2].ToString();
}

TEST(FailureTest, RebuildAfterFailureWorks) {
  const int n = 3;
  Options options;
  options.timeout = milliseconds(2000);
  transport::inproc::Device attempt1(n);
  RunOnDevice(attempt1, n, options, [&](int r, Communicator& comm) {
    if (r == 0) {
      attempt1.Kill(0);
      return;
    }
    int32_t x = 1;
    EXPECT_FALSE(Allreduce(comm, &x, 1, DataType::kInt32, ReduceOp::kSum).ok());
  });
  transport::inproc::Device attempt2(n);
  RunOnDevice(attempt2, n, options, [&](int r, Communicator& comm) {
    int32_t x = r + 1;
    Status s = Allreduce(comm, &x, 1, DataType::kInt32, ReduceOp::kSum);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(x, 6);
  });
}

TEST(FailureTest, ClosedPeerIsNotAFailureUntilDataIsMissing) {
  // Rank 0 leaves right after its last operation. The others go on exchanging between
  // themselves (no error), and only an operation that needs data from rank 0 fails,
  // naming it, at once rather than at the deadline.
  Options options;
  options.timeout = milliseconds(20000);  // a hang guard: the failure must be kAborted, not kTimeout
  transport::inproc::Device device(3);
  std::mutex mu;
  std::condition_variable cv;
  bool rank0_closed = false;
  std::vector<Status> exchanged(3), needing_rank0(3);
  std::vector<int32_t> received(3, -1);
  RunOnDevice(device, 3, options, [&](int r, Communicator& comm) {
    int32_t x = 1;
    ASSERT_TRUE(Allreduce(comm, &x, 1, DataType::kInt32, ReduceOp::kSum).ok());
    ASSERT_EQ(x, 3);
    if (r == 0) {
      comm.Close();
      std::lock_guard lock(mu);
      rank0_closed = true;
      cv.notify_all();
      return;
    }
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return rank0_closed; });
    }
    const int peer = 3 - r;  // ranks 1 and 2 pair up
    int32_t mine = 10 * r;
    exchanged[r] = comm.Run("exchange", sizeof mine, [&] {
      return comm.SendRecv(peer, &mine, sizeof mine, peer, &received[r], sizeof received[r]);
    });
    int32_t y = 1;
    needing_rank0[r] = Allreduce(comm, &y, 1, DataType::kInt32, ReduceOp::kSum);
  });
  for (int r = 1; r < 3; ++r) {
    EXPECT_TRUE(exchanged[r].ok()) << "rank " << r << ": " << exchanged[r].ToString();
    EXPECT_EQ(received[r], 10 * (3 - r)) << "rank " << r;
    EXPECT_EQ(needing_rank0[r].code(), StatusCode::kAborted) << "rank " << r << ": " << needing_rank0[r].ToString();
  }
  // Whichever of ranks 1 and 2 waits on rank 0 names it; the other hears its abort.
  std::string both = needing_rank0[1].message() + " | " + needing_rank0[2].message();
  EXPECT_NE(both.find("rank 0 closed its communicator"), std::string::npos) << both;
}

}  // namespace
}  // namespace shoal::collective
