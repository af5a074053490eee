// What the command files of the zsets module share: the registered type, key access, argument
// parsing with Redis's error strings, the reply shapes of scores and ranges, and each file's part
// of the command table (defined in zsets.cc unless said otherwise).
#ifndef VESSEL_MODULES_ZSETS_ZSETS_H_
#define VESSEL_MODULES_ZSETS_ZSETS_H_

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vessel/module.hpp"
#include "vessel/util.hpp"
#include "zsets_type.h"

namespace vessel::zsets {

using vsl::Ctx;
using vsl::Key;

inline vsl::Type<Zset> g_zset_type;

using vsl::Vec;
using ZsetPtr = vsl::Owned<Zset>;

// The key's sorted set, or nullptr when the key does not exist. Throws WRONGTYPE.
inline Zset* GetZset(const Key& key) { return key.Get(g_zset_type); }

// After an in-place removal: an emptied set disappears, as in Redis.
inline void Commit(Key& key, const Zset& z, const char* event) {
  vsl::CommitRemoval(key, z.empty(), VSL_NOTIFY_ZSET, event);
}

// zset-max-listpack-entries / zset-max-listpack-value, read at write time.
inline ZsetLimits LimitsOf(const Ctx& ctx) {
  return ZsetLimits{ctx.Setting("zset-max-listpack-entries", 128),
                    ctx.Setting("zset-max-listpack-value", 64)};
}

// Stores a *STORE result in dst (replacing its value and TTL), or deletes dst when it is
// empty. Returns the cardinality.
int64_t StoreResult(Key& dst, std::span<const Zset::Item> sorted, const ZsetLimits& lim,
                    const char* event);

// ZADD's work once its arguments are parsed: adds or updates (scores[j], members[j]) in key 0
// by `flags` (AddFlags) and replies as ZADD (CH: added + updated) or ZINCRBY does.
void ApplyAdd(Ctx& ctx, int flags, bool ch, std::span<const double> scores,
              std::span<const std::string_view> members);

// Sorts items by (score, member bytes), the order of a sorted set.
void SortItems(std::span<Zset::Item> items);

// ---- argument parsing ----

// Redis's zslParseRange: strtod() over each bound, "(" for an exclusive one, NaN refused.
bool ParseScoreRange(std::string_view min, std::string_view max, ScoreRange* out);

// ---- replies ----

// Member-score sequences: RESP2 a flat array, RESP3 an array of [member, score] pairs.
class ItemReply {
 public:
  ItemReply(Ctx& ctx, bool withscores) : ctx_(ctx), withscores_(withscores) {}
  // n items follow; -1 = not known yet (Finish() gives it).
  void Begin(int64_t n);
  void Emit(const Zset::Item& it);
  void Finish();

 private:
  Ctx& ctx_;
  bool withscores_;
  bool deferred_ = false;
  vsl_agg agg_{};
  int64_t sent_ = 0;
};

// A score as Redis's d2string writes it into a listpack (an integer when it is one), and as
// %.17Lg (ld2string) for a skiplist: ZSCAN's two formats.
std::string_view FormatPackScore(double v, char (&buf)[40]);
std::string_view FormatScore(double v, char (&buf)[40]);

// Redis's ld2string(LD_STR_HUMAN) of a double: GEOPOS and WITHCOORD coordinates.
std::string_view FormatHuman(double v, char (&buf)[64]);

// ---- the command table ----

// What rows of two parts share: ZADD's and GEOADD's cost, ZCOUNT's and BZPOPMIN's, and the key
// at argument 2 that ZRANGESTORE and GEOSEARCHSTORE read.
inline constexpr char kLogAdd[] =
    "O(log(N)) for each item added, where N is the number of elements in the sorted set.";
inline constexpr char kLogN[] = "O(log(N)) with N being the number of elements in the sorted set.";
inline constexpr vsl_keyspec kRoSecond = vsl::KeyAt(2, VSL_KS_RO | VSL_KS_ACCESS);

// Each command file's rows, registered by zsets.cc's entry point.
std::span<const vsl::CommandDef> RangeCommands();    // zsets_range.cc
std::span<const vsl::CommandDef> PopCommands();      // zsets_pop.cc
std::span<const vsl::CommandDef> AlgebraCommands();  // zsets_algebra.cc
std::span<const vsl::CommandDef> GeoCommands();      // zsets_geo.cc (group "geo")

}  // namespace vessel::zsets

#endif  // VESSEL_MODULES_ZSETS_ZSETS_H_
