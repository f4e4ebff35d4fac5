// N ranks as threads over the in-process transport, swept over world sizes and
// element counts (0, 1, odd, several MiB), checked against a serial reduction.
#include <gtest/gtest.h>

#include <atomic>
#include <span>

#include "collective/allgather.h"
#include "collective/allreduce.h"
#include "collective/barrier.h"
#include "collective/broadcast.h"
#include "collective/collective_test_util.h"
#include "collective/hierarchical.h"
#include "collective/host_leaders.h"
#include "collective/reduce_scatter.h"

namespace shoal::collective {
namespace {

using testing::Input;
using testing::RunRanks;
using testing::SerialReduce;

const int kWorldSizes[] = {1, 2, 3, 4, 7};
const size_t kSeveralMiB = (3u << 20) / 4 + 5;  // 3 MiB of float32, not a multiple of anything

template <typename T>
::testing::AssertionResult SameElements(const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  for (size_t i = 0; i < got.size(); ++i)
    if (!(got[i] == want[i]))
      return ::testing::AssertionFailure() << "element " << i << ": got " << got[i] << ", want " << want[i];
  return ::testing::AssertionSuccess();
}

template <typename T>
void CheckAllreduce(int n, size_t count, ReduceOp op, AllreduceAlgorithm algo, Options options = {}) {
  SCOPED_TRACE(::testing::Message() << "n=" << n << " count=" << count << " type=" << DataTypeName(DataTypeOf<T>::value)
                                    << " op=" << ReduceOpName(op) << " algo=" << static_cast<int>(algo));
  const auto want = SerialReduce<T>(n, count, op);
  RunRanks(
      n,
      [&](Communicator& comm) {
        for (int repeat = 0; repeat < 2; ++repeat) {  // a communicator is reusable
          auto data = Input<T>(comm.rank(), count);
          Status s = Allreduce(comm, std::span<T>(data), op, algo);
          ASSERT_TRUE(s.ok()) << s.ToString();
          ASSERT_TRUE(SameElements(data, want)) << "rank " << comm.rank();
        }
      },
      options);
}

template <typename T>
void CheckAllOps(int n, size_t count, AllreduceAlgorithm algo, Options options = {}) {
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAverage, ReduceOp::kMin, ReduceOp::kMax})
    CheckAllreduce<T>(n, count, op, algo, options);
}

// The hierarchical allreduce over simulated hosts (hosts[r] = host of rank r), every
// op and a few sizes, against the serial reduction; and which layouts it takes.
void CheckHierarchical(const std::vector<int>& hosts, bool applies) {
  const int n = static_cast<int>(hosts.size());
  for (size_t count : {size_t{1}, size_t{1237}, size_t{300007}}) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAverage, ReduceOp::kMin, ReduceOp::kMax}) {
      SCOPED_TRACE(::testing::Message() << "n=" << n << " count=" << count << " op=" << ReduceOpName(op));
      const auto want = SerialReduce<float>(n, count, op);
      const auto want_ints = SerialReduce<int32_t>(n, count, op);
      transport::inproc::Device device(n, hosts);
      testing::RunOnDevice(device, n, Options{}, [&](int, Communicator& comm) {
        EXPECT_EQ(!HierarchicalLayout(comm).hosts.empty(), applies);
        auto data = Input<float>(comm.rank(), count);
        Status s = Allreduce(comm, std::span<float>(data), op, AllreduceAlgorithm::kHierarchical);
        ASSERT_TRUE(s.ok()) << s.ToString();
        ASSERT_TRUE(SameElements(data, want)) << "rank " << comm.rank();
        auto ints = Input<int32_t>(comm.rank(), count);
        s = Allreduce(comm, std::span<int32_t>(ints), op, AllreduceAlgorithm::kHierarchical);
        ASSERT_TRUE(s.ok()) << s.ToString();
        ASSERT_TRUE(SameElements(ints, want_ints)) << "rank " << comm.rank();
        // Small buffers: the host leaders (recursive doubling where it does not apply).
        if (count * sizeof(float) > kHostLeadersMaxBytes) return;
        data = Input<float>(comm.rank(), count);
        s = Allreduce(comm, std::span<float>(data), op, AllreduceAlgorithm::kHostLeaders);
        ASSERT_TRUE(s.ok()) << s.ToString();
        ASSERT_TRUE(SameElements(data, want)) << "rank " << comm.rank() << " (host leaders)";
      });
    }
  }
}

TEST(HierarchicalTest, EqualHostsOfSeveralRanks) {
  CheckHierarchical({0, 0, 1, 1}, true);           // 2 hosts x 2 ranks
  CheckHierarchical({0, 0, 0, 1, 1, 1}, true);     // 2 x 3
  CheckHierarchical({0, 0, 1, 1, 2, 2}, true);     // 3 x 2
  CheckHierarchical({0, 1, 0, 1}, true);           // hosts interleaved with ranks
}

TEST(HierarchicalTest, OtherLayoutsFallBackToTheRing) {
  CheckHierarchical({0, 1, 2}, false);     // one rank per host
  CheckHierarchical({0, 0, 1}, false);     // unequal hosts (a rank alone leads its host)
  CheckHierarchical({0, 0, 0, 1, 2, 2, 2}, false);
  CheckHierarchical({0, 0, 0, 0}, false);  // one host
}

class WorldSizeTest : public ::testing::TestWithParam<int> {};

TEST_P(WorldSizeTest, AllreduceSmallCountsAllTypesOpsAndAlgorithms) {
  const int n = GetParam();
  Options tiny_chunks;  // many chunks per segment: exercises the pipeline
  tiny_chunks.chunk_bytes = 100;
  tiny_chunks.pipeline_depth = 3;
  for (size_t count : {size_t{0}, size_t{1}, size_t{1237}}) {
    for (auto algo :
         {AllreduceAlgorithm::kRing, AllreduceAlgorithm::kRecursiveDoubling, AllreduceAlgorithm::kSingleHost}) {
      CheckAllOps<float>(n, count, algo, tiny_chunks);
      CheckAllOps<double>(n, count, algo, tiny_chunks);
      CheckAllOps<int32_t>(n, count, algo, tiny_chunks);
      CheckAllOps<int64_t>(n, count, algo, tiny_chunks);
    }
  }
}

TEST_P(WorldSizeTest, AllreduceSeveralMiB) {
  const int n = GetParam();
  CheckAllreduce<float>(n, kSeveralMiB, ReduceOp::kSum, AllreduceAlgorithm::kAuto);
  CheckAllreduce<float>(n, kSeveralMiB, ReduceOp::kAverage, AllreduceAlgorithm::kRing);
  CheckAllreduce<int64_t>(n, kSeveralMiB / 2, ReduceOp::kMax, AllreduceAlgorithm::kAuto);
  CheckAllreduce<double>(n, kSeveralMiB / 8, ReduceOp::kMin, AllreduceAlgorithm::kRecursiveDoubling);
  CheckAllreduce<float>(n, kSeveralMiB, ReduceOp::kAverage, AllreduceAlgorithm::kSingleHost);  // six pieces
  CheckAllreduce<int64_t>(n, kSeveralMiB / 2, ReduceOp::kMin, AllreduceAlgorithm::kSingleHost);
}

TEST_P(WorldSizeTest, ReduceScatter) {
  const int n = GetParam();
  for (size_t count : {size_t{0}, size_t{1}, size_t{333}, size_t{150001}}) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAverage, ReduceOp::kMax}) {
      const auto full = SerialReduce<int32_t>(n, count * n, op);
      RunRanks(n, [&](Communicator& comm) {
        const auto in = Input<int32_t>(comm.rank(), count * n);
        std::vector<int32_t> out(count, -99);
        Status s = ReduceScatter(comm, in.data(), out.data(), count, DataType::kInt32, op);
        ASSERT_TRUE(s.ok()) << s.ToString();
        std::vector<int32_t> want(full.begin() + count * comm.rank(), full.begin() + count * (comm.rank() + 1));
        ASSERT_TRUE(SameElements(out, want)) << "rank " << comm.rank() << " count " << count;
      });
    }
  }
}

TEST_P(WorldSizeTest, Allgather) {
  const int n = GetParam();
  for (size_t count : {size_t{0}, size_t{1}, size_t{333}, size_t{150001}}) {
    std::vector<double> want;
    for (int r = 0; r < n; ++r) {
      auto in = Input<double>(r, count);
      want.insert(want.end(), in.begin(), in.end());
    }
    RunRanks(n, [&](Communicator& comm) {
      const auto in = Input<double>(comm.rank(), count);
      std::vector<double> out(count * n, -1);
      Status s = Allgather(comm, in.data(), out.data(), count, DataType::kFloat64);
      ASSERT_TRUE(s.ok()) << s.ToString();
      ASSERT_TRUE(SameElements(out, want)) << "rank " << comm.rank();
    });
  }
}

TEST_P(WorldSizeTest, BroadcastFromEveryKindOfRoot) {
  const int n = GetParam();
  for (size_t count : {size_t{0}, size_t{1}, size_t{1237}, size_t{400000}}) {  // tree and chain
    for (int root : {0, n - 1, n / 2}) {
      const auto want = Input<int64_t>(root, count);
      RunRanks(n, [&](Communicator& comm) {
        auto data = comm.rank() == root ? want : std::vector<int64_t>(count, 0);
        Status s = Broadcast(comm, data.data(), count, DataType::kInt64, root);
        ASSERT_TRUE(s.ok()) << s.ToString();
        ASSERT_TRUE(SameElements(data, want)) << "rank " << comm.rank() << " root " << root;
      });
    }
  }
}

TEST_P(WorldSizeTest, BarrierWaitsForEveryone) {
  const int n = GetParam();
  std::atomic<int> arrived{0};
  RunRanks(n, [&](Communicator& comm) {
    for (int round = 1; round <= 3; ++round) {
      // Rank 0 arrives last: only once every other rank has arrived (and is on its way
      // into the barrier), so a barrier that lets anyone through early shows below.
      if (comm.rank() == 0) {
        while (arrived.load() < round * n - 1) std::this_thread::yield();
      }
      arrived++;
      ASSERT_TRUE(Barrier(comm).ok());
      EXPECT_GE(arrived.load(), round * n);
      ASSERT_TRUE(Barrier(comm).ok());  // nobody races into the next round early
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Sweep, WorldSizeTest, ::testing::ValuesIn(kWorldSizes));

TEST(CollectivesTest, BroadcastRejectsBadRoot) {
  RunRanks(2, [&](Communicator& comm) {
    int32_t x = 0;
    Status s = Broadcast(comm, &x, 1, DataType::kInt32, 5);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  });
}

}  // namespace
}  // namespace shoal::collective
