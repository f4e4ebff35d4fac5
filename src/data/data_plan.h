// DataPlan: which share of each input and which outputs every task of an attempt gets.
// The AM builds it once per attempt and hands each task its part in the cluster reply.
//
// Contract:
//  - Make expands every input (storage.h's Expand: globs, folders) and splits it across
//    the tasks of the input's roles (default: every non-service role) in rank order:
//    whole files balanced by size for download and placeholder, line-aligned byte ranges
//    for stream (split.h). An input that matches nothing is an error naming it.
//  - InputsFor / OutputsFor return the JSON the container's TaskData (task_data.h) takes:
//      inputs:  [{name, mode, path, epochs, shuffle, base, shards: [{uri, offset, length, file_size}]}]
//      outputs: [{name, path, root, suffix, on_failure, commit}]; every task gets every
//               output (its folder and SHOAL_OUTPUT_<NAME>_DIR); a task with commit
//               commits to root + suffix (suffix "/<role>-<index>", or "" for the task
//               named by `from`), and a saved model to SavedModelRoot(root, name) + suffix.
//               commit is false for the tasks `from` does not pick and for service
//               roles: their folder is scratch space, never uploaded.
//  - ValidateData is what the CLI runs before submitting: every input matches something,
//    every scheme is known, every bucket exists (inputs and outputs), every checkpoint
//    folder can be written (CheckWritable). Errors are the
//    user's to fix (kInvalidArgument, kNotFound, kFailedPrecondition for credentials).
// Thread-safety: a value after Make; const methods may be called from any thread.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/json.h"
#include "spec/job_spec.h"

namespace shoal::data {

class DataPlan {
 public:
  static Result<DataPlan> Make(const JobSpec& spec);
  Json InputsFor(const std::string& role, int index) const;
  Json OutputsFor(const std::string& role, int index) const;
  // Tasks that commit outputs (those a saved model is waited for), as (role, index).
  std::vector<std::pair<std::string, int>> OutputTasks() const;

 private:
  std::map<std::pair<std::string, int>, Json> inputs_;
  std::map<std::pair<std::string, int>, Json> outputs_;
};

// "<output uri>/saved-<name>": the folder a saved model of that output goes to.
std::string SavedModelRoot(const std::string& output_uri, const std::string& name);
// Every output's saved-model folder for a save named `name`, in spec order, with a
// trailing "/" (what `shoal save-model` prints).
std::vector<std::string> SavedModelFolders(const JobSpec& spec, const std::string& name);

Status ValidateData(const JobSpec& spec);
// Whether an object can be written under the folder `uri` (a probe, written and deleted);
// kInvalidArgument naming `field`, the URI and the fix otherwise.
Status CheckWritable(const std::string& uri, const std::string& field);

}  // namespace shoal::data
