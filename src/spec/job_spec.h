// JobSpec: what a user asks Shoal to run, after parsing and validation.
//
// Contract:
//  - A JobSpec produced by ParseJobSpec (spec_parser.h) is valid: every role has
//    instances >= 1, a command, positive cpus and memory; the framework is known.
//  - Roles keep the order in which the file lists them; ranks follow that order.
//  - ToJson/FromJson round-trip exactly; the JSON form is what the AM reads (and what
//    job histories of earlier versions hold). FromJson trusts its input (it came from
//    ParseJobSpec); untrusted JSON goes through ParseJobSpec, which reads JSON as well as
//    YAML. What the API shows and the history stores is the spec document
//    (spec_document.h), in the schema users write.
// Thread-safety: a value type.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/json.h"
#include "protocol/states.h"
#include "spec/resources.h"
#include "spec/slurm_section.h"

namespace shoal {

// No job's role: `am` names the attempt's application master where a role names a task
// (`shoal logs JOB --role am`, the API's logs), so the spec parser refuses it as a role.
inline constexpr const char* kAmLogRole = "am";

// A checkpoint folder Shoal manages (docs/checkpoints.md): the task's folder `path`
// (SHOAL_CHECKPOINT_DIR) is uploaded under <uri>/<job id>/<role>-<index>/ each time the
// program marks it complete, and restored into the task directory before every attempt
// after the first; `keep` complete checkpoints are kept per task.
struct CheckpointSpec {
  std::string path = "ckpt";  // relative to the task directory
  std::string uri;            // a path, file:// or s3:// URI; paths made absolute
  int keep = 3;
};

// An OCI image a role's tasks run in (docs/isolation.md, "Images"): `name` as the user
// wrote it, found in the server's podman storage; `id` and `rootfs` are filled by the
// server at submit (isolation/image_store.h), so every attempt runs the image as it was
// then, from its root file system extracted once per image id.
struct ImageSpec {
  std::string name;
  std::string id;
  std::string rootfs;  // absolute; empty until the server resolved the name
};

struct RoleSpec {
  std::string name;
  int instances = 1;
  Resources resources{1, 1LL << 30, 0};  // per task
  std::string command;                   // run with /bin/sh -c in the job's workdir
  std::map<std::string, std::string> env;
  // A service role (parameter servers, say) runs until every non-service task has
  // finished, then is stopped; its own exit does not decide the job.
  bool service = false;
  // When true, a failed task of this role does not fail the attempt.
  bool tolerate_failure = false;
  // Processes per task, as torchrun's --nproc_per_node: each gets its LOCAL_RANK.
  int nproc_per_node = 1;
  std::optional<CheckpointSpec> checkpoint;  // none: the job's, if it has one
  std::optional<ImageSpec> image;            // none: the job's, if it has one
};

struct Timeouts {
  int64_t heartbeat_ms = 30'000;   // a task silent this long is LOST
  int64_t register_ms = 120'000;   // all containers must have registered by then
  int64_t job_ms = 0;              // 0: no limit on an attempt's run time
  // A running task with no progress, no metric and no CPU use for this long is hung:
  // flagged in status and the UI; with hang_fails, it fails (and the job may retry).
  int64_t hang_ms = 30 * 60'000;   // 0: never flagged
  bool hang_fails = false;
};

// A board: a web tool (TensorBoard or any) that runs beside one task, on a port reserved
// for it ($SHOAL_BOARD_PORT); its URL is shown by `shoal status` and the web UI.
struct BoardSpec {
  std::string command;  // empty: no board
  std::string role;     // the task it runs beside (default: the first role's task 0)
  int index = 0;
};

// An archive shipped to every task: unpacked into <task dir>/<name>; the listed variables
// get paths inside it prepended (PYTHONPATH: "." puts the unpacked folder first).
struct ArchiveSpec {
  std::string path;  // absolute
  std::string name;
  std::map<std::string, std::vector<std::string>> prepend;
};

// An input read from storage (docs/data.md): its files are split across the tasks of
// `roles` (default: every role that is not a service), each task getting its share.
struct InputSpec {
  std::string name;               // letters, digits, '_': SHOAL_INPUT_<NAME> in placeholder mode
  std::string uri;                // a path, file:// or s3:// URI; globs allowed; paths made absolute
  InputMode mode = InputMode::kDownload;  // protocol/states.h
  std::string path;               // download: the folder in the task directory (default: name)
  int epochs = 1;                 // stream: how many times the share is fed
  bool shuffle = false;           // stream: shuffle the order of the share's pieces per epoch
  std::vector<std::string> roles;
};

// An output: the task's local folder `path`, uploaded to `uri` when the task succeeds
// (and when it fails, with on_failure). Every task writes <uri>/<role>-<index>/ unless
// `from` ("worker[0]") picks the one task whose folder becomes <uri> itself.
struct OutputSpec {
  std::string name;
  std::string path;  // relative to the task directory (default: name)
  std::string uri;
  std::string from;  // "" or "role[index]"
  bool on_failure = false;
};

inline constexpr int kMinJobPriority = -1000;
inline constexpr int kMaxJobPriority = 1000;
inline constexpr int kLowPriority = -100;
inline constexpr int kHighPriority = 100;

struct JobSpec {
  std::string name;
  std::string framework = "generic";
  std::string cluster;  // where it runs: local or slurm; empty: wherever the server runs jobs
  std::string user;
  std::string workdir;   // absolute; tasks start here
  std::vector<RoleSpec> roles;
  std::map<std::string, std::string> env;
  // Names of environment variables (job-level or a role's) whose values are secret:
  // masked wherever Shoal shows the spec or a task's output (MaskSecretValues, spec_document.h).
  std::set<std::string> secrets;
  int max_attempts = 1;
  // Where it waits and in what order (docs/scheduling.md): the server's queue, a priority
  // from kMinJobPriority to kMaxJobPriority (low -100, normal 0, high 100), and how long it is
  // expected to run (0: not said; timeouts.job stands in), which lets it backfill.
  std::string queue = "default";
  int priority = 0;
  int64_t estimate_ms = 0;
  // How long a preempted job's programs have between SIGTERM (and the preemption file)
  // and the kill, to write a checkpoint (docs/scheduling.md).
  int64_t preemption_grace_ms = 30'000;
  std::optional<CheckpointSpec> checkpoint;  // every role's that does not set its own
  std::optional<ImageSpec> image;            // every role's that does not set its own
  Timeouts timeouts;
  SlurmSection slurm;  // the job's own sbatch options (on a Slurm cluster)
  BoardSpec board;
  std::vector<std::string> files;     // absolute paths, copied into every task's directory
  std::vector<ArchiveSpec> archives;
  std::vector<InputSpec> inputs;
  std::vector<OutputSpec> outputs;

  int TotalTasks() const;
  Resources TotalResources() const;
  const RoleSpec* FindRole(const std::string& name) const;
  // The role's checkpoint, else the job's; null when neither has one.
  const CheckpointSpec* CheckpointOf(const RoleSpec& role) const;
  // The role's image, else the job's; null when the role's tasks run on the host.
  const ImageSpec* ImageOf(const RoleSpec& role) const;
  ImageSpec* ImageOf(RoleSpec& role);
};

// The same object in the internal JSON and in the spec document: {path, uri, keep}.
Json ToJson(const CheckpointSpec& checkpoint);
CheckpointSpec CheckpointFromJson(const Json& json);
// {name, id, rootfs}; the spec document shows the name alone.
Json ToJson(const ImageSpec& image);
ImageSpec ImageFromJson(const Json& json);

Json ToJson(const JobSpec& spec);
JobSpec JobSpecFromJson(const Json& json);

// What every spec shown to people says in place of a secret variable's value
// (MaskSecretValues, spec_document.h).
inline constexpr const char* kSecretMask = "********";
// The values of the spec's secret variables (non-empty ones), wherever they are set.
std::vector<std::string> SecretValues(const JobSpec& spec);

}  // namespace shoal
