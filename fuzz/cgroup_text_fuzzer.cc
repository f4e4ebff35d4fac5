// Fuzzes what Shoal reads to find its cgroups (/proc/self/mountinfo, /proc/self/cgroup)
// and the group it hands the AM on its command line: no crash, a found group names the
// limited controllers, and a decoded group encodes back to what decodes to it again.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "isolation/cgroup_group.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  // Three inputs in one: mountinfo, then /proc/self/cgroup, then an encoded group, split at '\x01'.
  size_t first = text.find('\x01');
  size_t second = first == std::string::npos ? std::string::npos : text.find('\x01', first + 1);
  std::string mountinfo = text.substr(0, first);
  std::string proc_cgroup = first == std::string::npos ? text : text.substr(first + 1, second - first - 1);
  std::string encoded = second == std::string::npos ? text : text.substr(second + 1);
  if (auto found = shoal::FindCgroups(mountinfo, proc_cgroup, "/nonexistent-fuzz-root"); found.ok()) {
    for (const char* controller : shoal::kLimitedControllers) {
      if (found->Dir(controller).empty()) std::abort();
    }
  }
  if (auto group = shoal::CgroupGroup::Decode(encoded); group.ok()) {
    auto again = shoal::CgroupGroup::Decode(group->Encode());
    if (!again.ok() || again->dirs != group->dirs || again->version != group->version) std::abort();
  }
  return 0;
}
