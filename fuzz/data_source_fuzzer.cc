// The trainer's data files: IDX image and label files (raw or gzip) and CSV rows, written
// from the input to a scratch directory and read as the Data and MemoryData layers do:
// count, load a range, shape and fill a batch with a transform. The first byte picks the
// format and the transform, the second where the IDX images end and the labels begin.
// Nothing may crash, hang or allocate what a header merely promises.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "train/data_source.h"

namespace {

const std::string& ScratchDir() {
  static const std::string dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("shoal-fuzz-data-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d.string();
  }();
  return dir;
}

void Write(const std::string& path, const uint8_t* data, size_t size) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                                 static_cast<std::streamsize>(size));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shoal::train;
  if (size < 2) return 0;
  const uint8_t pick = data[0];
  const uint8_t* body = data + 2;
  const size_t body_size = size - 2;
  DataSpec spec;
  if (pick & 1) {
    spec.source = ScratchDir() + "/rows.csv";
    Write(spec.source, body, body_size);
    if (pick & 2) spec.channels = 1, spec.height = 2, spec.width = 2;
  } else {
    size_t split = body_size * data[1] / 255;
    spec.source = ScratchDir() + "/images-idx3";
    spec.label_source = ScratchDir() + "/labels-idx1";
    Write(spec.source, body, split);
    Write(spec.label_source, body + split, body_size - split);
  }
  auto count = CountRecords(spec);
  if (!count.ok() || *count < 0) return 0;
  int64_t end = std::min<int64_t>(*count, 64);
  auto loaded = LoadRange(spec, 0, end);
  if (!loaded.ok()) return 0;
  Transform transform;
  transform.crop_size = (pick >> 2) & 3;
  transform.mirror = (pick >> 4) & 1;
  if ((pick >> 5) & 1) transform.mean_value = {0.5f};
  auto shape = TransformedShape(*loaded, transform);
  if (!shape.ok() || loaded->size() == 0 || shape->size() * loaded->size() > (1 << 22)) return 0;
  std::vector<float> out(static_cast<size_t>(shape->size() * loaded->size()));
  std::vector<float> labels(static_cast<size_t>(loaded->size()));
  FillBatch(*loaded, transform, (pick >> 6) & 1, 7, 0, loaded->size(), out.data(), labels.data());
  return 0;
}
