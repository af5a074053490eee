// The zsets module checked against models: a seeded random sequence of operations against a
// std::map reference on vessel (every reply, the whole content and the representation after
// each step, across listpack -> skiplist conversions, compaction and pops), and random command
// sequences against redis-server. Also the value type's callbacks (serialize, copy, visit),
// COPY, DUMP/RESTORE and MEMORY USAGE against the allocator. ZSETS_SEED=n replays one seed.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

class ZsetsModelTest : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
};

std::string Fmt(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

// A sorted set as a map, with Redis's order and representation rules.
struct Model {
  std::map<std::string, double> m;
  bool big = false;  // "skiplist" once a limit was crossed (never back)

  std::vector<std::pair<std::string, double>> Ordered() const {
    std::vector<std::pair<std::string, double>> v(m.begin(), m.end());
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second < b.second : a.first < b.first;
    });
    return v;
  }
  void Add(const std::string& k, double s) {
    if (!m.contains(k) && (m.size() + 1 > 128 || k.size() > 64)) big = true;
    // A listpack keeps an integral score as an integer: -0 becomes 0 (never drawn here).
    m[k] = s;
  }
  // The representation of a set built whole from these members.
  static bool BigFor(const std::map<std::string, double>& m) {
    if (m.size() > 128) return true;
    for (const auto& [k, s] : m)
      if (k.size() > 64) return true;
    return false;
  }
};

uint32_t SeedFromEnv(uint32_t fallback) {
  const char* s = std::getenv("ZSETS_SEED");
  return s != nullptr ? static_cast<uint32_t>(std::strtoul(s, nullptr, 10)) : fallback;
}

TEST_F(ZsetsModelTest, RandomOperationsMatchAModel) {
  const uint32_t seed = SeedFromEnv(20251123);
  SCOPED_TRACE("ZSETS_SEED=" + std::to_string(seed));
  std::mt19937 rng(seed);
  RespClient c = Servers::Get().Vessel();
  const std::vector<std::string> keys = {"a", "b", "c"};
  std::map<std::string, Model> model;
  std::vector<std::string> pool;
  for (int i = 0; i < 260; ++i) pool.push_back("m" + std::to_string(i));
  pool.push_back(std::string(70, 'L'));
  pool.push_back("");
  auto member = [&](int phase) {
    const size_t range = phase == 0 ? 100 : pool.size();
    if (rng() % 400 == 0) return pool[pool.size() - 2];  // now and then the long member
    return pool[rng() % std::min(range, pool.size() - 2)];
  };
  auto score = [&]() -> double {
    switch (rng() % 4) {
      case 0:
        return static_cast<double>(static_cast<int>(rng() % 21) - 10);
      case 1:
        return static_cast<double>(rng() % 1000) / 8.0;
      default:
        return static_cast<double>(static_cast<int>(rng() % 200001) - 100000) / 3.0;
    }
  };
  auto key = [&] { return keys[rng() % keys.size()]; };
  auto check = [&](const std::string& k, int step) {
    Model& md = model[k];
    const Reply r = c("ZRANGE", k, "0", "-1", "WITHSCORES");
    const auto ord = md.Ordered();
    ASSERT_EQ(r.elems.size(), ord.size() * 2) << "step " << step << " key " << k;
    for (size_t i = 0; i < ord.size(); ++i) {
      ASSERT_EQ(r.elems[2 * i].str, ord[i].first) << "step " << step << " key " << k << " #" << i;
      ASSERT_EQ(r.elems[2 * i + 1].str, Fmt(ord[i].second)) << "step " << step << " key " << k;
    }
    ASSERT_EQ(c("ZCARD", k).integer, static_cast<int64_t>(ord.size()));
    if (ord.empty()) {
      ASSERT_EQ(c("EXISTS", k).integer, 0) << "an empty set must not stay, step " << step;
      md.big = false;
      return;
    }
    ASSERT_EQ(c("OBJECT", "ENCODING", k).str, md.big ? "skiplist" : "listpack")
        << "step " << step << " key " << k;
    const size_t i = rng() % ord.size();
    ASSERT_EQ(c("ZRANK", k, ord[i].first).integer, static_cast<int64_t>(i));
    ASSERT_EQ(c("ZREVRANK", k, ord[i].first).integer, static_cast<int64_t>(ord.size() - 1 - i));
    ASSERT_EQ(c("ZSCORE", k, ord[i].first).str, Fmt(ord[i].second));
    const double lo = score(), hi = score();
    int64_t in = 0;
    for (const auto& [m, s] : ord) in += (s > lo && s <= hi) ? 1 : 0;
    ASSERT_EQ(c("ZCOUNT", k, "(" + Fmt(lo), Fmt(hi)).integer, in);
  };
  const int steps = 2500;
  for (int step = 0; step < steps; ++step) {
    const int phase = step < steps / 3 ? 0 : 1;
    const std::string k = key();
    Model& md = model[k];
    switch (rng() % 11) {
      case 0:
      case 1:
      case 2: {  // ZADD, sometimes with options
        Strings cmd = {"ZADD", k};
        const int opt = static_cast<int>(rng() % 5);
        const char* opts[] = {nullptr, "NX", "XX", "GT", "LT"};
        if (opt > 0) cmd.push_back(opts[opt]);
        const bool ch = rng() % 2;
        if (ch) cmd.push_back("CH");
        std::map<std::string, double> pairs;  // the last pair for a member wins
        std::vector<std::pair<std::string, double>> args;
        for (int j = 0, n = 1 + static_cast<int>(rng() % (phase == 0 ? 8 : 40)); j < n; ++j) {
          args.push_back({member(phase), score()});
        }
        int64_t added = 0, changed = 0;
        for (const auto& [m, s] : args) {
          cmd.push_back(Fmt(s));
          cmd.push_back(m);
          const bool exists = md.m.contains(m);
          if ((opt == 1 && exists) || (opt == 2 && !exists)) continue;
          if (exists && ((opt == 3 && s <= md.m[m]) || (opt == 4 && s >= md.m[m]))) continue;
          if (!exists) {
            ++added;
          } else if (md.m[m] != s) {
            ++changed;
          }
          md.Add(m, s);
        }
        ASSERT_EQ(c.Cmd(cmd).integer, ch ? added + changed : added) << Show(cmd);
        break;
      }
      case 3: {  // ZINCRBY
        const std::string m = member(phase);
        const double by = score();
        const double now = (md.m.contains(m) ? md.m[m] : 0) + by;
        md.Add(m, now);
        ASSERT_EQ(c("ZINCRBY", k, Fmt(by), m).str, Fmt(now));
        break;
      }
      case 4: {  // ZREM
        Strings cmd = {"ZREM", k};
        int64_t removed = 0;
        std::set<std::string> gone;
        for (int j = 0, n = 1 + static_cast<int>(rng() % 12); j < n; ++j) {
          const std::string m = member(phase);
          cmd.push_back(m);
          if (md.m.contains(m) && gone.insert(m).second) ++removed;
        }
        for (const auto& m : gone) md.m.erase(m);
        ASSERT_EQ(c.Cmd(cmd).integer, removed);
        break;
      }
      case 5: {  // ZREMRANGEBYRANK
        const int64_t n = static_cast<int64_t>(md.m.size());
        const int64_t a = n == 0 ? 0 : static_cast<int64_t>(rng() % n);
        const int64_t b = a + static_cast<int64_t>(rng() % 6);
        const auto ord = md.Ordered();
        int64_t removed = 0;
        for (int64_t i = a; i <= b && i < n; ++i, ++removed) md.m.erase(ord[i].first);
        ASSERT_EQ(c("ZREMRANGEBYRANK", k, std::to_string(a), std::to_string(b)).integer, removed);
        break;
      }
      case 6: {  // ZREMRANGEBYSCORE
        const double lo = score(), hi = lo + std::abs(score()) / 4;
        int64_t removed = 0;
        std::erase_if(md.m, [&](const auto& e) {
          const bool in = e.second >= lo && e.second < hi;
          removed += in ? 1 : 0;
          return in;
        });
        ASSERT_EQ(c("ZREMRANGEBYSCORE", k, Fmt(lo), "(" + Fmt(hi)).integer, removed);
        break;
      }
      case 7: {  // ZPOPMIN / ZPOPMAX with a count
        const bool max = rng() % 2;
        const size_t n = 1 + rng() % 5;
        auto ord = md.Ordered();
        if (max) std::reverse(ord.begin(), ord.end());
        const Reply r = c(max ? "ZPOPMAX" : "ZPOPMIN", k, std::to_string(n));
        const size_t got = std::min(n, ord.size());
        ASSERT_EQ(r.elems.size(), got * 2);
        for (size_t i = 0; i < got; ++i) {
          ASSERT_EQ(r.elems[2 * i].str, ord[i].first);
          md.m.erase(ord[i].first);
        }
        break;
      }
      case 8: {  // ZRANGESTORE by rank into another key
        const std::string dst = key();
        const auto ord = md.Ordered();
        const int64_t a = static_cast<int64_t>(rng() % (ord.size() + 1));
        const int64_t b = a + static_cast<int64_t>(rng() % 200);
        std::map<std::string, double> result;
        for (int64_t i = a; i <= b && i < static_cast<int64_t>(ord.size()); ++i) {
          result[ord[i].first] = ord[i].second;
        }
        ASSERT_EQ(c("ZRANGESTORE", dst, k, std::to_string(a), std::to_string(b)).integer,
                  static_cast<int64_t>(result.size()));
        const bool rank_big = static_cast<int64_t>(result.size()) > 128;
        model[dst].m = result;
        model[dst].big = rank_big || Model::BigFor(result);
        break;
      }
      case 9: {  // ZUNIONSTORE of two keys with weights
        const std::string dst = key(), x = key(), y = key();
        std::map<std::string, double> result;
        for (const auto& [m, s] : model[x].m) result[m] += s * 2;
        for (const auto& [m, s] : model[y].m) result[m] += s;  // x == y: both weights apply
        ASSERT_EQ(c("ZUNIONSTORE", dst, "2", x, y, "WEIGHTS", "2", "1").integer,
                  static_cast<int64_t>(result.size()));
        model[dst].m = result;
        model[dst].big = Model::BigFor(result);
        break;
      }
      default: {  // ZRANGEBYSCORE with LIMIT, read only
        const auto ord = md.Ordered();
        const double lo = score();
        const size_t off = rng() % 5, cnt = rng() % 10;
        std::vector<std::string> want;
        for (const auto& [m, s] : ord) {
          if (s < lo) continue;
          want.push_back(m);
        }
        want.erase(want.begin(), want.begin() + std::min(off, want.size()));
        if (want.size() > cnt) want.resize(cnt);
        const Reply r = c("ZRANGEBYSCORE", k, Fmt(lo), "+inf", "LIMIT", std::to_string(off),
                          std::to_string(cnt));
        ASSERT_EQ(r.elems.size(), want.size());
        for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(r.elems[i].str, want[i]);
        break;
      }
    }
    for (const std::string& kk : keys) {
      check(kk, step);
      if (HasFatalFailure()) return;
    }
  }
}

// A set of tens of thousands of members (a tree several levels deep: splits, borrowing and
// merging of inner nodes, entry-table compaction) against a model, in pipelined batches.
TEST_F(ZsetsModelTest, LargeSetMatchesAModel) {
  std::mt19937 rng(SeedFromEnv(99));
  RespClient c = Servers::Get().Vessel();
  std::map<std::string, double> model;
  auto ordered = [&] {
    std::vector<std::pair<std::string, double>> v(model.begin(), model.end());
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second < b.second : a.first < b.first;
    });
    return v;
  };
  auto verify = [&](int round) {
    const auto ord = ordered();
    ASSERT_EQ(c("ZCARD", "big").integer, static_cast<int64_t>(ord.size())) << round;
    if (ord.empty()) return;
    for (size_t from = 0; from < ord.size(); from += 5000) {
      const Reply r =
          c("ZRANGE", "big", std::to_string(from), std::to_string(from + 4999), "WITHSCORES");
      for (size_t i = 0; i < r.elems.size() / 2; ++i) {
        ASSERT_EQ(r.elems[2 * i].str, ord[from + i].first)
            << "round " << round << " rank " << from + i;
        ASSERT_EQ(r.elems[2 * i + 1].str, Fmt(ord[from + i].second));
      }
    }
    for (int k = 0; k < 50; ++k) {
      const size_t i = rng() % ord.size();
      ASSERT_EQ(c("ZRANK", "big", ord[i].first).integer, static_cast<int64_t>(i));
    }
    const double lo = static_cast<double>(rng() % 100000);
    const auto first = std::lower_bound(ord.begin(), ord.end(), lo,
                                        [](const auto& e, double v) { return e.second < v; });
    ASSERT_EQ(c("ZCOUNT", "big", Fmt(lo), "+inf").integer, ord.end() - first);
  };
  auto member = [&] { return "member:" + std::to_string(rng() % 60000); };
  for (int round = 0; round < 40; ++round) {
    const int grow = round < 20 ? 4000 : 1000;
    for (int b = 0; b < grow; b += 500) {  // ZADD in batches, some scores equal
      Strings cmd = {"ZADD", "big"};
      for (int i = 0; i < 500; ++i) {
        const std::string m = member();
        const double sc = static_cast<double>(rng() % (round % 2 ? 100 : 100000));
        cmd.insert(cmd.end(), {Fmt(sc), m});
        model[m] = sc;
      }
      c.Cmd(cmd);
    }
    Strings rem = {"ZREM", "big"};
    for (int i = 0; i < (round < 20 ? 1500 : 4000); ++i) {
      const std::string m = member();
      rem.push_back(m);
      model.erase(m);
    }
    c.Cmd(rem);
    for (int i = 0; i < 200; ++i) {
      const std::string m = member();
      const double by = static_cast<double>(static_cast<int>(rng() % 2001) - 1000);
      model[m] = (model.contains(m) ? model[m] : 0) + by;
      c("ZINCRBY", "big", Fmt(by), m);
    }
    if (round % 5 == 4 && !model.empty()) {  // a slice by rank
      const auto ord = ordered();
      const size_t a = rng() % ord.size(), n = std::min<size_t>(3000, ord.size() - a);
      for (size_t i = a; i < a + n; ++i) model.erase(ord[i].first);
      c("ZREMRANGEBYRANK", "big", std::to_string(a), std::to_string(a + n - 1));
    }
    verify(round);
    if (HasFatalFailure()) return;
  }
}

// ZSCAN of a large set while it changes: every member present from the first call to the
// last is returned (Redis's guarantee), across insertions, removals and the compactions that
// removing most of the set triggers.
TEST_F(ZsetsModelTest, ScanSeesEveryStableMemberWhileTheSetChanges) {
  std::mt19937 rng(SeedFromEnv(5));
  RespClient c = Servers::Get().Vessel();
  std::set<std::string> stable;  // every 4th member is never touched
  std::vector<std::string> volatile_members;
  for (int b = 0; b < 40000; b += 1000) {
    Strings cmd = {"ZADD", "z"};
    for (int i = b; i < b + 1000; ++i) {
      const std::string m = "m" + std::to_string(i);
      cmd.insert(cmd.end(), {std::to_string(i % 977), m});
      (i % 4 == 0 ? stable.insert(m), void() : volatile_members.push_back(m));
    }
    c.Cmd(cmd);
  }
  std::shuffle(volatile_members.begin(), volatile_members.end(), rng);
  const int64_t peak = c("MEMORY", "USAGE", "z").integer;
  std::set<std::string> seen;
  std::string cursor = "0";
  int calls = 0;
  size_t next = 0;
  do {
    const Reply r = c("ZSCAN", "z", cursor, "COUNT", "50");
    cursor = r.elems[0].str;
    for (size_t i = 0; i < r.elems[1].elems.size(); i += 2) seen.insert(r.elems[1].elems[i].str);
    Strings rem = {"ZREM", "z"}, add = {"ZADD", "z"};
    for (int k = 0; k < 250 && next < volatile_members.size(); ++k) {
      rem.push_back(volatile_members[next++]);
    }
    for (int k = 0; k < 10; ++k) add.insert(add.end(), {"5", "new" + std::to_string(rng())});
    if (rem.size() > 2) c.Cmd(rem);
    c.Cmd(add);
  } while (cursor != "0" && ++calls < 100000);
  for (const std::string& m : stable) ASSERT_TRUE(seen.contains(m)) << m << " was never returned";
  EXPECT_LT(c("MEMORY", "USAGE", "z").integer, peak * 2 / 3) << "no compaction happened";
  const Reply all = c("ZRANGE", "z", "0", "-1");
  for (const Reply& e : all.elems) {
    if (e.str.rfind("new", 0) == 0) continue;
    ASSERT_TRUE(stable.contains(e.str)) << e.str;
  }
}

// Random commands on a few keys, both servers, every reply compared, then the whole content:
// the representations and their conversions against Redis's.
TEST_F(ZsetsModelTest, RandomCommandsAgreeWithRedis) {
  std::mt19937 rng(SeedFromEnv(777));
  Strings pool = Seq("m", 0, 300);
  pool.push_back(std::string(70, 'L'));
  pool.push_back("");
  const Strings scores = {"0", "1", "-1", "2.5", "1e300", "inf", "-inf", "3", "0.1", "7", "-3.25"};
  const Strings bounds = {"-inf", "+inf", "0", "(0", "1", "(1", "2.5", "(3", "7", "(7", "-1"};
  const Strings keys = {"k0", "k1", "k2"};
  auto pick = [&](const Strings& v) { return v[rng() % v.size()]; };
  auto key = [&] { return pick(keys); };
  auto idx = [&] { return std::to_string(static_cast<int>(rng() % 21) - 10); };
  RespClient v = Servers::Get().Vessel(), r = Servers::Get().Redis();
  std::vector<Row> rows;
  for (int i = 0; i < 3000; ++i) {
    const size_t range = i < 1000 ? 60 : pool.size();
    auto member = [&] { return pool[rng() % std::min(range, pool.size())]; };
    Strings cmd;
    switch (rng() % 14) {
      case 0:
      case 1:
      case 2:
        cmd = {"ZADD", key()};
        if (rng() % 3 == 0) cmd.push_back(pick({"NX", "XX", "GT", "LT", "CH"}));
        for (int j = 0, n = 1 + static_cast<int>(rng() % 30); j < n; ++j) {
          cmd.push_back(pick(scores));
          cmd.push_back(member());
        }
        break;
      case 3:
        cmd = {"ZINCRBY", key(), pick(scores), member()};
        break;
      case 4:
        cmd = {"ZREM", key(), member(), member(), member()};
        break;
      case 5:
        cmd = {"ZREMRANGEBYSCORE", key(), pick(bounds), pick(bounds)};
        break;
      case 6:
        cmd = {"ZREMRANGEBYRANK", key(), idx(), idx()};
        break;
      case 7:
        cmd = {pick({"ZPOPMIN", "ZPOPMAX"}), key(), std::to_string(rng() % 4)};
        break;
      case 8:
        cmd = {pick({"ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"}), key(), "2", key(), key()};
        break;
      case 9:
        cmd = {"ZRANGESTORE", key(), key(), idx(), idx()};
        if (rng() % 2) cmd.push_back("REV");
        break;
      case 10:
        cmd = {"ZRANGEBYSCORE",           key(), pick(bounds), pick(bounds), "WITHSCORES", "LIMIT",
               std::to_string(rng() % 3), idx()};
        break;
      case 11:
        cmd = {"ZMPOP", "2", key(), key(), pick({"MIN", "MAX"}), "COUNT", "2"};
        break;
      case 12:
        cmd = {"ZCOUNT", key(), pick(bounds), pick(bounds)};
        break;
      default:
        cmd = {"ZRANGE", key(), idx(), idx(), "WITHSCORES"};
        break;
    }
    rows.push_back({cmd, Any()});
    if (i % 50 == 49) {
      RunTable(rows);
      rows.clear();
      for (const std::string& k : keys) {
        ASSERT_EQ(v("ZRANGE", k, "0", "-1", "WITHSCORES"), r("ZRANGE", k, "0", "-1", "WITHSCORES"))
            << "after command " << i << ", key " << k;
        ASSERT_EQ(v("OBJECT", "ENCODING", k), r("OBJECT", "ENCODING", k)) << k;
      }
    }
  }
}

// ---- the value itself ----

TEST_F(ZsetsModelTest, CopyDumpRestoreKeepContentAndEncoding) {
  RespClient c = Servers::Get().Vessel();
  c("ZADD", "small", "1", "a", "2.5", "b", "-0", "c");
  Strings add = {"ZADD", "big"};
  for (int i = 0; i < 500; ++i)
    add.insert(add.end(), {std::to_string(i % 37), "m" + std::to_string(i)});
  c.Cmd(add);
  c("ZADD", "long", "1", std::string(100, 'q'), "2", "w");
  for (const char* k : {"small", "big", "long"}) {
    SCOPED_TRACE(k);
    const Reply before = c("ZRANGE", k, "0", "-1", "WITHSCORES");
    const Reply enc = c("OBJECT", "ENCODING", k);
    ASSERT_EQ(c("COPY", k, std::string(k) + "2").integer, 1);
    EXPECT_EQ(c("ZRANGE", std::string(k) + "2", "0", "-1", "WITHSCORES"), before);
    EXPECT_EQ(c("OBJECT", "ENCODING", std::string(k) + "2"), enc);
    c("ZADD", std::string(k) + "2", "100", "only-in-copy");
    c("ZPOPMIN", std::string(k) + "2", "2");
    EXPECT_EQ(c("ZRANGE", k, "0", "-1", "WITHSCORES"), before) << "the copy is not deep";
    const Reply dump = c("DUMP", k);
    ASSERT_EQ(dump.type, Reply::Type::kBulk);
    ASSERT_EQ(c("RESTORE", std::string(k) + "3", "0", dump.str).str, "OK");
    EXPECT_EQ(c("ZRANGE", std::string(k) + "3", "0", "-1", "WITHSCORES"), before);
    EXPECT_EQ(c("OBJECT", "ENCODING", std::string(k) + "3"), enc);
    EXPECT_EQ(c("ZRANK", std::string(k) + "3", "w").type, c("ZRANK", k, "w").type);
  }
}

std::string Bytes(const std::string& b) { return U64(b.size()) + b; }
std::string DoubleBits(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, 8);
  return U64(bits);
}
// The zset type's serialization: representation, count, then member and score in order.
std::string Encoded(uint64_t rep, const std::vector<std::pair<std::string, double>>& items) {
  std::string s = U64(rep) + U64(items.size());
  for (const auto& [m, sc] : items) s += Bytes(m) + DoubleBits(sc);
  return s;
}

int Collect(void* ud, const char* p, size_t n, double score) {
  auto* out = static_cast<std::vector<std::pair<std::string, double>>*>(ud);
  out->push_back({std::string(p, n), score});
  return out->size() >= 1000 ? 1 : 0;  // stops a long walk
}

TEST_F(ZsetsModelTest, TypeCallbacksRoundTripAndRefuseBadInput) {
  const TypeCallbacks type("zset");
  ASSERT_TRUE(type.found());
  const auto& d = type.desc();
  ASSERT_NE(d.copy, nullptr);
  ASSERT_NE(d.visit, nullptr);
  std::vector<std::pair<std::string, double>> many;
  for (int i = 0; i < 3000; ++i) many.push_back({"m" + std::to_string(100000 + i), i / 7.0});
  const std::vector<std::tuple<std::string, uint64_t, std::vector<std::pair<std::string, double>>>>
      good = {{"listpack", 0, {{"b", -2}, {"a", 1}, {"", 1.5}, {std::string(64, 'z'), 1e300}}},
              {"skiplist", 1, many},
              {"skiplist", 1, {{"x", -INFINITY}, {std::string(300, 'y'), 0}, {"z", INFINITY}}}};
  for (const auto& [encoding, rep, items] : good) {
    SCOPED_TRACE(encoding);
    const std::string bytes = Encoded(rep, items);
    void* v = type.Load(bytes);
    ASSERT_NE(v, nullptr);
    EXPECT_STREQ(d.encoding(nullptr, v), encoding.c_str());
    EXPECT_EQ(type.Save(v), bytes);
    void* copy = d.copy(nullptr, v);
    ASSERT_NE(copy, nullptr);
    EXPECT_EQ(type.Save(copy), bytes);
    EXPECT_EQ(d.free_effort(nullptr, v), items.size());
    EXPECT_GT(d.mem_usage(nullptr, copy), 0u);
    std::vector<std::pair<std::string, double>> seen;
    EXPECT_EQ(d.visit(nullptr, v, Collect, &seen), VSL_OK);
    const size_t walked = std::min<size_t>(items.size(), 1000);
    ASSERT_EQ(seen.size(), walked);
    EXPECT_TRUE(std::equal(seen.begin(), seen.end(), items.begin())) << "visit order";
    type.Free(copy);
    type.Free(v);
  }
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"empty input", ""},
      {"no members", Encoded(0, {})},
      {"unknown representation", Encoded(2, {{"a", 1}})},
      {"out of order", Encoded(0, {{"a", 2}, {"b", 1}})},
      {"same score out of member order", Encoded(1, {{"b", 1}, {"a", 1}})},
      {"duplicate member", Encoded(0, {{"a", 1}, {"a", 2}})},
      {"duplicate member far apart", Encoded(1, {{"a", 1}, {"b", 2}, {"a", 3}})},
      {"NaN score", Encoded(0, {{"a", NAN}})},
      {"truncated", Encoded(0, {{"a", 1}, {"bc", 2}}).substr(0, 40)},
      {"count beyond the input", U64(0) + U64(1000000) + Bytes("a") + DoubleBits(1)},
  };
  for (const auto& [why, bytes] : bad) {
    void* v = type.Load(bytes);
    EXPECT_EQ(v, nullptr) << why;
    if (v != nullptr) type.Free(v);
  }
  EXPECT_EQ(type.Load(Encoded(0, {{"a", 1}}), 2), nullptr) << "unknown encoding version";
}

// The visit callbacks of the list and set types (SDK 1.2): every element once, a list in order,
// scores 0, and a nonzero return stops the walk.
TEST_F(ZsetsModelTest, ListAndSetVisitTheirElements) {
  const TypeCallbacks list("list"), set("set");
  ASSERT_NE(list.desc().visit, nullptr);
  ASSERT_NE(set.desc().visit, nullptr);
  std::string lbytes = U64(3) + Bytes("x") + Bytes("") + Bytes(std::string(40, 'y'));
  void* l = list.Load(lbytes);
  ASSERT_NE(l, nullptr);
  std::vector<std::pair<std::string, double>> seen;
  EXPECT_EQ(list.desc().visit(nullptr, l, Collect, &seen), VSL_OK);
  EXPECT_EQ(seen, (std::vector<std::pair<std::string, double>>{
                      {"x", 0}, {"", 0}, {std::string(40, 'y'), 0}}));
  list.Free(l);
  // Sets of every representation (intset 0, listpack 1, hashtable 2).
  for (const auto& [rep, members] : std::vector<std::pair<uint64_t, Strings>>{
           {0, {"-5", "1", "70000"}}, {1, {"b", "a", ""}}, {2, Seq("h", 0, 2000)}}) {
    std::string bytes = U64(rep) + U64(members.size());
    for (const auto& m : members)
      bytes += rep == 0 ? U64(static_cast<uint64_t>(std::stoll(m))) : Bytes(m);
    void* v = set.Load(bytes);
    ASSERT_NE(v, nullptr) << rep;
    seen.clear();
    EXPECT_EQ(set.desc().visit(nullptr, v, Collect, &seen), VSL_OK);
    std::multiset<std::string> got;
    for (const auto& [m, sc] : seen) {
      got.insert(m);
      EXPECT_EQ(sc, 0);
    }
    if (members.size() <= 1000) {
      EXPECT_EQ(got, std::multiset<std::string>(members.begin(), members.end()));
    } else {
      EXPECT_EQ(got.size(), 1000u) << "the walk stops when the callback says so";
    }
    set.Free(v);
  }
}

// MEMORY USAGE minus the module's allocation growth is the host's entry for every
// representation, and deleting everything gives every byte back.
TEST_F(ZsetsModelTest, MemoryUsageMatchesTheAllocator) {
  RespClient c = Servers::Get().Vessel();
  for (int i = 0; i < 500; ++i) {  // large values of earlier tests may still be freed off-thread
    if (c("INFO", "memory").str.find("lazyfree_pending_objects:0\r\n") != std::string::npos) break;
    usleep(10000);
  }
  const int64_t base = ModuleAllocated(c, "zsets");
  std::vector<int64_t> overheads;
  const std::vector<int> sizes = {3, 100, 129, 5000, 70000};
  for (size_t i = 0; i < sizes.size(); ++i) {
    const std::string key = "key" + std::to_string(i);
    const int64_t before = ModuleAllocated(c, "zsets");
    for (int j = 0; j < sizes[i]; j += 500) {
      Strings cmd = {"ZADD", key};
      for (int k = j; k < std::min(sizes[i], j + 500); ++k) {
        cmd.push_back(std::to_string((k * 7919) % 10007));
        cmd.push_back(k % 50 == 0 ? std::string(40, 'x') + std::to_string(k)
                                  : "member:" + std::to_string(k));
      }
      c.Cmd(cmd);
    }
    const int64_t grown = ModuleAllocated(c, "zsets") - before;
    overheads.push_back(c("MEMORY", "USAGE", key).integer - grown);
    EXPECT_GT(grown, 0);
  }
  ExpectEntryOverheads(overheads);
  // Churn (holes, compaction, merges), then give everything back.
  c("ZREMRANGEBYRANK", "key4", "0", "60000");
  c("ZADD", "key4", "1", "again", "2", "more");
  c("ZPOPMAX", "key3", "4000");
  c("ZUNIONSTORE", "key5", "2", "key4", "key3");
  c("ZRANGESTORE", "key6", "key3", "0", "-1");
  c("COPY", "key4", "key7");
  c("FLUSHALL");
  for (int i = 0; i < 200 && ModuleAllocated(c, "zsets") != base; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // lazy frees finish
  }
  EXPECT_EQ(ModuleAllocated(c, "zsets"), base) << "leaked bytes";
}

// The listpack limits, exactly at their edges, and the conversion never undone.
TEST_F(ZsetsModelTest, EncodingThresholds) {
  Strings add128 = {"ZADD", "z"};
  for (int i = 0; i < 128; ++i)
    add128.insert(add128.end(), {std::to_string(i), "m" + std::to_string(i)});
  RunTable({
      {add128, Int(128)},
      {{"OBJECT", "ENCODING", "z"}, Bulk("listpack")},
      {{"ZADD", "z", "1", "m1"}, Int(0)},
      {{"OBJECT", "ENCODING", "z"}, Bulk("listpack")},
      {{"ZADD", "z", "999", "m128"}, Int(1)},
      {{"OBJECT", "ENCODING", "z"}, Bulk("skiplist")},
      {{"ZREMRANGEBYRANK", "z", "0", "-3"}, Int(127)},
      {{"OBJECT", "ENCODING", "z"}, Bulk("skiplist")},
      {{"ZADD", "v", "1", std::string(64, 'a')}, Int(1)},
      {{"OBJECT", "ENCODING", "v"}, Bulk("listpack")},
      {{"ZADD", "v", "1", std::string(65, 'a')}, Int(1)},
      {{"OBJECT", "ENCODING", "v"}, Bulk("skiplist")},
      {{"ZADD", "w", "1", std::string(65, 'a')}, Int(1)},
      {{"OBJECT", "ENCODING", "w"}, Bulk("skiplist")},
      {{"ZUNIONSTORE", "u", "1", "z"}, Int(2)},
      {{"OBJECT", "ENCODING", "u"}, Bulk("listpack")},
      {{"ZUNIONSTORE", "u", "1", "v"}, Int(2)},
      {{"OBJECT", "ENCODING", "u"}, Bulk("skiplist")},
      {{"ZRANGESTORE", "r", "v", "0", "0"}, Int(1)},
      {{"OBJECT", "ENCODING", "r"}, Bulk("listpack")},
      {{"ZINCRBY", "v", "1", std::string(64, 'a')}, Dbl("2")},
  });
}

}  // namespace
}  // namespace vessel::test
