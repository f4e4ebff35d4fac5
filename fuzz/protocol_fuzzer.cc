// Every message of the protocol (protocol/task_messages.h, protocol/attempt_messages.h,
// protocol/api_messages.h, protocol/job_views.h), both directions: arbitrary bytes as JSON, decoded as the message kind the first byte
// picks. A decoder must never throw or crash; whatever it accepts must encode, and the
// encoding must decode again to the same encoding (one schema, both sides).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "protocol/api_messages.h"
#include "protocol/attempt_messages.h"
#include "protocol/job_views.h"
#include "protocol/task_messages.h"

namespace {

using namespace shoal;
using namespace shoal::protocol;

template <typename T>
void RoundTrip(const Json& body) {
  Result<T> decoded = Decode<T>(body);
  if (!decoded.ok()) {
    if (decoded.status().message().empty()) std::abort();  // a refusal must say why
    return;
  }
  Json first = Encode(*decoded);
  Result<T> again = Decode<T>(first);
  if (!again.ok() || Encode(*again) != first) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  Json body = Json::parse(data + 1, data + size, nullptr, false);
  if (body.is_discarded()) return 0;
  switch (data[0] % 20) {
    case 0: RoundTrip<RegisterRequest>(body); break;
    case 1: RoundTrip<ClusterReply>(body); break;
    case 2: RoundTrip<StartedRequest>(body); break;
    case 3: RoundTrip<HeartbeatRequest>(body); break;
    case 4: RoundTrip<HeartbeatReply>(body); break;
    case 5: RoundTrip<StacksAnswer>(body); break;
    case 6: RoundTrip<ExitRequest>(body); break;
    case 7: RoundTrip<MpiCommandReply>(body); break;
    case 8: RoundTrip<MpiLaunchRequest>(body); break;
    case 9: RoundTrip<MpiWaitReply>(body); break;
    case 10: RoundTrip<AttemptReport>(body); break;
    case 11: RoundTrip<ReportReply>(body); break;
    case 12: RoundTrip<StackReply>(body); break;
    case 13: RoundTrip<AttemptFetchReply>(body); break;
    case 14: RoundTrip<LaunchPlan>(body); break;
    case 15: RoundTrip<SavedModelUpdate>(body); break;
    case 16: RoundTrip<SubmitRequest>(body); break;
    case 17: RoundTrip<JobSummary>(body); break;
    case 18: RoundTrip<JobDetail>(body); break;
    case 19: RoundTrip<JobList>(body); break;
  }
  return 0;
}
