// Fuzzes the parsers of the S3 service's XML replies (storage/s3/s3_xml.h): they read
// whatever a server, a proxy or an attacker sends back and must never crash or hang.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "storage/s3/s3_xml.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string xml(reinterpret_cast<const char*>(data), size);
  auto page = shoal::storage::ParseListObjectsV2(xml);
  if (page.ok()) {
    for (const auto& entry : page->entries) {
      if (entry.key.empty() || entry.size < 0) std::abort();  // the parser's promises
    }
    if (page->truncated && page->next_token.empty()) std::abort();
  }
  auto uploads = shoal::storage::ParseListMultipartUploads(xml);
  if (uploads.ok()) {
    for (const auto& [key, id] : uploads->uploads) {
      if (key.empty() || id.empty()) std::abort();
    }
    if (uploads->truncated && uploads->next_key_marker.empty()) std::abort();
  }
  (void)shoal::storage::ParseUploadId(xml);
  (void)shoal::storage::ParseS3Error(xml);
  return 0;
}
