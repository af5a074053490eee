// The GEO commands over sorted sets, as in Redis (geo.c): GEOADD GEOPOS GEODIST GEOHASH
// GEOSEARCH GEOSEARCHSTORE GEORADIUS GEORADIUSBYMEMBER GEORADIUS_RO GEORADIUSBYMEMBER_RO. A
// position is the member's score (a 52-bit geohash, geohash.h), so a set written with GEOADD
// reads the same with ZRANGE WITHSCORES as on Redis.
//
// Differences from Redis 7.0:
//   - COUNT with ASC/DESC sorts all candidates stably; Redis's partial quicksort may order equal
//     distances differently.
//   - GEORADIUS with STORE (or STOREDIST) given twice for different keys: only the first key of
//     each keyword is declared (as in Redis's key specs), so the command fails instead of
//     storing into the last one.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "geohash.h"
#include "zsets.h"

namespace vessel::zsets {
namespace {

// Redis's extractLongLatOrReply: two floats, then the WGS84 limits.
void LonLatArg(const Ctx& ctx, int i, double* xy) {
  xy[0] = ctx.DoubleArg(i);
  xy[1] = ctx.DoubleArg(i + 1);
  if (xy[0] < geo::kLonMin || xy[0] > geo::kLonMax || xy[1] < geo::kLatMin ||
      xy[1] > geo::kLatMax) {
    char msg[128];
    std::snprintf(msg, sizeof(msg), "invalid longitude,latitude pair %f,%f", xy[0], xy[1]);
    vsl::Fail(msg);
  }
}

// Meters per unit (Redis's extractUnitOrReply).
double UnitArg(const Ctx& ctx, int i) {
  if (ctx.ArgIs(i, "m")) return 1;
  if (ctx.ArgIs(i, "km")) return 1000;
  if (ctx.ArgIs(i, "ft")) return 0.3048;
  if (ctx.ArgIs(i, "mi")) return 1609.34;
  vsl::Fail("unsupported unit provided. please use M, KM, FT, MI");
}

double NumberArg(const Ctx& ctx, int i, const char* msg) {
  double v;
  if (!vsl::ParseDouble(ctx.arg(i), &v)) vsl::Fail(msg);
  return v;
}

// <radius> <unit> (Redis's extractDistanceOrReply).
void RadiusArg(const Ctx& ctx, int i, geo::Shape* s) {
  const double r = NumberArg(ctx, i, "need numeric radius");
  if (r < 0) vsl::Fail("radius cannot be negative");
  s->radius = r;
  s->conversion = UnitArg(ctx, i + 1);
  s->type = geo::Shape::kCircle;
}

// <width> <height> <unit> (Redis's extractBoxOrReply).
void BoxArg(const Ctx& ctx, int i, geo::Shape* s) {
  const double w = NumberArg(ctx, i, "need numeric width");
  const double h = NumberArg(ctx, i + 1, "need numeric height");
  if (h < 0 || w < 0) vsl::Fail("height or width cannot be negative");
  s->width = w;
  s->height = h;
  s->conversion = UnitArg(ctx, i + 2);
  s->type = geo::Shape::kBox;
}

// The position of a member, or a failure with Redis's message.
void MemberPosition(const Zset& z, std::string_view m, double* xy) {
  double score;
  if (!z.Score(m, &score) || !geo::DecodeScore(score, xy)) {
    vsl::Fail("could not decode requested zset member");
  }
}

// A coordinate in Redis's 17-decimal text: a bulk string in RESP2, a double in RESP3.
void ReplyCoord(Ctx& ctx, double v) {
  char buf[64];
  ctx.DoubleText(FormatHuman(v, buf));
}

// A distance with 4 decimals, rounded as Redis's fixedpoint_d2string rounds it.
void ReplyDistance(Ctx& ctx, double d) {
  if (d == 0) return ctx.Bulk("0.0000");
  const long long v = std::llrint(d * 10000.0);
  const unsigned long long a =
      v < 0 ? 0ull - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v);
  char buf[48];
  const int n =
      std::snprintf(buf, sizeof(buf), "%s%llu.%04llu", v < 0 ? "-" : "", a / 10000, a % 10000);
  ctx.Bulk({buf, static_cast<size_t>(n)});
}

}  // namespace

// GEOADD key [NX | XX] [CH] longitude latitude member [longitude latitude member ...]
void CmdGeoAdd(Ctx& ctx) {
  int flags = 0;
  bool ch = false;
  int i = 2;
  for (; i < ctx.argc(); ++i) {
    if (ctx.ArgIs(i, "nx")) {
      flags |= kAddNx;
    } else if (ctx.ArgIs(i, "xx")) {
      flags |= kAddXx;
    } else if (ctx.ArgIs(i, "ch")) {
      ch = true;
    } else {
      break;
    }
  }
  const int rest = ctx.argc() - i;
  if (rest % 3 != 0 || rest == 0 || ((flags & kAddNx) && (flags & kAddXx))) vsl::SyntaxError();
  Vec<double> scores;
  Vec<std::string_view> members;
  for (; i < ctx.argc(); i += 3) {
    double xy[2];
    LonLatArg(ctx, i, xy);
    geo::Hash h;
    geo::EncodeWGS84(xy[0], xy[1], geo::kStepMax, &h);
    scores.push_back(static_cast<double>(geo::Align52Bits(h)));
    members.push_back(ctx.arg(i + 2));
  }
  ApplyAdd(ctx, flags, ch, scores, members);
}

// GEOPOS key [member [member ...]]
void CmdGeoPos(Ctx& ctx) {
  const Zset* z = GetZset(ctx.key(0));
  ctx.Array(ctx.argc() - 2);
  for (int i = 2; i < ctx.argc(); ++i) {
    double score, xy[2];
    if (z == nullptr || !z->Score(ctx.arg(i), &score) || !geo::DecodeScore(score, xy)) {
      ctx.NullArray();
      continue;
    }
    ctx.Array(2);
    ReplyCoord(ctx, xy[0]);
    ReplyCoord(ctx, xy[1]);
  }
}

// GEOHASH key [member [member ...]]
void CmdGeoHash(Ctx& ctx) {
  const Zset* z = GetZset(ctx.key(0));
  ctx.Array(ctx.argc() - 2);
  for (int i = 2; i < ctx.argc(); ++i) {
    double score, xy[2];
    if (z == nullptr || !z->Score(ctx.arg(i), &score) || !geo::DecodeScore(score, xy)) {
      ctx.Null();
      continue;
    }
    char buf[11];
    geo::GeohashString(score, buf);
    ctx.Bulk({buf, sizeof(buf)});
  }
}

// GEODIST key member1 member2 [M | KM | FT | MI]
void CmdGeoDist(Ctx& ctx) {
  double to_meter = 1;
  if (ctx.argc() == 5) {
    to_meter = UnitArg(ctx, 4);
  } else if (ctx.argc() > 5) {
    vsl::SyntaxError();
  }
  const Zset* z = GetZset(ctx.key(0));
  double s1, s2, a[2], b[2];
  if (z == nullptr || !z->Score(ctx.arg(2), &s1) || !z->Score(ctx.arg(3), &s2) ||
      !geo::DecodeScore(s1, a) || !geo::DecodeScore(s2, b)) {
    return ctx.Null();
  }
  ReplyDistance(ctx, geo::Distance(a[0], a[1], b[0], b[1]) / to_meter);
}

// ---- searches ----

namespace {

enum SearchFlags : int {
  kCoords = 1,   // GEORADIUS: around coordinates
  kMember = 2,   // GEORADIUSBYMEMBER: around a member
  kNoStore = 4,  // the _RO forms: no STORE / STOREDIST
  kSearch = 8,   // GEOSEARCH: FROM* and BY* arguments
  kSearchStore = 16,
};

enum class Sort { kNone, kAsc, kDesc };

struct Point {
  std::string_view member;
  double xy[2];
  double dist;
  double score;
};

// The points of the shape in box h of the cover, in score order (Redis's
// geoGetPointsInRange over [min, max)); stops at `limit` points in all (0 = none).
void PointsInBox(const Zset& z, geo::Hash h, const geo::Shape& s, size_t limit, Vec<Point>* out) {
  uint64_t min, max;
  geo::ScoresOfBox(h, &min, &max);
  const ScoreRange r{static_cast<double>(min), static_cast<double>(max), false, true};
  size_t first, last;
  if (!z.RangeRanks(r, &first, &last)) return;
  Walker w(z, first);
  for (size_t k = first; k <= last; ++k, w.Next()) {
    const Zset::Item it = w.Get();
    Point p{it.member, {0, 0}, 0, it.score};
    if (geo::WithinShape(s, it.score, p.xy, &p.dist)) out->push_back(p);
    if (!out->empty() && limit != 0 && out->size() >= limit) break;
  }
}

// Every point of the shape from the 9 boxes of its cover, in Redis's box order
// (membersOfAllNeighbors).
void PointsInShape(const Zset& z, geo::Shape* s, size_t limit, Vec<Point>* out) {
  const geo::Cover c = geo::CoverShape(s);
  const geo::Neighbors& n = c.neighbors;
  const geo::Hash boxes[9] = {c.hash,       n.north,      n.south,      n.east,      n.west,
                              n.north_east, n.north_west, n.south_east, n.south_west};
  int last = 0;  // boxes equal to the one processed just before are skipped (huge radii)
  for (int i = 0; i < 9; ++i) {
    if (boxes[i].zero()) continue;
    if (last != 0 && boxes[i].bits == boxes[last].bits && boxes[i].step == boxes[last].step) {
      continue;
    }
    if (!out->empty() && limit != 0 && out->size() >= limit) break;
    PointsInBox(z, boxes[i], *s, limit, out);
    last = i;
  }
}

// The declared key named `name` that can be written (a STORE destination), or a failure.
Key StoreKey(Ctx& ctx, std::string_view name) {
  for (int i = ctx.key_count() - 1; i >= 1; --i) {
    Key k = ctx.key(i);
    if (k.name() == name) return k;
  }
  vsl::Fail("STORE and STOREDIST may each name one key only (the first one given)");
}

struct SearchOptions {
  bool withdist = false, withhash = false, withcoord = false;
  bool frommember = false, fromloc = false, byradius = false, bybox = false;
  bool any = false;
  bool storedist = false;
  int store_arg = 0;  // argument index of the destination key, 0 = none
  Sort sort = Sort::kNone;
  int64_t count = 0;
};

// The options from argument `base` on (Redis's georadiusGeneric option loop).
SearchOptions ParseSearch(const Ctx& ctx, int base, int flags, const Zset* z, geo::Shape* s) {
  SearchOptions o;
  const int remaining = ctx.argc() - base;
  for (int i = 0; i < remaining; ++i) {
    const int a = base + i;
    const bool store_ok = !(flags & kNoStore) && !(flags & kSearch);
    if (ctx.ArgIs(a, "withdist")) {
      o.withdist = true;
    } else if (ctx.ArgIs(a, "withhash")) {
      o.withhash = true;
    } else if (ctx.ArgIs(a, "withcoord")) {
      o.withcoord = true;
    } else if (ctx.ArgIs(a, "any")) {
      o.any = true;
    } else if (ctx.ArgIs(a, "asc")) {
      o.sort = Sort::kAsc;
    } else if (ctx.ArgIs(a, "desc")) {
      o.sort = Sort::kDesc;
    } else if (ctx.ArgIs(a, "count") && i + 1 < remaining) {
      o.count = ctx.IntArg(a + 1);
      if (o.count <= 0) vsl::Fail("COUNT must be > 0");
      ++i;
    } else if (ctx.ArgIs(a, "store") && i + 1 < remaining && store_ok) {
      o.store_arg = a + 1;
      o.storedist = false;
      ++i;
    } else if (ctx.ArgIs(a, "storedist") && i + 1 < remaining && store_ok) {
      o.store_arg = a + 1;
      o.storedist = true;
      ++i;
    } else if (ctx.ArgIs(a, "storedist") && (flags & kSearch) && (flags & kSearchStore)) {
      o.storedist = true;
    } else if (ctx.ArgIs(a, "frommember") && i + 1 < remaining && (flags & kSearch) && !o.fromloc) {
      if (z != nullptr) {
        double xy[2];
        MemberPosition(*z, ctx.arg(a + 1), xy);
        s->lon = xy[0];
        s->lat = xy[1];
      }
      o.frommember = true;
      ++i;
    } else if (ctx.ArgIs(a, "fromlonlat") && i + 2 < remaining && (flags & kSearch) &&
               !o.frommember) {
      double xy[2];
      LonLatArg(ctx, a + 1, xy);
      s->lon = xy[0];
      s->lat = xy[1];
      o.fromloc = true;
      i += 2;
    } else if (ctx.ArgIs(a, "byradius") && i + 2 < remaining && (flags & kSearch) && !o.bybox) {
      RadiusArg(ctx, a + 1, s);
      o.byradius = true;
      i += 2;
    } else if (ctx.ArgIs(a, "bybox") && i + 3 < remaining && (flags & kSearch) && !o.byradius) {
      BoxArg(ctx, a + 1, s);
      o.bybox = true;
      i += 3;
    } else {
      vsl::SyntaxError();
    }
  }
  return o;
}

void ReplyPoints(Ctx& ctx, const SearchOptions& o, std::span<Point> points, double conversion) {
  const int extra = (o.withdist ? 1 : 0) + (o.withcoord ? 1 : 0) + (o.withhash ? 1 : 0);
  ctx.Array(static_cast<int64_t>(points.size()));
  for (Point& p : points) {
    if (extra > 0) ctx.Array(extra + 1);
    ctx.Bulk(p.member);
    if (o.withdist) ReplyDistance(ctx, p.dist / conversion);
    if (o.withhash) ctx.Int(static_cast<int64_t>(p.score));
    if (o.withcoord) {
      ctx.Array(2);
      ReplyCoord(ctx, p.xy[0]);
      ReplyCoord(ctx, p.xy[1]);
    }
  }
}

// The body of every search (Redis's georadiusGeneric); the source key is declared key `src`.
void SearchGeneric(Ctx& ctx, int src, int flags) {
  // A malformed STORE (a keyword without its key) leaves no key declared: parsing fails below.
  const Zset* z = src < ctx.key_count() ? GetZset(ctx.key(src)) : nullptr;
  geo::Shape shape;
  int base;
  double xy[2];
  if (flags & kCoords) {
    base = 6;
    LonLatArg(ctx, 2, xy);
    shape.lon = xy[0];
    shape.lat = xy[1];
    RadiusArg(ctx, 4, &shape);
  } else if (flags & kMember) {
    base = 5;
    if (z != nullptr) {
      MemberPosition(*z, ctx.arg(2), xy);
      shape.lon = xy[0];
      shape.lat = xy[1];
      RadiusArg(ctx, 3, &shape);
    }
  } else {
    base = (flags & kSearchStore) ? 3 : 2;
  }
  SearchOptions o = ParseSearch(ctx, base, flags, z, &shape);
  const bool store = o.store_arg != 0 || (flags & kSearchStore);
  if (store && (o.withdist || o.withhash || o.withcoord)) {
    vsl::Fail(std::string((flags & kSearchStore) ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS") +
              " is not compatible with WITHDIST, WITHHASH and WITHCOORD options");
  }
  const std::string name(ctx.arg(0));
  if ((flags & kSearch) && !(o.frommember || o.fromloc)) {
    vsl::Fail("exactly one of FROMMEMBER or FROMLONLAT can be specified for " + name);
  }
  if ((flags & kSearch) && !(o.byradius || o.bybox)) {
    vsl::Fail("exactly one of BYRADIUS and BYBOX can be specified for " + name);
  }
  if (o.any && o.count == 0) vsl::Fail("the ANY argument requires COUNT argument");
  auto dst = [&]() {
    return (flags & kSearchStore) ? ctx.key(0) : StoreKey(ctx, ctx.arg(o.store_arg));
  };
  if (z == nullptr) {
    if (!store) return static_cast<void>(ctx.Array(0));
    Key d = dst();
    if (d.Delete()) d.Notify(VSL_NOTIFY_GENERIC, "del");
    return ctx.Int(0);
  }
  if (o.count != 0 && o.sort == Sort::kNone && !o.any) o.sort = Sort::kAsc;

  Vec<Point> points;
  PointsInShape(*z, &shape, o.any ? static_cast<size_t>(o.count) : 0, &points);
  if (points.empty() && !store) return static_cast<void>(ctx.Array(0));
  size_t n = points.size();
  if (o.count != 0 && static_cast<uint64_t>(o.count) < n) n = static_cast<size_t>(o.count);
  if (o.sort != Sort::kNone) {
    const bool asc = o.sort == Sort::kAsc;
    std::stable_sort(points.begin(), points.end(), [asc](const Point& a, const Point& b) {
      return asc ? a.dist < b.dist : a.dist > b.dist;
    });
  }
  if (!store) return ReplyPoints(ctx, o, std::span<Point>(points.data(), n), shape.conversion);
  Vec<Zset::Item> items;
  items.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const Point& p = points[i];
    items.push_back({p.member, o.storedist ? p.dist / shape.conversion : p.score});
  }
  SortItems(items);
  // A member found twice (boxes of a huge cover may repeat) is stored once.
  items.erase(
      std::unique(items.begin(), items.end(),
                  [](const Zset::Item& a, const Zset::Item& b) { return a.member == b.member; }),
      items.end());
  Key d = dst();
  StoreResult(d, items, LimitsOf(ctx), (flags & kSearch) ? "geosearchstore" : "georadiusstore");
  if (n != 0) ctx.AddChanges(n);  // Redis counts every member stored (a deletion: one change)
  ctx.Int(static_cast<int64_t>(n));
}

}  // namespace

// GEORADIUS key longitude latitude radius M | KM | FT | MI [WITHCOORD] [WITHDIST] [WITHHASH]
// [COUNT count [ANY]] [ASC | DESC] [STORE key] [STOREDIST key]
void CmdGeoRadius(Ctx& ctx) { SearchGeneric(ctx, 0, kCoords); }

// GEORADIUSBYMEMBER key member radius M | KM | FT | MI [WITHCOORD] [WITHDIST] [WITHHASH]
// [COUNT count [ANY]] [ASC | DESC] [STORE key] [STOREDIST key]
void CmdGeoRadiusByMember(Ctx& ctx) { SearchGeneric(ctx, 0, kMember); }

// GEORADIUS_RO key longitude latitude radius M | KM | FT | MI [WITHCOORD] [WITHDIST]
// [WITHHASH] [COUNT count [ANY]] [ASC | DESC]
void CmdGeoRadiusRo(Ctx& ctx) { SearchGeneric(ctx, 0, kCoords | kNoStore); }

// GEORADIUSBYMEMBER_RO key member radius M | KM | FT | MI [WITHCOORD] [WITHDIST] [WITHHASH]
// [COUNT count [ANY]] [ASC | DESC]
void CmdGeoRadiusByMemberRo(Ctx& ctx) { SearchGeneric(ctx, 0, kMember | kNoStore); }

// GEOSEARCH key FROMMEMBER member | FROMLONLAT longitude latitude BYRADIUS radius
// M | KM | FT | MI | BYBOX width height M | KM | FT | MI [ASC | DESC] [COUNT count [ANY]]
// [WITHCOORD] [WITHDIST] [WITHHASH]
void CmdGeoSearch(Ctx& ctx) { SearchGeneric(ctx, 0, kSearch); }

// GEOSEARCHSTORE destination source FROMMEMBER member | FROMLONLAT longitude latitude
// BYRADIUS radius M | KM | FT | MI | BYBOX width height M | KM | FT | MI [ASC | DESC]
// [COUNT count [ANY]] [STOREDIST]
void CmdGeoSearchStore(Ctx& ctx) { SearchGeneric(ctx, 1, kSearch | kSearchStore); }

// ---- the command table ----

namespace {

using namespace vsl::table;

// GEORADIUS[BYMEMBER]'s destinations: the key after the first STORE / STOREDIST found from
// argument `from` on.
constexpr vsl_keyspec StoreAfter(const char* keyword, int32_t from) {
  return vsl_keyspec{
      sizeof(vsl_keyspec), VSL_KS_OW | VSL_KS_UPDATE, from, keyword, 0, 1, 0, 0, 0, nullptr};
}

constexpr char kRadiusCost[] =
    "O(N+log(M)) where N is the number of elements inside the bounding box of the circular "
    "area delimited by center and radius and M is the number of items inside the index.";
constexpr char kSearchCost[] =
    "O(N+log(M)) where N is the number of elements in the grid-aligned bounding box area "
    "around the shape provided as the filter and M is the number of items inside the shape";
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
    {.name = "GEOADD", .arity = -5, .flags = kWrite | kDenyOom, .keys = {kRwUpdate},
     .handler = vsl::Handler<CmdGeoAdd>, .since = "3.2.0", .summary = kGeoAddSummary,
     .syntax = "key [NX | XX] [CH] longitude latitude member [longitude latitude member ...]",
     .complexity = kLogAdd},
    {.name = "GEOPOS", .arity = -2, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdGeoPos>, .since = "3.2.0",
     .summary = "Returns longitude and latitude of members of a geospatial index",
     .syntax = "key [member [member ...]]",
     .complexity = "O(N) where N is the number of members requested."},
    {.name = "GEODIST", .arity = -4, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdGeoDist>, .since = "3.2.0",
     .summary = "Returns the distance between two members of a geospatial index",
     .syntax = "key member1 member2 [M | KM | FT | MI]", .complexity = "O(log(N))"},
    {.name = "GEOHASH", .arity = -2, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdGeoHash>, .since = "3.2.0",
     .summary = "Returns members of a geospatial index as standard geohash strings",
     .syntax = "key [member [member ...]]", .complexity = kGeoHashComplexity},
    {.name = "GEOSEARCH", .arity = -7, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdGeoSearch>, .since = "6.2.0", .summary = kGeoSearchSummary,
     .syntax = kGeoSearchSyntax, .complexity = kSearchCost},
    {.name = "GEOSEARCHSTORE", .arity = -8, .flags = kWrite | kDenyOom,
     .keys = {kOwUpdate, kRoSecond}, .handler = vsl::Handler<CmdGeoSearchStore>,
     .since = "6.2.0", .summary = kGeoSearchStoreSummary, .syntax = kGeoSearchStoreSyntax,
     .complexity = kSearchCost},
    {.name = "GEORADIUS", .arity = -6, .flags = kWrite | kDenyOom,
     .keys = {kRoAccess, StoreAfter("STORE", 6), StoreAfter("STOREDIST", 6)},
     .handler = vsl::Handler<CmdGeoRadius>, .since = "3.2.0",
     .summary = kGeoRadiusSummary, .syntax = kGeoRadiusSyntax, .complexity = kRadiusCost},
    {.name = "GEORADIUSBYMEMBER", .arity = -5, .flags = kWrite | kDenyOom,
     .keys = {kRoAccess, StoreAfter("STORE", 5), StoreAfter("STOREDIST", 5)},
     .handler = vsl::Handler<CmdGeoRadiusByMember>, .since = "3.2.0",
     .summary = kGeoRadiusByMemberSummary, .syntax = kGeoRadiusByMemberSyntax,
     .complexity = kRadiusCost},
    {.name = "GEORADIUS_RO", .arity = -6, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdGeoRadiusRo>, .since = "3.2.10",
     .summary = "A read-only variant for GEORADIUS", .syntax = kGeoRadiusRoSyntax,
     .complexity = kRadiusCost},
    {.name = "GEORADIUSBYMEMBER_RO", .arity = -5, .flags = kRead, .keys = {kRoAccess},
     .handler = vsl::Handler<CmdGeoRadiusByMemberRo>, .since = "3.2.10",
     .summary = "A read-only variant for GEORADIUSBYMEMBER", .syntax = kGeoRadiusByMemberRoSyntax,
     .complexity = kRadiusCost},
};
// clang-format on

}  // namespace

std::span<const vsl::CommandDef> GeoCommands() { return kCommands; }

}  // namespace vessel::zsets
