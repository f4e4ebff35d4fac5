// Fuzzes the reading of an archive's listing (spec/shipping.h): what `tar -tv` and
// `unzip -Z` print for a user's archive, whose member names the user chooses. The first
// byte picks the tool; the rest is its output. Reading never crashes, and no listing it
// accepts lets through a member that would be unpacked outside the task's folder or that
// is not a plain file or folder: a listing is either refused, or every member it yields
// is checked by UnsafeMembers, which must name the first bad one.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "spec/shipping.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto members = data[0] % 2 == 0 ? shoal::ParseTarListing(text) : shoal::ParseZipListing(text);
  if (!members.ok()) return 0;
  std::string unsafe = shoal::UnsafeMembers(*members);
  bool every_member_safe = true;
  for (const shoal::ArchiveMember& member : *members) {
    if (member.path.empty()) std::abort();  // a member the unpacker could not name
    if ((member.kind != '-' && member.kind != 'd') || shoal::EscapesFolder(member.path)) every_member_safe = false;
  }
  if (every_member_safe != unsafe.empty()) std::abort();
  return 0;
}
