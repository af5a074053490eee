// The zsets module: Redis's sorted-set family and geo commands as a Vessel module (value type
// "zset"). This file holds the registration table and the entry point; the commands live in
// zsets.cc (single key and ranges), zsets_pop.cc (pops, blocking pops, ZRANDMEMBER, ZSCAN),
// zsets_algebra.cc (ZUNION/ZINTER/ZDIFF and their STORE forms, ZINTERCARD) and geo.cc.
//
// Commands: ZADD ZINCRBY ZREM ZCARD ZSCORE ZMSCORE ZRANK ZREVRANK ZCOUNT ZLEXCOUNT ZRANGE
// ZRANGESTORE ZREVRANGE ZRANGEBYSCORE ZREVRANGEBYSCORE ZRANGEBYLEX ZREVRANGEBYLEX
// ZREMRANGEBYRANK ZREMRANGEBYSCORE ZREMRANGEBYLEX ZPOPMIN ZPOPMAX ZMPOP BZPOPMIN BZPOPMAX BZMPOP
// ZRANDMEMBER ZUNION ZINTER ZDIFF ZUNIONSTORE ZINTERSTORE ZDIFFSTORE ZINTERCARD ZSCAN, and
// GEOADD GEOPOS GEODIST GEOHASH GEOSEARCH GEOSEARCHSTORE GEORADIUS GEORADIUSBYMEMBER
// GEORADIUS_RO GEORADIUSBYMEMBER_RO, with Redis 7.0's replies, error strings, key specs and
// edge cases (redis-server 7.0 is the reference the tests compare against).
//
// Deliberate differences from Redis 7.0:
//   - ZSCAN cursors of a large set are positions in its entry table, not reverse-binary bucket
//     indexes; the guarantee is the same (every member present for the whole iteration is
//     returned, some may come twice).
//   - ZRANGEBYLEX and friends on a large set whose scores differ descend as if the set were in
//     member order (Redis's skiplist result then depends on its random levels; a small set
//     behaves exactly as Redis's listpack).
//   - ZRANDMEMBER with a negative count whose reply would pass 512 MiB is refused ("ERR value is
//     out of range, the reply would be too large"); Redis 7.0 builds it until memory runs out.
//   - The blocking commands re-run on every write to their keys: a client blocked on a key that
//     another client sets to a non-zset value gets the WRONGTYPE error (Redis keeps it blocked).
//   - Geo: see geo.cc.
// Needs ABI 1.2 (key_type_name, key_visit) to take plain sets as ZUNION/ZINTER/ZDIFF inputs.
#include <cstdio>
#include <random>

#include "entry_table.h"
#include "zsets_cmd.h"

namespace vessel::zsets {

void CmdZAdd(Ctx&);
void CmdZIncrBy(Ctx&);
void CmdZRem(Ctx&);
void CmdZCard(Ctx&);
void CmdZScore(Ctx&);
void CmdZMScore(Ctx&);
void CmdZRank(Ctx&);
void CmdZRevRank(Ctx&);
void CmdZCount(Ctx&);
void CmdZLexCount(Ctx&);
void CmdZRange(Ctx&);
void CmdZRangeStore(Ctx&);
void CmdZRevRange(Ctx&);
void CmdZRangeByScore(Ctx&);
void CmdZRevRangeByScore(Ctx&);
void CmdZRangeByLex(Ctx&);
void CmdZRevRangeByLex(Ctx&);
void CmdZRemRangeByRank(Ctx&);
void CmdZRemRangeByScore(Ctx&);
void CmdZRemRangeByLex(Ctx&);
void CmdZPopMin(Ctx&);
void CmdZPopMax(Ctx&);
void CmdZMPop(Ctx&);
void CmdBZPopMin(Ctx&);
void CmdBZPopMax(Ctx&);
void CmdBZMPop(Ctx&);
void CmdZRandMember(Ctx&);
void CmdZScan(Ctx&);
void CmdZUnion(Ctx&);
void CmdZInter(Ctx&);
void CmdZDiff(Ctx&);
void CmdZUnionStore(Ctx&);
void CmdZInterStore(Ctx&);
void CmdZDiffStore(Ctx&);
void CmdZInterCard(Ctx&);
void CmdGeoAdd(Ctx&);
void CmdGeoPos(Ctx&);
void CmdGeoDist(Ctx&);
void CmdGeoHash(Ctx&);
void CmdGeoRadius(Ctx&);
void CmdGeoRadiusByMember(Ctx&);
void CmdGeoRadiusRo(Ctx&);
void CmdGeoRadiusByMemberRo(Ctx&);
void CmdGeoSearch(Ctx&);
void CmdGeoSearchStore(Ctx&);

namespace {

using vsl::Handler;

constexpr uint64_t kRead = VSL_CMD_READONLY;
constexpr uint64_t kWrite = VSL_CMD_WRITE;
constexpr uint64_t kFast = VSL_CMD_FAST;
constexpr uint64_t kDenyOom = VSL_CMD_DENYOOM;
constexpr uint64_t kBlocking = VSL_CMD_BLOCKING;
constexpr uint64_t kNoScript = VSL_CMD_NOSCRIPT;

constexpr vsl_keyspec kRo = vsl::KeyAt(1, VSL_KS_RO);
constexpr vsl_keyspec kRoAccess = vsl::KeyAt(1, VSL_KS_RO | VSL_KS_ACCESS);
constexpr vsl_keyspec kRwUpdate = vsl::KeyAt(1, VSL_KS_RW | VSL_KS_UPDATE);
constexpr vsl_keyspec kRwDelete = vsl::KeyAt(1, VSL_KS_RW | VSL_KS_DELETE);
constexpr vsl_keyspec kPop = vsl::KeyAt(1, VSL_KS_RW | VSL_KS_ACCESS | VSL_KS_DELETE);
constexpr vsl_keyspec kOwDest = vsl::KeyAt(1, VSL_KS_OW | VSL_KS_UPDATE);
constexpr vsl_keyspec kRoSecond = vsl::KeyAt(2, VSL_KS_RO | VSL_KS_ACCESS);
constexpr vsl_keyspec kInputs = vsl::KeyNum(1, VSL_KS_RO | VSL_KS_ACCESS, 0, 1);
constexpr vsl_keyspec kStoreInputs = vsl::KeyNum(2, VSL_KS_RO | VSL_KS_ACCESS, 0, 1);
// GEORADIUS[BYMEMBER]'s destinations: the key after the first STORE / STOREDIST found from
// argument `from` on.
constexpr vsl_keyspec StoreAfter(const char* keyword, int32_t from) {
  return vsl_keyspec{
      sizeof(vsl_keyspec), VSL_KS_OW | VSL_KS_UPDATE, from, keyword, 0, 1, 0, 0, 0, nullptr};
}

constexpr char kZ[] = "sorted-set";
constexpr char kGeo[] = "geo";
constexpr char kRandom[] = "nondeterministic_output";
constexpr char kLogAdd[] =
    "O(log(N)) for each item added, where N is the number of elements in the sorted set.";
constexpr char kLogN[] = "O(log(N)) with N being the number of elements in the sorted set.";
constexpr char kRangeCost[] =
    "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
    "elements returned.";
constexpr char kRangeByCost[] =
    "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
    "elements being returned. If M is constant (e.g. always asking for the first 10 elements "
    "with LIMIT), you can consider it O(log(N)).";
constexpr char kRemRangeCost[] =
    "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
    "elements removed by the operation.";
constexpr char kPopCost[] =
    "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number "
    "of elements popped.";
constexpr char kMPopCost[] =
    "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements "
    "in the sorted set, and M being the number of elements popped.";
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
constexpr char kRadiusCost[] =
    "O(N+log(M)) where N is the number of elements inside the bounding box of the circular "
    "area delimited by center and radius and M is the number of items inside the index.";
constexpr char kSearchCost[] =
    "O(N+log(M)) where N is the number of elements in the grid-aligned bounding box area "
    "around the shape provided as the filter and M is the number of items inside the shape";

constexpr vsl::CommandDef kCommands[] = {
    {"ZADD",
     -4,
     kWrite | kDenyOom | kFast,
     {kRwUpdate},
     Handler<CmdZAdd>,
     kZ,
     "1.2.0",
     "Add one or more members to a sorted set, or update its score if it already exists",
     "key [NX | XX] [GT | LT] [CH] [INCR] score member [score member ...]",
     kLogAdd},
    {"ZINCRBY",
     4,
     kWrite | kDenyOom | kFast,
     {vsl::KeyAt(1, VSL_KS_RW | VSL_KS_ACCESS | VSL_KS_UPDATE)},
     Handler<CmdZIncrBy>,
     kZ,
     "1.2.0",
     "Increment the score of a member in a sorted set",
     "key increment member",
     "O(log(N)) where N is the number of elements in the sorted set."},
    {"ZREM",
     -3,
     kWrite | kFast,
     {kRwDelete},
     Handler<CmdZRem>,
     kZ,
     "1.2.0",
     "Remove one or more members from a sorted set",
     "key member [member ...]",
     "O(M*log(N)) with N being the number of elements in the sorted set and M the number of "
     "elements to be removed."},
    {"ZCARD",
     2,
     kRead | kFast,
     {kRo},
     Handler<CmdZCard>,
     kZ,
     "1.2.0",
     "Get the number of members in a sorted set",
     "key",
     "O(1)"},
    {"ZSCORE",
     3,
     kRead | kFast,
     {kRoAccess},
     Handler<CmdZScore>,
     kZ,
     "1.2.0",
     "Get the score associated with the given member in a sorted set",
     "key member",
     "O(1)"},
    {"ZMSCORE",
     -3,
     kRead | kFast,
     {kRoAccess},
     Handler<CmdZMScore>,
     kZ,
     "6.2.0",
     "Get the score associated with the given members in a sorted set",
     "key member [member ...]",
     "O(N) where N is the number of members being requested."},
    {"ZRANK",
     3,
     kRead | kFast,
     {kRoAccess},
     Handler<CmdZRank>,
     kZ,
     "2.0.0",
     "Determine the index of a member in a sorted set",
     "key member",
     "O(log(N))"},
    {"ZREVRANK",
     3,
     kRead | kFast,
     {kRoAccess},
     Handler<CmdZRevRank>,
     kZ,
     "2.0.0",
     "Determine the index of a member in a sorted set, with scores ordered from high to low",
     "key member",
     "O(log(N))"},
    {"ZCOUNT",
     4,
     kRead | kFast,
     {kRoAccess},
     Handler<CmdZCount>,
     kZ,
     "2.0.0",
     "Count the members in a sorted set with scores within the given values",
     "key min max",
     kLogN},
    {"ZLEXCOUNT",
     4,
     kRead | kFast,
     {kRoAccess},
     Handler<CmdZLexCount>,
     kZ,
     "2.8.9",
     "Count the number of members in a sorted set between a given lexicographical range",
     "key min max",
     kLogN},
    {"ZRANGE",
     -4,
     kRead,
     {kRoAccess},
     Handler<CmdZRange>,
     kZ,
     "1.2.0",
     "Return a range of members in a sorted set",
     "key start stop [BYSCORE | BYLEX] [REV] [LIMIT offset count] [WITHSCORES]",
     "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
     "elements returned."},
    {"ZRANGESTORE",
     -5,
     kWrite | kDenyOom,
     {kOwDest, kRoSecond},
     Handler<CmdZRangeStore>,
     kZ,
     "6.2.0",
     "Store a range of members from sorted set into another key",
     "dst src min max [BYSCORE | BYLEX] [REV] [LIMIT offset count]",
     "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
     "elements stored into the destination key."},
    {"ZREVRANGE",
     -4,
     kRead,
     {kRoAccess},
     Handler<CmdZRevRange>,
     kZ,
     "1.2.0",
     "Return a range of members in a sorted set, by index, with scores ordered from high to low",
     "key start stop [WITHSCORES]",
     kRangeCost},
    {"ZRANGEBYSCORE",
     -4,
     kRead,
     {kRoAccess},
     Handler<CmdZRangeByScore>,
     kZ,
     "1.0.5",
     "Return a range of members in a sorted set, by score",
     "key min max [WITHSCORES] [LIMIT offset count]",
     kRangeByCost},
    {"ZREVRANGEBYSCORE",
     -4,
     kRead,
     {kRoAccess},
     Handler<CmdZRevRangeByScore>,
     kZ,
     "2.2.0",
     "Return a range of members in a sorted set, by score, with scores ordered from high to low",
     "key max min [WITHSCORES] [LIMIT offset count]",
     kRangeByCost},
    {"ZRANGEBYLEX",
     -4,
     kRead,
     {kRoAccess},
     Handler<CmdZRangeByLex>,
     kZ,
     "2.8.9",
     "Return a range of members in a sorted set, by lexicographical range",
     "key min max [LIMIT offset count]",
     kRangeByCost},
    {"ZREVRANGEBYLEX",
     -4,
     kRead,
     {kRoAccess},
     Handler<CmdZRevRangeByLex>,
     kZ,
     "2.8.9",
     "Return a range of members in a sorted set, by lexicographical range, ordered from higher "
     "to lower strings.",
     "key max min [LIMIT offset count]",
     kRangeByCost},
    {"ZREMRANGEBYRANK",
     4,
     kWrite,
     {kRwDelete},
     Handler<CmdZRemRangeByRank>,
     kZ,
     "2.0.0",
     "Remove all members in a sorted set within the given indexes",
     "key start stop",
     kRemRangeCost},
    {"ZREMRANGEBYSCORE",
     4,
     kWrite,
     {kRwDelete},
     Handler<CmdZRemRangeByScore>,
     kZ,
     "1.2.0",
     "Remove all members in a sorted set within the given scores",
     "key min max",
     kRemRangeCost},
    {"ZREMRANGEBYLEX",
     4,
     kWrite,
     {kRwDelete},
     Handler<CmdZRemRangeByLex>,
     kZ,
     "2.8.9",
     "Remove all members in a sorted set between the given lexicographical range",
     "key min max",
     kRemRangeCost},
    {"ZPOPMIN",
     -2,
     kWrite | kFast,
     {kPop},
     Handler<CmdZPopMin>,
     kZ,
     "5.0.0",
     "Remove and return members with the lowest scores in a sorted set",
     "key [count]",
     kPopCost},
    {"ZPOPMAX",
     -2,
     kWrite | kFast,
     {kPop},
     Handler<CmdZPopMax>,
     kZ,
     "5.0.0",
     "Remove and return members with the highest scores in a sorted set",
     "key [count]",
     kPopCost},
    {"ZMPOP",
     -4,
     kWrite,
     {vsl::KeyNum(1, VSL_KS_RW | VSL_KS_ACCESS | VSL_KS_DELETE, 0, 1)},
     Handler<CmdZMPop>,
     kZ,
     "7.0.0",
     "Remove and return members with scores in a sorted set",
     "numkeys key [key ...] MIN | MAX [COUNT count]",
     kMPopCost},
    {"BZPOPMIN",
     -3,
     kWrite | kNoScript | kBlocking | kFast,
     {vsl::KeyAt(1, VSL_KS_RW | VSL_KS_ACCESS | VSL_KS_DELETE, -2)},
     Handler<CmdBZPopMin>,
     kZ,
     "5.0.0",
     "Remove and return the member with the lowest score from one or more sorted sets, or block "
     "until one is available",
     "key [key ...] timeout",
     kLogN},
    {"BZPOPMAX",
     -3,
     kWrite | kNoScript | kBlocking | kFast,
     {vsl::KeyAt(1, VSL_KS_RW | VSL_KS_ACCESS | VSL_KS_DELETE, -2)},
     Handler<CmdBZPopMax>,
     kZ,
     "5.0.0",
     "Remove and return the member with the highest score from one or more sorted sets, or "
     "block until one is available",
     "key [key ...] timeout",
     kLogN},
    {"BZMPOP",
     -5,
     kWrite | kBlocking,
     {vsl::KeyNum(2, VSL_KS_RW | VSL_KS_ACCESS | VSL_KS_DELETE, 0, 1)},
     Handler<CmdBZMPop>,
     kZ,
     "7.0.0",
     "Remove and return members with scores in a sorted set or block until one is available",
     "timeout numkeys key [key ...] MIN | MAX [COUNT count]",
     kMPopCost},
    {"ZRANDMEMBER",
     -2,
     kRead,
     {kRoAccess},
     Handler<CmdZRandMember>,
     kZ,
     "6.2.0",
     "Get one or multiple random elements from a sorted set",
     "key [count [WITHSCORES]]",
     "O(N) where N is the number of elements returned",
     kRandom},
    {"ZUNION",
     -3,
     kRead,
     {kInputs},
     Handler<CmdZUnion>,
     kZ,
     "6.2.0",
     "Add multiple sorted sets",
     "numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM | MIN | MAX] "
     "[WITHSCORES]",
     kUnionCost},
    {"ZINTER",
     -3,
     kRead,
     {kInputs},
     Handler<CmdZInter>,
     kZ,
     "6.2.0",
     "Intersect multiple sorted sets",
     "numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM | MIN | MAX] "
     "[WITHSCORES]",
     kInterCost},
    {"ZDIFF",
     -3,
     kRead,
     {kInputs},
     Handler<CmdZDiff>,
     kZ,
     "6.2.0",
     "Subtract multiple sorted sets",
     "numkeys key [key ...] [WITHSCORES]",
     kDiffCost},
    {"ZUNIONSTORE",
     -4,
     kWrite | kDenyOom,
     {kOwDest, kStoreInputs},
     Handler<CmdZUnionStore>,
     kZ,
     "2.0.0",
     "Add multiple sorted sets and store the resulting sorted set in a new key",
     "destination numkeys key [key ...] [WEIGHTS weight [weight ...]] "
     "[AGGREGATE SUM | MIN | MAX]",
     kUnionStoreCost},
    {"ZINTERSTORE",
     -4,
     kWrite | kDenyOom,
     {kOwDest, kStoreInputs},
     Handler<CmdZInterStore>,
     kZ,
     "2.0.0",
     "Intersect multiple sorted sets and store the resulting sorted set in a new key",
     "destination numkeys key [key ...] [WEIGHTS weight [weight ...]] "
     "[AGGREGATE SUM | MIN | MAX]",
     kInterCost},
    {"ZDIFFSTORE",
     -4,
     kWrite | kDenyOom,
     {kOwDest, kStoreInputs},
     Handler<CmdZDiffStore>,
     kZ,
     "6.2.0",
     "Subtract multiple sorted sets and store the resulting sorted set in a new key",
     "destination numkeys key [key ...]",
     kDiffCost},
    {"ZINTERCARD",
     -3,
     kRead,
     {kInputs},
     Handler<CmdZInterCard>,
     kZ,
     "7.0.0",
     "Intersect multiple sorted sets and return the cardinality of the result",
     "numkeys key [key ...] [LIMIT limit]",
     "O(N*K) worst case with N being the smallest input sorted set, K being the number of input "
     "sorted sets."},
    {"ZSCAN",
     -3,
     kRead,
     {kRoAccess},
     Handler<CmdZScan>,
     kZ,
     "2.8.0",
     "Incrementally iterate sorted sets elements and associated scores",
     "key cursor [MATCH pattern] [COUNT count]",
     "O(1) for every call. O(N) for a complete iteration, including enough command calls for "
     "the cursor to return back to 0. N is the number of elements inside the collection..",
     kRandom},
    {"GEOADD",
     -5,
     kWrite | kDenyOom,
     {kRwUpdate},
     Handler<CmdGeoAdd>,
     kGeo,
     "3.2.0",
     "Add one or more geospatial items in the geospatial index represented using a sorted set",
     "key [NX | XX] [CH] longitude latitude member [longitude latitude member ...]",
     kLogAdd},
    {"GEOPOS",
     -2,
     kRead,
     {kRoAccess},
     Handler<CmdGeoPos>,
     kGeo,
     "3.2.0",
     "Returns longitude and latitude of members of a geospatial index",
     "key [member [member ...]]",
     "O(N) where N is the number of members requested."},
    {"GEODIST",
     -4,
     kRead,
     {kRoAccess},
     Handler<CmdGeoDist>,
     kGeo,
     "3.2.0",
     "Returns the distance between two members of a geospatial index",
     "key member1 member2 [M | KM | FT | MI]",
     "O(log(N))"},
    {"GEOHASH",
     -2,
     kRead,
     {kRoAccess},
     Handler<CmdGeoHash>,
     kGeo,
     "3.2.0",
     "Returns members of a geospatial index as standard geohash strings",
     "key [member [member ...]]",
     "O(log(N)) for each member requested, where N is the number of elements in the sorted "
     "set."},
    {"GEOSEARCH",
     -7,
     kRead,
     {kRoAccess},
     Handler<CmdGeoSearch>,
     kGeo,
     "6.2.0",
     "Query a sorted set representing a geospatial index to fetch members inside an area of a "
     "box or a circle.",
     "key FROMMEMBER member | FROMLONLAT longitude latitude BYRADIUS radius M | KM | FT | MI | "
     "BYBOX width height M | KM | FT | MI [ASC | DESC] [COUNT count [ANY]] [WITHCOORD] "
     "[WITHDIST] [WITHHASH]",
     kSearchCost},
    {"GEOSEARCHSTORE",
     -8,
     kWrite | kDenyOom,
     {kOwDest, kRoSecond},
     Handler<CmdGeoSearchStore>,
     kGeo,
     "6.2.0",
     "Query a sorted set representing a geospatial index to fetch members inside an area of a "
     "box or a circle, and store the result in another key.",
     "destination source FROMMEMBER member | FROMLONLAT longitude latitude BYRADIUS radius "
     "M | KM | FT | MI | BYBOX width height M | KM | FT | MI [ASC | DESC] [COUNT count [ANY]] "
     "[STOREDIST]",
     kSearchCost},
    {"GEORADIUS",
     -6,
     kWrite | kDenyOom,
     {kRoAccess, StoreAfter("STORE", 6), StoreAfter("STOREDIST", 6)},
     Handler<CmdGeoRadius>,
     kGeo,
     "3.2.0",
     "Query a sorted set representing a geospatial index to fetch members matching a given "
     "maximum distance from a point",
     "key longitude latitude radius M | KM | FT | MI [WITHCOORD] [WITHDIST] [WITHHASH] "
     "[COUNT count [ANY]] [ASC | DESC] [STORE key] [STOREDIST key]",
     kRadiusCost},
    {"GEORADIUSBYMEMBER",
     -5,
     kWrite | kDenyOom,
     {kRoAccess, StoreAfter("STORE", 5), StoreAfter("STOREDIST", 5)},
     Handler<CmdGeoRadiusByMember>,
     kGeo,
     "3.2.0",
     "Query a sorted set representing a geospatial index to fetch members matching a given "
     "maximum distance from a member",
     "key member radius M | KM | FT | MI [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] "
     "[ASC | DESC] [STORE key] [STOREDIST key]",
     kRadiusCost},
    {"GEORADIUS_RO",
     -6,
     kRead,
     {kRoAccess},
     Handler<CmdGeoRadiusRo>,
     kGeo,
     "3.2.10",
     "A read-only variant for GEORADIUS",
     "key longitude latitude radius M | KM | FT | MI [WITHCOORD] [WITHDIST] [WITHHASH] "
     "[COUNT count [ANY]] [ASC | DESC]",
     kRadiusCost},
    {"GEORADIUSBYMEMBER_RO",
     -5,
     kRead,
     {kRoAccess},
     Handler<CmdGeoRadiusByMemberRo>,
     kGeo,
     "3.2.10",
     "A read-only variant for GEORADIUSBYMEMBER",
     "key member radius M | KM | FT | MI [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] "
     "[ASC | DESC]",
     kRadiusCost},
};

}  // namespace
}  // namespace vessel::zsets

VSL_MODULE("zsets", "1.0.0");

extern "C" VSL_EXPORT int vsl_module_init(const vsl_api* api, vsl_module* m, const vsl_slice* args,
                                          size_t nargs, char* err, size_t errlen) {
  using namespace vessel::zsets;
  (void)args;
  if (!vsl::Init(api, err, errlen)) return VSL_ERR;
  if (nargs != 0) {
    std::snprintf(err, errlen, "the zsets module takes no arguments");
    return VSL_ERR;
  }
  std::random_device rd;
  SetHashSeed((uint64_t{rd()} << 32) ^ rd());
  SeedRandom((uint64_t{rd()} << 32) ^ rd());
  if (!g_zset_type.Register(m, "zset", 1)) {
    std::snprintf(err, errlen, "cannot register the zset type");
    return VSL_ERR;
  }
  return vsl::RegisterCommands(m, kCommands, err, errlen) ? VSL_OK : VSL_ERR;
}
