// Data sources for the Data and MemoryData layers: IDX files (MNIST, Fashion-MNIST; gzip
// or raw), LMDB databases of Caffe Datum records, and CSV rows ("label,v1,v2,...").
// A worker loads only the records of its partition (partition.h), then builds batches
// with Caffe's transform_param (scale, mean_value or mean_file, mirror, crop_size).
//
// Contract:
//  - The backend is the layer's (LMDB, IDX, CSV) or, when unset, guessed from the source:
//    "*.csv" is CSV, a name containing "idx" is IDX, a directory is LMDB.
//  - CountRecords reads only what it must (IDX header, LMDB stats, CSV lines).
//  - LoadRange returns records [begin, end) in source order; labels are integers.
//  - Errors name the source: kNotFound (missing), kInvalidArgument (bad format).
// Thread-safety: a loaded Dataset is immutable; FillBatch may run on several threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace shoal::train {

enum class Backend { kAuto, kLmdb, kIdx, kCsv };

struct DataSpec {
  std::string source;
  std::string label_source;  // IDX only
  Backend backend = Backend::kAuto;
  // CSV: the shape of one row's values (0: 1 x 1 x values).
  int channels = 0, height = 0, width = 0;
};

struct Dataset {
  int64_t total = 0;   // records in the whole source
  int64_t begin = 0;   // index of the first record held here
  int channels = 0, height = 0, width = 0;
  bool is_float = false;        // values in `floats`, else bytes in `bytes`
  std::vector<uint8_t> bytes;   // size() * channels * height * width
  std::vector<float> floats;
  std::vector<int> labels;
  int64_t size() const { return static_cast<int64_t>(labels.size()); }
  int64_t item_size() const { return static_cast<int64_t>(channels) * height * width; }
};

struct Transform {
  float scale = 1.0f;
  std::vector<float> mean_value;  // empty, one value, or one per channel
  // mean_file's blob: one value per element of an uncropped item (C x H x W), subtracted
  // at the element's own position, as Caffe's DataTransformer does; empty if none.
  std::vector<float> mean_image;
  bool mirror = false;            // random horizontal flips (TRAIN only)
  int crop_size = 0;              // random crops in TRAIN, the centre in TEST
};

Backend ResolveBackend(const DataSpec& spec);
const char* BackendName(Backend backend);
Result<int64_t> CountRecords(const DataSpec& spec);
Result<Dataset> LoadRange(const DataSpec& spec, int64_t begin, int64_t end);

// The shape FillBatch writes for one item: channels, then height and width after cropping.
struct ItemShape {
  int channels = 0, height = 0, width = 0;
  int64_t size() const { return static_cast<int64_t>(channels) * height * width; }
};
Result<ItemShape> TransformedShape(const Dataset& data, const Transform& transform);

// Writes items [first, first + count) of `data` (global record indices) into `out`
// (count * shape.size() floats) and their labels into `labels`. Random crops and mirrors
// are drawn from (seed, global index), so a batch is the same whenever it is rebuilt.
void FillBatch(const Dataset& data, const Transform& transform, bool train, uint64_t seed, int64_t first,
               int64_t count, float* out, float* labels);

}  // namespace shoal::train
