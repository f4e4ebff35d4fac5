#include "client/job_reads.h"

namespace shoal {
namespace {

template <typename View>
Result<View> DecodeReply(const Json& reply) {
  Result<View> view = protocol::Decode<View>(reply);
  if (!view.ok()) {
    return FailedPrecondition("the server's reply is not what this shoal reads (" + view.status().message() +
                    "); are the server and this shoal the same version?");
  }
  return view;
}

}  // namespace

Result<protocol::JobDetail> FetchJob(const HttpJsonClient& server, const std::string& id, int64_t wait_version,
                                     int wait_ms, Json* raw) {
  std::string path = "/api/v1/jobs/" + UrlEncode(id);
  if (wait_version > 0 || wait_ms > 0) {
    path += "?wait_version=" + std::to_string(wait_version) + "&wait_ms=" + std::to_string(wait_ms);
  }
  ASSIGN_OR_RETURN(Json reply, server.Get(path));
  if (raw) *raw = reply;
  return DecodeReply<protocol::JobDetail>(reply);
}

Result<protocol::JobList> FetchJobs(const HttpJsonClient& server, const std::string& query, Json* raw) {
  ASSIGN_OR_RETURN(Json reply, server.Get("/api/v1/jobs?" + query));
  if (raw) *raw = reply;
  return DecodeReply<protocol::JobList>(reply);
}

}  // namespace shoal
