#include "common/request_framing.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace shoal {
namespace {

const RequestLimits kLimits{.max_target = 64, .max_head = 256, .max_body = 1000};

int RefusedWith(std::string_view bytes) {
  Framing framing = FrameRequest(bytes, kLimits);
  auto* refusal = std::get_if<FramingRefusal>(&framing);
  return refusal ? refusal->http_status : 0;
}

TEST(RequestFramingTest, AWholeRequestWithoutABodyIsFramedAtItsBlankLine) {
  std::string bytes = "GET /api/v1/jobs?limit=5 HTTP/1.1\r\nHost: localhost\r\n\r\nGET /next";
  auto framed = std::get<FramedRequest>(FrameRequest(bytes, kLimits));
  EXPECT_EQ(framed.method, "GET");
  EXPECT_EQ(framed.target, "/api/v1/jobs?limit=5");
  EXPECT_EQ(framed.total_size, bytes.find("GET /next")) << "a pipelined request after it is not part of it";
}

TEST(RequestFramingTest, ABodyIsWaitedForUntilContentLengthBytesHaveArrived) {
  std::string head = "POST /api/v1/jobs HTTP/1.1\r\ncontent-length: 5\r\nExpect: 100-continue\r\n\r\n";
  auto more = std::get<NeedMoreBytes>(FrameRequest(head + "ab", kLimits));
  EXPECT_EQ(more.total_size, head.size() + 5);
  EXPECT_TRUE(more.expects_continue);
  auto framed = std::get<FramedRequest>(FrameRequest(head + "abcde", kLimits));
  EXPECT_EQ(framed.head_size, head.size());
  EXPECT_EQ(framed.total_size, head.size() + 5);
}

TEST(RequestFramingTest, AnIncompleteHeadNeedsMoreBytes) {
  EXPECT_TRUE(std::holds_alternative<NeedMoreBytes>(FrameRequest("", kLimits)));
  EXPECT_TRUE(std::holds_alternative<NeedMoreBytes>(FrameRequest("GE", kLimits)));
  EXPECT_TRUE(std::holds_alternative<NeedMoreBytes>(FrameRequest("GET / HTTP/1.1\r\nHost: x\r\n", kLimits)));
}

TEST(RequestFramingTest, EachKindOfUnservableRequestGetsItsStatus) {
  EXPECT_EQ(RefusedWith("GET /" + std::string(100, 'a') + " HTTP/1.1\r\n\r\n"), 414);
  EXPECT_EQ(RefusedWith("GET /" + std::string(200, 'a')), 414) << "refused before the line ends";
  EXPECT_EQ(RefusedWith("GET / HTTP/1.1\r\nX: " + std::string(300, 'a')), 431);
  EXPECT_EQ(RefusedWith("POST / HTTP/1.1\r\nContent-Length: 1001\r\n\r\n"), 413);
  EXPECT_EQ(RefusedWith("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"), 411);
  EXPECT_EQ(RefusedWith("GET / HTTP/2.0\r\n\r\n"), 505);
}

TEST(RequestFramingTest, OneHeaderLinePastTheLineLimitIsRefusedNamingTheHeader) {
  // cpp-httplib reads no request with a header line over its limit and answers a bare 400.
  const RequestLimits limits{.max_target = 64, .max_head = 1024, .max_header_line = 32, .max_body = 1000};
  std::string fits = "GET / HTTP/1.1\r\nX-Long: " + std::string(22, 'a') + "\r\n\r\n";  // 32 with its CRLF
  EXPECT_TRUE(std::holds_alternative<FramedRequest>(FrameRequest(fits, limits)));
  Framing framing = FrameRequest("GET / HTTP/1.1\r\nX-Long: " + std::string(23, 'a') + "\r\n\r\n", limits);
  auto* refusal = std::get_if<FramingRefusal>(&framing);
  ASSERT_NE(refusal, nullptr);
  EXPECT_EQ(refusal->http_status, 431);
  EXPECT_NE(refusal->reason.find("the header X-Long is longer than 32 bytes"), std::string::npos) << refusal->reason;
}

TEST(RequestFramingTest, MalformedRequestsAreBadRequests) {
  for (const std::string& bad : std::vector<std::string>{
           "\x16\x03\x01\x02\x00",                                              // TLS sent to plain HTTP
           "GET\r\n\r\n",                                                       // no target
           "GET  / HTTP/1.1\r\n\r\n",                                           // empty target
           "GET / HTTP/1.1 extra\r\n\r\n",                                      // a space in the target
           "GET /a\x01 HTTP/1.1\r\n\r\n",                                       // a control character
           "GET / FTP/1.0\r\n\r\n",                                             // not HTTP
           "GET / HTTP/1.1\r\nNoColon\r\n\r\n",                                 // a header without a colon
           "GET / HTTP/1.1\r\nBad Name: x\r\n\r\n",                             // a space in a name
           "GET / HTTP/1.1\r\nX: a\r\n folded\r\n\r\n",                         // obs-fold
           std::string("GET / HTTP/1.1\r\nX: a") + '\0' + "b\r\n\r\n",               // a NUL in a value
           "GET / HTTP/1.1\nHost: x\r\n\r\n",                                   // a bare LF
           "GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",                      // not a count
           "GET / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n",    // over int64
           "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",  // two lengths
           "POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\na",
       }) {
    EXPECT_EQ(RefusedWith(bad), 400) << bad;
  }
}

TEST(RequestFramingTest, TheSameContentLengthTwiceIsOneLength) {
  std::string bytes = "POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab";
  EXPECT_EQ(std::get<FramedRequest>(FrameRequest(bytes, kLimits)).total_size, bytes.size());
}

TEST(RequestFramingTest, QueryParameterFindsExactNames) {
  EXPECT_EQ(QueryParameter("/j/1?wait_version=3&wait_ms=500", "wait_ms"), "500");
  EXPECT_EQ(QueryParameter("/j/1?xwait_ms=1&wait_ms=2", "wait_ms"), "2");
  EXPECT_EQ(QueryParameter("/j/1?flag", "flag"), "");
  EXPECT_EQ(QueryParameter("/j/1", "wait_ms"), std::nullopt);
  EXPECT_EQ(QueryParameter("/j/1?wait_ms", "wait"), std::nullopt);
}

}  // namespace
}  // namespace shoal
