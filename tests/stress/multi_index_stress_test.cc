// Many clients insert, update and delete multi_index records on private and shared keys, with
// transactions across keys; readers check every reply is a consistent snapshot, and at the end
// the counts are exact and every index agrees with the records (checked by brute force). Runs
// under ThreadSanitizer in CI.
#include <atomic>
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

#if defined(__SANITIZE_THREAD__)
constexpr int kScale = 1;  // TSan is ~10x slower: fewer rounds, same races
#else
constexpr int kScale = 5;
#endif
constexpr int kThreads = 8;
constexpr int kEmails = 40;  // few values: UNIQUE collisions are frequent
constexpr int kGroups = 4;

class MultiIndexStress : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
  RespClient Client() { return Servers::Get().Vessel(); }

  template <typename F>
  void Parallel(int threads, F&& body) {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { body(t); });
    for (auto& th : pool) th.join();
  }
};

std::string Email(int i) { return "user" + std::to_string(i) + "@example.com"; }
std::string Group(int i) { return "g" + std::to_string(i); }

void Create(RespClient& c, const std::string& key) {
  ASSERT_EQ(
      c("MI.CREATE", key, "INDEX", "email", "email", "HASH", "UNIQUE", "INDEX", "age", "age",
        "ORDERED", "NUMERIC", "INDEX", "grp", "grp", "HASH", "INDEX", "name", "name", "ORDERED")
          .str,
      "OK");
}

// A record of a reply: id and fields.
struct Rec {
  int64_t id = 0;
  std::map<std::string, std::string> fields;
};
std::vector<Rec> Records(const Reply& r) {
  std::vector<Rec> out;
  for (const Reply& e : r.elems) {
    Rec rec;
    if (e.elems.size() != 2) return {};
    rec.id = e.elems[0].integer;
    for (size_t i = 0; i + 1 < e.elems[1].elems.size(); i += 2) {
      rec.fields[e.elems[1].elems[i].str] = e.elems[1].elems[i + 1].str;
    }
    out.push_back(rec);
  }
  return out;
}

// A full MI.RANGE over age is one snapshot: ages ascending, emails distinct, every record whole.
bool ConsistentSnapshot(const Reply& r, std::string* why) {
  if (r.type != Reply::Type::kArray) return *why = "not an array: " + r.ToString(), false;
  std::set<std::string> emails;
  double last = -1e300;
  for (const Rec& rec : Records(r)) {
    if (rec.fields.size() < 4) return *why = "a partial record", false;
    if (!emails.insert(rec.fields.at("email")).second) {
      return *why = "two records with email " + rec.fields.at("email"), false;
    }
    const double age = std::stod(rec.fields.at("age"));
    if (age < last) return *why = "ages out of order", false;
    last = age;
  }
  if (Records(r).size() != r.elems.size()) return *why = "malformed records", false;
  return true;
}

// Brute force at the end: every index agrees with the records of the key.
void CheckIndexes(RespClient& c, const std::string& key, int64_t expected_card) {
  SCOPED_TRACE(key);
  const int64_t card = c("MI.CARD", key).integer;
  EXPECT_EQ(card, expected_card) << "successful inserts minus deletes";
  const Reply all = c("MI.RANGE", key, "age", "-inf", "+inf");
  std::string why;
  EXPECT_TRUE(ConsistentSnapshot(all, &why)) << why;
  const std::vector<Rec> recs = Records(all);
  EXPECT_EQ(static_cast<int64_t>(recs.size()), card);
  EXPECT_EQ(c("MI.COUNT", key, "age", "-inf", "+inf").integer, card);
  EXPECT_EQ(c("MI.COUNT", key, "name", "-", "+").integer, card);
  std::map<std::string, std::set<int64_t>> by_email, by_group, by_name;
  for (const Rec& r : recs) {
    by_email[r.fields.at("email")].insert(r.id);
    by_group[r.fields.at("grp")].insert(r.id);
    by_name[r.fields.at("name")].insert(r.id);
  }
  auto ids_of = [](const Reply& r) {
    std::set<int64_t> ids;
    for (const Rec& rec : Records(r)) ids.insert(rec.id);
    return ids;
  };
  for (int i = 0; i < kEmails; ++i) {
    const std::set<int64_t> got = ids_of(c("MI.GET", key, "email", Email(i)));
    EXPECT_LE(got.size(), 1u) << "UNIQUE index holds " << Email(i) << " twice";
    EXPECT_EQ(got, by_email[Email(i)]) << Email(i);
  }
  int64_t grouped = 0;
  for (int g = 0; g < kGroups; ++g) {
    const std::set<int64_t> got = ids_of(c("MI.GET", key, "grp", Group(g)));
    EXPECT_EQ(got, by_group[Group(g)]) << Group(g);
    grouped += static_cast<int64_t>(got.size());
  }
  EXPECT_EQ(grouped, card);
  for (const auto& [name, ids] : by_name) {
    EXPECT_EQ(ids_of(c("MI.RANGE", key, "name", "[" + name, "[" + name)), ids) << name;
  }
}

// Threads insert (with UNIQUE collisions), update (re-indexing, with violations), delete by
// value and by id on their own key and on one shared key, while a reader checks snapshots of
// the shared key. At the end MI.CARD is exactly the successful inserts minus the deletes.
TEST_F(MultiIndexStress, InsertUpdateDeleteOnSharedAndPrivateKeys) {
  RespClient setup = Client();
  std::vector<std::string> keys = {"mi:shared"};
  for (int t = 0; t < kThreads; ++t) keys.push_back("mi:own:" + std::to_string(t));
  for (const std::string& k : keys) Create(setup, k);
  std::map<std::string, std::atomic<int64_t>> net;
  for (const std::string& k : keys) net[k] = 0;

  std::atomic<bool> stop{false};
  std::atomic<int> torn{0};
  std::atomic<int64_t> snapshots{0};
  std::thread reader([&] {
    RespClient c = Client();
    while (!stop.load()) {
      std::string why;
      if (!ConsistentSnapshot(c("MI.RANGE", "mi:shared", "age", "-inf", "+inf"), &why)) {
        ADD_FAILURE() << why;
        ++torn;
      }
      ++snapshots;
    }
  });

  std::atomic<int64_t> refused{0};
  Parallel(kThreads, [&](int t) {
    RespClient c = Client();
    std::mt19937 rng(1000 + t);
    auto r = [&](int n) { return static_cast<int>(rng() % n); };
    for (int i = 0; i < 400 * kScale; ++i) {
      const std::string& key = r(2) == 0 ? keys[0] : keys[1 + t];
      const std::string email = Email(r(kEmails));
      const std::string age = std::to_string(r(100));
      const std::string grp = Group(r(kGroups));
      const std::string name = "n" + std::to_string(r(30));
      const int op = r(100);
      if (op < 35) {
        const Reply rep = c("MI.INSERT", key, "email", email, "age", age, "grp", grp, "name", name);
        if (rep.type == Reply::Type::kInt) {
          ++net.at(key);
        } else {
          EXPECT_EQ(rep.str.rfind("UNIQUE ", 0), 0u) << rep.ToString();
          ++refused;
        }
      } else if (op < 50) {
        const Reply rep = c("MI.UPDATE", key, "grp", grp, "age", age, "name", name);
        EXPECT_EQ(rep.type, Reply::Type::kInt) << rep.ToString();
      } else if (op < 60) {  // a unique change: a violation when the target is taken
        const Reply rep = c("MI.UPDATE", key, "email", email, "email", Email(r(kEmails)));
        EXPECT_TRUE(rep.type == Reply::Type::kInt || rep.str.rfind("UNIQUE ", 0) == 0)
            << rep.ToString();
      } else if (op < 65) {
        const Reply rep = c("MI.UPDATEBYID", key, std::to_string(1 + r(200)), "email",
                            Email(r(kEmails)), "age", age);
        EXPECT_TRUE(rep.type == Reply::Type::kInt || rep.str.rfind("UNIQUE ", 0) == 0)
            << rep.ToString();
      } else if (op < 75) {
        const Reply rep = c("MI.DEL", key, "email", email);
        ASSERT_EQ(rep.type, Reply::Type::kInt) << rep.ToString();
        net.at(key) -= rep.integer;
      } else if (op < 80) {
        const Reply rep =
            c("MI.DELBYID", key, std::to_string(1 + r(200)), std::to_string(1 + r(200)));
        ASSERT_EQ(rep.type, Reply::Type::kInt) << rep.ToString();
        net.at(key) -= rep.integer;
      } else if (op < 85) {  // one transaction over both keys
        c.Send({"MULTI"});
        c.Send({"MI.INSERT", keys[0], "email", email, "age", age, "grp", grp, "name", name});
        c.Send({"MI.DEL", keys[1 + t], "grp", grp});
        c.Send({"MI.INSERT", keys[1 + t], "email", email, "age", age, "grp", grp, "name", name});
        c.Send({"EXEC"});
        for (int j = 0; j < 4; ++j) c.Read();  // OK, QUEUED x3
        const Reply exec = c.Read();
        ASSERT_EQ(exec.elems.size(), 3u) << exec.ToString();
        if (exec.elems[0].type == Reply::Type::kInt) ++net.at(keys[0]);
        net.at(keys[1 + t]) -= exec.elems[1].integer;
        if (exec.elems[2].type == Reply::Type::kInt) ++net.at(keys[1 + t]);
      } else if (op < 92) {
        const Reply rep = c("MI.GET", key, "email", email);
        EXPECT_LE(rep.elems.size(), 1u) << rep.ToString();
      } else {
        const Reply rep = c("MI.RANGE", key, "age", age, "+inf", "LIMIT", "0", "5", "REV");
        EXPECT_LE(rep.elems.size(), 5u) << rep.ToString();
      }
    }
  });
  stop = true;
  reader.join();
  EXPECT_EQ(torn.load(), 0);
  EXPECT_GT(snapshots.load(), 0);
  EXPECT_GT(refused.load(), 0) << "no UNIQUE collision was exercised";
  for (const std::string& k : keys) CheckIndexes(setup, k, net.at(k).load());
}

// Transactions insert and delete the same token in two keys; an observer reading both counts in
// one transaction always sees them equal, and a second observer sees each key's indexes agree.
TEST_F(MultiIndexStress, TransactionsKeepTwoKeysInStep) {
  RespClient setup = Client();
  for (const char* k : {"mi:a", "mi:b"}) {
    ASSERT_EQ(setup("MI.CREATE", k, "INDEX", "tok", "tok", "HASH", "INDEX", "n", "n", "ORDERED",
                    "NUMERIC")
                  .str,
              "OK");
  }
  std::atomic<bool> stop{false};
  std::atomic<int> mismatches{0};
  std::thread observer([&] {
    RespClient c = Client();
    while (!stop.load()) {
      c.Send({"MULTI"});
      c.Send({"MI.CARD", "mi:a"});
      c.Send({"MI.CARD", "mi:b"});
      c.Send({"MI.COUNT", "mi:a", "n", "-inf", "+inf"});
      c.Send({"EXEC"});
      for (int j = 0; j < 4; ++j) c.Read();
      const Reply r = c.Read();
      if (r.elems.size() != 3 || r.elems[0].integer != r.elems[1].integer ||
          r.elems[0].integer != r.elems[2].integer) {
        ++mismatches;
      }
    }
  });
  Parallel(kThreads, [&](int t) {
    RespClient c = Client();
    std::mt19937 rng(2000 + t);
    for (int i = 0; i < 300 * kScale; ++i) {
      const std::string tok = "t" + std::to_string(rng() % 20);
      const std::string n = std::to_string(rng() % 1000);
      c.Send({"MULTI"});
      if (rng() % 3 != 0) {
        c.Send({"MI.INSERT", "mi:a", "tok", tok, "n", n});
        c.Send({"MI.INSERT", "mi:b", "tok", tok, "n", n});
      } else {
        c.Send({"MI.DEL", "mi:a", "tok", tok});
        c.Send({"MI.DEL", "mi:b", "tok", tok});
      }
      c.Send({"EXEC"});
      for (int j = 0; j < 3; ++j) c.Read();
      const Reply r = c.Read();
      ASSERT_EQ(r.elems.size(), 2u) << r.ToString();
      EXPECT_EQ(r.elems[0].type, Reply::Type::kInt);
      EXPECT_EQ(r.elems[0].type, r.elems[1].type);
      // Both keys see the same history: the same new id, the same number deleted.
      EXPECT_EQ(r.elems[0].integer, r.elems[1].integer);
    }
  });
  stop = true;
  observer.join();
  EXPECT_EQ(mismatches.load(), 0);
  const int64_t card = setup("MI.CARD", "mi:a").integer;
  EXPECT_EQ(setup("MI.CARD", "mi:b").integer, card);
  int64_t by_token = 0;
  for (int i = 0; i < 20; ++i) {
    const std::string tok = "t" + std::to_string(i);
    const size_t a = setup("MI.GET", "mi:a", "tok", tok).elems.size();
    EXPECT_EQ(setup("MI.GET", "mi:b", "tok", tok).elems.size(), a) << tok;
    by_token += static_cast<int64_t>(a);
  }
  EXPECT_EQ(by_token, card);
}

}  // namespace
}  // namespace vessel::test
