#include "collective/rendezvous/file_store.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace shoal::collective {

namespace fs = std::filesystem;

Status FileStore::Set(const std::string& key, const std::string& value) {
  if (!IsValidStoreKey(key)) return InvalidArgument("bad rendezvous key '" + key + "'");
  const std::string path = PathOf(key);
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec) return Unavailable("cannot create rendezvous directory for " + path + ": " + ec.message());
  const std::string tmp = path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(tmp_counter_++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(value.data(), static_cast<std::streamsize>(value.size()));
    out.close();
    if (!out) return Unavailable("cannot write rendezvous file " + tmp + ": " + std::strerror(errno));
  }
  fs::rename(tmp, path, ec);
  if (ec) return Unavailable("cannot rename rendezvous file to " + path + ": " + ec.message());
  return Status::Ok();
}

Result<std::string> FileStore::Get(const std::string& key) {
  if (!IsValidStoreKey(key)) return InvalidArgument("bad rendezvous key '" + key + "'");
  std::ifstream in(PathOf(key), std::ios::binary);
  if (!in) return NotFound("rendezvous key '" + key + "' is not set (no file under " + dir_ + ")");
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

Status FileStore::Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::microseconds(100);
  while (true) {
    std::vector<std::string> missing;
    for (const auto& k : keys) {
      std::error_code ec;
      if (!fs::exists(PathOf(k), ec)) missing.push_back(k);
    }
    if (missing.empty()) return Status::Ok();
    if (std::chrono::steady_clock::now() >= deadline) return MissingKeysTimeout(missing, timeout);
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::milliseconds(10));
  }
}

}  // namespace shoal::collective
