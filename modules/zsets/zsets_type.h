// The sorted-set value type of the zsets module: two representations behind one Zset class,
// with the operations the commands (and GEO*) build on.
//
// Representations, chosen as Redis 7.0 chooses them (zset-max-listpack-entries = 128 and
// zset-max-listpack-value = 64 by default, read by the commands at write time):
//   - Pack (pack.h): one block, entries in order; "listpack" to OBJECT ENCODING.
//   - Tree: a MemberTable (member -> score, O(1)) and an OrderTree over it (order, O(log n)
//     ranks); "skiplist" to OBJECT ENCODING, the name tools check.
// A new set is a pack; it becomes a tree when an insertion crosses a limit, and never goes
// back, as in Redis. Sets built whole (*STORE results, RESTORE) take the representation Redis
// gives them. Values are only touched under their key's lock.
#ifndef VESSEL_MODULES_ZSETS_ZSETS_TYPE_H_
#define VESSEL_MODULES_ZSETS_ZSETS_TYPE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "member_table.h"
#include "order_tree.h"
#include "pack.h"
#include "vessel/module.hpp"
#include "vessel/ordered/lex_range.h"
#include "vessel/util.hpp"

namespace vessel::zsets {

// The pack limits (zset-max-listpack-entries, zset-max-listpack-value).
struct ZsetLimits {
  int64_t entries = 128;
  int64_t value = 64;
};

// ZADD's options and outcomes (Redis's ZADD_IN_* / ZADD_OUT_*).
enum AddFlags : int { kAddIncr = 1, kAddNx = 2, kAddXx = 4, kAddGt = 8, kAddLt = 16 };
enum AddResult : int { kAdded = 1, kUpdated = 2, kNop = 4, kNan = 8 };

// A score interval (Redis's zrangespec).
struct ScoreRange {
  double min = 0, max = 0;
  bool minex = false, maxex = false;
  bool GteMin(double v) const { return minex ? v > min : v >= min; }
  bool LteMax(double v) const { return maxex ? v < max : v <= max; }
};

// A member interval (Redis's zlexrangespec): a bound is a string, "-" or "+" (the SDK's
// ZRANGEBYLEX bound, vessel/ordered/lex_range.h).
using ordered::LexBound;
// Redis's sdscmplex: "-" below and "+" above every string, each equal only to itself.
int CompareLex(const LexBound& a, const LexBound& b);
int CompareLex(std::string_view v, const LexBound& b);
struct LexRange {
  LexBound min, max;
  bool GteMin(std::string_view v) const {
    const int c = CompareLex(v, min);
    return min.exclusive ? c > 0 : c >= 0;
  }
  bool LteMax(std::string_view v) const {
    const int c = CompareLex(v, max);
    return max.exclusive ? c < 0 : c <= 0;
  }
};

class Zset {
 public:
  enum class Rep : uint8_t { kPack, kTree };
  struct Item {
    std::string_view member;
    double score;
  };
  static constexpr size_t npos = SIZE_MAX;

  // An empty set (pack): fill it before storing it. Throws std::bad_alloc.
  Zset() = default;
  static Zset* New() { return vsl::New<Zset>(); }
  // An empty set in the tree representation (a range stored by rank beyond the pack limit
  // starts this way in Redis). Throws std::bad_alloc.
  static Zset* NewTree();
  // A set of `items`, already in order and distinct, represented as Redis would represent a
  // set built whole with these limits. Throws std::bad_alloc.
  static Zset* Build(std::span<const Item> items, const ZsetLimits& lim);
  ~Zset();
  Zset(const Zset&) = delete;
  Zset& operator=(const Zset&) = delete;

  Rep rep() const { return big_ == nullptr ? Rep::kPack : Rep::kTree; }
  size_t size() const { return big_ == nullptr ? pack_.size() : big_->table.size(); }
  bool empty() const { return size() == 0; }

  bool Score(std::string_view m, double* out) const;
  // Redis's zsetAdd: adds or updates m by `flags`; returns AddResult bits (kNan: the
  // resulting score is NaN, nothing changed). *newscore gets the score m has (or would have
  // for ZINCRBY's reply). Throws std::bad_alloc with the set unchanged.
  int Add(std::string_view m, double score, int flags, double* newscore, const ZsetLimits& lim);
  bool Remove(std::string_view m);
  // 0-based rank in ascending order, or -1.
  int64_t Rank(std::string_view m) const;

  // Elements with a score below `score` (inclusive: not above it).
  size_t CountBelow(double score, bool inclusive) const;
  // The ranks [*first, *last] of a score range; false when it holds nothing.
  bool RangeRanks(const ScoreRange& r, size_t* first, size_t* last) const;
  // Redis's zzl/zsl First/LastInLexRange: the rank, or npos. A pack scans as Redis's listpack
  // does; a tree descends assuming member order (every score equal, as BYLEX requires).
  size_t FirstInLex(const LexRange& r) const;
  size_t LastInLex(const LexRange& r) const;

  // The element at rank r (< size()): O(1) for... see Walker for sequences.
  Item At(size_t r) const;
  // Removes n elements from rank `from`. Never throws.
  void EraseRanks(size_t from, size_t n);

  // Random access by table position (tree only): positions [0, high()), some holes.
  uint32_t high() const { return big_->table.high(); }
  bool Live(uint32_t pos) const { return big_->table.Live(pos); }
  Item ItemAt(uint32_t pos) const { return {big_->table.Member(pos), big_->table.Score(pos)}; }
  // A uniformly random element (not empty).
  Item Random() const;

  // The type callbacks (vsl::Type).
  size_t MemUsage() const;
  Zset* Clone() const;
  void Serialize(vsl::Writer& w) const;
  static Zset* Deserialize(vsl::Reader& r, uint32_t encver);
  size_t FreeEffort() const { return size(); }
  const char* Encoding() const { return big_ == nullptr ? "listpack" : "skiplist"; }
  int Visit(vsl_visit_fn fn, void* ud) const;

 private:
  friend class Walker;
  struct Big {
    MemberTable table;
    OrderTree tree;
  };
  void ToTree();
  int AddToPack(std::string_view m, double score, int flags, double* newscore,
                const ZsetLimits& lim);
  int AddToTree(std::string_view m, double score, int flags, double* newscore);
  void TreeInsert(std::string_view m, double score);
  void TreeErase(uint32_t pos);
  void MaybeCompact();

  Pack pack_;
  Big* big_ = nullptr;
};

// Walks a set that does not change meanwhile, forward or backward from a rank: O(log n) to
// start on a tree, O(n) on a pack (its entry offsets are collected), then O(1) per step.
class Walker {
 public:
  Walker(const Zset& z, size_t rank);
  ~Walker();
  Walker(const Walker&) = delete;
  Walker& operator=(const Walker&) = delete;
  bool valid() const;
  Zset::Item Get() const;
  void Next();
  void Prev();

 private:
  const Zset& z_;
  OrderTree::Cursor cur_;
  uint32_t* offs_ = nullptr;  // pack: every entry's offset
  uint32_t small_[128];
  int64_t i_ = 0;
};

}  // namespace vessel::zsets

#endif  // VESSEL_MODULES_ZSETS_ZSETS_TYPE_H_
