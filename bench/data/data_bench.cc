// bench/data: Shoal's data paths against the plain tools, each as a ratio in one run.
//
//   build/bench/data/bench_data [--dir /var/tmp] [--mb 1024] [--objects 10000] [--only stream|download|list]
//
//   stream    a text file of --mb MiB fed, line-aligned, to 2 tasks' stdin (2 `wc -l`
//             processes, 2 byte ranges, data/line_stream.h) against `cat file | wc -l`;
//             the ratio is baseline time / Shoal time (higher is faster; aim >= 0.8x).
//   download  an object of --mb MiB from the S3 service (parallel ranged GETs into a
//             file) against `curl --aws-sigv4 -o file` of the same object (aim >= 1.0x).
//   list      --objects small objects listed through ListObjectsV2 pages, against a
//             shell loop of curl pages.
// download and list need an S3 service in the environment (AWS_ENDPOINT_URL, keys: e.g.
// `scripts/ceph-up.sh; set -a; . /var/tmp/shoal-ceph/s3.env; set +a`); they are skipped
// without one. The bucket shoal-bench is created and its objects left for the next run.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/files.h"
#include "common/process.h"
#include "data/line_stream.h"
#include "data/split.h"
#include "storage/parallel.h"
#include "storage/storage.h"

namespace shoal {
namespace {

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// Runs a shell command; returns its wall time in seconds (negative when it failed).
double Shell(const std::string& script) {
  auto start = Clock::now();
  auto& launcher = RealProcessLauncher::Instance();
  auto pid = launcher.Spawn({.argv = {"/bin/sh", "-c", script}, .env = CurrentEnvironment()});
  if (!pid.ok()) return -1;
  ExitInfo exit = launcher.Wait(*pid);
  return exit.success() ? Since(start) : -1;
}

std::string Curl() {
  return "curl -sS --fail --aws-sigv4 aws:amz:" + (Env("AWS_REGION").empty() ? "us-east-1" : Env("AWS_REGION")) +
         ":s3 --user " + Env("AWS_ACCESS_KEY_ID") + ":" + Env("AWS_SECRET_ACCESS_KEY") +
         " -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD'";
}

bool MakeTextFile(const std::string& path, int64_t mb) {
  if (auto size = storage::OpenStorage(path).value()->Stat(path); size.ok() && size->size == (mb << 20)) return true;
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  std::mt19937 gen(7);
  std::string line;
  int64_t written = 0, target = mb << 20;
  for (int64_t n = 0; written < target; ++n) {
    line = "record-" + std::to_string(n) + "," + std::to_string(gen()) + "," + std::to_string(gen() % 1000) +
           ",some text to make a line of a typical csv length\n";
    if (written + static_cast<int64_t>(line.size()) > target) line = std::string(target - written - 1, 'x') + "\n";
    std::fwrite(line.data(), 1, line.size(), f);
    written += static_cast<int64_t>(line.size());
  }
  return std::fclose(f) == 0;
}

void BenchStream(const std::string& dir, int64_t mb) {
  std::string file = dir + "/shoal-bench-stream.txt";
  if (!MakeTextFile(file, mb)) {
    std::printf("stream: cannot write %s\n", file.c_str());
    return;
  }
  Shell("cat " + file + " > /dev/null");  // both sides read from the page cache
  double baseline = Shell("cat " + file + " | wc -l > /dev/null");
  auto files = storage::ExpandUri(file).value();
  auto shares = data::SplitRanges(files, 2);
  auto& launcher = RealProcessLauncher::Instance();
  auto start = Clock::now();
  std::vector<std::thread> feeders;
  std::vector<pid_t> readers;
  for (const auto& share : shares) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return;
    auto pid = launcher.Spawn({.argv = {"/bin/sh", "-c", "wc -l > /dev/null"}, .env = CurrentEnvironment(),
                               .stdin_fd = fds[0]});
    ::close(fds[0]);
    if (!pid.ok()) return;
    readers.push_back(*pid);
    feeders.emplace_back([share, fd = fds[1]] {
      Status s = data::StreamShards(share, {}, fd);
      if (!s.ok()) std::fprintf(stderr, "stream: %s\n", s.ToString().c_str());
      ::close(fd);
    });
  }
  for (auto& t : feeders) t.join();
  for (pid_t pid : readers) launcher.Wait(pid);
  double shoal = Since(start);
  std::printf("stream   %5lld MiB to 2 tasks' stdin: shoal %.2f s (%.0f MiB/s), cat | wc -l %.2f s: %.2fx\n",
              static_cast<long long>(mb), shoal, mb / shoal, baseline, baseline / shoal);
}

void BenchDownload(const std::string& dir, int64_t mb) {
  std::string local = dir + "/shoal-bench-object.bin";
  std::string uri = "s3://shoal-bench/object-" + std::to_string(mb) + "m.bin";
  auto s3 = storage::OpenStorage(uri).value();
  if (!s3->Stat(uri).ok()) {
    Shell("head -c " + std::to_string(mb << 20) + " /dev/urandom > " + local);
    auto start = Clock::now();
    Status put = s3->PutFromFile(local, uri);
    if (!put.ok()) {
      std::printf("download: cannot upload the test object: %s\n", put.ToString().c_str());
      return;
    }
    std::printf("upload   %5lld MiB (multipart): %.2f s (%.0f MiB/s)\n", static_cast<long long>(mb), Since(start),
                mb / Since(start));
  }
  std::string url = Env("AWS_ENDPOINT_URL") + "/shoal-bench/object-" + std::to_string(mb) + "m.bin";
  ::unlink(local.c_str());
  double curl = Shell(Curl() + " -o " + local + " " + url);
  ::unlink(local.c_str());
  auto start = Clock::now();
  Status got = s3->GetToFile(uri, local);
  double shoal = Since(start);
  ::unlink(local.c_str());
  if (!got.ok() || curl < 0) {
    std::printf("download: failed: %s (curl %.2f)\n", got.ToString().c_str(), curl);
    return;
  }
  std::printf("download %5lld MiB from S3: shoal %.2f s (%.0f MiB/s), curl %.2f s (%.0f MiB/s): %.2fx\n",
              static_cast<long long>(mb), shoal, mb / shoal, curl, mb / curl, curl / shoal);
}

void BenchList(int objects) {
  std::string prefix = "s3://shoal-bench/list-" + std::to_string(objects) + "/";
  auto s3 = storage::OpenStorage(prefix).value();
  auto listed = s3->List(prefix);
  if (!listed.ok()) {
    std::printf("list: %s\n", listed.status().ToString().c_str());
    return;
  }
  if (static_cast<int>(listed->size()) < objects) {
    auto start = Clock::now();
    Status s = storage::RunParallel(objects, 16, [&](int i) {
      return s3->PutString(prefix + "key-" + std::to_string(100000 + i), "x");
    });
    if (!s.ok()) {
      std::printf("list: cannot create the objects: %s\n", s.ToString().c_str());
      return;
    }
    std::printf("list     created %d objects in %.1f s\n", objects, Since(start));
  }
  auto start = Clock::now();
  listed = s3->List(prefix);
  double shoal = Since(start);
  // The baseline pages with curl, taking each continuation token from the reply.
  std::string script = "t=; n=0; while :; do q=\"list-type=2&max-keys=1000&prefix=list-" + std::to_string(objects) +
                       "%2F\"; [ -n \"$t\" ] && q=\"continuation-token=$t&$q\"; r=$(" + Curl() + " \"" +
                       Env("AWS_ENDPOINT_URL") + "/shoal-bench?$q\") || exit 1; "
                       "n=$((n + $(printf %s \"$r\" | grep -o '<Key>' | wc -l))); "
                       "t=$(printf %s \"$r\" | sed -n 's/.*<NextContinuationToken>\\([^<]*\\)<.*/\\1/p' | "
                       "sed 's/+/%2B/g; s/\\//%2F/g; s/=/%3D/g'); [ -z \"$t\" ] && break; done; "
                       "[ $n -ge " + std::to_string(objects) + " ]";
  double curl = Shell(script);
  std::printf("list     %d objects: shoal %.3f s (%zu found), curl pages %.3f s: %.2fx\n", objects, shoal,
              listed.ok() ? listed->size() : 0, curl, curl / shoal);
}

}  // namespace
}  // namespace shoal

int main(int argc, char** argv) {
  std::string dir = "/var/tmp", only;
  int64_t mb = 1024;
  int objects = 10000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--dir")) dir = argv[i + 1];
    else if (!std::strcmp(argv[i], "--mb")) mb = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--objects")) objects = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--only")) only = argv[i + 1];
  }
  if (only.empty() || only == "stream") shoal::BenchStream(dir, mb);
  bool s3 = !shoal::Env("AWS_ENDPOINT_URL").empty() && !shoal::Env("AWS_ACCESS_KEY_ID").empty();
  if (!s3 && only != "stream") std::printf("download, list: skipped (no AWS_ENDPOINT_URL and keys in the environment)\n");
  if (s3) {
    auto bucket = shoal::storage::OpenStorage("s3://shoal-bench/x").value();
    if (!bucket->CheckRoot("s3://shoal-bench/x").ok()) {
      shoal::Shell(shoal::Curl() + " -X PUT " + shoal::Env("AWS_ENDPOINT_URL") + "/shoal-bench > /dev/null");
    }
    if (only.empty() || only == "download") shoal::BenchDownload(dir, mb);
    if (only.empty() || only == "list") shoal::BenchList(objects);
  }
  return 0;
}
