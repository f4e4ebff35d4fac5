// Fuzzes the job spec parser: any bytes, read as a spec file, optionally followed by
// flag overrides (lines after a "\n---flags\n" marker). It must never crash, hang or leak,
// and whatever it accepts must be a valid spec that survives a JSON round trip.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "spec/spec_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string input(reinterpret_cast<const char*>(data), size);
  shoal::ParseOptions options;
  options.source_name = "fuzz.yaml";
  options.base_dir = "/tmp";
  size_t marker = input.find("\n---flags\n");
  std::string text = input.substr(0, marker);
  if (marker != std::string::npos) {
    std::string flags = input.substr(marker + 10);
    size_t start = 0;
    while (start < flags.size() && options.overrides.size() < 8) {
      size_t end = flags.find('\n', start);
      if (end == std::string::npos) end = flags.size();
      options.overrides.push_back(flags.substr(start, end - start));
      start = end + 1;
    }
  }
  auto parsed = shoal::ParseJobSpec(text, options);
  if (!parsed.ok()) return 0;
  const shoal::JobSpec& spec = parsed->spec;
  if (spec.roles.empty()) std::abort();
  for (const auto& role : spec.roles) {
    if (role.instances < 1 || role.command.empty() || !(role.resources.cpus > 0) || role.resources.memory_bytes <= 0) {
      std::abort();
    }
  }
  if (shoal::ToJson(shoal::JobSpecFromJson(shoal::ToJson(spec))) != shoal::ToJson(spec)) std::abort();
  return 0;
}
