// HttpStoreHandler: the server side of the HTTP rendezvous store, mounted by the
// application master on its httplib::Server (normally at "/rendezvous").
//
// Contract:
//  - PUT <base>/<key> sets the key to the request body; GET <base>/<key> returns it
//    (200) or 404; GET <base>/<key>?wait_ms=N holds the request until the key is set
//    or min(N, max_wait) passes, so clients long-poll instead of spinning.
//  - DELETE <base>/<prefix> drops every key under the prefix (a finished attempt).
//  - max_wait bounds how long one request holds a server thread; keep it well below
//    the server's read timeout and size the thread pool for the expected waiters.
// Ownership: owns its MemoryStore; the server must stop before the handler dies.
// Thread-safety: handlers run on the server's threads; all state is in MemoryStore.
#pragma once

#include <chrono>
#include <string>

#include "collective/rendezvous/memory_store.h"

namespace httplib {
class Server;
}

namespace shoal::collective {

class HttpStoreHandler {
 public:
  explicit HttpStoreHandler(std::chrono::milliseconds max_wait = std::chrono::milliseconds(1000))
      : max_wait_(max_wait) {}

  // Registers the routes under `base` (no trailing slash), e.g. "/rendezvous".
  void Mount(httplib::Server& server, const std::string& base = "/rendezvous");

  // Direct access for the application master (e.g. to publish keys itself).
  MemoryStore& store() { return store_; }

 private:
  const std::chrono::milliseconds max_wait_;
  MemoryStore store_;
};

}  // namespace shoal::collective
