#include <gtest/gtest.h>

#include <condition_variable>
#include <filesystem>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "common/clock.h"
#include "common/files.h"
#include "storage/s3/retry.h"
#include "storage/s3/s3_config.h"
#include "storage/s3/s3_storage.h"
#include "storage/s3/s3_xml.h"
#include "storage/s3/sigv4.h"
#include "testing/scratch_directory.h"

namespace shoal::storage {
namespace {

// A transport that answers through a function and records every request. Requests are
// answered concurrently, as the real transport does: answers that keep state lock it.
class FakeTransport final : public HttpTransport {
 public:
  explicit FakeTransport(std::function<Result<HttpResponse>(const HttpRequest&)> answer) : answer_(std::move(answer)) {}
  Result<HttpResponse> Send(const HttpRequest& request) override {
    {
      std::lock_guard lock(mu_);
      requests.push_back(request);
    }
    return answer_(request);
  }
  std::vector<HttpRequest> requests;

 private:
  std::mutex mu_;
  std::function<Result<HttpResponse>(const HttpRequest&)> answer_;
};

std::string Header(const HttpRequest& r, const std::string& name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return "";
}

S3Config TestConfig() {
  S3Config c;
  c.endpoint = "http://127.0.0.1:7480";
  c.access_key = "AK";
  c.secret_key = "SK";
  c.max_attempts = 4;
  c.part_bytes = 10;
  c.parallelism = 3;
  return c;
}

TEST(SigV4Test, MatchesTheAwsDocumentationExample) {
  // "GET Object" example of the AWS SigV4 documentation for S3 (header-based auth).
  S3Config config;
  config.access_key = "AKIAIOSFODNN7EXAMPLE";
  config.secret_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
  config.region = "us-east-1";
  HttpRequest request{"GET", "https://examplebucket.s3.amazonaws.com/test.txt", {{"range", "bytes=0-9"}}, ""};
  SignV4(request, config, "examplebucket.s3.amazonaws.com", "/test.txt", "", Sha256Hex(""), 1369353600000);
  EXPECT_EQ(Header(request, "Authorization"),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
  EXPECT_EQ(CanonicalQuery({{"prefix", "a b/c"}, {"list-type", "2"}}), "list-type=2&prefix=a%20b%2Fc");
}

// LoadS3Config over an environment and the files there are, by path.
Result<S3Config> LoadFrom(const std::map<std::string, std::string>& env,
                          const std::map<std::string, std::string>& files) {
  return LoadS3Config(
      [&](const std::string& name) {
        auto it = env.find(name);
        return it == env.end() ? std::string() : it->second;
      },
      [&](const std::string& path) -> Result<std::string> {
        auto it = files.find(path);
        if (it == files.end()) return NotFound(path);
        return it->second;
      });
}

TEST(S3ConfigTest, EnvironmentFirstThenSharedFiles) {
  std::map<std::string, std::string> env{{"HOME", "/h"}, {"AWS_PROFILE", "lab"}};
  std::map<std::string, std::string> files{
      {"/h/.aws/credentials", "[default]\naws_access_key_id = D\naws_secret_access_key = DS\n"
                              "[lab]\naws_access_key_id = L\naws_secret_access_key = LS\n"},
      {"/h/.aws/config", "[profile lab]\nregion = eu-west-3\nendpoint_url = http://s3.lab:9000/\n"}};
  S3Config c = LoadFrom(env, files).value();
  EXPECT_EQ(c.access_key, "L");
  EXPECT_EQ(c.region, "eu-west-3");
  EXPECT_EQ(c.endpoint, "http://s3.lab:9000");
  env["AWS_ACCESS_KEY_ID"] = "E";
  env["AWS_SECRET_ACCESS_KEY"] = "ES";
  env["AWS_ENDPOINT_URL"] = "http://127.0.0.1:7480";
  c = LoadFrom(env, files).value();
  EXPECT_EQ(c.access_key, "E");
  EXPECT_EQ(c.endpoint, "http://127.0.0.1:7480");
  files.clear();
  env.erase("AWS_ACCESS_KEY_ID");
  auto none = LoadFrom(env, files);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("AWS_ACCESS_KEY_ID"), std::string::npos);
}

TEST(S3ConfigTest, CredentialsMayStandInTheConfigFileAsTheAwsToolsRead) {
  std::map<std::string, std::string> env{{"HOME", "/h"}, {"AWS_PROFILE", "lab"}};
  std::map<std::string, std::string> files{
      {"/h/.aws/config", "[profile lab]\naws_access_key_id = C\naws_secret_access_key = CS\naws_session_token = CT\n"}};
  auto config = LoadFrom(env, files);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->access_key, "C");
  EXPECT_EQ(config->secret_key, "CS");
  EXPECT_EQ(config->session_token, "CT");
  // The shared credentials file comes first, whole: no key from one and secret from the other.
  files["/h/.aws/credentials"] = "[lab]\naws_access_key_id = F\naws_secret_access_key = FS\n";
  config = LoadFrom(env, files);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->access_key, "F");
  EXPECT_EQ(config->secret_key, "FS");
  EXPECT_EQ(config->session_token, "");
  files.clear();
  auto none = LoadFrom(env, files);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("AWS_CONFIG_FILE"), std::string::npos) << none.status().ToString();
}

TEST(S3ConfigTest, ACaBundleComesFromTheEnvironmentOrTheProfileAndMustBeReadable) {
  std::map<std::string, std::string> env{{"HOME", "/h"}, {"AWS_ACCESS_KEY_ID", "A"}, {"AWS_SECRET_ACCESS_KEY", "S"}};
  std::map<std::string, std::string> files{{"/h/.aws/config", "[default]\nca_bundle = /etc/lab-ca.pem\n"},
                                           {"/etc/lab-ca.pem", "-----BEGIN CERTIFICATE-----\n"},
                                           {"/srv/other-ca.pem", "-----BEGIN CERTIFICATE-----\n"}};
  EXPECT_EQ(LoadFrom(env, files).value().ca_bundle, "/etc/lab-ca.pem");
  env["AWS_CA_BUNDLE"] = "/srv/other-ca.pem";
  EXPECT_EQ(LoadFrom(env, files).value().ca_bundle, "/srv/other-ca.pem");
  env["AWS_CA_BUNDLE"] = "/srv/missing.pem";
  auto refused = LoadFrom(env, files);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("\"/srv/missing.pem\" (AWS_CA_BUNDLE"), std::string::npos)
      << refused.status().ToString();
  env.erase("AWS_CA_BUNDLE");
  files.erase("/h/.aws/config");
  EXPECT_EQ(LoadFrom(env, files).value().ca_bundle, "") << "the system's certificates";
}

TEST(S3ConfigTest, FilesNamedByARelativePathAreRefusedAndTildeIsTheHomeFolder) {
  std::map<std::string, std::string> env{{"HOME", "/h"}};
  std::map<std::string, std::string> files{{"/h/lab/config", "[default]\nca_bundle = ca.pem\n"},
                                           {"/h/lab/keys", "[default]\naws_access_key_id = K\naws_secret_access_key = S\n"},
                                           {"/h/lab/ca.pem", "-----BEGIN CERTIFICATE-----\n"}};
  auto refused_for = [&](const std::string& named) {
    auto config = LoadFrom(env, files);
    if (config.ok()) return std::string("accepted");
    EXPECT_EQ(config.status().code(), StatusCode::kInvalidArgument) << config.status().ToString();
    return config.status().message().find(named) != std::string::npos &&
                   config.status().message().find("give its absolute path") != std::string::npos
               ? std::string("refused, naming it")
               : config.status().message();
  };
  env["AWS_SHARED_CREDENTIALS_FILE"] = "lab/keys";
  EXPECT_EQ(refused_for("AWS_SHARED_CREDENTIALS_FILE \"lab/keys\""), "refused, naming it");
  env["AWS_SHARED_CREDENTIALS_FILE"] = "~/lab/keys";
  env["AWS_CONFIG_FILE"] = "./lab/config";
  EXPECT_EQ(refused_for("AWS_CONFIG_FILE \"./lab/config\""), "refused, naming it");
  env["AWS_CONFIG_FILE"] = "~/lab/config";
  EXPECT_EQ(refused_for("ca_bundle in the AWS config file (AWS_CONFIG_FILE) \"ca.pem\""), "refused, naming it");
  files["/h/lab/config"] = "[default]\nca_bundle = ~/lab/ca.pem\n";
  auto config = LoadFrom(env, files);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->access_key, "K");
  EXPECT_EQ(config->ca_bundle, "/h/lab/ca.pem");
  env["AWS_CA_BUNDLE"] = "lab/ca.pem";
  EXPECT_EQ(refused_for("AWS_CA_BUNDLE \"lab/ca.pem\""), "refused, naming it");
}

TEST(S3ConfigTest, TuningVariablesOutsideTheirRangesAreRefusedNamingTheVariable) {
  std::map<std::string, std::string> env{{"AWS_ACCESS_KEY_ID", "A"}, {"AWS_SECRET_ACCESS_KEY", "S"}};
  S3Config defaults = LoadFrom(env, {}).value();
  EXPECT_EQ(defaults.max_attempts, 5);
  EXPECT_EQ(defaults.part_bytes, 16 << 20);
  EXPECT_EQ(defaults.parallelism, 4);
  env["SHOAL_S3_MAX_ATTEMPTS"] = "100";
  env["SHOAL_S3_PART_MB"] = "5120";
  env["SHOAL_S3_PARALLELISM"] = "1";
  S3Config edges = LoadFrom(env, {}).value();
  EXPECT_EQ(edges.max_attempts, 100);
  EXPECT_EQ(edges.part_bytes, int64_t{5120} << 20);
  EXPECT_EQ(edges.parallelism, 1);
  struct Case {
    const char* variable;
    const char* value;
    const char* range;
  };
  for (const Case& bad : {Case{"SHOAL_S3_PART_MB", "4", "from 5 to 5120"}, Case{"SHOAL_S3_PART_MB", "5121", "from 5 to 5120"},
                          Case{"SHOAL_S3_PART_MB", "5000000000", "from 5 to 5120"},
                          Case{"SHOAL_S3_PART_MB", "16MB", "from 5 to 5120"}, Case{"SHOAL_S3_PART_MB", " 16", "from 5 to 5120"},
                          Case{"SHOAL_S3_PARALLELISM", "0", "from 1 to 64"},
                          Case{"SHOAL_S3_PARALLELISM", "1000000", "from 1 to 64"},
                          Case{"SHOAL_S3_MAX_ATTEMPTS", "-3", "from 1 to 100"},
                          Case{"SHOAL_S3_MAX_ATTEMPTS", "many", "from 1 to 100"}}) {
    std::map<std::string, std::string> saved = env;
    env[bad.variable] = bad.value;
    auto refused = LoadFrom(env, {});
    ASSERT_FALSE(refused.ok()) << bad.variable << "=" << bad.value;
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(refused.status().message().find(std::string(bad.variable) + "=" + bad.value), std::string::npos)
        << refused.status().ToString();
    EXPECT_NE(refused.status().message().find(bad.range), std::string::npos) << refused.status().ToString();
    env = saved;
  }
}

TEST(RetryTest, RetriesThrottlingAndBrokenConnectionsWithBackoff) {
  int calls = 0;
  FakeTransport transport([&](const HttpRequest&) -> Result<HttpResponse> {
    ++calls;
    if (calls == 1) return Unavailable("connection reset");
    if (calls == 2) return HttpResponse{503, {}, "<Error><Code>SlowDown</Code></Error>"};
    if (calls == 3) return HttpResponse{400, {}, "<Error><Code>RequestTimeout</Code></Error>"};
    return HttpResponse{200, {}, "ok"};
  });
  std::vector<int64_t> waits;
  RetryPolicy policy{5, 100, 5000, [&](int64_t ms) { waits.push_back(ms); }, [] { return 0.0; }};
  auto reply = SendWithRetry(transport, [] { return HttpRequest{"GET", "http://x/b/k", {}, ""}; }, policy);
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->body, "ok");
  EXPECT_EQ(waits, (std::vector<int64_t>{50, 100, 200}));
}

TEST(RetryTest, GivesUpAfterMaxAttemptsAndDoesNotRetryClientErrors) {
  FakeTransport broken([](const HttpRequest&) -> Result<HttpResponse> { return Unavailable("GET http://x: reset"); });
  std::vector<int64_t> waits;
  RetryPolicy policy{3, 100, 150, [&](int64_t ms) { waits.push_back(ms); }, [] { return 1.0; }};
  auto reply = SendWithRetry(broken, [] { return HttpRequest{"GET", "http://x", {}, ""}; }, policy);
  ASSERT_FALSE(reply.ok());
  EXPECT_NE(reply.status().message().find("after 3 tries"), std::string::npos);
  EXPECT_EQ(waits, (std::vector<int64_t>{100, 150}));  // capped at max_wait_ms
  FakeTransport denied([](const HttpRequest&) -> Result<HttpResponse> { return HttpResponse{403, {}, ""}; });
  ASSERT_TRUE(SendWithRetry(denied, [] { return HttpRequest{"GET", "http://x", {}, ""}; }, policy).ok());
  EXPECT_EQ(denied.requests.size(), 1u);
}

TEST(S3XmlTest, ParsesListingsUploadIdsAndErrors) {
  auto page = ParseListObjectsV2(
      "<?xml version=\"1.0\"?><ListBucketResult><IsTruncated>true</IsTruncated>"
      "<Contents><Key>a/1</Key><Size>12</Size></Contents><Contents><Key>a/2</Key><Size>3</Size></Contents>"
      "<NextContinuationToken>tok</NextContinuationToken></ListBucketResult>");
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->entries.size(), 2u);
  EXPECT_EQ(page->entries[0].size, 12);
  EXPECT_EQ(page->next_token, "tok");
  EXPECT_FALSE(ParseListObjectsV2("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>").ok());
  EXPECT_FALSE(ParseListObjectsV2("<<<").ok());
  EXPECT_EQ(ParseUploadId("<InitiateMultipartUploadResult><UploadId>u1</UploadId></InitiateMultipartUploadResult>")
                .value(),
            "u1");
  EXPECT_EQ(ParseS3Error("<Error><Code>NoSuchBucket</Code><Message>m</Message></Error>").code, "NoSuchBucket");
  EXPECT_EQ(ParseS3Error("not xml").code, "");
}

TEST(S3StorageTest, ListsEveryPage) {
  auto transport = std::make_unique<FakeTransport>([](const HttpRequest& r) -> Result<HttpResponse> {
    if (r.url.find("continuation-token=t2") != std::string::npos) {
      return HttpResponse{200, {}, "<ListBucketResult><Contents><Key>p/3</Key><Size>3</Size></Contents></ListBucketResult>"};
    }
    return HttpResponse{200, {},
                        "<ListBucketResult><IsTruncated>true</IsTruncated><NextContinuationToken>t2</NextContinuationToken>"
                        "<Contents><Key>p/1</Key><Size>1</Size></Contents><Contents><Key>p/2</Key><Size>2</Size>"
                        "</Contents></ListBucketResult>"};
  });
  FakeClock clock;
  S3Storage s3(TestConfig(), std::move(transport), clock);
  auto listed = s3.List("s3://b/p/");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 3u);
  EXPECT_EQ((*listed)[2].uri, "s3://b/p/3");
}

TEST(S3StorageTest, DownloadsInParallelRangesAndUploadsMultipart) {
  const std::string object = "0123456789abcdefghijklmnopqrstuvwxyz";  // 36 bytes, 4 parts of 10
  const int parallelism = TestConfig().parallelism;                   // 3
  std::mutex mu;
  std::condition_variable cv;
  int gets_in_flight = 0, most_gets_in_flight = 0;
  std::map<int, std::string> parts;
  std::string complete_body;
  auto fake = std::make_unique<FakeTransport>([&](const HttpRequest& r) -> Result<HttpResponse> {
    std::unique_lock lock(mu);
    if (r.method == "HEAD") return HttpResponse{200, {{"content-length", std::to_string(object.size())}}, ""};
    if (r.method == "GET") {
      // Each range waits until `parallelism` ranges are in flight together (once): a
      // download that fetches one range at a time never gets there. The wait is only a
      // hang guard; it passes at once when the ranges run in parallel.
      most_gets_in_flight = std::max(most_gets_in_flight, ++gets_in_flight);
      cv.notify_all();
      cv.wait_for(lock, std::chrono::seconds(5), [&] { return most_gets_in_flight >= parallelism; });
      --gets_in_flight;
      std::string range = Header(r, "Range").substr(6);
      int64_t a = std::stoll(range.substr(0, range.find('-')));
      int64_t b = std::stoll(range.substr(range.find('-') + 1));
      return HttpResponse{206, {}, object.substr(a, b - a + 1)};
    }
    if (r.method == "POST" && r.url.find("uploads=") != std::string::npos) {
      return HttpResponse{200, {}, "<InitiateMultipartUploadResult><UploadId>U</UploadId></InitiateMultipartUploadResult>"};
    }
    if (r.method == "PUT") {
      EXPECT_NE(r.url.find("uploadId=U"), std::string::npos) << r.url;
      int n = std::stoi(r.url.substr(r.url.find("partNumber=") + 11));
      parts[n] = r.body;
      return HttpResponse{200, {{"etag", "\"e" + std::to_string(n) + "\""}}, ""};
    }
    if (r.method == "POST") {
      complete_body = r.body;
      return HttpResponse{200, {}, "<CompleteMultipartUploadResult/>"};
    }
    return HttpResponse{500, {}, ""};
  });
  FakeTransport* transport = fake.get();
  FakeClock clock;
  S3Storage s3(TestConfig(), std::move(fake), clock);
  testing_support::ScratchDirectory scratch("s3");
  std::string dir = scratch / "download";  // not made yet
  ASSERT_TRUE(s3.GetToFile("s3://b/obj", dir + "/obj").ok());
  EXPECT_EQ(ReadFile(dir + "/obj").value(), object);
  EXPECT_EQ(transport->requests.size(), 5u) << "one HEAD and four ranged GETs";
  EXPECT_EQ(most_gets_in_flight, parallelism) << "the ranges are fetched " << parallelism << " at a time";
  ASSERT_TRUE(s3.PutFromFile(dir + "/obj", "s3://b/copy").ok());
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts[1] + parts[2] + parts[3] + parts[4], object);
  EXPECT_EQ(complete_body,
            "<CompleteMultipartUpload>"
            "<Part><PartNumber>1</PartNumber><ETag>\"e1\"</ETag></Part>"
            "<Part><PartNumber>2</PartNumber><ETag>\"e2\"</ETag></Part>"
            "<Part><PartNumber>3</PartNumber><ETag>\"e3\"</ETag></Part>"
            "<Part><PartNumber>4</PartNumber><ETag>\"e4\"</ETag></Part>"
            "</CompleteMultipartUpload>")
      << "every part, in order, with its own ETag";
}

TEST(S3StorageTest, AnUploadPastTenThousandPartsGoesInLargerPartsWithinTheMemoryBudget) {
  // part_bytes 10 and parallelism 3 (TestConfig): 250,007 bytes would be 25,001 parts, past
  // S3's 10,000; in parts of 26 bytes they are 9,616, one at a time (3 x 10 bytes in flight
  // is less than one such part).
  std::string object(250'007, '\0');
  for (size_t i = 0; i < object.size(); ++i) object[i] = static_cast<char>('a' + i % 26);
  std::mutex mu;
  int in_flight = 0, most_in_flight = 0;
  std::map<int, std::string> parts;
  auto fake = std::make_unique<FakeTransport>([&](const HttpRequest& r) -> Result<HttpResponse> {
    if (r.method == "POST" && r.url.find("uploads=") != std::string::npos) {
      return HttpResponse{200, {}, "<InitiateMultipartUploadResult><UploadId>U</UploadId></InitiateMultipartUploadResult>"};
    }
    if (r.method == "PUT") {
      bool first;
      {
        std::lock_guard lock(mu);
        most_in_flight = std::max(most_in_flight, ++in_flight);
        first = parts.empty() && most_in_flight == 1 && in_flight == 1;
      }
      // The first part lingers: parts sent several at a time would overlap it.
      std::this_thread::sleep_for(std::chrono::milliseconds(first ? 200 : 0));
      std::lock_guard lock(mu);
      --in_flight;
      parts[std::stoi(r.url.substr(r.url.find("partNumber=") + 11))] = r.body;
      return HttpResponse{200, {{"etag", "\"e\""}}, ""};
    }
    if (r.method == "POST") return HttpResponse{200, {}, "<CompleteMultipartUploadResult/>"};
    return HttpResponse{500, {}, ""};
  });
  FakeClock clock;
  S3Storage s3(TestConfig(), std::move(fake), clock);
  testing_support::ScratchDirectory scratch("s3");
  std::string path = scratch / "big";
  ASSERT_TRUE(WriteFileAtomic(path, object).ok());
  ASSERT_TRUE(s3.PutFromFile(path, "s3://b/big").ok());
  ASSERT_EQ(parts.size(), 9'616u);
  EXPECT_EQ(parts.begin()->first, 1);
  EXPECT_EQ(parts.rbegin()->first, 9'616);
  EXPECT_EQ(parts[1].size(), 26u);
  std::string joined;
  for (const auto& [number, body] : parts) joined += body;
  EXPECT_EQ(joined, object);
  EXPECT_EQ(most_in_flight, 1);
}

TEST(S3StorageTest, AFailedMultipartUploadIsAbortedAndNamesTheObject) {
  // A part the store refuses, and a completion whose 200 reply carries an <Error>: either
  // way the upload is aborted (DELETE ?uploadId=U), so no parts are left billed and hidden.
  for (const bool fail_completion : {false, true}) {
    std::mutex mu;
    std::vector<std::string> deletes;
    int completions = 0;
    auto fake = std::make_unique<FakeTransport>([&](const HttpRequest& r) -> Result<HttpResponse> {
      std::lock_guard lock(mu);
      if (r.method == "POST" && r.url.find("uploads=") != std::string::npos) {
        return HttpResponse{200, {}, "<InitiateMultipartUploadResult><UploadId>U</UploadId></InitiateMultipartUploadResult>"};
      }
      if (r.method == "PUT") {
        if (!fail_completion && r.url.find("partNumber=3") != std::string::npos) {
          return HttpResponse{403, {}, "<Error><Code>AccessDenied</Code><Message>no</Message></Error>"};
        }
        return HttpResponse{200, {{"etag", "\"e\""}}, ""};
      }
      if (r.method == "POST") {
        ++completions;
        return HttpResponse{200, {}, "<Error><Code>InternalError</Code><Message>try again</Message></Error>"};
      }
      if (r.method == "DELETE") {
        deletes.push_back(r.url.substr(r.url.find("/b/")));
        return HttpResponse{204, {}, ""};
      }
      return HttpResponse{500, {}, ""};
    });
    FakeClock clock;
    RetryPolicy policy;
    policy.sleep = [](int64_t) {};
    S3Storage s3(TestConfig(), std::move(fake), clock, policy);
    testing_support::ScratchDirectory scratch("s3-abort");
    std::string path = scratch / "model.bin";
    ASSERT_TRUE(WriteFileAtomic(path, std::string(36, 'x')).ok());
    Status s = s3.PutFromFile(path, "s3://b/out/model.bin");
    ASSERT_FALSE(s.ok()) << (fail_completion ? "completion" : "part");
    EXPECT_NE(s.message().find("s3://b/out/model.bin"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(fail_completion ? "InternalError" : "AccessDenied"), std::string::npos) << s.message();
    EXPECT_EQ(deletes, std::vector<std::string>{"/b/out/model.bin?uploadId=U"}) << (fail_completion ? "completion" : "part");
    EXPECT_EQ(completions, fail_completion ? 1 : 0) << "a failed part is never completed";
  }
}

TEST(S3StorageTest, BrokenDownloadNamesTheObjectAndLeavesNoFile) {
  int gets = 0;
  auto fake = std::make_unique<FakeTransport>([&](const HttpRequest& r) -> Result<HttpResponse> {
    if (r.method == "HEAD") return HttpResponse{200, {{"content-length", "5"}}, ""};
    ++gets;
    return Unavailable("GET " + r.url + ": Connection reset by peer");
  });
  FakeClock clock;
  RetryPolicy policy;
  policy.sleep = [](int64_t) {};
  S3Storage s3(TestConfig(), std::move(fake), clock, policy);
  testing_support::ScratchDirectory scratch("s3-broken");
  std::string path = scratch / "part-7";
  Status s = s3.GetToFile("s3://b/data/part-7", path);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("s3://b/data/part-7"), std::string::npos) << s.message();
  EXPECT_EQ(gets, 4) << "retried up to max_attempts";
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".part"));
}

TEST(S3StorageTest, DeletePrefixDeletesTheObjectsAndAbortsTheUnfinishedUploads) {
  auto fake = std::make_unique<FakeTransport>([](const HttpRequest& r) -> Result<HttpResponse> {
    if (r.method == "GET" && r.url.find("list-type=2") != std::string::npos) {
      return HttpResponse{200, {}, "<ListBucketResult><Contents><Key>out/_temporary/w-0/a</Key><Size>1</Size></Contents>"
                                   "<Contents><Key>out/_temporary/w-0/b</Key><Size>1</Size></Contents></ListBucketResult>"};
    }
    if (r.method == "GET" && r.url.find("uploads=") != std::string::npos) {
      if (r.url.find("key-marker=") == std::string::npos) {
        return HttpResponse{200, {}, "<ListMultipartUploadsResult><IsTruncated>true</IsTruncated>"
                                     "<NextKeyMarker>out/_temporary/w-0/big</NextKeyMarker><NextUploadIdMarker>U1"
                                     "</NextUploadIdMarker><Upload><Key>out/_temporary/w-0/big</Key><UploadId>U1</UploadId>"
                                     "</Upload></ListMultipartUploadsResult>"};
      }
      return HttpResponse{200, {}, "<ListMultipartUploadsResult><Upload><Key>out/_temporary/w-1/huge</Key>"
                                   "<UploadId>U2</UploadId></Upload></ListMultipartUploadsResult>"};
    }
    if (r.method == "DELETE") return HttpResponse{204, {}, ""};
    return HttpResponse{500, {}, ""};
  });
  FakeTransport* transport = fake.get();
  FakeClock clock;
  S3Storage s3(TestConfig(), std::move(fake), clock);
  ASSERT_TRUE(s3.DeletePrefix("s3://b/out/_temporary").ok());
  std::set<std::string> deleted;
  for (const HttpRequest& r : transport->requests) {
    if (r.method == "GET") EXPECT_NE(r.url.find("prefix=out%2F_temporary%2F"), std::string::npos) << r.url;
    if (r.method == "DELETE") deleted.insert(r.url.substr(r.url.find("/b/")));
  }
  EXPECT_EQ(deleted, (std::set<std::string>{"/b/out/_temporary/w-0/a", "/b/out/_temporary/w-0/b",
                                            "/b/out/_temporary/w-0/big?uploadId=U1",
                                            "/b/out/_temporary/w-1/huge?uploadId=U2"}));
}

TEST(S3StorageTest, MapsRefusedCredentialsAndMissingBuckets) {
  auto fake = std::make_unique<FakeTransport>([](const HttpRequest& r) -> Result<HttpResponse> {
    if (r.url.find("/nobucket") != std::string::npos) return HttpResponse{404, {}, ""};
    return HttpResponse{403, {}, "<Error><Code>InvalidAccessKeyId</Code></Error>"};
  });
  FakeClock clock;
  S3Storage s3(TestConfig(), std::move(fake), clock);
  Status missing = s3.CheckRoot("s3://nobucket/x");
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_NE(missing.message().find("\"nobucket\" does not exist"), std::string::npos);
  Status denied = s3.List("s3://b/x").status();
  EXPECT_EQ(denied.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(denied.message().find("AWS_ACCESS_KEY_ID"), std::string::npos);
}

}  // namespace
}  // namespace shoal::storage
