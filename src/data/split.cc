#include "data/split.h"

#include <algorithm>
#include <numeric>

namespace shoal::data {

std::vector<std::vector<Shard>> SplitWholeFiles(const std::vector<storage::ObjectInfo>& files, int n) {
  std::vector<std::vector<Shard>> out(static_cast<size_t>(std::max(n, 0)));
  if (n <= 0) return out;
  std::vector<size_t> order(files.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return files[a].size > files[b].size; });
  std::vector<int64_t> load(out.size(), 0);
  for (size_t i : order) {
    size_t task = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[task] += files[i].size;
    out[task].push_back({files[i].uri, 0, files[i].size, files[i].size});
  }
  for (auto& shards : out) {
    std::sort(shards.begin(), shards.end(), [](const Shard& a, const Shard& b) { return a.uri < b.uri; });
  }
  return out;
}

std::vector<std::vector<Shard>> SplitRanges(const std::vector<storage::ObjectInfo>& files, int n) {
  std::vector<std::vector<Shard>> out(static_cast<size_t>(std::max(n, 0)));
  if (n <= 0) return out;
  int64_t total = 0;
  for (const auto& f : files) total += f.size;
  // Task t owns the global bytes [total*t/n, total*(t+1)/n).
  int64_t position = 0;  // global offset of the current file's start
  for (const auto& f : files) {
    int64_t begin = position, end = position + f.size;
    for (int t = 0; t < n; ++t) {
      int64_t lo = total * t / n, hi = total * (t + 1) / n;
      int64_t a = std::max(lo, begin), b = std::min(hi, end);
      if (a < b) out[static_cast<size_t>(t)].push_back({f.uri, a - begin, b - a, f.size});
    }
    position = end;
  }
  return out;
}

Json ShardsToJson(const std::vector<Shard>& shards) {
  Json out = Json::array();
  for (const auto& s : shards) {
    out.push_back({{"uri", s.uri}, {"offset", s.offset}, {"length", s.length}, {"file_size", s.file_size}});
  }
  return out;
}

std::vector<Shard> ShardsFromJson(const Json& json) {
  std::vector<Shard> out;
  if (!json.is_array()) return out;
  for (const Json& s : json) {
    out.push_back({s.value("uri", ""), s.value("offset", int64_t{0}), s.value("length", int64_t{0}),
                   s.value("file_size", int64_t{0})});
  }
  return out;
}

}  // namespace shoal::data
