// TaskTokens: each job attempt's secrets. The AM makes one random token per task and one
// for `shoal mpi-agent`; a container agent gets its task's token in SHOAL_TASK_TOKEN (on
// Slurm, the agents of a role's shared step get the role's tokens as one list,
// SHOAL_TASK_TOKENS, and each keeps its own: backend/slurm/role_step.h). The agent wipes
// the tokens from its environment block before its program starts, and sends its own
// with every message as `Authorization: Bearer <token>`. So a process can talk only to its
// own attempt's AM, and only as its own task: the token of worker[0] does not let anyone
// pose as worker[1].
//
// Contract:
//  - Make(tasks) draws tasks + 1 tokens of 32 random bytes; an error only when
//    /dev/urandom cannot be read.
//  - AllowsTask(rank, header) / AllowsMpi(header) compare in constant time; a rank out of
//    range is refused.
// Thread-safety: immutable after Make; safe from any thread.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "protocol/task_messages.h"

namespace shoal {

class TaskTokens {
 public:
  static Result<TaskTokens> Make(int tasks);
  TaskTokens() = default;

  const std::string& ForTask(int rank) const { return task_tokens_.at(static_cast<size_t>(rank)); }
  const std::string& ForMpi() const { return mpi_token_; }
  bool AllowsTask(int rank, const std::string& authorization) const;
  bool AllowsMpi(const std::string& authorization) const;

 private:
  std::vector<std::string> task_tokens_;
  std::string mpi_token_;
};

using protocol::kMpiTokenVariable;
using protocol::kTaskTokenVariable;

}  // namespace shoal
