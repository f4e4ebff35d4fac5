#include "collective/rendezvous/http_store.h"

#include <httplib.h>

#include <thread>

namespace shoal::collective {

Result<std::unique_ptr<HttpStore>> HttpStore::Create(const std::string& url) {
  const std::string scheme = "http://";
  if (url.compare(0, scheme.size(), scheme) != 0)
    return InvalidArgument("rendezvous URL '" + url + "' must start with http://");
  size_t slash = url.find('/', scheme.size());
  std::string host_port = url.substr(0, slash);
  std::string path = slash == std::string::npos ? "" : url.substr(slash);
  while (!path.empty() && path.back() == '/') path.pop_back();
  if (host_port.size() == scheme.size()) return InvalidArgument("rendezvous URL '" + url + "' has no host");
  return std::unique_ptr<HttpStore>(new HttpStore(host_port, path));
}

Status HttpStore::Set(const std::string& key, const std::string& value) {
  if (!IsValidStoreKey(key)) return InvalidArgument("bad rendezvous key '" + key + "'");
  httplib::Client client(host_port_);
  client.set_connection_timeout(5);
  auto res = client.Put(path_ + "/" + key, value, "application/octet-stream");
  if (!res) return Unavailable("rendezvous server " + host_port_ + " unreachable: " + httplib::to_string(res.error()));
  if (res->status != 200 && res->status != 204)
    return Unavailable("rendezvous server " + host_port_ + " refused set of '" + key + "': HTTP " +
                       std::to_string(res->status) + " " + res->body);
  return Status::Ok();
}

Result<std::string> HttpStore::Fetch(const std::string& key, int64_t wait_ms, bool* found) {
  *found = false;
  if (!IsValidStoreKey(key)) return InvalidArgument("bad rendezvous key '" + key + "'");
  httplib::Client client(host_port_);
  client.set_connection_timeout(5);
  client.set_read_timeout(std::chrono::milliseconds(wait_ms + 5000));
  std::string target = path_ + "/" + key;
  if (wait_ms > 0) target += "?wait_ms=" + std::to_string(wait_ms);
  auto res = client.Get(target);
  if (!res) return Unavailable("rendezvous server " + host_port_ + " unreachable: " + httplib::to_string(res.error()));
  if (res->status == 404) return std::string();
  if (res->status != 200)
    return Unavailable("rendezvous server " + host_port_ + " failed get of '" + key + "': HTTP " +
                       std::to_string(res->status));
  *found = true;
  return res->body;
}

Result<std::string> HttpStore::Get(const std::string& key) {
  bool found = false;
  ASSIGN_OR_RETURN(std::string value, Fetch(key, 0, &found));
  if (!found) return NotFound("rendezvous key '" + key + "' is not set");
  return value;
}

Status HttpStore::Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  Status last_error;
  for (size_t i = 0; i < keys.size();) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    bool found = false;
    auto res = Fetch(keys[i], std::max<int64_t>(0, left.count()), &found);
    if (found) {
      ++i;
      continue;
    }
    if (!res.ok()) {
      if (res.status().code() == StatusCode::kInvalidArgument) return res.status();
      last_error = res.status();
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      if (!last_error.ok()) return last_error.WithContext("rendezvous wait timed out");
      return MissingKeysTimeout(std::vector<std::string>(keys.begin() + i, keys.end()), timeout);
    }
    if (!res.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(20));  // server down: retry
  }
  return Status::Ok();
}

}  // namespace shoal::collective
