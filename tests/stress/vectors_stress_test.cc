// Client threads hammer shared and private vector keys with VEC.PUSH, POP, SET, MSET, SWAP,
// INSERT, ERASE and transactions; exact invariants must hold at the end (and, for atomicity, for
// every observer meanwhile). Runs under ThreadSanitizer in CI.
#include <algorithm>
#include <atomic>
#include <map>
#include <random>
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

std::string Str(int64_t v) { return std::to_string(v); }

class VectorsStress : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
  RespClient Client() { return Servers::Get().Vessel(); }
};

Strings Elements(const Reply& r) {
  Strings out;
  for (const Reply& e : r.elems) out.push_back(e.str);
  return out;
}

// Unique tokens pushed to shared and private vectors, popped back concurrently: every token is
// popped at most once, and pushed = popped + what is left, token for token.
TEST_F(VectorsStress, PushPopLosesAndDuplicatesNothing) {
  const Strings keys = {"q0", "q1", "q2", "q3"};
  std::vector<Strings> pushed(kThreads), popped(kThreads);
  Parallel(kThreads, [&](int t) {
    RespClient c = Client();
    std::mt19937 rng(t);
    const std::string own = "own:" + Str(t);
    for (int i = 0; i < 400 * kScale; ++i) {
      const std::string& key = rng() % 4 == 0 ? own : keys[rng() % keys.size()];
      if (rng() % 2 == 0) {
        Strings cmd = {"VEC.PUSH", key};
        for (int j = 0, n = 1 + static_cast<int>(rng() % 3); j < n; ++j) {
          // Some tokens are long enough to live outside their slot.
          std::string token = "t" + Str(t) + ":" + Str(i) + ":" + Str(j);
          if (rng() % 3 == 0) token += std::string(20, 'x');
          cmd.push_back(token);
          pushed[t].push_back(token);
        }
        const Reply r = c.Cmd(cmd);
        ASSERT_EQ(r.type, Reply::Type::kInt) << r.ToString();
        ASSERT_GE(r.integer, static_cast<int64_t>(cmd.size() - 2));
      } else if (rng() % 2 == 0) {
        const Reply r = c("VEC.POP", key);
        if (r.type == Reply::Type::kBulk) popped[t].push_back(r.str);
        ASSERT_TRUE(r.type == Reply::Type::kBulk || r.type == Reply::Type::kNil) << r.ToString();
      } else {
        const Reply r = c("VEC.POP", key, Str(1 + rng() % 4));
        ASSERT_TRUE(r.type == Reply::Type::kArray || r.type == Reply::Type::kNilArray)
            << r.ToString();
        for (const Reply& e : r.elems) popped[t].push_back(e.str);
      }
    }
  });
  RespClient c = Client();
  std::map<std::string, int> balance;  // token -> pushed - popped - left
  for (const Strings& v : pushed) {
    for (const std::string& s : v) ++balance[s];
  }
  int64_t lengths = 0, n_pushed = 0, n_popped = 0;
  for (const Strings& v : popped) {
    for (const std::string& s : v) --balance[s];
    n_popped += static_cast<int64_t>(v.size());
  }
  for (const Strings& v : pushed) n_pushed += static_cast<int64_t>(v.size());
  Strings all = keys;
  for (int t = 0; t < kThreads; ++t) all.push_back("own:" + Str(t));
  for (const std::string& k : all) {
    const Strings left = Elements(c("VEC.RANGE", k, "0", "-1"));
    EXPECT_EQ(c("VEC.LEN", k).integer, static_cast<int64_t>(left.size()));
    EXPECT_EQ(c("EXISTS", k).integer, left.empty() ? 0 : 1);
    lengths += static_cast<int64_t>(left.size());
    for (const std::string& s : left) --balance[s];
  }
  EXPECT_EQ(n_pushed - n_popped, lengths);
  for (const auto& [token, b] : balance) ASSERT_EQ(b, 0) << token;
}

// SWAP only: the multiset of elements never changes, and every reader sees a permutation of it
// (a VEC.RANGE never observes half a swap).
TEST_F(VectorsStress, SwapsPreserveTheElements) {
  constexpr int kLen = 64;
  Strings content;
  for (int i = 0; i < kLen; ++i)
    content.push_back(i % 4 == 0 ? std::string(30, 'a' + i % 26) + Str(i) : "e" + Str(i));
  Strings sorted = content;
  std::sort(sorted.begin(), sorted.end());
  RespClient setup = Client();
  Strings push = {"VEC.PUSH", "perm"};
  push.insert(push.end(), content.begin(), content.end());
  ASSERT_EQ(setup.Cmd(push).integer, kLen);
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0}, reads{0};
  std::thread reader([&] {
    RespClient c = Client();
    while (!stop.load()) {
      Strings seen = Elements(c("VEC.RANGE", "perm", "0", "-1"));
      std::sort(seen.begin(), seen.end());
      if (seen != sorted) ++bad;
      const Reply found = c("VEC.FIND", "perm", content[7]);
      if (found.integer < 0 || found.integer >= kLen) ++bad;
      ++reads;
    }
  });
  std::atomic<int> errors{0};
  Parallel(kThreads, [&](int t) {
    RespClient c = Client();
    std::mt19937 rng(100 + t);
    for (int i = 0; i < 500 * kScale; ++i) {
      // Indexes from either end, as clients would use them.
      const int64_t a = static_cast<int64_t>(rng() % kLen) - (rng() % 2 ? kLen : 0);
      const int64_t b = static_cast<int64_t>(rng() % kLen);
      if (c("VEC.SWAP", "perm", Str(a), Str(b)).str != "OK") ++errors;
    }
  });
  stop = true;
  reader.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(bad.load(), 0) << "of " << reads.load() << " reads";
  Strings final_content = Elements(setup("VEC.RANGE", "perm", "0", "-1"));
  std::sort(final_content.begin(), final_content.end());
  EXPECT_EQ(final_content, sorted);
}

// A mix of every positional write on two shared keys: whatever the interleaving, the lengths
// add up to what the replies say was added and removed.
TEST_F(VectorsStress, PositionalWritesKeepLengthsExact) {
  const Strings keys = {"m0", "m1"};
  std::atomic<int64_t> added{0}, removed{0};
  std::atomic<int> unexpected{0};
  Parallel(kThreads, [&](int t) {
    RespClient c = Client();
    std::mt19937 rng(200 + t);
    auto ok_or_range = [&](const Reply& r) {
      if (r.str == "OK" || r.str == "ERR index out of range" || r.str == "ERR no such key") return;
      ++unexpected;
    };
    for (int i = 0; i < 400 * kScale; ++i) {
      const std::string& key = keys[rng() % keys.size()];
      const std::string token =
          "w" + Str(t) + ":" + Str(i) + (rng() % 3 ? "" : std::string(24, 'z'));
      const std::string index = Str(static_cast<int64_t>(rng() % 40) - 20);
      switch (rng() % 8) {
        case 0: {
          const Reply r = c("VEC.INSERT", key, index, token, token);
          if (r.type == Reply::Type::kInt) {
            added += 2;
          } else {
            ok_or_range(r);
          }
          break;
        }
        case 1: {
          const Reply r = c("VEC.ERASE", key, index, Str(1 + rng() % 3));
          if (r.type == Reply::Type::kInt) {
            removed += r.integer;
          } else {
            ok_or_range(r);
          }
          break;
        }
        case 2: {
          const Reply r = c("VEC.PUSH", key, token);
          if (r.type == Reply::Type::kInt)
            ++added;
          else
            ++unexpected;
          break;
        }
        case 3: {
          const Reply r = c("VEC.POP", key, "2");
          removed += static_cast<int64_t>(r.elems.size());
          break;
        }
        case 4:
          ok_or_range(c("VEC.SET", key, index, token));
          break;
        case 5:
          ok_or_range(c("VEC.MSET", key, index, token, "0", token));
          break;
        case 6:
          ok_or_range(c("VEC.SWAP", key, index, "-1"));
          break;
        default: {
          const Reply r = c("VEC.INDEX", key, index);
          if (r.type != Reply::Type::kBulk && r.type != Reply::Type::kNil) ++unexpected;
          break;
        }
      }
    }
  });
  EXPECT_EQ(unexpected.load(), 0);
  RespClient c = Client();
  int64_t lengths = 0;
  for (const std::string& k : keys) {
    const int64_t len = c("VEC.LEN", k).integer;
    EXPECT_EQ(static_cast<int64_t>(c("VEC.RANGE", k, "0", "-1").elems.size()), len);
    lengths += len;
  }
  EXPECT_EQ(added.load() - removed.load(), lengths);
}

// Elements moved between two vectors with WATCH/MULTI/EXEC: the total is constant for every
// observer reading both lengths in one transaction.
TEST_F(VectorsStress, TransactionsMoveElementsAtomically) {
  constexpr int64_t kTotal = 100;
  RespClient setup = Client();
  Strings push = {"VEC.PUSH", "from"};
  for (int i = 0; i < kTotal; ++i) push.push_back("x" + Str(i));
  ASSERT_EQ(setup.Cmd(push).integer, kTotal);
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::thread auditor([&] {
    RespClient c = Client();
    while (!stop.load()) {
      c.Send({"MULTI"});
      c.Send({"VEC.LEN", "from"});
      c.Send({"VEC.LEN", "to"});
      c.Send({"EXEC"});
      c.Read();
      c.Read();
      c.Read();
      const Reply exec = c.Read();
      if (exec.elems.size() != 2 || exec.elems[0].integer + exec.elems[1].integer != kTotal) ++bad;
    }
  });
  std::atomic<int> moved{0};
  Parallel(kThreads / 2, [&](int t) {
    RespClient c = Client();
    std::mt19937 rng(300 + t);
    for (int i = 0; i < 100 * kScale; ++i) {
      const bool forward = rng() % 2 == 0;
      const std::string src = forward ? "from" : "to", dst = forward ? "to" : "from";
      for (;;) {
        c("WATCH", src);
        const Reply back = c("VEC.BACK", src);
        if (back.type != Reply::Type::kBulk) {
          c("UNWATCH");
          break;
        }
        c("MULTI");
        c("VEC.POP", src);
        c("VEC.INSERT", dst, "0", back.str);
        const Reply r = c("EXEC");
        if (r.type == Reply::Type::kArray) {
          if (r.elems.size() != 2 || r.elems[0].str != back.str) ++bad;
          ++moved;
          break;
        }
      }
    }
  });
  stop = true;
  auditor.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(moved.load(), 0);
  Strings all = Elements(setup("VEC.RANGE", "from", "0", "-1"));
  const Strings to = Elements(setup("VEC.RANGE", "to", "0", "-1"));
  all.insert(all.end(), to.begin(), to.end());
  std::sort(all.begin(), all.end());
  Strings want(push.begin() + 2, push.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(all, want);  // moved whole, never duplicated
}

// Whole-value operations (COPY, RENAME, RESIZE, TRIM, CLEAR, EXPIRE, DEL, FLUSHDB) racing with
// element writers and readers neither crash nor deadlock, and leave a consistent keyspace.
TEST_F(VectorsStress, WholeValueOperationsRaceWithWriters) {
  std::atomic<bool> stop{false};
  std::thread chaos([&] {
    RespClient c = Client();
    std::mt19937 rng(7);
    while (!stop.load()) {
      const std::string a = "c" + Str(rng() % 8), b = "c" + Str(rng() % 8);
      switch (rng() % 6) {
        case 0:
          c("COPY", a, b, "REPLACE");
          break;
        case 1:
          c("RENAME", a, b);
          break;
        case 2:
          c("EXPIRE", a, "100");
          break;
        case 3:
          c("VEC.CLEAR", a);
          break;
        case 4:
          c("DEL", a, b);
          break;
        default:
          if (rng() % 20 == 0) c("FLUSHDB");
          break;
      }
    }
  });
  Parallel(kThreads, [&](int t) {
    RespClient c = Client();
    std::mt19937 rng(400 + t);
    for (int i = 0; i < 300 * kScale; ++i) {
      const std::string k = "c" + Str(rng() % 8);
      switch (rng() % 7) {
        case 0:
          c("VEC.PUSH", k, "p", std::string(40, 'q'));
          break;
        case 1:
          c("VEC.RESIZE", k, Str(rng() % 50), "fill");
          break;
        case 2:
          c("VEC.TRIM", k, "1", "-2");
          break;
        case 3:
          c("VEC.INSERT", k, "0", "i");
          break;
        case 4:
          c("VEC.ERASE", k, "0", "3");
          break;
        case 5:
          c("VEC.RANGE", k, "0", "-1");
          break;
        default:
          c("MEMORY", "USAGE", k);
          break;
      }
    }
  });
  stop = true;
  chaos.join();
  RespClient c = Client();
  const Reply keys = c("KEYS", "*");
  EXPECT_EQ(static_cast<int64_t>(keys.elems.size()), c("DBSIZE").integer);
  for (const Reply& k : keys.elems) {
    EXPECT_EQ(c("TYPE", k.str).str, "vector");
    const int64_t len = c("VEC.LEN", k.str).integer;
    EXPECT_GT(len, 0) << "an empty vector was left behind: " << k.str;
    EXPECT_EQ(static_cast<int64_t>(c("VEC.RANGE", k.str, "0", "-1").elems.size()), len);
  }
}

}  // namespace
}  // namespace vessel::test
