#include "train/cluster.h"

#include <httplib.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "collective/rendezvous/file_store.h"
#include "collective/rendezvous/http_store.h"
#include "collective/rendezvous/http_store_handler.h"
#include "collective/rendezvous/prefix_store.h"
#include "collective/transport/tcp/device.h"

namespace shoal::train {
namespace {

std::string Env(const char* name, const std::string& fallback = "") {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

}  // namespace

struct Cluster::Impl {
  std::unique_ptr<collective::Store> base;
  std::unique_ptr<collective::PrefixStore> store;
  std::unique_ptr<collective::HttpStoreHandler> handler;
  std::unique_ptr<httplib::Server> server;
  std::thread server_thread;
  ~Impl() {
    if (server) server->stop();
    if (server_thread.joinable()) server_thread.join();
  }
};

int ShoalJobWorkers() { return Env("SHOAL_TRAIN_MASTER").empty() ? 0 : std::max(1, std::atoi(Env("SHOAL_WORLD_SIZE", "1").c_str())); }

Cluster::Cluster() : impl_(std::make_unique<Impl>()) {}

Cluster::~Cluster() {
  if (comm_) comm_->Close();
  comm_.reset();
}

Result<std::unique_ptr<Cluster>> Cluster::Join(const TrainFlags& flags) {
  std::unique_ptr<Cluster> cluster(new Cluster());
  ClusterPlace& place = cluster->place_;
  Impl& impl = *cluster->impl_;
  std::string host = "127.0.0.1";
  std::string prefix;
  if (flags.cluster_size > 0 && ShoalJobWorkers() == 0) {
    place.size = flags.cluster_size;
    place.rank = flags.rank < 0 ? 0 : flags.rank;
    place.local_workers = place.size;
    if (place.size > 1) {
      impl.base = std::make_unique<collective::FileStore>(flags.rendezvous);
      prefix = "shoal-train";
    }
  } else if (!Env("SHOAL_TRAIN_MASTER").empty()) {
    place.rank = std::atoi(Env("SHOAL_RANK", "0").c_str());
    place.size = std::atoi(Env("SHOAL_WORLD_SIZE", "1").c_str());
    place.local_workers = std::max(1, std::atoi(Env("SHOAL_TRAIN_LOCAL_WORKERS", "1").c_str()));
    host = Env("SHOAL_HOST", host);
    prefix = Env("SHOAL_JOB_ID", "job") + "/attempt-" + Env("SHOAL_ATTEMPT", "1");
    if (place.size > 1) {
      std::string master = Env("SHOAL_TRAIN_MASTER");
      if (place.rank == 0) {
        // Rank 0 serves the rendezvous store on its reserved port.
        int port = std::atoi(Env("SHOAL_PORT", "0").c_str());
        impl.handler = std::make_unique<collective::HttpStoreHandler>();
        impl.server = std::make_unique<httplib::Server>();
        impl.handler->Mount(*impl.server);
        if (!impl.server->bind_to_port("0.0.0.0", port)) {
          return Unavailable("cannot serve the rendezvous store on port " + std::to_string(port));
        }
        httplib::Server* server = impl.server.get();
        impl.server_thread = std::thread([server] { server->listen_after_bind(); });
      }
      ASSIGN_OR_RETURN(auto http, collective::HttpStore::Create("http://" + master + "/rendezvous"));
      impl.base = std::move(http);
    }
  }
  if (place.size > 1) {
    impl.store = std::make_unique<collective::PrefixStore>(prefix, *impl.base);
    // An HTTP store's Set is not retried: wait until rank 0 serves it (Wait retries).
    if (impl.server) RETURN_IF_ERROR(impl.store->Set("up", "1"));
    if (impl.base && !impl.server && ShoalJobWorkers() > 0) {  // the HTTP store of a Shoal job
      RETURN_IF_ERROR(impl.store->Wait({"up"}, std::chrono::milliseconds(120000)));
    }
    collective::transport::tcp::Options tcp;
    tcp.host = host;
    tcp.local_ranks = place.local_workers;
    collective::transport::tcp::Device device(tcp);
    collective::Options options;
    options.timeout = std::chrono::milliseconds(600000);  // a slow test pass on one rank
    options.connect_timeout = std::chrono::milliseconds(120000);
    ASSIGN_OR_RETURN(cluster->comm_, collective::Communicator::Create(device, *impl.store, place.rank, place.size, options));
  }
  return cluster;
}

}  // namespace shoal::train
