// The AM side of bench_scale: `bench_scale am ...` runs one real ApplicationMaster
// (master/application_master.h) in a process of its own, so that its CPU time and peak
// RSS are its own. Its ContainerLauncher starts no process: it tells the bench of each
// launch and stop on fd 3 and reads the containers' ends from fd 4 (launch_pipe.h).
//
// Contract: RunAmProcess parses `--server URL --job ID --attempt N --dir DIR
// --server-info FILE --heartbeat-ms MS`, takes the attempt's token from the environment
// as `shoal am` does, ends the attempt KILLED on SIGTERM, and returns Run()'s exit code.
// Call it from main before any thread has started.
#pragma once

namespace shoal::bench {

inline constexpr int kToBenchFd = 3;
inline constexpr int kFromBenchFd = 4;

int RunAmProcess(int argc, char** argv);

}  // namespace shoal::bench
