// The gate in front of a real GatedHttpServer on loopback, with raw sockets playing the
// slow, idle and hostile clients.
#include "common/connection_gate.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

#include "common/gated_http_server.h"
#include "common/http_client.h"
#include "common/http_server.h"
#include "common/process.h"

namespace shoal {
namespace {

// One raw TCP connection to the server.
class RawClient {
 public:
  explicit RawClient(int port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~RawClient() { close(fd_); }
  bool connected() const { return connected_; }
  // Sends everything, as a client does; false when the server reset the connection first.
  bool Send(std::string_view bytes) {
    while (!bytes.empty()) {
      ssize_t n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }
  // What arrives until `until` is seen, the server closes, or `wait_ms` pass quietly.
  std::string Read(std::string_view until = "", int wait_ms = 5000) {
    std::string got;
    for (;;) {
      if (!until.empty() && got.find(until) != std::string::npos) return got;
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, wait_ms) <= 0) return got;
      char buf[4096];
      ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        closed_ = true;
        return got;
      }
      got.append(buf, static_cast<size_t>(n));
    }
  }
  bool closed() const { return closed_; }

 private:
  int fd_;
  bool connected_ = false;
  bool closed_ = false;
};

// Polls `done` for up to 5 s.
template <typename Predicate>
void WaitUntil(Predicate done) {
  for (int i = 0; i < 500 && !done(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

class GateTest : public ::testing::Test {
 protected:
  void Start(size_t workers, GateLimits limits = {}) {
    server_ = std::make_unique<GatedHttpServer>(workers, limits);
    server_->Get("/hello", [](const httplib::Request&, httplib::Response& res) { res.set_content("hello", "text/plain"); });
    server_->Post("/echo", [](const httplib::Request& req, httplib::Response& res) { res.set_content(req.body, "text/plain"); });
    server_->Get("/wait", [this](const httplib::Request& req, httplib::Response& res) {
      res.set_content(std::string(released_ ? "released" : "early") + (req.has_param("wait_ms") ? " unserved" : " served"),
                      "text/plain");
    });
    port_ = BindServer(*server_, "127.0.0.1", 0).value();
    thread_ = ServeInBackground(*server_);
  }
  void TearDown() override {
    if (!server_) return;
    server_->stop();
    thread_.join();
    server_.reset();
  }
  std::string Get(const std::string& path) {
    httplib::Client client("127.0.0.1", port_);
    client.set_read_timeout(5, 0);
    auto res = client.Get(path.c_str());
    return res ? std::to_string(res->status) + " " + res->body : "no answer: " + httplib::to_string(res.error());
  }

  std::unique_ptr<GatedHttpServer> server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<bool> released_{false};
};

TEST_F(GateTest, IdleAndSlowClientsDoNotStopTheOthers) {
  Start(/*workers=*/2);
  std::vector<std::unique_ptr<RawClient>> hostile;
  for (int i = 0; i < 100; ++i) hostile.push_back(std::make_unique<RawClient>(port_));  // connect only
  for (int i = 0; i < 40; ++i) {
    hostile.push_back(std::make_unique<RawClient>(port_));
    hostile.back()->Send("GET /hello HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");  // a head that never ends
  }
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Get("/hello"), "200 hello");
  EXPECT_GE(server_->gate_stats().open, 140u) << "the hostile connections are still held, not dropped";
}

TEST_F(GateTest, AHeadThatDoesNotArriveInTimeIsAnswered408) {
  Start(1, GateLimits{.idle_timeout = std::chrono::milliseconds(300), .head_timeout = std::chrono::milliseconds(300)});
  RawClient slow(port_);
  slow.Send("GET /hello HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  std::string answer = slow.Read("", 5000);
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 408")) << answer;
  EXPECT_TRUE(slow.closed());
  RawClient idle(port_);
  EXPECT_EQ(idle.Read("", 5000), "") << "an idle connection is closed without an answer";
  EXPECT_TRUE(idle.closed());
  EXPECT_EQ(server_->gate_stats().timed_out, 2u);
}

TEST_F(GateTest, UnservableRequestsAreRefusedByTheGateWithTheirStatus) {
  Start(1);
  RawClient long_url(port_);
  EXPECT_TRUE(long_url.Send("GET /hello?x=" + std::string(8 << 20, 'a') + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"))
      << "the gate reads what a refused client still sends, so the client is not reset mid-request";
  std::string answer = long_url.Read("}");
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 414")) << answer.substr(0, 200);
  EXPECT_NE(answer.find("POST body"), std::string::npos) << "the answer says what to do";

  RawClient smuggler(port_);
  smuggler.Send("POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\nContent-Length: 30\r\n\r\nabc");
  answer = smuggler.Read("}");
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 400")) << answer;
  EXPECT_NE(answer.find("two different Content-Length"), std::string::npos) << answer;
  EXPECT_EQ(server_->gate_stats().refused, 2u);
}

TEST_F(GateTest, BodiesBeingReceivedAtOnceAreBoundedByTheirDeclaredSize) {
  Start(1, GateLimits{.max_buffered_bytes = 1000});
  RawClient slow(port_);
  ASSERT_TRUE(slow.Send("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 800\r\n\r\n" + std::string(100, 'a')));
  for (int i = 0; i < 500 && server_->gate_stats().receiving_bytes == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // until the gate has read the head
  }
  ASSERT_EQ(server_->gate_stats().receiving_bytes, 800 + std::string("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 800\r\n\r\n").size());
  RawClient second(port_);
  ASSERT_TRUE(second.Send("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 800\r\n\r\n"));
  std::string refused = second.Read("}");
  EXPECT_TRUE(refused.starts_with("HTTP/1.1 503")) << refused;
  EXPECT_NE(refused.find("retry in a moment"), std::string::npos) << refused;
  ASSERT_TRUE(slow.Send(std::string(700, 'b')));
  EXPECT_TRUE(slow.Read(std::string(700, 'b')).starts_with("HTTP/1.1 200")) << "the first upload completes";
  EXPECT_EQ(server_->gate_stats().receiving_bytes, 0u);
  RawClient third(port_);
  ASSERT_TRUE(third.Send("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 800\r\nConnection: close\r\n\r\n" +
                         std::string(800, 'c')));
  EXPECT_TRUE(third.Read("", 5000).starts_with("HTTP/1.1 200")) << "its room is free again";
}

TEST_F(GateTest, PipelinedRequestsOnAKeptAliveConnectionAreAnsweredInOrder) {
  Start(2);
  RawClient client(port_);
  client.Send(
      "POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nfirstGET /hello HTTP/1.1\r\nHost: h\r\n\r\n"
      "POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\nConnection: close\r\n\r\nlast");
  std::string answers = client.Read("", 5000);
  size_t first = answers.find("first"), hello = answers.find("hello"), last = answers.find("last");
  ASSERT_NE(last, std::string::npos) << answers;
  EXPECT_LT(first, hello);
  EXPECT_LT(hello, last);
  EXPECT_TRUE(client.closed()) << "Connection: close is honoured";
}

TEST_F(GateTest, AClientThatExpectsContinueGetsItBeforeSendingItsBody) {
  Start(1);
  RawClient client(port_);
  client.Send("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n");
  EXPECT_EQ(client.Read("\r\n\r\n"), "HTTP/1.1 100 Continue\r\n\r\n");
  client.Send("body");
  std::string answer = client.Read("body");
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 200")) << answer;
  EXPECT_EQ(answer.find("100 Continue"), std::string::npos) << "one interim answer only";
}

TEST_F(GateTest, ParkedLongPollsHoldNoWorkerAndRunWhenWoken) {
  Start(/*workers=*/1);
  server_->set_parking_rule([this](const FramedRequest& request) -> std::optional<ParkedWait> {
    if (!request.target.starts_with("/wait")) return std::nullopt;
    return ParkedWait{.ready = [this] { return released_.load(); },
                      .deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30),
                      .served_params = {"wait_ms"}};
  });
  std::vector<std::unique_ptr<RawClient>> polls;
  for (int i = 0; i < 20; ++i) {
    polls.push_back(std::make_unique<RawClient>(port_));
    polls.back()->Send("GET /wait?wait_ms=30000 HTTP/1.1\r\nHost: h\r\n\r\n");
  }
  EXPECT_EQ(Get("/hello"), "200 hello") << "the one worker is free while 20 polls wait";
  for (int i = 0; i < 100 && server_->gate_stats().parked < 20; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(server_->gate_stats().parked, 20u);
  released_ = true;
  server_->WakeParked();
  for (auto& poll : polls) EXPECT_NE(poll->Read("served").find("released served"), std::string::npos);
  EXPECT_EQ(server_->gate_stats().parked, 0u);
}

TEST_F(GateTest, AParkedLongPollIsAnsweredAtItsDeadline) {
  Start(1);
  server_->set_parking_rule([](const FramedRequest&) -> std::optional<ParkedWait> {
    return ParkedWait{.ready = [] { return false; },
                      .deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(200),
                      .served_params = {"wait_ms"}};
  });
  RawClient poll(port_);
  poll.Send("GET /wait?wait_ms=200 HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_NE(poll.Read("served").find("early served"), std::string::npos);
}

TEST_F(GateTest, AParkedLongPollWhoseClientHangsUpIsDropped) {
  Start(1);
  server_->set_parking_rule([](const FramedRequest&) -> std::optional<ParkedWait> {
    return ParkedWait{.ready = [] { return false; },
                      .deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30),
                      .served_params = {"wait_ms"}};
  });
  auto poll = std::make_unique<RawClient>(port_);
  ASSERT_TRUE(poll->Send("GET /wait?wait_ms=30000 HTTP/1.1\r\nHost: h\r\n\r\n"));
  for (int i = 0; i < 500 && server_->gate_stats().parked == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(server_->gate_stats().parked, 1u);
  poll.reset();  // the client hangs up
  for (int i = 0; i < 500 && server_->gate_stats().open > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(server_->gate_stats().open, 0u) << "its connection is closed";
  EXPECT_EQ(server_->gate_stats().parked, 0u) << "and no longer counted as parked";
}

TEST_F(GateTest, AKeptAliveJsonClientReusesOneConnectionAndReconnectsOnceTheGateClosedIt) {
  Start(1, GateLimits{.idle_timeout = std::chrono::milliseconds(300)});
  std::string url = "http://127.0.0.1:" + std::to_string(port_);
  HttpJsonClient each(url);
  ASSERT_TRUE(each.Post("/echo", Json{{"n", 1}}).ok());
  WaitUntil([&] { return server_->gate_stats().open == 0; });
  EXPECT_EQ(server_->gate_stats().open, 0u) << "a plain client closes its connection after each call";
  HttpJsonClient kept(url);
  kept.KeepAlive();
  for (int n = 0; n < 3; ++n) {
    auto reply = kept.Post("/echo", Json{{"n", n}});
    ASSERT_TRUE(reply.ok()) << reply.status().ToString();
    EXPECT_EQ((*reply)["n"], n);
  }
  EXPECT_EQ(server_->gate_stats().open, 1u) << "three calls, one connection, kept for the next";
  WaitUntil([&] { return server_->gate_stats().open == 0; });
  ASSERT_EQ(server_->gate_stats().open, 0u) << "the gate closes it once idle";
  auto after = kept.Post("/echo", Json{{"n", 9}});
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ((*after)["n"], 9) << "a new connection, without an error to the caller";
}

TEST_F(GateTest, AFloodFromOneAddressEvictsItsOldestIdleConnection) {
  Start(1, GateLimits{.max_connections = 1000, .max_per_peer = 20});
  std::vector<std::unique_ptr<RawClient>> flood;
  for (int i = 0; i < 40; ++i) flood.push_back(std::make_unique<RawClient>(port_));
  EXPECT_EQ(Get("/hello"), "200 hello") << "a request from the flooded address still gets through";
  EXPECT_EQ(flood.front()->Read("", 2000), "");
  EXPECT_TRUE(flood.front()->closed()) << "the oldest idle connection made room";
  EXPECT_LE(server_->gate_stats().open, 21u);
  EXPECT_GE(server_->gate_stats().evicted, 20u);
}

}  // namespace
}  // namespace shoal

namespace shoal {
namespace {

TEST(FitToOpenFileLimit, RaisesThisProcessesLimitButNotItsChildrens) {
  rlimit before{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &before), 0);
  before.rlim_cur = std::min<rlim_t>(before.rlim_max, 1024);  // the usual soft limit, below the hard one
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &before), 0);
  GateLimits limits = FitToOpenFileLimit(GateLimits{});
  rlimit after{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &after), 0);
  EXPECT_EQ(after.rlim_cur, std::min<rlim_t>(after.rlim_max, 65'536)) << "raised to the hard limit, up to 65,536";
  EXPECT_LT(limits.max_connections, after.rlim_cur) << "descriptors are left for everything else";
  auto child = RunAndCapture(RealProcessLauncher::Instance(), {"/bin/sh", "-c", "ulimit -n"}, 10'000);
  ASSERT_TRUE(child.ok());
  EXPECT_EQ(child->text, std::to_string(before.rlim_cur) + "\n") << "a job's programs see the limit Shoal started with";
}

}  // namespace
}  // namespace shoal
