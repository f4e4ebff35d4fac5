#include "collective/transport/shm/host_identity.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

namespace shoal::collective::transport::shm {

std::string HostIdentity(const std::string& assigned) {
  std::string boot_id;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot_id;
  struct stat ns {};
  const std::string netns = stat("/proc/self/ns/net", &ns) == 0 ? std::to_string(ns.st_ino) : "?";
  if (boot_id.empty()) {  // no /proc: fall back on the host name
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    boot_id = std::string("host:") + host;
  }
  std::string id = boot_id + "/" + netns;
  if (!assigned.empty()) id += "/" + assigned;
  return id;
}

}  // namespace shoal::collective::transport::shm
