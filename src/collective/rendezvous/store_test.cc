#include <gtest/gtest.h>
#include <httplib.h>

#include <thread>

#include "collective/rendezvous/file_store.h"
#include "collective/rendezvous/http_store.h"
#include "collective/rendezvous/http_store_handler.h"
#include "collective/rendezvous/memory_store.h"
#include "collective/rendezvous/prefix_store.h"
#include "testing/scratch_directory.h"

namespace shoal::collective {
namespace {

using std::chrono::milliseconds;

// The behaviour every Store must show.
void ExerciseStore(Store& store) {
  EXPECT_EQ(store.Get("a/missing").status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(store.Set("a/one", "1").ok());
  EXPECT_EQ(*store.Get("a/one"), "1");
  ASSERT_TRUE(store.Set("a/one", std::string("x\0y", 3)).ok());  // overwrite, binary value
  EXPECT_EQ(*store.Get("a/one"), std::string("x\0y", 3));
  EXPECT_EQ(store.Set("bad key!", "v").code(), StatusCode::kInvalidArgument);

  // A key that never comes: kTimeout naming it (and not the key that is there).
  Status missing = store.Wait({"a/one", "a/never"}, milliseconds(150));
  EXPECT_EQ(missing.code(), StatusCode::kTimeout) << missing.ToString();
  EXPECT_NE(missing.message().find("a/never"), std::string::npos) << missing.message();
  EXPECT_EQ(missing.message().find("a/one"), std::string::npos) << missing.message();

  std::thread setter([&] {
    std::this_thread::sleep_for(milliseconds(50));
    (void)store.Set("a/late", "here");
  });
  EXPECT_TRUE(store.Wait({"a/one", "a/late"}, milliseconds(5000)).ok());
  setter.join();
  EXPECT_EQ(*store.WaitGet("a/late", milliseconds(10)), "here");
}

TEST(StoreTest, Memory) {
  MemoryStore store;
  ExerciseStore(store);
}

TEST(StoreTest, File) {
  testing_support::ScratchDirectory scratch("store");
  FileStore store(scratch / "store");  // a directory not made yet
  ExerciseStore(store);
}

TEST(StoreTest, PrefixKeepsAttemptsApart) {
  MemoryStore base;
  PrefixStore attempt1("job-1/attempt-1", base), attempt2("job-1/attempt-2", base);
  ASSERT_TRUE(attempt1.Set("tcp/0", "old").ok());
  EXPECT_EQ(attempt2.Get("tcp/0").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(*base.Get("job-1/attempt-1/tcp/0"), "old");
  ExerciseStore(attempt2);
}

TEST(StoreTest, HttpAgainstRealServer) {
  httplib::Server server;
  HttpStoreHandler handler(milliseconds(100));
  handler.Mount(server, "/rendezvous");
  int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread loop([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(milliseconds(1));

  auto store = HttpStore::Create("http://127.0.0.1:" + std::to_string(port) + "/rendezvous/job-9/attempt-1/");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ExerciseStore(**store);
  EXPECT_EQ(*handler.store().Get("job-9/attempt-1/a/late"), "here");  // prefix lives in the URL

  httplib::Client client("127.0.0.1", port);
  auto del = client.Delete("/rendezvous/job-9/attempt-1");
  ASSERT_TRUE(del);
  EXPECT_EQ(del->body, "2");
  EXPECT_EQ((*store)->Get("a/one").status().code(), StatusCode::kNotFound);

  server.stop();
  loop.join();
  // A server that is gone: Set fails as kUnavailable, Wait gives up at its timeout.
  EXPECT_EQ((*store)->Set("k", "v").code(), StatusCode::kUnavailable);
  Status gone = (*store)->Wait({"k"}, milliseconds(100));
  EXPECT_FALSE(gone.ok());
  EXPECT_EQ(HttpStore::Create("ftp://x").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace shoal::collective
