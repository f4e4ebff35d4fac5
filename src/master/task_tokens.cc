#include "master/task_tokens.h"

#include "common/secret.h"

namespace shoal {

Result<TaskTokens> TaskTokens::Make(int tasks) {
  TaskTokens tokens;
  for (int rank = 0; rank < tasks; ++rank) {
    ASSIGN_OR_RETURN(std::string token, RandomToken(32));
    tokens.task_tokens_.push_back(std::move(token));
  }
  ASSIGN_OR_RETURN(tokens.mpi_token_, RandomToken(32));
  return tokens;
}

bool TaskTokens::AllowsTask(int rank, const std::string& authorization) const {
  if (rank < 0 || static_cast<size_t>(rank) >= task_tokens_.size()) return false;
  return SecretEquals(authorization, "Bearer " + task_tokens_[static_cast<size_t>(rank)]);
}

bool TaskTokens::AllowsMpi(const std::string& authorization) const {
  return !mpi_token_.empty() && SecretEquals(authorization, "Bearer " + mpi_token_);
}

}  // namespace shoal
