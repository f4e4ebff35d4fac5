// The container-to-AM protocol: paths and message fields, shared by both sides so they
// cannot drift apart. Every message is a JSON object over HTTP.
//
//   POST /am/v1/register   {role, index, host, ports: [int], pid}          -> {}
//   GET  /am/v1/cluster?role=R&index=I&wait_ms=N
//        200 {ready: true, env: {...}, command, workdir, heartbeat_ms, processes: [{env}],
//             board_command?, files, archives, mpi?}
//        200 {ready: false} when not every task has registered within wait_ms
//   POST /am/v1/started    {role, index, pid}                              -> {}
//   POST /am/v1/heartbeat  {role, index, progress}                         -> {keep_running: bool}
//   POST /am/v1/exited     {role, index, exit_code, signal, message}       -> {}
// `shoal stack` (master/stack_requests.h): a heartbeat reply may carry dump_stacks: ID;
// the container then takes its program's stacks, appends them to its log and answers
//   POST /am/v1/stacks     {role, index, id, text}                         -> {}
// and the server asks for them with
//   POST /am/v1/stack      {}    -> {tasks: [{task, host, answered, text}]} (waits <= 45 s)
// An error reply (410 Aborted) tells the container the attempt is over: it must stop.
#pragma once

namespace shoal::am_protocol {

inline constexpr const char* kRegister = "/am/v1/register";
inline constexpr const char* kCluster = "/am/v1/cluster";
inline constexpr const char* kStarted = "/am/v1/started";
inline constexpr const char* kHeartbeat = "/am/v1/heartbeat";
inline constexpr const char* kExited = "/am/v1/exited";
inline constexpr const char* kStacks = "/am/v1/stacks";
inline constexpr const char* kStackRequest = "/am/v1/stack";
// MPI jobs (master/mpi_launch.h):
//   POST /am/v1/mpi/launch  {host, command}  (from `shoal mpi-agent`: run this orted there)
//   GET  /am/v1/mpi/command?role=R&index=I&wait_ms=N -> {command} or {ready: false}
//   GET  /am/v1/mpi/wait?host=H&wait_ms=N -> {done, exit_code}
inline constexpr const char* kMpiLaunch = "/am/v1/mpi/launch";
inline constexpr const char* kMpiCommand = "/am/v1/mpi/command";
inline constexpr const char* kMpiWait = "/am/v1/mpi/wait";

}  // namespace shoal::am_protocol
