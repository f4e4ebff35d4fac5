// NameSearchTotals: how many jobs a search by name matched, remembered per searched text,
// so that a search repeated (the jobs page refreshing every few seconds) does not read
// every distinct name of the history again to count its matches.
//
// Contract:
//  - Find(text, jobs) gives the remembered total of a search for `text`, or nothing. The
//    totals are exact for a history of `jobs` jobs: when the history holds any other
//    number (a job added or removed by another writer), every total is forgotten.
//  - Remember(text, total, jobs) keeps a total counted in a history of `jobs` jobs. At most
//    kMaxTexts texts are kept; the oldest is forgotten first.
//  - Added(name) counts one new job called `name` into every remembered total it matches
//    (case-sensitive substring, as instr() and JobStore::List), and into the job count.
//  - Forget() forgets everything (a transaction rolled back).
// Thread-safety: none; JobStore calls it under its mutex.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>

namespace shoal {

class NameSearchTotals {
 public:
  static constexpr size_t kMaxTexts = 64;

  std::optional<int64_t> Find(const std::string& text, int64_t jobs);
  void Remember(const std::string& text, int64_t total, int64_t jobs);
  void Added(const std::string& name);
  void Forget();

 private:
  int64_t jobs_ = -1;  // the history's job count the totals are exact for; -1: none kept
  std::map<std::string, int64_t> totals_;
  std::deque<std::string> oldest_first_;
};

}  // namespace shoal
