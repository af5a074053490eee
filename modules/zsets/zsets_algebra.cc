// The zsets module's set algebra: ZUNION ZINTER ZDIFF ZUNIONSTORE ZINTERSTORE ZDIFFSTORE
// ZINTERCARD (Redis's zunionInterDiffGenericCommand), with WEIGHTS and AGGREGATE SUM|MIN|MAX.
// Inputs may be sorted sets or plain sets (type "set", owned by the sets module, read through
// the SDK's generic visit, ABI 1.2): a set's members count with score 1, as in Redis.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "zsets.h"

namespace vessel::zsets {
namespace {

enum class Op { kUnion, kInter, kDiff };
enum class Aggregate { kSum, kMin, kMax };

// One input: a sorted set, a copy of a plain set's members (score 1), or nothing.
struct Source {
  std::string_view name;  // the key: two inputs naming the same key are the same value
  const Zset* z = nullptr;
  MemberTable* set = nullptr;  // owned
  double weight = 1;

  size_t size() const { return z != nullptr ? z->size() : set != nullptr ? set->size() : 0; }
  bool Find(std::string_view m, double* score) const {
    if (z != nullptr) return z->Score(m, score);
    if (set == nullptr || set->Find(m) < 0) return false;
    *score = 1;
    return true;
  }
  template <class F>
  void ForEach(F&& f) const {
    if (z != nullptr) {
      for (Walker w(*z, 0); w.valid(); w.Next()) f(w.Get());
    } else if (set != nullptr) {
      for (uint32_t p = 0; p < set->high(); ++p) {
        if (set->Live(p)) f(Zset::Item{set->Member(p), 1.0});
      }
    }
  }
};

struct Sources {
  Vec<Source> v;
  ~Sources() {
    for (Source& s : v) vsl::Delete(s.set);
  }
};

// A plain set's members, read through the sets module's visit callback.
MemberTable* CopySet(const Key& key) {
  MemberTable* t = vsl::New<MemberTable>();
  bool failed = false;
  const int rc = key.Visit([&](std::string_view m, double) {
    try {
      if (t->Find(m) < 0) t->Insert(m, 1.0);
      return true;
    } catch (...) {
      failed = true;
      return false;
    }
  });
  if (rc != VSL_OK || failed) {
    vsl::Delete(t);
    if (failed) throw std::bad_alloc();
    vsl::Fail("cannot read the set at '" + std::string(key.name()) + "'");
  }
  return t;
}

void AggregateInto(double* target, double v, Aggregate agg) {
  switch (agg) {
    case Aggregate::kSum:
      *target += v;
      if (std::isnan(*target)) *target = 0;  // inf + -inf: Redis's convention
      break;
    case Aggregate::kMin:
      *target = v < *target ? v : *target;
      break;
    case Aggregate::kMax:
      *target = v > *target ? v : *target;
      break;
  }
}

struct AlgebraOptions {
  Aggregate aggregate = Aggregate::kSum;
  bool withscores = false;
  int64_t limit = 0;
};

// The inputs of keys [first, first + n) (key indexes), type-checked in order as Redis does
// before it parses any option.
void OpenSources(Ctx& ctx, int first, int n, Sources* out) {
  out->v.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    Key key = ctx.key(first + i);
    Source& s = out->v[i];
    s.name = key.name();
    void* v = nullptr;
    const int rc = key.GetRaw(g_zset_type.handle(), &v);
    if (rc == VSL_OK) {
      s.z = static_cast<const Zset*>(v);
    } else if (rc == VSL_WRONGTYPE) {
      const char* type = key.TypeName();
      if (type == nullptr || std::strcmp(type, "set") != 0) vsl::WrongType();
      s.set = CopySet(key);
    }
  }
}

// WEIGHTS / AGGREGATE / WITHSCORES / LIMIT after the keys, from argument j.
AlgebraOptions ParseOptions(Ctx& ctx, int j, Op op, bool store, bool card, Sources& src) {
  AlgebraOptions o;
  const auto setnum = static_cast<int>(src.v.size());
  while (j < ctx.argc()) {
    const int remaining = ctx.argc() - j;
    if (op != Op::kDiff && !card && remaining >= setnum + 1 && ctx.ArgIs(j, "weights")) {
      ++j;
      for (int i = 0; i < setnum; ++i, ++j) {
        if (!vsl::ParseDouble(ctx.arg(j), &src.v[i].weight)) {
          vsl::Fail("weight value is not a float");
        }
      }
    } else if (op != Op::kDiff && !card && remaining >= 2 && ctx.ArgIs(j, "aggregate")) {
      if (ctx.ArgIs(j + 1, "sum")) {
        o.aggregate = Aggregate::kSum;
      } else if (ctx.ArgIs(j + 1, "min")) {
        o.aggregate = Aggregate::kMin;
      } else if (ctx.ArgIs(j + 1, "max")) {
        o.aggregate = Aggregate::kMax;
      } else {
        vsl::SyntaxError();
      }
      j += 2;
    } else if (!store && !card && ctx.ArgIs(j, "withscores")) {
      o.withscores = true;
      ++j;
    } else if (card && remaining >= 2 && ctx.ArgIs(j, "limit")) {
      o.limit = vsl::IntArgInRange(ctx, j + 1, 0, INT64_MAX, "LIMIT can't be negative");
      j += 2;
    } else {
      vsl::SyntaxError();
    }
  }
  return o;
}

// Redis's INTER: members of the smallest input found in every other, scores aggregated in
// input order (sorted by size). Stops at `limit` members (0 = all); returns how many.
template <class Emit>
size_t Inter(const Sources& src, const AlgebraOptions& o, Emit&& emit) {
  const Source& s0 = src.v[0];
  if (s0.size() == 0) return 0;
  size_t found = 0;
  bool done = false;
  s0.ForEach([&](const Zset::Item& it) {
    if (done) return;
    double score = s0.weight * it.score;
    if (std::isnan(score)) score = 0;
    size_t j = 1;
    for (; j < src.v.size(); ++j) {
      double v;
      if (src.v[j].name == s0.name) {
        v = it.score * src.v[j].weight;
      } else if (src.v[j].Find(it.member, &v)) {
        v *= src.v[j].weight;
      } else {
        break;
      }
      AggregateInto(&score, v, o.aggregate);
    }
    if (j < src.v.size()) return;
    emit(Zset::Item{it.member, score});
    ++found;
    if (o.limit > 0 && found >= static_cast<uint64_t>(o.limit)) done = true;
  });
  return found;
}

// The result of ZUNION/ZINTER/ZDIFF in `acc` (members and scores) and `items` (sorted views
// into `acc` or the inputs).
void Compute(const Sources& src, Op op, const AlgebraOptions& o, MemberTable* acc,
             Vec<Zset::Item>* items) {
  if (op == Op::kInter) {
    Inter(src, o, [&](const Zset::Item& it) { items->push_back(it); });
  } else if (op == Op::kUnion) {
    if (!src.v.empty()) acc->Reserve(src.v.back().size());
    for (const Source& s : src.v) {
      s.ForEach([&](const Zset::Item& it) {
        double score = s.weight * it.score;
        if (std::isnan(score)) score = 0;
        const int64_t pos = acc->Find(it.member);
        if (pos < 0) {
          acc->Insert(it.member, score);
        } else {
          double cur = acc->Score(static_cast<uint32_t>(pos));
          AggregateInto(&cur, score, o.aggregate);
          acc->SetScore(static_cast<uint32_t>(pos), cur);
        }
      });
    }
    items->reserve(acc->size());
    for (uint32_t p = 0; p < acc->high(); ++p) items->push_back({acc->Member(p), acc->Score(p)});
  } else {
    const Source& s0 = src.v[0];
    for (size_t j = 1; j < src.v.size(); ++j) {
      if (src.v[j].name == s0.name) return;  // everything would be removed
    }
    s0.ForEach([&](const Zset::Item& it) {
      double unused;
      for (size_t j = 1; j < src.v.size(); ++j) {
        if (src.v[j].Find(it.member, &unused)) return;
      }
      items->push_back(it);
    });
  }
  SortItems(*items);
}

// The body of every algebra command: numkeys at argument `numkeys_at`, the destination (for
// *STORE) is key 0 and the inputs follow.
void AlgebraGeneric(Ctx& ctx, int numkeys_at, Op op, bool store, bool card, const char* name) {
  const int64_t setnum = ctx.IntArg(numkeys_at);
  if (setnum < 1) {
    vsl::Fail(std::string("at least 1 input key is needed for '") + name + "' command");
  }
  if (setnum > ctx.argc() - (numkeys_at + 1)) vsl::SyntaxError();
  Sources src;
  OpenSources(ctx, store ? 1 : 0, static_cast<int>(setnum), &src);
  const AlgebraOptions o =
      ParseOptions(ctx, numkeys_at + 1 + static_cast<int>(setnum), op, store, card, src);
  if (op != Op::kDiff) {
    std::stable_sort(src.v.begin(), src.v.end(),
                     [](const Source& a, const Source& b) { return a.size() < b.size(); });
  }
  if (card) {
    return ctx.Int(static_cast<int64_t>(Inter(src, o, [](const Zset::Item&) {})));
  }
  MemberTable acc;
  Vec<Zset::Item> items;
  Compute(src, op, o, &acc, &items);
  if (store) {
    Key dst = ctx.key(0);
    return ctx.Int(StoreResult(dst, items, LimitsOf(ctx), name));
  }
  ItemReply out(ctx, o.withscores);
  out.Begin(static_cast<int64_t>(items.size()));
  for (const Zset::Item& it : items) out.Emit(it);
}

}  // namespace

// ZUNION numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM | MIN | MAX]
// [WITHSCORES]
void CmdZUnion(Ctx& ctx) { AlgebraGeneric(ctx, 1, Op::kUnion, false, false, "zunion"); }

// ZINTER numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM | MIN | MAX]
// [WITHSCORES]
void CmdZInter(Ctx& ctx) { AlgebraGeneric(ctx, 1, Op::kInter, false, false, "zinter"); }

// ZDIFF numkeys key [key ...] [WITHSCORES]
void CmdZDiff(Ctx& ctx) { AlgebraGeneric(ctx, 1, Op::kDiff, false, false, "zdiff"); }

// ZUNIONSTORE destination numkeys key [key ...] [WEIGHTS weight [weight ...]]
// [AGGREGATE SUM | MIN | MAX]
void CmdZUnionStore(Ctx& ctx) { AlgebraGeneric(ctx, 2, Op::kUnion, true, false, "zunionstore"); }

// ZINTERSTORE destination numkeys key [key ...] [WEIGHTS weight [weight ...]]
// [AGGREGATE SUM | MIN | MAX]
void CmdZInterStore(Ctx& ctx) { AlgebraGeneric(ctx, 2, Op::kInter, true, false, "zinterstore"); }

// ZDIFFSTORE destination numkeys key [key ...]
void CmdZDiffStore(Ctx& ctx) { AlgebraGeneric(ctx, 2, Op::kDiff, true, false, "zdiffstore"); }

// ZINTERCARD numkeys key [key ...] [LIMIT limit]
void CmdZInterCard(Ctx& ctx) { AlgebraGeneric(ctx, 1, Op::kInter, false, true, "zintercard"); }

// ---- the command table ----

namespace {

using namespace vsl::table;

constexpr vsl_keyspec kInputs = vsl::KeyNum(1, VSL_KS_RO | VSL_KS_ACCESS, 0, 1);
constexpr vsl_keyspec kStoreInputs = vsl::KeyNum(2, VSL_KS_RO | VSL_KS_ACCESS, 0, 1);

constexpr char kUnionCost[] =
    "O(N)+O(M*log(M)) with N being the sum of the sizes of the input sorted sets, and M being "
    "the number of elements in the resulting sorted set.";
constexpr char kUnionStoreCost[] =
    "O(N)+O(M log(M)) with N being the sum of the sizes of the input sorted sets, and M being "
    "the number of elements in the resulting sorted set.";
constexpr char kInterCost[] =
    "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the "
    "number of input sorted sets and M being the number of elements in the resulting sorted "
    "set.";
constexpr char kDiffCost[] =
    "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N "
    "is the size of the first set, and K is the size of the result set.";
constexpr char kZUnionSyntax[] =
    "numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM | MIN | MAX] [WITHSCORES]";
constexpr char kZUnionStoreSyntax[] =
    "destination numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM | MIN | MAX]";
constexpr char kZInterCardComplexity[] =
    "O(N*K) worst case with N being the smallest input sorted set, K being the number of input "
    "sorted sets.";

// clang-format off
constexpr vsl::CommandDef kCommands[] = {
    {.name = "ZUNION", .arity = -3, .flags = kRead, .keys = {kInputs},
     .handler = vsl::Handler<CmdZUnion>, .since = "6.2.0", .summary = "Add multiple sorted sets",
     .syntax = kZUnionSyntax, .complexity = kUnionCost},
    {.name = "ZINTER", .arity = -3, .flags = kRead, .keys = {kInputs},
     .handler = vsl::Handler<CmdZInter>, .since = "6.2.0",
     .summary = "Intersect multiple sorted sets",
     .syntax = kZUnionSyntax, .complexity = kInterCost},
    {.name = "ZDIFF", .arity = -3, .flags = kRead, .keys = {kInputs},
     .handler = vsl::Handler<CmdZDiff>, .since = "6.2.0",
     .summary = "Subtract multiple sorted sets",
     .syntax = "numkeys key [key ...] [WITHSCORES]", .complexity = kDiffCost},
    {.name = "ZUNIONSTORE", .arity = -4, .flags = kWrite | kDenyOom,
     .keys = {kOwUpdate, kStoreInputs}, .handler = vsl::Handler<CmdZUnionStore>, .since = "2.0.0",
     .summary = "Add multiple sorted sets and store the resulting sorted set in a new key",
     .syntax = kZUnionStoreSyntax, .complexity = kUnionStoreCost},
    {.name = "ZINTERSTORE", .arity = -4, .flags = kWrite | kDenyOom,
     .keys = {kOwUpdate, kStoreInputs}, .handler = vsl::Handler<CmdZInterStore>, .since = "2.0.0",
     .summary = "Intersect multiple sorted sets and store the resulting sorted set in a new key",
     .syntax = kZUnionStoreSyntax, .complexity = kInterCost},
    {.name = "ZDIFFSTORE", .arity = -4, .flags = kWrite | kDenyOom,
     .keys = {kOwUpdate, kStoreInputs},
     .handler = vsl::Handler<CmdZDiffStore>, .since = "6.2.0",
     .summary = "Subtract multiple sorted sets and store the resulting sorted set in a new key",
     .syntax = "destination numkeys key [key ...]", .complexity = kDiffCost},
    {.name = "ZINTERCARD", .arity = -3, .flags = kRead, .keys = {kInputs},
     .handler = vsl::Handler<CmdZInterCard>, .since = "7.0.0",
     .summary = "Intersect multiple sorted sets and return the cardinality of the result",
     .syntax = "numkeys key [key ...] [LIMIT limit]", .complexity = kZInterCardComplexity},
};
// clang-format on

}  // namespace

std::span<const vsl::CommandDef> AlgebraCommands() { return kCommands; }

}  // namespace vessel::zsets
