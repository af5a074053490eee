// The zsets module: Redis's sorted-set family and geo commands as a Vessel module (value type
// "zset"). This file holds the registration table and the entry point; the commands live in
// zsets.cc (single key and ranges), zsets_pop.cc (pops, blocking pops, ZRANDMEMBER, ZSCAN),
// zsets_algebra.cc (ZUNION/ZINTER/ZDIFF and their STORE forms, ZINTERCARD) and zsets_geo.cc.
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
//   - ZRANDMEMBER with a negative count whose reply would pass proto-max-bulk-len (512 MiB by
//     default) is refused ("ERR value is out of range, the reply would be too large"); Redis 7.0
//     builds it until memory runs out.
//   - The blocking commands re-run on every write to their keys: a client blocked on a key that
//     another client sets to a non-zset value gets the WRONGTYPE error (Redis keeps it blocked).
//   - Geo: see zsets_geo.cc.
// Needs ABI 1.2 (key_type_name, key_visit) to take plain sets as ZUNION/ZINTER/ZDIFF inputs.
#include "zsets.h"

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
using namespace vsl::table;

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

constexpr char kZAddSummary[] =
    "Add one or more members to a sorted set, or update its score if it already exists";
constexpr char kZRemComplexity[] =
    "O(M*log(N)) with N being the number of elements in the sorted set and M the number of "
    "elements to be removed.";
constexpr char kZRevRankSummary[] =
    "Determine the index of a member in a sorted set, with scores ordered from high to low";
constexpr char kZLexCountSummary[] =
    "Count the number of members in a sorted set between a given lexicographical range";
constexpr char kZRangeComplexity[] =
    "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
    "elements returned.";
constexpr char kZRangeStoreComplexity[] =
    "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
    "elements stored into the destination key.";
constexpr char kZRevRangeSummary[] =
    "Return a range of members in a sorted set, by index, with scores ordered from high to low";
constexpr char kZRevRangeByScoreSummary[] =
    "Return a range of members in a sorted set, by score, with scores ordered from high to low";
constexpr char kZRevRangeByLexSummary[] =
    "Return a range of members in a sorted set, by lexicographical range, ordered from higher to "
    "lower strings.";
constexpr char kBZPopMinSummary[] =
    "Remove and return the member with the lowest score from one or more sorted sets, or block "
    "until one is available";
constexpr char kBZPopMaxSummary[] =
    "Remove and return the member with the highest score from one or more sorted sets, or block "
    "until one is available";
constexpr char kBZMPopSummary[] =
    "Remove and return members with scores in a sorted set or block until one is available";
constexpr char kZUnionSyntax[] =
    "numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM | MIN | MAX] [WITHSCORES]";
constexpr char kZUnionStoreSyntax[] =
    "destination numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM | MIN | MAX]";
constexpr char kZInterCardComplexity[] =
    "O(N*K) worst case with N being the smallest input sorted set, K being the number of input "
    "sorted sets.";
constexpr char kGeoAddSummary[] =
    "Add one or more geospatial items in the geospatial index represented using a sorted set";
constexpr char kGeoHashComplexity[] =
    "O(log(N)) for each member requested, where N is the number of elements in the sorted set.";
constexpr char kGeoSearchSummary[] =
    "Query a sorted set representing a geospatial index to fetch members inside an area of a box "
    "or a circle.";
constexpr char kGeoSearchSyntax[] =
    "key FROMMEMBER member | FROMLONLAT longitude latitude BYRADIUS radius M | KM | FT | MI | "
    "BYBOX width height M | KM | FT | MI [ASC | DESC] [COUNT count [ANY]] [WITHCOORD] [WITHDIST] "
    "[WITHHASH]";
constexpr char kGeoSearchStoreSummary[] =
    "Query a sorted set representing a geospatial index to fetch members inside an area of a box "
    "or a circle, and store the result in another key.";
constexpr char kGeoSearchStoreSyntax[] =
    "destination source FROMMEMBER member | FROMLONLAT longitude latitude BYRADIUS radius M | KM | "
    "FT | MI | BYBOX width height M | KM | FT | MI [ASC | DESC] [COUNT count [ANY]] [STOREDIST]";
constexpr char kGeoRadiusSummary[] =
    "Query a sorted set representing a geospatial index to fetch members matching a given maximum "
    "distance from a point";
constexpr char kGeoRadiusSyntax[] =
    "key longitude latitude radius M | KM | FT | MI [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count "
    "[ANY]] [ASC | DESC] [STORE key] [STOREDIST key]";
constexpr char kGeoRadiusByMemberSummary[] =
    "Query a sorted set representing a geospatial index to fetch members matching a given maximum "
    "distance from a member";
constexpr char kGeoRadiusByMemberSyntax[] =
    "key member radius M | KM | FT | MI [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC "
    "| DESC] [STORE key] [STOREDIST key]";
constexpr char kGeoRadiusRoSyntax[] =
    "key longitude latitude radius M | KM | FT | MI [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count "
    "[ANY]] [ASC | DESC]";
constexpr char kGeoRadiusByMemberRoSyntax[] =
    "key member radius M | KM | FT | MI [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC "
    "| DESC]";

// clang-format off
constexpr vsl::CommandDef kCommands[] = {
    {.name = "ZADD", .arity = -4, .flags = kWrite | kDenyOom | kFast, .keys = {kRwUpdate},
     .handler = Handler<CmdZAdd>, .since = "1.2.0", .summary = kZAddSummary,
     .syntax = "key [NX | XX] [GT | LT] [CH] [INCR] score member [score member ...]",
     .complexity = kLogAdd},
    {.name = "ZINCRBY", .arity = 4, .flags = kWrite | kDenyOom | kFast, .keys = {kRwAccessUpdate},
     .handler = Handler<CmdZIncrBy>, .since = "1.2.0",
     .summary = "Increment the score of a member in a sorted set", .syntax = "key increment member",
     .complexity = "O(log(N)) where N is the number of elements in the sorted set."},
    {.name = "ZREM", .arity = -3, .flags = kWrite | kFast, .keys = {kRwDelete},
     .handler = Handler<CmdZRem>, .since = "1.2.0",
     .summary = "Remove one or more members from a sorted set", .syntax = "key member [member ...]",
     .complexity = kZRemComplexity},
    {.name = "ZCARD", .arity = 2, .flags = kRead | kFast, .keys = {kRo},
     .handler = Handler<CmdZCard>, .since = "1.2.0",
     .summary = "Get the number of members in a sorted set", .syntax = "key", .complexity = "O(1)"},
    {.name = "ZSCORE", .arity = 3, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = Handler<CmdZScore>, .since = "1.2.0",
     .summary = "Get the score associated with the given member in a sorted set",
     .syntax = "key member", .complexity = "O(1)"},
    {.name = "ZMSCORE", .arity = -3, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = Handler<CmdZMScore>, .since = "6.2.0",
     .summary = "Get the score associated with the given members in a sorted set",
     .syntax = "key member [member ...]",
     .complexity = "O(N) where N is the number of members being requested."},
    {.name = "ZRANK", .arity = 3, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = Handler<CmdZRank>, .since = "2.0.0",
     .summary = "Determine the index of a member in a sorted set", .syntax = "key member",
     .complexity = "O(log(N))"},
    {.name = "ZREVRANK", .arity = 3, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = Handler<CmdZRevRank>, .since = "2.0.0", .summary = kZRevRankSummary,
     .syntax = "key member", .complexity = "O(log(N))"},
    {.name = "ZCOUNT", .arity = 4, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = Handler<CmdZCount>, .since = "2.0.0",
     .summary = "Count the members in a sorted set with scores within the given values",
     .syntax = "key min max", .complexity = kLogN},
    {.name = "ZLEXCOUNT", .arity = 4, .flags = kRead | kFast, .keys = {kRoAccess},
     .handler = Handler<CmdZLexCount>, .since = "2.8.9", .summary = kZLexCountSummary,
     .syntax = "key min max", .complexity = kLogN},
    {.name = "ZRANGE", .arity = -4, .flags = kRead, .keys = {kRoAccess},
     .handler = Handler<CmdZRange>, .since = "1.2.0",
     .summary = "Return a range of members in a sorted set",
     .syntax = "key start stop [BYSCORE | BYLEX] [REV] [LIMIT offset count] [WITHSCORES]",
     .complexity = kZRangeComplexity},
    {.name = "ZRANGESTORE", .arity = -5, .flags = kWrite | kDenyOom, .keys = {kOwUpdate, kRoSecond},
     .handler = Handler<CmdZRangeStore>, .since = "6.2.0",
     .summary = "Store a range of members from sorted set into another key",
     .syntax = "dst src min max [BYSCORE | BYLEX] [REV] [LIMIT offset count]",
     .complexity = kZRangeStoreComplexity},
    {.name = "ZREVRANGE", .arity = -4, .flags = kRead, .keys = {kRoAccess},
     .handler = Handler<CmdZRevRange>, .since = "1.2.0", .summary = kZRevRangeSummary,
     .syntax = "key start stop [WITHSCORES]", .complexity = kRangeCost},
    {.name = "ZRANGEBYSCORE", .arity = -4, .flags = kRead, .keys = {kRoAccess},
     .handler = Handler<CmdZRangeByScore>, .since = "1.0.5",
     .summary = "Return a range of members in a sorted set, by score",
     .syntax = "key min max [WITHSCORES] [LIMIT offset count]", .complexity = kRangeByCost},
    {.name = "ZREVRANGEBYSCORE", .arity = -4, .flags = kRead, .keys = {kRoAccess},
     .handler = Handler<CmdZRevRangeByScore>, .since = "2.2.0", .summary = kZRevRangeByScoreSummary,
     .syntax = "key max min [WITHSCORES] [LIMIT offset count]", .complexity = kRangeByCost},
    {.name = "ZRANGEBYLEX", .arity = -4, .flags = kRead, .keys = {kRoAccess},
     .handler = Handler<CmdZRangeByLex>, .since = "2.8.9",
     .summary = "Return a range of members in a sorted set, by lexicographical range",
     .syntax = "key min max [LIMIT offset count]", .complexity = kRangeByCost},
    {.name = "ZREVRANGEBYLEX", .arity = -4, .flags = kRead, .keys = {kRoAccess},
     .handler = Handler<CmdZRevRangeByLex>, .since = "2.8.9", .summary = kZRevRangeByLexSummary,
     .syntax = "key max min [LIMIT offset count]", .complexity = kRangeByCost},
    {.name = "ZREMRANGEBYRANK", .arity = 4, .flags = kWrite, .keys = {kRwDelete},
     .handler = Handler<CmdZRemRangeByRank>, .since = "2.0.0",
     .summary = "Remove all members in a sorted set within the given indexes",
     .syntax = "key start stop", .complexity = kRemRangeCost},
    {.name = "ZREMRANGEBYSCORE", .arity = 4, .flags = kWrite, .keys = {kRwDelete},
     .handler = Handler<CmdZRemRangeByScore>, .since = "1.2.0",
     .summary = "Remove all members in a sorted set within the given scores",
     .syntax = "key min max", .complexity = kRemRangeCost},
    {.name = "ZREMRANGEBYLEX", .arity = 4, .flags = kWrite, .keys = {kRwDelete},
     .handler = Handler<CmdZRemRangeByLex>, .since = "2.8.9",
     .summary = "Remove all members in a sorted set between the given lexicographical range",
     .syntax = "key min max", .complexity = kRemRangeCost},
    {.name = "ZPOPMIN", .arity = -2, .flags = kWrite | kFast, .keys = {kRwAccessDelete},
     .handler = Handler<CmdZPopMin>, .since = "5.0.0",
     .summary = "Remove and return members with the lowest scores in a sorted set",
     .syntax = "key [count]", .complexity = kPopCost},
    {.name = "ZPOPMAX", .arity = -2, .flags = kWrite | kFast, .keys = {kRwAccessDelete},
     .handler = Handler<CmdZPopMax>, .since = "5.0.0",
     .summary = "Remove and return members with the highest scores in a sorted set",
     .syntax = "key [count]", .complexity = kPopCost},
    {.name = "ZMPOP", .arity = -4, .flags = kWrite,
     .keys = {vsl::KeyNum(1, VSL_KS_RW | VSL_KS_ACCESS | VSL_KS_DELETE, 0, 1)},
     .handler = Handler<CmdZMPop>, .since = "7.0.0",
     .summary = "Remove and return members with scores in a sorted set",
     .syntax = "numkeys key [key ...] MIN | MAX [COUNT count]", .complexity = kMPopCost},
    {.name = "BZPOPMIN", .arity = -3, .flags = kWrite | kNoScript | kBlocking | kFast,
     .keys = {vsl::KeyAt(1, VSL_KS_RW | VSL_KS_ACCESS | VSL_KS_DELETE, -2)},
     .handler = Handler<CmdBZPopMin>, .since = "5.0.0", .summary = kBZPopMinSummary,
     .syntax = "key [key ...] timeout", .complexity = kLogN},
    {.name = "BZPOPMAX", .arity = -3, .flags = kWrite | kNoScript | kBlocking | kFast,
     .keys = {vsl::KeyAt(1, VSL_KS_RW | VSL_KS_ACCESS | VSL_KS_DELETE, -2)},
     .handler = Handler<CmdBZPopMax>, .since = "5.0.0", .summary = kBZPopMaxSummary,
     .syntax = "key [key ...] timeout", .complexity = kLogN},
    {.name = "BZMPOP", .arity = -5, .flags = kWrite | kBlocking,
     .keys = {vsl::KeyNum(2, VSL_KS_RW | VSL_KS_ACCESS | VSL_KS_DELETE, 0, 1)},
     .handler = Handler<CmdBZMPop>, .since = "7.0.0", .summary = kBZMPopSummary,
     .syntax = "timeout numkeys key [key ...] MIN | MAX [COUNT count]", .complexity = kMPopCost},
    {.name = "ZRANDMEMBER", .arity = -2, .flags = kRead, .keys = {kRoAccess},
     .handler = Handler<CmdZRandMember>, .since = "6.2.0",
     .summary = "Get one or multiple random elements from a sorted set",
     .syntax = "key [count [WITHSCORES]]",
     .complexity = "O(N) where N is the number of elements returned", .tips = kTipRandom},
    {.name = "ZUNION", .arity = -3, .flags = kRead, .keys = {kInputs},
     .handler = Handler<CmdZUnion>, .since = "6.2.0", .summary = "Add multiple sorted sets",
     .syntax = kZUnionSyntax, .complexity = kUnionCost},
    {.name = "ZINTER", .arity = -3, .flags = kRead, .keys = {kInputs},
     .handler = Handler<CmdZInter>, .since = "6.2.0", .summary = "Intersect multiple sorted sets",
     .syntax = kZUnionSyntax, .complexity = kInterCost},
    {.name = "ZDIFF", .arity = -3, .flags = kRead, .keys = {kInputs}, .handler = Handler<CmdZDiff>,
     .since = "6.2.0", .summary = "Subtract multiple sorted sets",
     .syntax = "numkeys key [key ...] [WITHSCORES]", .complexity = kDiffCost},
    {.name = "ZUNIONSTORE", .arity = -4, .flags = kWrite | kDenyOom,
     .keys = {kOwUpdate, kStoreInputs}, .handler = Handler<CmdZUnionStore>, .since = "2.0.0",
     .summary = "Add multiple sorted sets and store the resulting sorted set in a new key",
     .syntax = kZUnionStoreSyntax, .complexity = kUnionStoreCost},
    {.name = "ZINTERSTORE", .arity = -4, .flags = kWrite | kDenyOom,
     .keys = {kOwUpdate, kStoreInputs}, .handler = Handler<CmdZInterStore>, .since = "2.0.0",
     .summary = "Intersect multiple sorted sets and store the resulting sorted set in a new key",
     .syntax = kZUnionStoreSyntax, .complexity = kInterCost},
    {.name = "ZDIFFSTORE", .arity = -4, .flags = kWrite | kDenyOom,
     .keys = {kOwUpdate, kStoreInputs},
     .handler = Handler<CmdZDiffStore>, .since = "6.2.0",
     .summary = "Subtract multiple sorted sets and store the resulting sorted set in a new key",
     .syntax = "destination numkeys key [key ...]", .complexity = kDiffCost},
    {.name = "ZINTERCARD", .arity = -3, .flags = kRead, .keys = {kInputs},
     .handler = Handler<CmdZInterCard>, .since = "7.0.0",
     .summary = "Intersect multiple sorted sets and return the cardinality of the result",
     .syntax = "numkeys key [key ...] [LIMIT limit]", .complexity = kZInterCardComplexity},
    {.name = "ZSCAN", .arity = -3, .flags = kRead, .keys = {kRoAccess},
     .handler = Handler<CmdZScan>, .since = "2.8.0",
     .summary = "Incrementally iterate sorted sets elements and associated scores",
     .syntax = "key cursor [MATCH pattern] [COUNT count]", .complexity = kScanComplexity,
     .tips = kTipRandom},
    {.name = "GEOADD", .arity = -5, .flags = kWrite | kDenyOom, .keys = {kRwUpdate},
     .handler = Handler<CmdGeoAdd>, .group = kGeo, .since = "3.2.0", .summary = kGeoAddSummary,
     .syntax = "key [NX | XX] [CH] longitude latitude member [longitude latitude member ...]",
     .complexity = kLogAdd},
    {.name = "GEOPOS", .arity = -2, .flags = kRead, .keys = {kRoAccess},
     .handler = Handler<CmdGeoPos>, .group = kGeo, .since = "3.2.0",
     .summary = "Returns longitude and latitude of members of a geospatial index",
     .syntax = "key [member [member ...]]",
     .complexity = "O(N) where N is the number of members requested."},
    {.name = "GEODIST", .arity = -4, .flags = kRead, .keys = {kRoAccess},
     .handler = Handler<CmdGeoDist>, .group = kGeo, .since = "3.2.0",
     .summary = "Returns the distance between two members of a geospatial index",
     .syntax = "key member1 member2 [M | KM | FT | MI]", .complexity = "O(log(N))"},
    {.name = "GEOHASH", .arity = -2, .flags = kRead, .keys = {kRoAccess},
     .handler = Handler<CmdGeoHash>, .group = kGeo, .since = "3.2.0",
     .summary = "Returns members of a geospatial index as standard geohash strings",
     .syntax = "key [member [member ...]]", .complexity = kGeoHashComplexity},
    {.name = "GEOSEARCH", .arity = -7, .flags = kRead, .keys = {kRoAccess},
     .handler = Handler<CmdGeoSearch>, .group = kGeo, .since = "6.2.0",
     .summary = kGeoSearchSummary, .syntax = kGeoSearchSyntax, .complexity = kSearchCost},
    {.name = "GEOSEARCHSTORE", .arity = -8, .flags = kWrite | kDenyOom,
     .keys = {kOwUpdate, kRoSecond}, .handler = Handler<CmdGeoSearchStore>, .group = kGeo,
     .since = "6.2.0", .summary = kGeoSearchStoreSummary, .syntax = kGeoSearchStoreSyntax,
     .complexity = kSearchCost},
    {.name = "GEORADIUS", .arity = -6, .flags = kWrite | kDenyOom,
     .keys = {kRoAccess, StoreAfter("STORE", 6), StoreAfter("STOREDIST", 6)},
     .handler = Handler<CmdGeoRadius>, .group = kGeo, .since = "3.2.0",
     .summary = kGeoRadiusSummary, .syntax = kGeoRadiusSyntax, .complexity = kRadiusCost},
    {.name = "GEORADIUSBYMEMBER", .arity = -5, .flags = kWrite | kDenyOom,
     .keys = {kRoAccess, StoreAfter("STORE", 5), StoreAfter("STOREDIST", 5)},
     .handler = Handler<CmdGeoRadiusByMember>, .group = kGeo, .since = "3.2.0",
     .summary = kGeoRadiusByMemberSummary, .syntax = kGeoRadiusByMemberSyntax,
     .complexity = kRadiusCost},
    {.name = "GEORADIUS_RO", .arity = -6, .flags = kRead, .keys = {kRoAccess},
     .handler = Handler<CmdGeoRadiusRo>, .group = kGeo, .since = "3.2.10",
     .summary = "A read-only variant for GEORADIUS", .syntax = kGeoRadiusRoSyntax,
     .complexity = kRadiusCost},
    {.name = "GEORADIUSBYMEMBER_RO", .arity = -5, .flags = kRead, .keys = {kRoAccess},
     .handler = Handler<CmdGeoRadiusByMemberRo>, .group = kGeo, .since = "3.2.10",
     .summary = "A read-only variant for GEORADIUSBYMEMBER", .syntax = kGeoRadiusByMemberRoSyntax,
     .complexity = kRadiusCost},
};
// clang-format on

}  // namespace
}  // namespace vessel::zsets

VSL_MODULE("zsets", "1.0.0");

extern "C" VSL_EXPORT int vsl_module_init(const vsl_api* api, vsl_module* m, const vsl_slice*,
                                          size_t nargs, char* err, size_t errlen) {
  using namespace vessel::zsets;
  vsl::ModuleInit init(api, m, "zsets", nargs, err, errlen);
  init.Type(g_zset_type, "zset", 1);
  init.Commands(kCommands, kZ);
  return init.result();
}
