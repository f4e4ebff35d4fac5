// The trainer's data files: IDX image and label files (raw or gzip), CSV rows and LMDB
// databases of Caffe Datums, written from the input to a scratch directory and read as
// the Data and MemoryData layers do: count, load a range, shape and fill a batch with a
// transform. The first byte picks the format and the transform; the second, for IDX,
// where the images end and the labels begin; for LMDB the rest is records, each a
// length byte and that many bytes of Datum. Nothing may crash, hang or allocate what a
// header merely promises.
#include <lmdb.h>
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

// This process's scratch directory, removed when it exits.
const std::string& ScratchDir() {
  struct Scratch {
    std::string path;
    Scratch() : path((std::filesystem::temp_directory_path() / ("shoal-fuzz-data-" + std::to_string(::getpid()))).string()) {
      std::filesystem::create_directories(path);
    }
    ~Scratch() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Scratch scratch;
  return scratch.path;
}

void Write(const std::string& path, const uint8_t* data, size_t size) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                                 static_cast<std::streamsize>(size));
}

// A fresh LMDB at dir holding the length-prefixed records of [data, data + size).
bool WriteLmdb(const std::string& dir, const uint8_t* data, size_t size) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  MDB_env* env = nullptr;
  if (mdb_env_create(&env) != 0) return false;
  mdb_env_set_mapsize(env, 1 << 22);
  MDB_txn* txn = nullptr;
  MDB_dbi dbi;
  bool ok = mdb_env_open(env, dir.c_str(), MDB_NOLOCK, 0664) == 0 && mdb_txn_begin(env, nullptr, 0, &txn) == 0 &&
            mdb_dbi_open(txn, nullptr, 0, &dbi) == 0;
  for (size_t at = 0, n = 0; ok && at < size; at += 1 + data[at], ++n) {
    size_t length = std::min<size_t>(data[at], size - at - 1);
    std::string key = std::to_string(100000 + n);
    MDB_val k{key.size(), key.data()}, v{length, const_cast<uint8_t*>(data + at + 1)};
    ok = mdb_put(txn, dbi, &k, &v, 0) == 0;
  }
  if (txn != nullptr && ok) {
    ok = mdb_txn_commit(txn) == 0;
  } else if (txn != nullptr) {
    mdb_txn_abort(txn);
  }
  mdb_env_close(env);
  return ok;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shoal::train;
  if (size < 2) return 0;
  const uint8_t pick = data[0];
  const uint8_t* body = data + 2;
  const size_t body_size = size - 2;
  DataSpec spec;
  if ((pick & 3) == 3) {
    spec.source = ScratchDir() + "/lmdb";
    if (!WriteLmdb(spec.source, body, body_size)) return 0;
  } else if (pick & 1) {
    spec.source = ScratchDir() + "/rows.csv";
    Write(spec.source, body, body_size);
    if (pick & 0x80) spec.channels = 1, spec.height = 2, spec.width = 2;
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
