// The streams module's entry log (modules/streams/entry_log.h) on its own: a seeded random mix
// of appends, deletes, trims and range reads checked against a std::map model, the block
// boundaries against Redis's node rule, and the sizes that rule measures.
#include "entry_log.h"

#include <malloc.h>

#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace vessel::streams {
namespace {

// The host allocator slots, over malloc: the data structure sees the SDK only.
class FakeHost : public ::testing::Environment {
 public:
  void SetUp() override {
    api_.struct_size = sizeof(api_);
    api_.abi_major = VSL_ABI_MAJOR;
    api_.abi_minor = VSL_ABI_MINOR;
    api_.alloc = [](size_t n) { return std::malloc(n); };
    api_.realloc = [](void* p, size_t n) { return std::realloc(p, n); };
    api_.free = [](void* p) { std::free(p); };
    api_.usable_size = [](const void* p) { return malloc_usable_size(const_cast<void*>(p)); };
    vsl::g_api = &api_;
  }

 private:
  vsl_api api_{};
};
const auto* const kHost = ::testing::AddGlobalTestEnvironment(new FakeHost);

using Pairs = std::vector<std::string>;
using Model = std::map<StreamId, Pairs>;

std::vector<std::string_view> Views(const Pairs& p) { return {p.begin(), p.end()}; }

void Append(EntryLog& log, StreamId id, const Pairs& p, BlockLimits limits = {}) {
  const auto v = Views(p);
  log.Append(id, v, limits);
}

// The entries a cursor yields.
std::vector<std::pair<StreamId, Pairs>> Read(const EntryLog& log, StreamId start, StreamId end,
                                             bool rev) {
  std::vector<std::pair<StreamId, Pairs>> out;
  EntryLog::Cursor c(log, start, end, rev);
  while (c.Next()) {
    Pairs p;
    for (uint32_t i = 0; i < c.pairs(); ++i) {
      std::string_view f, v;
      c.NextPair(&f, &v);
      p.emplace_back(f);
      p.emplace_back(v);
    }
    out.emplace_back(c.id(), std::move(p));
  }
  return out;
}

std::vector<std::pair<StreamId, Pairs>> ReadModel(const Model& m, StreamId start, StreamId end,
                                                  bool rev) {
  std::vector<std::pair<StreamId, Pairs>> out;
  if (start > end) return out;
  for (auto it = m.lower_bound(start); it != m.end() && it->first <= end; ++it)
    out.emplace_back(*it);
  if (rev) std::reverse(out.begin(), out.end());
  return out;
}

std::string Show(StreamId id) { return id.ToString(); }

TEST(EntryLogTest, AppendAndRead) {
  EntryLog log;
  Append(log, {1, 0}, {"a", "1", "b", "two"});
  Append(log, {1, 1}, {"a", "3", "b", "four"});  // the master's fields
  Append(log, {5, 0}, {"c", "", "d", "-17"});    // other fields, an empty value
  EXPECT_EQ(log.length(), 3u);
  EXPECT_EQ(log.blocks(), 1u);
  auto all = Read(log, {}, StreamId::Max(), false);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].second, (Pairs{"a", "1", "b", "two"}));
  EXPECT_EQ(all[1].second, (Pairs{"a", "3", "b", "four"}));
  EXPECT_EQ(all[2].second, (Pairs{"c", "", "d", "-17"}));
  auto rev = Read(log, {1, 1}, {5, 0}, true);
  ASSERT_EQ(rev.size(), 2u);
  EXPECT_EQ(rev[0].first, (StreamId{5, 0}));
  EXPECT_EQ(rev[1].first, (StreamId{1, 1}));
  EXPECT_TRUE(log.Contains({1, 1}));
  EXPECT_FALSE(log.Contains({1, 2}));
}

TEST(EntryLogTest, IntegersComeBackAsTheirText) {
  EntryLog log;
  const Pairs p = {"0",
                   "-0",
                   "007",
                   "9223372036854775807",
                   "-9223372036854775808",
                   "4611686018427387903",
                   "-4611686018427387903",
                   "4611686018427387904",
                   "+1",
                   " 1",
                   "1",
                   "-1"};
  Append(log, {1, 0}, p);
  auto all = Read(log, {}, StreamId::Max(), false);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].second, p);
}

TEST(EntryLogTest, SmallEntriesAreCompact) {
  EntryLog log;
  const int n = 10000;
  for (int i = 0; i < n; ++i) {
    Append(log, {1700000000000ull + i / 3, static_cast<uint64_t>(i % 3)},
           {"temperature", std::to_string(20 + i % 7), "humidity", std::to_string(40 + i % 11)});
  }
  const double per_entry = static_cast<double>(log.MemUsage()) / n;
  // Redis 7.0 takes about 22 bytes for such an entry (MEMORY USAGE / XLEN).
  EXPECT_LT(per_entry, 12.0) << per_entry;
  EXPECT_EQ(log.blocks(), static_cast<size_t>(n / 100));  // 100 entries a block, as Redis's nodes
}

// Redis's node rule by bytes: an entry opens a new block when the listpack so far plus its
// fields and values reach stream-node-max-bytes.
TEST(EntryLogTest, BlocksOpenWhereRedisOpensNodes) {
  EntryLog log;
  BlockLimits limits{.max_bytes = 200, .max_entries = 0};
  const std::string v(30, 'x');
  for (int i = 1; i <= 20; ++i) Append(log, {static_cast<uint64_t>(i), 0}, {"f", v}, limits);
  // Master entry: 7 (header, end) + count 2 + deleted 2 + nfields 2 + "f" 3 + 0 2 = 18 bytes;
  // each entry: flags, ms-diff, seq-diff, a 30-byte value (32 bytes), lp-count = 40 bytes.
  // A node takes entries while bytes + 31 < 200: 18 + 40k + 31 < 200 -> k <= 3, so 4 a node.
  EXPECT_EQ(log.blocks(), 5u);
  const Block* first = log.index().begin()->second;
  EXPECT_EQ(first->live, 4u);
  EXPECT_EQ(first->LpBytes(), 18u + 4 * 40);
}

TEST(EntryLogTest, DeleteMarksAndFreesEmptyBlocks) {
  EntryLog log;
  BlockLimits limits{.max_bytes = 0, .max_entries = 2};
  for (int i = 1; i <= 6; ++i) Append(log, {static_cast<uint64_t>(i), 0}, {"f", "v"}, limits);
  EXPECT_EQ(log.blocks(), 3u);
  EXPECT_TRUE(log.Delete({3, 0}));
  EXPECT_FALSE(log.Delete({3, 0}));
  EXPECT_FALSE(log.Delete({7, 0}));
  EXPECT_EQ(log.blocks(), 3u);
  EXPECT_TRUE(log.Delete({4, 0}));  // the block's last live entry: the block goes
  EXPECT_EQ(log.blocks(), 2u);
  EXPECT_EQ(log.length(), 4u);
  StreamId id;
  ASSERT_TRUE(log.First(true, &id));
  EXPECT_EQ(id, (StreamId{1, 0}));
  ASSERT_TRUE(log.Last(true, &id));
  EXPECT_EQ(id, (StreamId{6, 0}));
  EXPECT_TRUE(log.Delete({6, 0}));
  ASSERT_TRUE(log.Last(true, &id));
  EXPECT_EQ(id, (StreamId{5, 0}));
  ASSERT_TRUE(log.Last(false, &id));  // the tombstone of 6-0 is still in its block
  EXPECT_EQ(id, (StreamId{6, 0}));
}

TEST(EntryLogTest, ApproximateTrimRemovesWholeBlocks) {
  EntryLog log;
  BlockLimits limits{.max_bytes = 0, .max_entries = 10};
  for (int i = 1; i <= 95; ++i) Append(log, {static_cast<uint64_t>(i), 0}, {"f", "v"}, limits);
  EXPECT_EQ(log.TrimMaxLen(50, true, 0), 40);  // blocks of 10 while 50 or more stay
  EXPECT_EQ(log.length(), 55u);
  EXPECT_EQ(log.TrimMaxLen(50, true, 0), 0);
  EXPECT_EQ(log.TrimMaxLen(50, false, 0), 5);
  EXPECT_EQ(log.length(), 50u);
  // Left: block 41-50 (46..50 live), then 51-60, ..., 91-95.
  EXPECT_EQ(log.TrimMinId({71, 0}, true, 5), 5);  // the limit stops before the next block
  EXPECT_EQ(log.TrimMinId({71, 0}, true, 0), 20);
  EXPECT_EQ(log.TrimMinId({75, 0}, true, 0), 0);  // 71-80 holds entries to keep
  EXPECT_EQ(log.TrimMinId({75, 0}, false, 0), 4);
  StreamId id;
  ASSERT_TRUE(log.First(true, &id));
  EXPECT_EQ(id, (StreamId{75, 0}));
}

// A seeded random mix against the model (STREAMS_SEED=n replays one seed).
TEST(EntryLogTest, RandomAgainstModel) {
  const char* env = std::getenv("STREAMS_SEED");
  const uint64_t first = env != nullptr ? std::strtoull(env, nullptr, 10) : 1;
  const int seeds = env != nullptr ? 1 : 20;
  for (uint64_t seed = first; seed < first + seeds; ++seed) {
    SCOPED_TRACE("STREAMS_SEED=" + std::to_string(seed));
    std::mt19937_64 rng(seed);
    auto rnd = [&](uint64_t n) { return n == 0 ? 0 : rng() % n; };
    BlockLimits limits{.max_bytes = rnd(3) == 0 ? 0 : 64 + rnd(2000),
                       .max_entries = static_cast<int64_t>(rnd(4) == 0 ? 0 : 1 + rnd(30))};
    EntryLog log;
    Model model;
    StreamId last;
    const std::vector<std::string> names = {"a", "b", "temperature", "7", "", "k"};
    auto value = [&]() -> std::string {
      switch (rnd(5)) {
        case 0:
          return std::to_string(static_cast<int64_t>(rng()) >> rnd(64));
        case 1:
          return std::string(rnd(300), static_cast<char>('a' + rnd(26)));
        case 2:
          return "";
        default:
          return "v" + std::to_string(rnd(1000));
      }
    };
    for (int op = 0; op < 3000; ++op) {
      const uint64_t kind = rnd(100);
      if (kind < 60) {
        StreamId id = last;
        if (rnd(3) == 0) {
          id.seq += 1 + rnd(3);
        } else {
          id = {last.ms + 1 + rnd(5000), rnd(3) == 0 ? rnd(1000) : 0};
        }
        Pairs p;
        const uint64_t fields = 1 + rnd(4);
        const bool master_like = rnd(2) == 0;
        for (uint64_t f = 0; f < fields; ++f) {
          p.push_back(master_like ? names[f] : names[rnd(names.size())]);
          p.push_back(value());
        }
        Append(log, id, p, limits);
        model[id] = p;
        last = id;
      } else if (kind < 75 && !model.empty()) {
        auto it = model.begin();
        std::advance(it, rnd(model.size()));
        const StreamId id = rnd(4) == 0 ? StreamId{it->first.ms, it->first.seq + 1} : it->first;
        const bool in_model = model.erase(id) == 1;
        EXPECT_EQ(log.Delete(id), in_model) << Show(id);
      } else if (kind < 80) {
        const uint64_t maxlen = rnd(model.size() + 5);
        const bool approx = rnd(2) == 0;
        const int64_t before = static_cast<int64_t>(model.size());
        const int64_t removed = log.TrimMaxLen(maxlen, approx, approx ? rnd(3) * 50 : 0);
        ASSERT_GE(removed, 0);
        ASSERT_LE(removed, before);
        for (int64_t i = 0; i < removed; ++i) model.erase(model.begin());
        if (!approx) {
          EXPECT_EQ(model.size(), std::min<uint64_t>(maxlen, before));
        }
      } else if (kind < 85 && !model.empty()) {
        auto it = model.begin();
        std::advance(it, rnd(model.size()));
        const bool approx = rnd(2) == 0;
        const int64_t removed = log.TrimMinId(it->first, approx, approx ? rnd(3) * 50 : 0);
        for (int64_t i = 0; i < removed; ++i) {
          ASSERT_LT(model.begin()->first, it->first);
          model.erase(model.begin());
        }
        if (!approx) {
          EXPECT_EQ(model.begin()->first, it->first);
        }
      } else {
        StreamId a{rnd(last.ms + 2), rnd(3) == 0 ? UINT64_MAX : rnd(5)};
        StreamId b{rnd(last.ms + 2), rnd(3) == 0 ? UINT64_MAX : rnd(5)};
        if (rnd(4) == 0) a = {};
        if (rnd(4) == 0) b = StreamId::Max();
        const bool rev = rnd(2) == 0;
        ASSERT_EQ(Read(log, a, b, rev), ReadModel(model, a, b, rev))
            << Show(a) << " " << Show(b) << " rev=" << rev;
      }
      ASSERT_EQ(log.length(), model.size());
      for (const auto& [master, b] : log.index()) ASSERT_EQ(master, b->master);
    }
    ASSERT_EQ(Read(log, {}, StreamId::Max(), false), ReadModel(model, {}, StreamId::Max(), false));
    StreamId id;
    EXPECT_EQ(log.First(true, &id), !model.empty());
    if (!model.empty()) {
      EXPECT_EQ(id, model.begin()->first);
    }
    EXPECT_EQ(log.Last(true, &id), !model.empty());
    if (!model.empty()) {
      EXPECT_EQ(id, model.rbegin()->first);
    }
    EntryLog copy;
    copy.CopyFrom(log);
    EXPECT_EQ(copy.length(), log.length());
    EXPECT_EQ(copy.blocks(), log.blocks());
    EXPECT_EQ(Read(copy, {}, StreamId::Max(), true), ReadModel(model, {}, StreamId::Max(), true));
  }
}

}  // namespace
}  // namespace vessel::streams
