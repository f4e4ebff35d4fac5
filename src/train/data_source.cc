#include "train/data_source.h"

#include <lmdb.h>
#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>

#include "train/caffe.pb.h"
#include "train/uri.h"

namespace shoal::train {
namespace {

// The largest item (image) any reader takes: 256 Mi values.
constexpr int64_t kMaxItemValues = int64_t{1} << 28;

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// ---- IDX (big-endian header: magic 0x0000 08 ndim, then ndim uint32 dimensions) ----

struct GzFile {
  gzFile f = nullptr;
  ~GzFile() {
    if (f != nullptr) gzclose(f);
  }
};

Status GzRead(gzFile f, void* buf, size_t n, const std::string& path) {
  char* p = static_cast<char*>(buf);
  while (n > 0) {
    unsigned chunk = static_cast<unsigned>(std::min<size_t>(n, 1 << 30));
    int got = gzread(f, p, chunk);
    if (got <= 0) return InvalidArgument(path + ": the IDX file is truncated or not gzip/IDX");
    p += got;
    n -= static_cast<size_t>(got);
  }
  return Status::Ok();
}

struct IdxHeader {
  std::vector<int64_t> dims;  // dims[0] items, each of the product of the others bytes
};



Result<IdxHeader> ReadIdxHeader(gzFile f, const std::string& path) {
  unsigned char magic[4];
  RETURN_IF_ERROR(GzRead(f, magic, 4, path));
  if (magic[0] != 0 || magic[1] != 0 || magic[2] != 0x08 || magic[3] < 1 || magic[3] > 4) {
    return InvalidArgument(path + ": not an IDX file of unsigned bytes (bad magic)");
  }
  IdxHeader header;
  int64_t item = 1;
  for (int i = 0; i < magic[3]; ++i) {
    unsigned char d[4];
    RETURN_IF_ERROR(GzRead(f, d, 4, path));
    int64_t dim = (int64_t{d[0]} << 24) | (d[1] << 16) | (d[2] << 8) | d[3];
    if (i > 0) {  // dims[0] counts the items; the others make one item
      if (dim == 0 || item > kMaxItemValues / dim) {
        return InvalidArgument(path + ": dimension " + std::to_string(i + 1) + " (" + std::to_string(dim) +
                               ") makes an IDX item empty or larger than " + std::to_string(kMaxItemValues >> 20) + " MiB");
      }
      item *= dim;
    }
    header.dims.push_back(dim);
  }
  return header;
}

// Appends n bytes of f to out, a chunk at a time: a header that promises more than the
// file holds fails at its end instead of allocating what it promised.
Status GzReadAppend(gzFile f, size_t n, std::vector<uint8_t>* out, const std::string& path) {
  constexpr size_t kChunk = 1 << 20;
  while (n > 0) {
    size_t take = std::min(n, kChunk);
    size_t at = out->size();
    out->resize(at + take);
    RETURN_IF_ERROR(GzRead(f, out->data() + at, take, path));
    n -= take;
  }
  return Status::Ok();
}

Result<std::unique_ptr<GzFile>> OpenGz(const std::string& uri) {
  ASSIGN_OR_RETURN(std::string path, LocalCopy(uri));
  auto file = std::make_unique<GzFile>();
  file->f = gzopen(path.c_str(), "rb");
  if (file->f == nullptr) return NotFound("cannot open data source " + uri + ": no such file");
  return file;
}

std::string IdxLabels(const DataSpec& spec) {
  if (!spec.label_source.empty()) return spec.label_source;
  std::string labels = spec.source;
  auto pos = labels.find("images-idx3");
  if (pos != std::string::npos) labels.replace(pos, 11, "labels-idx1");
  return labels;
}

Result<int64_t> CountIdx(const DataSpec& spec) {
  ASSIGN_OR_RETURN(auto file, OpenGz(spec.source));
  ASSIGN_OR_RETURN(IdxHeader header, ReadIdxHeader(file->f, spec.source));
  return header.dims[0];
}

Result<Dataset> LoadIdx(const DataSpec& spec, int64_t begin, int64_t end) {
  ASSIGN_OR_RETURN(auto images, OpenGz(spec.source));
  ASSIGN_OR_RETURN(IdxHeader ih, ReadIdxHeader(images->f, spec.source));
  std::string label_uri = IdxLabels(spec);
  if (label_uri == spec.source) {
    return InvalidArgument(spec.source + ": cannot tell the IDX labels file; set data_param { label_source: ... }");
  }
  ASSIGN_OR_RETURN(auto labels, OpenGz(label_uri));
  ASSIGN_OR_RETURN(IdxHeader lh, ReadIdxHeader(labels->f, label_uri));
  if (lh.dims.size() != 1 || lh.dims[0] != ih.dims[0]) {
    return InvalidArgument(label_uri + ": the labels file does not match " + spec.source + " (" +
                           std::to_string(lh.dims[0]) + " labels for " + std::to_string(ih.dims[0]) + " images)");
  }
  if (begin < 0 || begin > end || end > ih.dims[0]) {
    return InvalidArgument(spec.source + ": records [" + std::to_string(begin) + ", " + std::to_string(end) +
                           ") asked of an IDX file of " + std::to_string(ih.dims[0]));
  }
  Dataset data;
  data.total = ih.dims[0];
  data.begin = begin;
  data.channels = ih.dims.size() == 4 ? static_cast<int>(ih.dims[1]) : 1;
  data.height = ih.dims.size() >= 3 ? static_cast<int>(ih.dims[ih.dims.size() - 2]) : 1;
  data.width = ih.dims.size() >= 2 ? static_cast<int>(ih.dims.back()) : 1;
  int64_t item = data.item_size();
  // Skip to the partition, then read only it.
  std::vector<char> skip(1 << 20);
  for (int64_t left = begin * item; left > 0;) {
    size_t n = static_cast<size_t>(std::min<int64_t>(left, static_cast<int64_t>(skip.size())));
    RETURN_IF_ERROR(GzRead(images->f, skip.data(), n, spec.source));
    left -= static_cast<int64_t>(n);
  }
  RETURN_IF_ERROR(GzReadAppend(images->f, static_cast<size_t>((end - begin) * item), &data.bytes, spec.source));
  if (gzseek(labels->f, static_cast<z_off_t>(8 + begin), SEEK_SET) < 0) return InvalidArgument(label_uri + ": truncated");
  std::vector<uint8_t> l;
  RETURN_IF_ERROR(GzReadAppend(labels->f, static_cast<size_t>(end - begin), &l, label_uri));
  data.labels.assign(l.begin(), l.end());
  return data;
}

// ---- LMDB of Caffe Datum records ----

struct Lmdb {
  MDB_env* env = nullptr;
  MDB_txn* txn = nullptr;
  MDB_dbi dbi = 0;
  ~Lmdb() {
    if (txn != nullptr) mdb_txn_abort(txn);
    if (env != nullptr) mdb_env_close(env);
  }
};

Result<std::unique_ptr<Lmdb>> OpenLmdb(const std::string& uri) {
  ASSIGN_OR_RETURN(std::string path, LocalCopy(uri));
  struct stat st{};
  if (stat(path.c_str(), &st) != 0) return NotFound("cannot open LMDB " + uri + ": no such directory");
  auto db = std::make_unique<Lmdb>();
  // Map only what the file holds: writers such as Caffe's record a 1 TiB map size, which
  // a reader has no need of (and cannot map where address space is scarce). LMDB raises
  // the size to the committed data's if this is less.
  struct stat data_st{};
  std::string data_file = S_ISDIR(st.st_mode) ? path + "/data.mdb" : path;
  size_t map_size = stat(data_file.c_str(), &data_st) == 0 ? static_cast<size_t>(data_st.st_size) : 0;
  int rc = mdb_env_create(&db->env);
  if (rc == 0) rc = mdb_env_set_mapsize(db->env, std::max<size_t>(map_size, 1 << 20));
  unsigned flags = MDB_RDONLY | MDB_NOTLS | MDB_NOLOCK | (S_ISDIR(st.st_mode) ? 0 : MDB_NOSUBDIR);
  if (rc == 0) rc = mdb_env_open(db->env, path.c_str(), flags, 0664);
  if (rc == 0) rc = mdb_txn_begin(db->env, nullptr, MDB_RDONLY, &db->txn);
  if (rc == 0) rc = mdb_dbi_open(db->txn, nullptr, 0, &db->dbi);
  if (rc != 0) return InvalidArgument("cannot open LMDB " + uri + ": " + mdb_strerror(rc));
  return db;
}

Result<int64_t> CountLmdb(const DataSpec& spec) {
  ASSIGN_OR_RETURN(auto db, OpenLmdb(spec.source));
  MDB_stat st;
  int rc = mdb_stat(db->txn, db->dbi, &st);
  if (rc != 0) return InvalidArgument("LMDB " + spec.source + ": " + mdb_strerror(rc));
  return static_cast<int64_t>(st.ms_entries);
}

Result<Dataset> LoadLmdb(const DataSpec& spec, int64_t begin, int64_t end) {
  ASSIGN_OR_RETURN(auto db, OpenLmdb(spec.source));
  ASSIGN_OR_RETURN(int64_t total, CountLmdb(spec));
  MDB_cursor* cursor = nullptr;
  int rc = mdb_cursor_open(db->txn, db->dbi, &cursor);
  if (rc != 0) return InvalidArgument("LMDB " + spec.source + ": " + mdb_strerror(rc));
  std::unique_ptr<MDB_cursor, void (*)(MDB_cursor*)> closer(cursor, mdb_cursor_close);
  Dataset data;
  data.total = total;
  data.begin = begin;
  MDB_val key, value;
  int64_t index = 0;
  caffe::Datum datum;
  for (rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST); rc == 0 && index < end;
       rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT), ++index) {
    if (index < begin) continue;
    std::string where = "LMDB " + spec.source + " record " + std::to_string(index) + " (key '" +
                        std::string(static_cast<char*>(key.mv_data), key.mv_size) + "')";
    if (!datum.ParseFromArray(value.mv_data, static_cast<int>(value.mv_size))) {
      return InvalidArgument(where + " is not a Caffe Datum");
    }
    if (datum.encoded()) return InvalidArgument(where + " holds an encoded image; shoal train reads raw Datum pixels only");
    if (data.labels.empty()) {
      int64_t c = datum.channels(), h = datum.height(), w = datum.width();
      if (c <= 0 || h <= 0 || w <= 0 || c * h > kMaxItemValues / w) {
        return InvalidArgument(where + " has shape " + std::to_string(c) + "x" + std::to_string(h) + "x" +
                               std::to_string(w) + ": each must be positive and an item at most " +
                               std::to_string(kMaxItemValues >> 20) + " Mi values");
      }
      data.channels = datum.channels();
      data.height = datum.height();
      data.width = datum.width();
      data.is_float = datum.data().empty();
    } else if (datum.channels() != data.channels || datum.height() != data.height || datum.width() != data.width) {
      return InvalidArgument(where + " has shape " + std::to_string(datum.channels()) + "x" +
                             std::to_string(datum.height()) + "x" + std::to_string(datum.width()) + ", unlike the records before it");
    }
    int64_t item = data.item_size();
    if (data.is_float) {
      if (datum.float_data_size() != item) return InvalidArgument(where + " has " + std::to_string(datum.float_data_size()) + " values, not " + std::to_string(item));
      data.floats.insert(data.floats.end(), datum.float_data().begin(), datum.float_data().end());
    } else {
      if (static_cast<int64_t>(datum.data().size()) != item) return InvalidArgument(where + " has " + std::to_string(datum.data().size()) + " bytes, not " + std::to_string(item));
      data.bytes.insert(data.bytes.end(), datum.data().begin(), datum.data().end());
    }
    data.labels.push_back(datum.label());
  }
  if (index < end) return InvalidArgument("LMDB " + spec.source + " ended at record " + std::to_string(index));
  return data;
}

// ---- CSV: label,v1,v2,... per line; a first line that is not numbers is a header ----

bool ParseRow(const std::string& line, std::vector<float>* values) {
  values->clear();
  const char* p = line.c_str();
  while (*p != '\0') {
    char* next = nullptr;
    float v = std::strtof(p, &next);
    if (next == p) return false;
    values->push_back(v);
    p = next;
    while (*p == ' ' || *p == '\t' || *p == '\r') ++p;
    if (*p == ',') ++p;
    else if (*p != '\0') return false;
  }
  return !values->empty();
}

template <typename F>
Status ForEachCsvRow(const DataSpec& spec, F&& f) {
  ASSIGN_OR_RETURN(std::string path, LocalCopy(spec.source));
  std::ifstream in(path);
  if (!in) return NotFound("cannot open data source " + spec.source + ": no such file");
  std::string line;
  std::vector<float> values;
  int64_t line_no = 0, index = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (!ParseRow(line, &values)) {
      if (line_no == 1) continue;  // a header
      return InvalidArgument(spec.source + ":" + std::to_string(line_no) + ": not a row of numbers (label,v1,v2,...)");
    }
    RETURN_IF_ERROR(f(index++, values, line_no));
  }
  return Status::Ok();
}

Result<int64_t> CountCsv(const DataSpec& spec) {
  int64_t n = 0;
  RETURN_IF_ERROR(ForEachCsvRow(spec, [&](int64_t, const std::vector<float>&, int64_t) {
    ++n;
    return Status::Ok();
  }));
  return n;
}

Result<Dataset> LoadCsv(const DataSpec& spec, int64_t begin, int64_t end) {
  Dataset data;
  data.begin = begin;
  data.is_float = true;
  int64_t expected = -1;
  RETURN_IF_ERROR(ForEachCsvRow(spec, [&](int64_t index, const std::vector<float>& row, int64_t line) -> Status {
    int64_t n = static_cast<int64_t>(row.size()) - 1;
    if (expected < 0) expected = n;
    if (n != expected || n < 1) {
      return InvalidArgument(spec.source + ":" + std::to_string(line) + ": " + std::to_string(n) + " values, but the first row has " + std::to_string(expected));
    }
    if (!(row[0] >= 0 && row[0] <= 1e9f && row[0] == std::floor(row[0]))) {
      return InvalidArgument(spec.source + ":" + std::to_string(line) + ": the label (the first value) is not a class number 0, 1, 2 ...");
    }
    ++data.total;
    if (index < begin || index >= end) return Status::Ok();
    data.labels.push_back(static_cast<int>(row[0]));
    data.floats.insert(data.floats.end(), row.begin() + 1, row.end());
    return Status::Ok();
  }));
  if (spec.channels > 0 && spec.height > 0 && spec.width > 0) {
    if (int64_t{spec.channels} * spec.height * spec.width != expected) {
      return InvalidArgument(spec.source + ": rows have " + std::to_string(expected) + " values, not channels x height x width = " +
                             std::to_string(int64_t{spec.channels} * spec.height * spec.width));
    }
    data.channels = spec.channels;
    data.height = spec.height;
    data.width = spec.width;
  } else {
    data.channels = 1;
    data.height = 1;
    data.width = static_cast<int>(std::max<int64_t>(expected, 0));
  }
  return data;
}

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

Backend ResolveBackend(const DataSpec& spec) {
  if (spec.backend != Backend::kAuto) return spec.backend;
  std::string s = LocalPath(spec.source);
  if (EndsWith(s, ".csv")) return Backend::kCsv;
  auto slash = s.rfind('/');
  if (s.find("idx", slash == std::string::npos ? 0 : slash) != std::string::npos) return Backend::kIdx;
  return Backend::kLmdb;
}

const char* BackendName(Backend backend) {
  switch (backend) {
    case Backend::kLmdb: return "LMDB";
    case Backend::kIdx: return "IDX";
    case Backend::kCsv: return "CSV";
    default: return "auto";
  }
}

Result<int64_t> CountRecords(const DataSpec& spec) {
  switch (ResolveBackend(spec)) {
    case Backend::kIdx: return CountIdx(spec);
    case Backend::kCsv: return CountCsv(spec);
    default: return CountLmdb(spec);
  }
}

Result<Dataset> LoadRange(const DataSpec& spec, int64_t begin, int64_t end) {
  switch (ResolveBackend(spec)) {
    case Backend::kIdx: return LoadIdx(spec, begin, end);
    case Backend::kCsv: return LoadCsv(spec, begin, end);
    default: return LoadLmdb(spec, begin, end);
  }
}

Result<ItemShape> TransformedShape(const Dataset& data, const Transform& transform) {
  ItemShape shape{data.channels, data.height, data.width};
  if (transform.crop_size > 0) {
    if (transform.crop_size > data.height || transform.crop_size > data.width) {
      return InvalidArgument("crop_size " + std::to_string(transform.crop_size) + " is larger than the images (" +
                             std::to_string(data.height) + "x" + std::to_string(data.width) + ")");
    }
    shape.height = shape.width = transform.crop_size;
  }
  if (!transform.mean_value.empty() && transform.mean_value.size() != 1 &&
      static_cast<int>(transform.mean_value.size()) != data.channels) {
    return InvalidArgument("mean_value has " + std::to_string(transform.mean_value.size()) + " values for " +
                           std::to_string(data.channels) + " channels (give one, or one per channel)");
  }
  if (!transform.mean_image.empty() && static_cast<int64_t>(transform.mean_image.size()) != data.item_size()) {
    return InvalidArgument("mean_file holds " + std::to_string(transform.mean_image.size()) + " values; the images have " +
                           std::to_string(data.channels) + "x" + std::to_string(data.height) + "x" + std::to_string(data.width) +
                           " (a mean of another data set?)");
  }
  return shape;
}

void FillBatch(const Dataset& data, const Transform& t, bool train, uint64_t seed, int64_t first, int64_t count,
               float* out, float* labels) {
  const int C = data.channels, H = data.height, W = data.width;
  const int oh = t.crop_size > 0 ? t.crop_size : H, ow = t.crop_size > 0 ? t.crop_size : W;
  const int64_t item = data.item_size();
  for (int64_t i = 0; i < count; ++i) {
    int64_t global = first + i;
    int64_t local = global - data.begin;
    uint64_t r = Mix(seed ^ Mix(static_cast<uint64_t>(global)));
    int y0 = (H - oh) / 2, x0 = (W - ow) / 2;
    bool flip = false;
    if (train) {
      if (t.crop_size > 0) {
        y0 = static_cast<int>(r % static_cast<uint64_t>(H - oh + 1));
        x0 = static_cast<int>((r >> 20) % static_cast<uint64_t>(W - ow + 1));
      }
      flip = t.mirror && ((r >> 40) & 1);
    }
    float* dst = out + i * C * oh * ow;
    for (int c = 0; c < C; ++c) {
      float mean = t.mean_value.empty() ? 0.0f : t.mean_value[t.mean_value.size() == 1 ? 0 : c];
      for (int y = 0; y < oh; ++y) {
        for (int x = 0; x < ow; ++x) {
          int sx = x0 + (flip ? ow - 1 - x : x);
          int64_t src = local * item + (static_cast<int64_t>(c) * H + (y0 + y)) * W + sx;
          float v = data.is_float ? data.floats[src] : static_cast<float>(data.bytes[src]);
          if (!t.mean_image.empty()) mean = t.mean_image[static_cast<size_t>(src - local * item)];
          dst[(c * oh + y) * ow + x] = (v - mean) * t.scale;
        }
      }
    }
    labels[i] = static_cast<float>(data.labels[local]);
  }
}

}  // namespace shoal::train
