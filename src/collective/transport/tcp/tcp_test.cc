// Multi-process tests of the TCP transport and its shared-memory path: ranks are
// fork()ed processes that meet through a FileStore, as real workers on one machine
// would. Every test runs in four layouts: all ranks on one host (shared memory),
// TCP only, two hosts (shared memory within, TCP across) and one rank per host; the
// hosts are names the test assigns (tcp::Options::host_name).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <span>

#include "collective/allgather.h"
#include "collective/allreduce.h"
#include "collective/barrier.h"
#include "collective/broadcast.h"
#include "collective/collective_test_util.h"
#include "collective/reduce_scatter.h"
#include "collective/rendezvous/file_store.h"
#include "collective/rendezvous/prefix_store.h"
#include "collective/transport/tcp/device.h"
#include "testing/scratch_directory.h"

namespace shoal::collective {
namespace {

using std::chrono::milliseconds;
using testing::Input;
using testing::SerialReduce;

struct Layout {
  const char* name;
  bool shared_memory;
  int hosts;  // 0: all ranks on this host; otherwise ranks in blocks over this many (capped at the size)
};

class TcpTest : public ::testing::TestWithParam<Layout> {
 protected:
  // Forks a process running body(); its Status becomes the exit code (0 ok, 3 error)
  // and its message is left in "<dir>/<name>.err".
  pid_t Spawn(const std::string& name, const std::function<Status()>& body) {
    pid_t pid = fork();
    if (pid != 0) return pid;
    Status s = body();
    if (!s.ok()) std::ofstream(dir_ / (name + ".err")) << s.ToString();
    _exit(s.ok() ? 0 : 3);
  }
  std::string ErrorOf(const std::string& name) {
    std::ifstream in(dir_ / (name + ".err"));
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  static int ExitCode(pid_t pid) {
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  Result<std::unique_ptr<Communicator>> Join(const std::string& attempt, int rank, int size, Options options,
                                             int connections = 1) {
    FileStore files(dir_.string());
    PrefixStore store(attempt, files);
    transport::tcp::Options tcp;
    tcp.connections_per_pair = connections;
    tcp.shared_memory = GetParam().shared_memory;
    const int hosts = std::min(GetParam().hosts, size);
    if (hosts > 0) tcp.host_name = "host-" + std::to_string(rank * hosts / size);
    transport::tcp::Device device(tcp);
    return Communicator::Create(device, store, rank, size, options);
  }

  void KillOneRankMidAllreduces(size_t count);

  testing_support::ScratchDirectory scratch_{"tcp"};
  std::filesystem::path dir_ = scratch_.path();
};

Status Expect(bool ok, const std::string& what) { return ok ? Status::Ok() : Internal("wrong result: " + what); }

// Sums that round differently in every order: every rank must still end with the
// same bits (each element reduced once, or in the same order everywhere).
Status ExpectBitwiseEqualOnEveryRank(Communicator& comm, size_t count) {
  std::vector<float> data(count);
  for (size_t i = 0; i < count; ++i) data[i] = 1.0f / static_cast<float>(1 + comm.rank() * 7 + i % 1000);
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAverage}) {
    auto reduced = data;
    RETURN_IF_ERROR(Allreduce(comm, std::span<float>(reduced), op));
    auto rank0 = reduced;
    RETURN_IF_ERROR(Broadcast(comm, rank0.data(), rank0.size(), DataType::kFloat32, 0));
    RETURN_IF_ERROR(Expect(count == 0 || std::memcmp(rank0.data(), reduced.data(), count * sizeof(float)) == 0,
                           "rank " + std::to_string(comm.rank()) + "'s allreduce of " + std::to_string(count) +
                               " floats differs from rank 0's"));
  }
  return Status::Ok();
}

// Every operation once, over real sockets, checked against serial results.
Status AllOperations(Communicator& comm) {
  const int n = comm.size(), r = comm.rank();
  for (size_t count : {size_t{0}, size_t{1}, size_t{1237}, size_t{(5u << 20) / 4 + 3}}) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAverage, ReduceOp::kMin}) {
      auto data = Input<float>(r, count);
      RETURN_IF_ERROR(Allreduce(comm, std::span<float>(data), op));
      RETURN_IF_ERROR(Expect(data == SerialReduce<float>(n, count, op), "allreduce float32 " + std::to_string(count)));
    }
    auto ints = Input<int64_t>(r, count);
    RETURN_IF_ERROR(Allreduce(comm, std::span<int64_t>(ints), ReduceOp::kMax, AllreduceAlgorithm::kRecursiveDoubling));
    RETURN_IF_ERROR(Expect(ints == SerialReduce<int64_t>(n, count, ReduceOp::kMax), "allreduce int64"));
    // The single-host allreduce by name (the ring where the ranks do not share a host).
    auto sums = Input<int32_t>(r, count);
    RETURN_IF_ERROR(Allreduce(comm, std::span<int32_t>(sums), ReduceOp::kSum, AllreduceAlgorithm::kSingleHost));
    RETURN_IF_ERROR(Expect(sums == SerialReduce<int32_t>(n, count, ReduceOp::kSum), "single-host allreduce int32"));
    RETURN_IF_ERROR(ExpectBitwiseEqualOnEveryRank(comm, count));
  }
  const size_t block = 100003;
  auto in = Input<int32_t>(r, block * n);
  std::vector<int32_t> out(block);
  RETURN_IF_ERROR(ReduceScatter(comm, in.data(), out.data(), block, DataType::kInt32, ReduceOp::kSum));
  auto full = SerialReduce<int32_t>(n, block * n, ReduceOp::kSum);
  RETURN_IF_ERROR(Expect(std::equal(out.begin(), out.end(), full.begin() + block * r), "reduce_scatter"));
  std::vector<int32_t> gathered(block * n);
  RETURN_IF_ERROR(Allgather(comm, out.data(), gathered.data(), block, DataType::kInt32));
  for (size_t i = 0; i < gathered.size(); ++i)
    if (gathered[i] != full[i]) return Internal("allgather mismatch at " + std::to_string(i) + ": " + std::to_string(gathered[i]) + " vs " + std::to_string(full[i]));
  auto bcast = r == n - 1 ? Input<double>(9, 300001) : std::vector<double>(300001);
  RETURN_IF_ERROR(Broadcast(comm, bcast.data(), bcast.size(), DataType::kFloat64, n - 1));
  RETURN_IF_ERROR(Expect(bcast == Input<double>(9, 300001), "broadcast"));
  return Barrier(comm);
}

TEST_P(TcpTest, EveryOperationAcrossProcesses) {
  for (int n : {2, 3, 4}) {
    for (int connections : {1, 3}) {
      const std::string attempt = "n" + std::to_string(n) + "c" + std::to_string(connections);
      std::vector<pid_t> pids;
      for (int r = 0; r < n; ++r) {
        pids.push_back(Spawn(attempt + "-" + std::to_string(r), [&, r] {
          Options options;
          options.timeout = milliseconds(20000);
          ASSIGN_OR_RETURN(auto comm, Join(attempt, r, n, options, connections));
          return AllOperations(*comm);
        }));
      }
      for (int r = 0; r < n; ++r)
        EXPECT_EQ(ExitCode(pids[r]), 0) << attempt << " rank " << r << ": " << ErrorOf(attempt + "-" + std::to_string(r));
    }
  }
}

TEST_P(TcpTest, MissingRankFailsSetupAtConnectTimeoutNamingIt) {
  Options options;
  options.connect_timeout = milliseconds(300);
  auto lonely_low = Join("attempt-a", 0, 2, options);  // rank 1 never comes
  ASSERT_FALSE(lonely_low.ok());
  EXPECT_EQ(lonely_low.status().code(), StatusCode::kTimeout) << lonely_low.status().ToString();
  EXPECT_NE(lonely_low.status().message().find("ranks [1]"), std::string::npos) << lonely_low.status().ToString();
  auto lonely_high = Join("attempt-b", 1, 2, options);  // rank 0 never comes
  ASSERT_FALSE(lonely_high.ok());
  EXPECT_EQ(lonely_high.status().code(), StatusCode::kTimeout) << lonely_high.status().ToString();
  EXPECT_NE(lonely_high.status().message().find("tcp/0"), std::string::npos) << lonely_high.status().ToString();
}

// Kills one rank with SIGKILL while all are inside allreduces of `count` floats: the
// others must notice the lost connection (kAborted naming it, not a timeout), then
// rebuild without it.
void TcpTest::KillOneRankMidAllreduces(size_t count) {
  const int n = 4, victim = 2;
  const auto timeout = milliseconds(60000);  // a hang guard: a kill must never wait for it
  std::vector<pid_t> pids;
  for (int r = 0; r < n; ++r) {
    pids.push_back(Spawn("rank" + std::to_string(r), [&, r]() -> Status {
      Options options;
      options.timeout = timeout;
      ASSIGN_OR_RETURN(auto comm, Join("attempt-1", r, n, options));
      std::vector<float> data(count, 1.0f);
      Status failure = Allreduce(*comm, std::span<float>(data), ReduceOp::kSum);
      std::ofstream(dir_ / ("started" + std::to_string(r))) << "1";  // one allreduce done: in the loop
      while (failure.ok()) failure = Allreduce(*comm, std::span<float>(data), ReduceOp::kSum);
      std::ofstream(dir_ / ("failure" + std::to_string(r))) << failure.ToString();
      comm.reset();
      // Next attempt: the survivors, renumbered, under a fresh prefix.
      const int new_rank = r < victim ? r : r - 1;
      ASSIGN_OR_RETURN(auto again, Join("attempt-2", new_rank, n - 1, options));
      int64_t x = new_rank + 1;
      RETURN_IF_ERROR(Allreduce(*again, &x, 1, DataType::kInt64, ReduceOp::kSum));
      RETURN_IF_ERROR(Expect(x == 6, "rebuilt allreduce"));
      return Status::Ok();
    }));
  }
  for (int r = 0; r < n; ++r)
    while (!std::filesystem::exists(dir_ / ("started" + std::to_string(r)))) usleep(1000);
  kill(pids[victim], SIGKILL);
  EXPECT_EQ(ExitCode(pids[victim]), 128 + SIGKILL);
  for (int r = 0; r < n; ++r) {
    if (r == victim) continue;
    EXPECT_EQ(ExitCode(pids[r]), 0) << "rank " << r << ": " << ErrorOf("rank" + std::to_string(r));
    std::ifstream failure(dir_ / ("failure" + std::to_string(r)));
    std::string message(std::istreambuf_iterator<char>(failure), {});
    // Noticed through the lost connection (directly, or quoted in a peer's abort).
    EXPECT_TRUE(message.starts_with("Aborted: ")) << "rank " << r << ": " << message;
    EXPECT_NE(message.find("lost rank 2"), std::string::npos) << "rank " << r << ": " << message;
  }
}

TEST_P(TcpTest, KilledRankMidAllreduceIsNamedAtOnceAndSurvivorsRebuild) {
  KillOneRankMidAllreduces(4 << 20);  // 16 MiB: each call takes a while
}

// The same amid small allreduces: the single-host allreduce (one host), the
// host-leaders one (two hosts: rank 2 waits in its host's arena or as a leader).
TEST_P(TcpTest, KilledRankMidSmallAllreducesIsNamedAtOnce) { KillOneRankMidAllreduces(1000); }

// A rank that closes its communicator in order while the others start one more
// allreduce: they fail at once naming it (kAborted, not the 20 s deadline), whether
// they wait on its links or at the shared-memory barrier.
TEST_P(TcpTest, RankThatClosedIsNamedByTheOthersAtOnce) {
  const int n = 3;
  std::vector<pid_t> pids;
  for (int r = 0; r < n; ++r) {
    pids.push_back(Spawn("rank" + std::to_string(r), [&, r]() -> Status {
      Options options;
      options.timeout = milliseconds(20000);  // a hang guard
      ASSIGN_OR_RETURN(auto comm, Join("attempt-1", r, n, options));
      std::vector<float> data(1000, 1.0f);
      RETURN_IF_ERROR(Allreduce(*comm, std::span<float>(data), ReduceOp::kSum));
      if (r == 0) {
        comm->Close();
        return Status::Ok();
      }
      Status s = Allreduce(*comm, std::span<float>(data), ReduceOp::kSum);
      return s.ok() ? Internal("an allreduce without rank 0 succeeded") : s;
    }));
  }
  EXPECT_EQ(ExitCode(pids[0]), 0) << ErrorOf("rank0");
  std::string both;
  for (int r = 1; r < n; ++r) {
    EXPECT_EQ(ExitCode(pids[r]), 3);
    const std::string error = ErrorOf("rank" + std::to_string(r));
    EXPECT_TRUE(error.starts_with("Aborted: ")) << "rank " << r << ": " << error;
    both += error + " | ";
  }
  EXPECT_NE(both.find("rank 0 closed its communicator"), std::string::npos) << both;
}

// A rank that hangs (SIGSTOP) is not detected by the kernel: the others must give
// up at the timeout, and say it was the deadline and which rank showed no sign of life.
TEST_P(TcpTest, HungRankTimesOut) {
  const int n = 3, victim = 1;
  const auto timeout = milliseconds(1000);
  std::vector<pid_t> pids;
  for (int r = 0; r < n; ++r) {
    pids.push_back(Spawn("rank" + std::to_string(r), [&, r]() -> Status {
      Options options;
      options.timeout = timeout;
      ASSIGN_OR_RETURN(auto comm, Join("attempt-1", r, n, options));
      std::vector<double> data(1 << 20, 2.0);
      Status failure = Allreduce(*comm, std::span<double>(data), ReduceOp::kSum);
      std::ofstream(dir_ / ("started" + std::to_string(r))) << "1";  // one allreduce done: in the loop
      while (failure.ok()) failure = Allreduce(*comm, std::span<double>(data), ReduceOp::kSum);
      return failure;
    }));
  }
  for (int r = 0; r < n; ++r)
    while (!std::filesystem::exists(dir_ / ("started" + std::to_string(r)))) usleep(1000);
  kill(pids[victim], SIGSTOP);
  for (int r = 0; r < n; ++r) {
    if (r == victim) continue;
    EXPECT_EQ(ExitCode(pids[r]), 3);
    const std::string error = ErrorOf("rank" + std::to_string(r));
    // The deadline, directly (Timeout) or quoted in the abort of the rank that hit it.
    EXPECT_TRUE(error.starts_with("Timeout: ") || error.starts_with("Aborted: ")) << error;
    EXPECT_NE(error.find("deadline passed"), std::string::npos) << error;
    EXPECT_NE(error.find("no sign of life from rank 1"), std::string::npos) << error;
  }
  kill(pids[victim], SIGKILL);
  ExitCode(pids[victim]);
}

// The /proc/<pid>/maps lines of `pid` that map a shared segment of the collectives.
std::vector<std::string> SegmentMappings(const std::string& pid = "self") {
  std::vector<std::string> out;
  std::ifstream maps("/proc/" + pid + "/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.find("memfd:shoal-collective") != std::string::npos) out.push_back(line);
  return out;
}
bool MapsSharedSegment() { return !SegmentMappings().empty(); }

// The inode of a maps line (its fifth field).
std::string InodeOf(const std::string& maps_line) {
  std::istringstream fields(maps_line);
  std::string field;
  for (int i = 0; i < 5; ++i) fields >> field;
  return field;
}

// Shared memory is chosen at rendezvous exactly for the ranks that share a host.
TEST_P(TcpTest, SharedMemoryIsUsedExactlyBetweenRanksOfOneHost) {
  const int n = 4;
  std::vector<pid_t> pids;
  for (int r = 0; r < n; ++r) {
    pids.push_back(Spawn("rank" + std::to_string(r), [&, r]() -> Status {
      ASSIGN_OR_RETURN(auto comm, Join("attempt-1", r, n, Options{}));
      const bool expected = GetParam().shared_memory && std::min(GetParam().hosts, n) != n;
      RETURN_IF_ERROR(Expect(MapsSharedSegment() == expected, std::string("shared segment mapped: ") +
                                                                   (MapsSharedSegment() ? "yes" : "no")));
      return AllOperations(*comm);
    }));
  }
  for (int r = 0; r < n; ++r) EXPECT_EQ(ExitCode(pids[r]), 0) << "rank " << r << ": " << ErrorOf("rank" + std::to_string(r));
}

// Lines of /proc/net/unix naming the collectives' abstract sockets; another test
// running at the same time may hold one for the milliseconds of its setup, so this
// looks for a moment (within 2 s) when there is none.
int AbstractSocketsOfCollectives() {
  int count = 0;
  for (int look = 0; look < 200; ++look, usleep(10000)) {
    std::ifstream unix_sockets("/proc/net/unix");
    count = 0;
    for (std::string line; std::getline(unix_sockets, line);)
      if (line.find("@shoal-collective-") != std::string::npos) ++count;
    if (count == 0) break;
  }
  return count;
}

// kill -9 of every rank in the middle of allreduces leaves nothing behind: no file
// in /dev/shm, no abstract socket, no process mapping the segment.
TEST_P(TcpTest, KillingEveryRankLeavesNoSharedSegmentBehind) {
  std::set<std::string> dev_shm_before;
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm")) dev_shm_before.insert(e.path().string());
  const int n = 3;
  std::vector<pid_t> pids;
  for (int r = 0; r < n; ++r) {
    pids.push_back(Spawn("rank" + std::to_string(r), [&, r]() -> Status {
      ASSIGN_OR_RETURN(auto comm, Join("attempt-1", r, n, Options{}));
      std::vector<float> data(1 << 20, 1.0f);
      RETURN_IF_ERROR(Allreduce(*comm, std::span<float>(data), ReduceOp::kSum));
      const auto mappings = SegmentMappings();
      std::ofstream(dir_ / ("started" + std::to_string(r))) << (mappings.empty() ? "" : InodeOf(mappings[0]));
      while (true) RETURN_IF_ERROR(Allreduce(*comm, std::span<float>(data), ReduceOp::kSum));
    }));
  }
  std::set<std::string> inodes;  // of the segments the ranks mapped
  for (int r = 0; r < n; ++r) {
    const auto started = dir_ / ("started" + std::to_string(r));
    while (!std::filesystem::exists(started)) usleep(1000);
    usleep(1000);  // the inode is written right after the file is created
    std::ifstream in(started);
    std::string inode;
    if (in >> inode) inodes.insert(inode);
  }
  EXPECT_EQ(inodes.empty(), !GetParam().shared_memory || std::min(GetParam().hosts, n) == n);
  EXPECT_EQ(AbstractSocketsOfCollectives(), 0) << "the leader's socket outlived the setup";
  // Every rank is stopped before any is killed: a rank killed first would otherwise
  // be noticed by one still running, which then exits with an error of its own.
  for (pid_t pid : pids) kill(pid, SIGSTOP);
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, WUNTRACED);
    EXPECT_TRUE(WIFSTOPPED(status)) << "rank " << pid << " ended before it was killed";
  }
  for (pid_t pid : pids) kill(pid, SIGKILL);
  for (pid_t pid : pids) EXPECT_EQ(ExitCode(pid), 128 + SIGKILL);
  EXPECT_EQ(AbstractSocketsOfCollectives(), 0);
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm"))
    EXPECT_TRUE(dev_shm_before.count(e.path().string()) || e.path().string().find("shoal") == std::string::npos)
        << "left behind: " << e.path();
  EXPECT_FALSE(MapsSharedSegment());
  // No process at all maps the segments the ranks had.
  std::error_code ec;
  for (const auto& proc : std::filesystem::directory_iterator("/proc", ec))
    for (const auto& line : SegmentMappings(proc.path().filename().string()))
      EXPECT_EQ(inodes.count(InodeOf(line)), 0u) << proc.path() << " still maps: " << line;
}

INSTANTIATE_TEST_SUITE_P(Layouts, TcpTest,
                         ::testing::Values(Layout{"SharedMemory", true, 0}, Layout{"TcpOnly", false, 0},
                                           Layout{"TwoHosts", true, 2}, Layout{"RankPerHost", true, 64}),
                         [](const ::testing::TestParamInfo<Layout>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace shoal::collective
