#include "train/managed_checkpoint.h"

#include <signal.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <set>
#include <thread>

#include "train/uri.h"

namespace shoal::train {
namespace {

namespace fs = std::filesystem;

std::atomic<int> g_stop_signal{0};

void OnStopSignal(int signal) { g_stop_signal.store(signal); }

void SetHandler(int signal, void (*handler)(int), int flags) {
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  action.sa_flags = flags;
  sigaction(signal, &action, nullptr);
}

std::string Variable(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// The iteration in "<prefix>_iter_<N>.solverstate" (or Caffe's HDF5 ".solverstate.h5"), or -1.
int64_t SnapshotIteration(const std::string& name) {
  static const std::regex kSnapshot(R"(.*_iter_(\d{1,12})\.solverstate(\.h5)?)");
  std::smatch m;
  return std::regex_match(name, m, kSnapshot) ? std::stoll(m[1]) : -1;
}

}  // namespace

ManagedCheckpoint::ManagedCheckpoint()
    : folder_(Variable("SHOAL_CHECKPOINT_DIR")), marker_(Variable("SHOAL_CHECKPOINT_MARKER")) {}

std::string ManagedCheckpoint::NewestSnapshot() const {
  if (folder_.empty()) return "";
  std::string newest;
  int64_t newest_iter = -1;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder_, ec)) {
    int64_t iter = SnapshotIteration(entry.path().filename().string());
    if (iter > newest_iter) {
      newest_iter = iter;
      newest = entry.path().string();
    }
  }
  return newest;
}

Status ManagedCheckpoint::Publish(const std::vector<std::pair<std::string, std::string>>& files) {
  if (folder_.empty()) return Status::Ok();
  auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(kMarkerWaitMs);
  std::error_code ec;
  while (!marker_.empty() && fs::exists(marker_, ec)) {
    if (std::chrono::steady_clock::now() > give_up) {
      return Unavailable("Shoal has not taken the previous checkpoint in " + folder_ + " (its marker " + marker_ +
                         " is still there after " + std::to_string(kMarkerWaitMs / 1000) + " s)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::set<std::string> names;
  for (const auto& [name, bytes] : files) {
    RETURN_IF_ERROR(WriteFileAtomic(folder_ + "/" + name, bytes));
    names.insert(name);
  }
  for (const auto& entry : fs::directory_iterator(folder_, ec)) {
    std::string name = entry.path().filename().string();
    bool snapshot = name.ends_with(".caffemodel") || name.ends_with(".solverstate");
    if (snapshot && !names.count(name)) fs::remove(entry.path(), ec);
  }
  if (marker_.empty()) return Status::Ok();
  return WriteFileAtomic(marker_, "");
}

StopOnSignals::StopOnSignals() {
  // SA_RESETHAND: the first signal asks for the stop; a second one ends the process.
  for (int signal : {SIGINT, SIGTERM}) SetHandler(signal, OnStopSignal, SA_RESTART | SA_RESETHAND);
}

StopOnSignals::~StopOnSignals() {
  for (int signal : {SIGINT, SIGTERM}) SetHandler(signal, SIG_DFL, 0);
}

bool StopRequested() { return g_stop_signal.load() != 0; }

int StopSignal() { return g_stop_signal.load(); }

namespace {
constexpr float kSigintVote = 1;
constexpr float kSigtermVote = 1024;
}  // namespace

float StopVote() {
  switch (StopSignal()) {
    case SIGINT: return kSigintVote;
    case SIGTERM: return kSigtermVote;
    default: return 0;
  }
}

int SignalOfVotes(float sum) {
  const auto votes = static_cast<int64_t>(std::lround(sum));
  if (votes >= static_cast<int64_t>(kSigtermVote)) return SIGTERM;
  return votes > 0 ? SIGINT : 0;
}

void AdoptStopSignal(int signal) {
  int none = 0;
  g_stop_signal.compare_exchange_strong(none, signal);
}

std::string StopSignalName() {
  switch (StopSignal()) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    default: return "";
  }
}

}  // namespace shoal::train
