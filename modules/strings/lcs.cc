// The longest common subsequence of two strings (Redis 7.0's lcsCommand algorithm).
#include "lcs.h"

#include <algorithm>
#include <memory>

#include "vessel/module.hpp"

namespace vessel::strings {
namespace {

struct FreeDeleter {
  void operator()(void* p) const { vsl::Free(p); }
};

// The dynamic programming table: at(i, j) is the LCS length of a[0, i) and b[0, j). Its memory
// comes from the host allocator and is bounded as in Redis.
class Table {
 public:
  Table(std::string_view a, std::string_view b, uint64_t max_bytes) : width_(b.size() + 1) {
    const uint64_t bytes = LcsTableBytes(a.size(), b.size());
    if (bytes > max_bytes)
      vsl::Fail("Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
    cells_.reset(static_cast<uint32_t*>(vsl::Api().alloc(static_cast<size_t>(bytes))));
    if (cells_ == nullptr)
      vsl::Fail("Insufficient memory, failed allocating transient memory for LCS");
    for (uint64_t i = 0; i <= a.size(); ++i) {
      for (uint64_t j = 0; j <= b.size(); ++j) {
        if (i == 0 || j == 0) {
          at(i, j) = 0;
        } else if (a[i - 1] == b[j - 1]) {
          at(i, j) = at(i - 1, j - 1) + 1;
        } else {
          at(i, j) = std::max(at(i - 1, j), at(i, j - 1));
        }
      }
    }
  }
  uint32_t& at(uint64_t i, uint64_t j) { return cells_[j + i * width_]; }

 private:
  uint64_t width_;
  std::unique_ptr<uint32_t[], FreeDeleter> cells_;
};

// Walks the table back from (a.size(), b.size()) as Redis does: a match steps diagonally and
// grows the current run backwards; otherwise the step goes up when that keeps a strictly longer
// LCS, else left, and ends the run. Runs are also ended at the start of either string.
void Walk(Table& t, std::string_view a, std::string_view b, int64_t min_match_len, LcsResult* r) {
  r->lcs.resize(r->len);
  uint64_t i = a.size(), j = b.size(), idx = r->len;
  bool in_run = false;
  LcsMatch m{};
  while (i > 0 && j > 0) {
    bool emit = false;
    if (a[i - 1] == b[j - 1]) {
      r->lcs[--idx] = a[i - 1];
      if (!in_run) {
        m = {uint32_t(i - 1), uint32_t(i - 1), uint32_t(j - 1), uint32_t(j - 1)};
        in_run = true;
      } else {  // inside a run the walk only moves diagonally: extend it backwards
        --m.a_start, --m.b_start;
      }
      emit = m.a_start == 0 || m.b_start == 0;
      --i, --j;
    } else {
      t.at(i - 1, j) > t.at(i, j - 1) ? --i : --j;
      emit = in_run;
    }
    if (emit) {
      if (m.a_end - m.a_start + 1 >= static_cast<uint64_t>(min_match_len)) r->matches.push_back(m);
      in_run = false;
    }
  }
}

}  // namespace

uint64_t LcsTableBytes(size_t a_len, size_t b_len) {
  return (uint64_t{a_len} + 1) * (uint64_t{b_len} + 1) * sizeof(uint32_t);
}

LcsResult OpLcs(std::string_view a, std::string_view b, bool walk, int64_t min_match_len,
                uint64_t max_table_bytes) {
  Table table(a, b, max_table_bytes);
  LcsResult r;
  r.len = table.at(a.size(), b.size());
  if (walk) Walk(table, a, b, min_match_len, &r);
  return r;
}

}  // namespace vessel::strings
