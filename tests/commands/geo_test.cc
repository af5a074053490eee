// The GEO commands of the zsets module against redis-server: positions (scores), coordinates,
// distances and geohash strings must agree to the digit, and searches must return the same
// members in the same order, with small (listpack) and large (skiplist) sets. In RESP3 Redis
// writes coordinates with 17 decimals where vessel writes %.17g (the same doubles): those rows
// compare the values.
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

class GeoTest : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
};

const Strings kSicily = {"GEOADD",    "Sicily",  "13.361389", "38.115556", "Palermo",   "15.087269",
                         "37.502669", "Catania", "13.583333", "37.316667", "Agrigento", "12.758489",
                         "38.788135", "edge1",   "17.241510", "38.788135", "edge2"};

TEST_F(GeoTest, AddPositionDistanceHash) {
  RunTable({
      {kSicily, Int(5)},
      {{"ZRANGE", "Sicily", "0", "-1", "WITHSCORES"}, Any()},
      {{"ZSCORE", "Sicily", "Palermo"}, Bulk("3479099956230698")},
      {{"GEOPOS", "Sicily", "Palermo", "Catania", "nope"}, Any()},
      {{"GEOPOS", "nokey", "a", "b"}, Arr({NilArray(), NilArray()})},
      {{"GEOPOS", "Sicily"}, Arr({})},
      {{"GEODIST", "Sicily", "Palermo", "Catania"}, Bulk("166274.1516")},
      {{"GEODIST", "Sicily", "Palermo", "Catania", "km"}, Bulk("166.2742")},
      {{"GEODIST", "Sicily", "Palermo", "Catania", "MI"}, Bulk("103.3182")},
      {{"GEODIST", "Sicily", "Palermo", "Catania", "ft"}, Any()},
      {{"GEODIST", "Sicily", "Palermo", "Palermo"}, Bulk("0.0000")},
      {{"GEODIST", "Sicily", "Palermo", "nope"}, Nil()},
      {{"GEODIST", "nokey", "a", "b"}, Nil()},
      {{"GEODIST", "Sicily", "Palermo", "Catania", "yd"},
       Error("ERR unsupported unit provided. please use M, KM, FT, MI")},
      {{"GEODIST", "Sicily", "Palermo", "Catania", "km", "x"}, Error(kSyntax)},
      {{"GEOHASH", "Sicily", "Palermo", "Catania", "nope"},
       Arr({Bulk("sqc8b49rny0"), Bulk("sqdtr74hyu0"), Nil()})},
      {{"GEOHASH", "nokey", "a"}, Arr({Nil()})},
      // Options as ZADD's.
      {{"GEOADD", "Sicily", "NX", "0", "0", "Palermo", "1", "1", "New"}, Int(1)},
      {{"GEOADD", "Sicily", "XX", "CH", "0", "0", "Palermo", "2", "2", "Other"}, Int(1)},
      {{"GEOPOS", "Sicily", "Palermo", "Other"}, Any()},
      {{"GEOADD", "Sicily", "CH", "XX", "0", "0", "Palermo"}, Int(0)},
      {{"GEOADD", "Sicily", "NX", "XX", "0", "0", "a"}, Error(kSyntax)},
      {{"GEOADD", "Sicily", "0", "0", "a", "1"}, Error(kSyntax)},
      {{"GEOADD", "Sicily", "NX", "0", "0"}, Error(kSyntax)},
      {{"GEOADD", "Sicily", "GT", "0", "a"}, Error("ERR value is not a valid float")},
      {{"GEOADD", "Sicily", "x", "0", "a"}, Error("ERR value is not a valid float")},
      {{"GEOADD", "Sicily", "181", "0", "a"},
       Error("ERR invalid longitude,latitude pair 181.000000,0.000000")},
      {{"GEOADD", "Sicily", "0", "85.06", "a", "1", "1", "b"},
       Error("ERR invalid longitude,latitude pair 0.000000,85.060000")},
      {{"GEOADD", "Sicily", "-180", "-85.05112878", "corner", "180", "85.05112878", "corner2"},
       Int(2)},
      {{"GEOPOS", "Sicily", "corner", "corner2"}, Any()},
      {{"GEOHASH", "Sicily", "corner", "corner2"}, Any()},
      {{"SET", "str", "x"}, Ok()},
      {{"GEOADD", "str", "0", "0", "a"}, WrongType()},
      {{"GEOPOS", "str", "a"}, WrongType()},
      {{"GEODIST", "str", "a", "b"}, WrongType()},
      {{"GEOHASH", "str", "a"}, WrongType()},
      {{"GEOSEARCH", "str", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"}, WrongType()},
  });
}

// Coordinates in RESP3: doubles with Redis's 17-decimal text, byte for byte.
TEST_F(GeoTest, Resp3CoordinatesAsRedis) {
  RespClient v = Servers::Get().Vessel(), r = Servers::Get().Redis();
  for (RespClient* c : {&v, &r}) {
    (*c)("HELLO", "3");
    c->Cmd(kSicily);
  }
  for (const Strings& cmd :
       std::vector<Strings>{{"GEOPOS", "Sicily", "Palermo", "edge1", "nope"},
                            {"GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "300",
                             "km", "ASC", "WITHCOORD", "WITHDIST", "WITHHASH"},
                            {"GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHCOORD"}}) {
    const Reply a = v.Cmd(cmd), b = r.Cmd(cmd);
    EXPECT_EQ(a, b) << Show(cmd) << "\n  vessel: " << a.ToString()
                    << "\n  redis:  " << b.ToString();
  }
  const Reply pos = v("GEOPOS", "Sicily", "Palermo", "nope");
  EXPECT_EQ(pos.elems[0].elems[0].type, Reply::Type::kDouble);
  EXPECT_EQ(pos.elems[1].type, Reply::Type::kNil);
  // Without coordinates, RESP3 replies are identical.
  Servers::Get().Reset();
  RunTable(
      {
          {kSicily, Int(5)},
          {{"GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "400", "400", "km",
            "WITHDIST", "WITHHASH", "DESC"},
           Any()},
          {{"GEODIST", "Sicily", "edge1", "edge2", "km"}, Any()},
          {{"GEOHASH", "Sicily", "edge1"}, Any()},
      },
      3);
}

TEST_F(GeoTest, Searches) {
  std::vector<Row> rows = {{kSicily, Int(5)}};
  for (const Strings& cmd : std::vector<Strings>{
           {"GEORADIUS", "Sicily", "15", "37", "200", "km"},
           {"GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHDIST", "WITHCOORD", "WITHHASH"},
           {"GEORADIUS", "Sicily", "15", "37", "200", "km", "ASC", "COUNT", "1"},
           {"GEORADIUS", "Sicily", "15", "37", "200", "km", "DESC", "WITHDIST"},
           {"GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "1", "ANY"},
           {"GEORADIUS", "Sicily", "15", "37", "20000", "km", "COUNT", "3"},
           {"GEORADIUS", "Sicily", "15", "37", "0", "km"},
           {"GEORADIUS", "Sicily", "-73.9", "40.7", "10", "mi"},
           {"GEORADIUS_RO", "Sicily", "15", "37", "500000", "ft", "WITHDIST"},
           {"GEORADIUSBYMEMBER", "Sicily", "Agrigento", "100", "km", "WITHDIST"},
           {"GEORADIUSBYMEMBER_RO", "Sicily", "Palermo", "200000", "m", "DESC"},
           {"GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "200", "km", "ASC"},
           {"GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "400", "400", "km", "ASC",
            "WITHCOORD", "WITHDIST"},
           {"GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "1", "2000", "km"},
           {"GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "2000", "1", "km"},
           {"GEOSEARCH", "Sicily", "BYRADIUS", "200", "km", "FROMLONLAT", "15", "37", "COUNT", "2",
            "DESC"},
           {"GEOSEARCH", "nokey", "FROMMEMBER", "x", "BYRADIUS", "1", "km"},
           {"GEORADIUSBYMEMBER", "nokey", "x", "notanumber", "km"},  // nothing parsed then
       }) {
    rows.push_back({cmd, Any()});
  }
  const std::vector<Row> stores = {
      {{"GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "out"}, Int(3)},
      {{"ZRANGE", "out", "0", "-1", "WITHSCORES"}, Any()},
      {{"GEORADIUS", "Sicily", "15", "37", "200", "km", "STOREDIST", "out", "COUNT", "2"}, Int(2)},
      {{"ZRANGE", "out", "0", "-1", "WITHSCORES"}, Any()},
      {{"GEORADIUSBYMEMBER", "Sicily", "Palermo", "1", "m", "STORE", "out"}, Int(1)},
      {{"GEORADIUS", "Sicily", "-73.9", "40.7", "10", "km", "STORE", "out"}, Int(0)},
      {{"EXISTS", "out"}, Int(0)},
      {{"GEOSEARCHSTORE", "out", "Sicily", "FROMMEMBER", "Catania", "BYRADIUS", "300", "km",
        "STOREDIST"},
       Any()},
      {{"ZRANGE", "out", "0", "-1", "WITHSCORES"}, Any()},
      {{"GEOSEARCHSTORE", "out", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "500", "500", "km",
        "ASC", "COUNT", "2"},
       Int(2)},
      {{"ZRANGE", "out", "0", "-1", "WITHSCORES"}, Any()},
      {{"GEOSEARCHSTORE", "out", "nokey", "FROMMEMBER", "x", "BYRADIUS", "1", "km"}, Int(0)},
      {{"EXISTS", "out"}, Int(0)},
      {{"GEOSEARCHSTORE", "Sicily", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "100", "km"},
       Any()},
      {{"ZRANGE", "Sicily", "0", "-1"}, Any()},
  };
  rows.insert(rows.end(), stores.begin(), stores.end());
  RunTable(rows);
}

TEST_F(GeoTest, SearchErrors) {
  const std::string name = "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for ";
  RunTable({
      {kSicily, Int(5)},
      {{"GEOSEARCH", "Sicily", "BYRADIUS", "1", "km", "ASC", "WITHDIST"},
       Error(name + "GEOSEARCH")},
      {{"geosearch", "Sicily", "BYRADIUS", "1", "km", "ASC", "WITHDIST"},
       Error(name + "geosearch")},
      {{"GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "WITHDIST", "WITHHASH", "ASC"},
       Error("ERR exactly one of BYRADIUS and BYBOX can be specified for GEOSEARCH")},
      {{"GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "FROMLONLAT", "1", "1", "BYRADIUS", "1",
        "km"},
       Error(kSyntax)},
      {{"GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km", "BYBOX", "1", "1",
        "km"},
       Error(kSyntax)},
      {{"GEOSEARCH", "Sicily", "FROMMEMBER", "nope", "BYRADIUS", "1", "km"},
       Error("ERR could not decode requested zset member")},
      {{"GEORADIUSBYMEMBER", "Sicily", "nope", "1", "km"},
       Error("ERR could not decode requested zset member")},
      {{"GEOSEARCH", "Sicily", "FROMLONLAT", "200", "1", "BYRADIUS", "1", "km"},
       Error("ERR invalid longitude,latitude pair 200.000000,1.000000")},
      {{"GEOSEARCH", "Sicily", "FROMLONLAT", "x", "1", "BYRADIUS", "1", "km"},
       Error("ERR value is not a valid float")},
      {{"GEOSEARCH", "Sicily", "FROMLONLAT", "1", "1", "BYRADIUS", "x", "km"},
       Error("ERR need numeric radius")},
      {{"GEOSEARCH", "Sicily", "FROMLONLAT", "1", "1", "BYRADIUS", "-1", "km"},
       Error("ERR radius cannot be negative")},
      {{"GEOSEARCH", "Sicily", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "yd"},
       Error("ERR unsupported unit provided. please use M, KM, FT, MI")},
      {{"GEOSEARCH", "Sicily", "FROMLONLAT", "1", "1", "BYBOX", "x", "1", "km"},
       Error("ERR need numeric width")},
      {{"GEOSEARCH", "Sicily", "FROMLONLAT", "1", "1", "BYBOX", "1", "x", "km"},
       Error("ERR need numeric height")},
      {{"GEOSEARCH", "Sicily", "FROMLONLAT", "1", "1", "BYBOX", "1", "-1", "km"},
       Error("ERR height or width cannot be negative")},
      {{"GEOSEARCH", "Sicily", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km", "COUNT", "0"},
       Error("ERR COUNT must be > 0")},
      {{"GEOSEARCH", "Sicily", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km", "COUNT", "x"},
       Error(kNotInt)},
      {{"GEOSEARCH", "Sicily", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km", "ANY"},
       Error("ERR the ANY argument requires COUNT argument")},
      {{"GEOSEARCH", "Sicily", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km", "STORE", "x"},
       Error(kSyntax)},
      {{"GEOSEARCH", "Sicily", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km", "STOREDIST"},
       Error(kSyntax)},
      {{"GEOSEARCHSTORE", "d", "Sicily", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km", "WITHDIST"},
       Error("ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options")},
      {{"GEORADIUS", "Sicily", "1", "1", "1", "km", "WITHHASH", "STORE", "d"},
       Error("ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and "
             "WITHCOORD options")},
      {{"GEORADIUS_RO", "Sicily", "1", "1", "1", "km", "STORE", "d"}, Error(kSyntax)},
      {{"GEORADIUS", "Sicily", "1", "1", "1", "km", "FROMMEMBER", "x"}, Error(kSyntax)},
      {{"GEORADIUS", "Sicily", "1", "1", "x", "km"}, Error("ERR need numeric radius")},
      {{"GEORADIUS", "nokey", "1", "1", "x", "km"}, Error("ERR need numeric radius")},
      {{"GEORADIUS", "Sicily", "1", "1", "1", "km", "COUNT"}, Error(kSyntax)},
      {{"GEORADIUS", "Sicily", "1", "1", "1", "km", "BOGUS"}, Error(kSyntax)},
  });
}

// Random searches over random points, both servers: every reply identical (RESP2).
TEST_F(GeoTest, RandomSearchesAgreeWithRedis) {
  std::mt19937 rng(4242);
  auto uni = [&](double lo, double hi) {
    return lo + (hi - lo) * (static_cast<double>(rng()) / static_cast<double>(rng.max()));
  };
  const std::vector<std::pair<double, double>> centers = {
      {13.36, 38.11}, {-73.98, 40.75}, {179.9, -16.5}, {-179.9, -16.6},
      {0.0, 84.5},    {151.2, -33.87}, {0, 0},         {2.35, 48.85}};
  auto coord = [&] {
    const auto& [lon, lat] = centers[rng() % centers.size()];
    char a[32], b[32];
    std::snprintf(a, sizeof(a), "%.6f", std::clamp(lon + uni(-3, 3), -180.0, 180.0));
    std::snprintf(b, sizeof(b), "%.6f", std::clamp(lat + uni(-3, 3), -85.0, 85.0));
    return Strings{a, b};
  };
  const Strings radii = {"0", "1", "50", "200", "500", "2000", "8000", "20000"};
  const Strings units = {"m", "km", "mi", "ft"};
  auto pick = [&](const Strings& v) { return v[rng() % v.size()]; };
  for (int round = 0; round < 2; ++round) {  // a listpack, then a skiplist
    Servers::Get().Reset();
    std::vector<Row> rows;
    const int points = round == 0 ? 60 : 1500;
    for (int i = 0; i < points; i += 50) {
      Strings add = {"GEOADD", "g"};
      for (int j = i; j < std::min(points, i + 50); ++j)
        add = Cat(Cat(add, coord()), {"p" + std::to_string(j)});
      rows.push_back({add, Any()});
    }
    rows.push_back({{"OBJECT", "ENCODING", "g"}, Bulk(round == 0 ? "listpack" : "skiplist")});
    for (int i = 0; i < 300; ++i) {
      Strings opts;
      for (int k = 0, n = static_cast<int>(rng() % 3); k < n; ++k) {
        opts = Cat(opts, std::vector<Strings>{{"WITHDIST"},
                                              {"WITHCOORD"},
                                              {"WITHHASH"},
                                              {"ASC"},
                                              {"DESC"},
                                              {"COUNT", "5"},
                                              {"COUNT", "3", "ANY"}}[rng() % 7]);
      }
      Strings cmd;
      switch (rng() % 5) {
        case 0:
          cmd = Cat(Cat({"GEORADIUS", "g"}, coord()), {pick(radii), pick(units)});
          break;
        case 1:
          cmd = {"GEORADIUSBYMEMBER", "g", "p" + std::to_string(rng() % points), pick(radii),
                 pick(units)};
          break;
        case 2:
          cmd = Cat(Cat({"GEOSEARCH", "g", "FROMLONLAT"}, coord()),
                    {"BYBOX", pick(radii), pick(radii), pick(units)});
          break;
        case 3:
          cmd = {"GEOSEARCH", "g",         "FROMMEMBER", "p" + std::to_string(rng() % points),
                 "BYRADIUS",  pick(radii), pick(units)};
          break;
        default:
          cmd = {"GEODIST", "g", "p" + std::to_string(rng() % points),
                 "p" + std::to_string(rng() % points), pick(units)};
          opts.clear();
          break;
      }
      rows.push_back({Cat(cmd, opts), Any()});
    }
    rows.push_back({{"ZRANGE", "g", "0", "-1", "WITHSCORES"}, Any()});
    rows.push_back({Cat({"GEOHASH", "g"}, Seq("p", 0, 40)), Any()});
    rows.push_back({Cat({"GEOPOS", "g"}, Seq("p", 0, 40)), Any()});
    RunTable(rows);
  }
}

}  // namespace
}  // namespace vessel::test
