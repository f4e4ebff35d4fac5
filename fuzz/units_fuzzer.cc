// Fuzzes the memory-size and duration parsers: no crash, and accepted values are in range.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "common/units.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  if (auto memory = shoal::ParseMemory(text); memory.ok()) {
    if (*memory <= 0) std::abort();
    (void)shoal::FormatMemory(*memory);
  }
  if (auto duration = shoal::ParseDuration(text); duration.ok()) {
    if (*duration < 0) std::abort();
    (void)shoal::FormatDuration(*duration);
  }
  return 0;
}
