// The connection gate's request framing (common/request_framing.h): the bytes a client
// sends, as they are, with small limits so that every refusal is reachable.
//
// What must hold for every input:
//  - no crash, no sanitizer report, no exception;
//  - a framed request lies inside the bytes: head_size <= total_size <= size, the head
//    ends in a blank line, and its method and target are what the request line says;
//  - framing is stable as bytes arrive: every prefix of a framed request is either
//    incomplete or framed the same way (a request is never cut short), and the bytes after
//    a framed request never change how it is framed;
//  - a refusal has a 4xx or 505 status and a reason.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/request_framing.h"

namespace {

const shoal::RequestLimits kLimits{.max_target = 128, .max_head = 512, .max_body = 2048};

void Check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  shoal::Framing framing = shoal::FrameRequest(bytes, kLimits);
  if (auto* refusal = std::get_if<shoal::FramingRefusal>(&framing)) {
    Check((refusal->http_status >= 400 && refusal->http_status < 500) || refusal->http_status == 505);
    Check(!refusal->reason.empty());
    return 0;
  }
  auto* framed = std::get_if<shoal::FramedRequest>(&framing);
  if (!framed) return 0;
  Check(framed->head_size <= framed->total_size && framed->total_size <= size);
  Check(bytes.substr(0, framed->head_size).ends_with("\r\n\r\n"));
  Check(bytes.starts_with(framed->method + " " + framed->target + " HTTP/1."));
  for (size_t cut : {framed->head_size - 1, framed->total_size - 1, framed->total_size}) {
    shoal::Framing partial = shoal::FrameRequest(bytes.substr(0, cut), kLimits);
    if (cut == framed->total_size) {
      Check(std::get<shoal::FramedRequest>(partial).total_size == framed->total_size);
    } else if (cut < framed->total_size) {
      Check(std::holds_alternative<shoal::NeedMoreBytes>(partial));
    }
  }
  std::string with_more = std::string(bytes.substr(0, framed->total_size)) + "GET /next HTTP/1.1\r\n";
  Check(std::get<shoal::FramedRequest>(shoal::FrameRequest(with_more, kLimits)).total_size == framed->total_size);
  (void)shoal::QueryParameter(framed->target, "wait_ms");
  return 0;
}
