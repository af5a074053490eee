// PackedTree (modules/ordered) on its own, over the stand-in SDK table: random operations against
// std::map (unique keys: Upsert, Erase) and std::multimap (InsertAfterEquals, EraseAt), with the
// tree's own invariant check (Valid: shape, separators, counts, byte accounting) after each one,
// ranks and bounds against the model, and cursors walked both ways.
#include "vessel/ordered/packed_tree.h"

#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/fake_vsl_api.h"

namespace vessel::ordered {
namespace {

class PackedTreeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { fuzz::InstallFakeApi(); }
};

std::string Key(std::mt19937_64& rng, int space) {
  const uint64_t k = rng() % static_cast<uint64_t>(space);
  switch (k % 5) {
    case 0:
      return "k" + std::to_string(k);
    case 1:
      return std::string(k % 7, 'p') + std::to_string(k);  // shared prefixes, "" too
    case 2:
      return std::string(220 + k % 30, 'L') + std::to_string(k);  // a key in its own block
    default:
      return std::to_string(k * 7919);
  }
}

std::string Value(std::mt19937_64& rng) {
  switch (rng() % 6) {
    case 0:
      return std::to_string(static_cast<int64_t>(rng()));
    case 1:
      return std::to_string(static_cast<int64_t>(rng() % 300) - 150);
    case 2:
      return std::string(64 + rng() % 150, 'v');
    case 3:
      return std::string(201 + rng() % 300, 'w');
    case 4:
      return "";
    default:
      return "val" + std::to_string(rng() % 1000);
  }
}

// Every entry, in order, through a forward walk; the backward walk must give the reverse.
template <class Model>
void ExpectSame(const PackedTree& t, const Model& m) {
  ASSERT_TRUE(t.Valid());
  ASSERT_EQ(t.size(), m.size());
  ValueBuf buf;
  auto it = m.begin();
  size_t rank = 0;
  for (PackedTree::Cursor c = t.First(); c.valid(); c.Next(), ++it, ++rank) {
    ASSERT_NE(it, m.end());
    ASSERT_EQ(c.rank(), rank);
    ASSERT_EQ(c.key(), it->first);
    ASSERT_EQ(c.value(buf), it->second);
  }
  ASSERT_EQ(it, m.end());
  auto rit = m.rbegin();
  for (PackedTree::Cursor c = t.Last(); c.valid(); c.Prev(), ++rit) {
    ASSERT_NE(rit, m.rend());
    ASSERT_EQ(c.key(), rit->first);
  }
  ASSERT_EQ(rit, m.rend());
}

TEST_F(PackedTreeTest, UniqueKeysAgainstAMap) {
  for (const int space : {50, 3000}) {
    std::mt19937_64 rng(space);
    PackedTree t;
    std::map<std::string, std::string> m;
    for (int step = 0; step < 20000; ++step) {
      const std::string k = Key(rng, space);
      const int op = static_cast<int>(rng() % 10);
      if (op < 6) {
        const std::string v = Value(rng);
        const bool added = t.Upsert(k, v);
        ASSERT_EQ(added, m.find(k) == m.end()) << step;
        m[k] = v;
      } else if (op < 8) {
        ASSERT_EQ(t.Erase(k), m.erase(k) == 1) << step;
      } else if (op == 8 && !m.empty()) {
        const size_t r = rng() % m.size();
        auto it = std::next(m.begin(), static_cast<long>(r));
        if (rng() % 2) {
          t.EraseAt(r);
          m.erase(it);
        } else {
          const std::string v = Value(rng);
          t.SetValueAt(r, v);
          it->second = v;
        }
      } else {
        const auto lo = m.lower_bound(k), hi = m.upper_bound(k);
        ASSERT_EQ(t.LowerBound(k), static_cast<size_t>(std::distance(m.begin(), lo)));
        ASSERT_EQ(t.UpperBound(k), static_cast<size_t>(std::distance(m.begin(), hi)));
        const PackedTree::Cursor c = t.Find(k);
        ASSERT_EQ(c.valid(), lo != hi);
        ValueBuf buf;
        std::string_view v;
        ASSERT_EQ(t.Lookup(k, buf, &v), lo != hi) << step;
        if (lo != hi) {
          ASSERT_EQ(c.key(), k);
          ASSERT_EQ(c.rank(), static_cast<size_t>(std::distance(m.begin(), lo)));
          ASSERT_EQ(v, lo->second);
          ValueBuf cbuf;
          ASSERT_EQ(c.value(cbuf), lo->second);
        }
        if (!m.empty()) {
          const size_t r = rng() % m.size();
          ASSERT_EQ(t.At(r).key(), std::next(m.begin(), static_cast<long>(r))->first);
        }
      }
      ASSERT_TRUE(t.Valid()) << "step " << step;
      if (step % 1000 == 0) ExpectSame(t, m);
    }
    ExpectSame(t, m);
    PackedTree copy;
    copy.CopyFrom(t);
    ExpectSame(copy, m);
    // Emptying by erasure gives every byte back.
    while (!m.empty()) {
      const size_t r = rng() % m.size();
      t.EraseAt(r);
      m.erase(std::next(m.begin(), static_cast<long>(r)));
      ASSERT_TRUE(t.Valid());
    }
    EXPECT_EQ(t.bytes(), 0u);
  }
}

TEST_F(PackedTreeTest, EqualKeysKeepInsertionOrder) {
  std::mt19937_64 rng(7);
  PackedTree t;
  std::multimap<std::string, std::string> m;  // equal keys in insertion order, as the tree
  for (int step = 0; step < 20000; ++step) {
    const std::string k = Key(rng, 40);
    if (rng() % 3 != 0) {
      const std::string v = Value(rng) + "#" + std::to_string(step);
      t.InsertAfterEquals(k, v);
      m.emplace(k, v);  // multimap::emplace puts it after its equals
    } else if (!m.empty()) {
      const size_t r = rng() % m.size();
      t.EraseAt(r);
      m.erase(std::next(m.begin(), static_cast<long>(r)));
    }
    ASSERT_TRUE(t.Valid()) << "step " << step;
    if (step % 50 == 0) {  // Find and Lookup see the first of equal keys
      const auto lo = m.lower_bound(k);
      const PackedTree::Cursor c = t.Find(k);
      ValueBuf buf;
      std::string_view v;
      ASSERT_EQ(c.valid(), lo != m.end() && lo->first == k);
      ASSERT_EQ(t.Lookup(k, buf, &v), c.valid());
      if (c.valid()) {
        ASSERT_EQ(c.rank(), static_cast<size_t>(std::distance(m.begin(), lo)));
        ASSERT_EQ(v, lo->second);
      }
    }
    if (step % 500 == 0) {
      const auto lo = m.lower_bound(k), hi = m.upper_bound(k);
      ASSERT_EQ(t.LowerBound(k), static_cast<size_t>(std::distance(m.begin(), lo)));
      ASSERT_EQ(t.UpperBound(k), static_cast<size_t>(std::distance(m.begin(), hi)));
      ExpectSame(t, m);
    }
  }
  ExpectSame(t, m);
}

// When each key extends the one before, a separator is a whole key: a lower bound by key then
// falls at the end of a leaf, and Find and Lookup must go on to the next one.
TEST_F(PackedTreeTest, FindWhereASeparatorIsTheWholeKey) {
  PackedTree t;
  std::map<std::string, std::string> m;
  for (int i = 1; i <= 600; ++i) {
    const std::string k(static_cast<size_t>(i % 150 + 1), static_cast<char>('a' + i / 150));
    t.Upsert(k, "v" + std::to_string(i));
    m[k] = "v" + std::to_string(i);
  }
  ASSERT_TRUE(t.Valid());
  ASSERT_FALSE(t.small());
  ValueBuf buf;
  for (const auto& [k, v] : m) {
    const PackedTree::Cursor c = t.Find(k);
    ASSERT_TRUE(c.valid()) << k.size();
    EXPECT_EQ(c.key(), k);
    EXPECT_EQ(c.value(buf), v);
    std::string_view got;
    ASSERT_TRUE(t.Lookup(k, buf, &got)) << k.size();
    EXPECT_EQ(got, v);
    EXPECT_FALSE(t.Lookup(k + "!", buf, &got));
    EXPECT_FALSE(t.Find(k + "!").valid());
  }
}

// Ordered loads fill their leaves; a one-leaf tree holds up to 128 entries.
TEST_F(PackedTreeTest, OrderedLoadsAreCompact) {
  PackedTree t;
  for (int i = 0; i < 128; ++i) t.InsertAfterEquals("field:" + std::to_string(1000 + i), "v");
  EXPECT_TRUE(t.small());
  t.InsertAfterEquals("field:9999", "v");
  EXPECT_FALSE(t.small());
  PackedTree big;
  const int n = 100000;
  for (int i = 0; i < n; ++i)
    big.InsertAfterEquals("field:" + std::to_string(1000000 + i), "value");
  ASSERT_TRUE(big.Valid());
  // 19 bytes of entry each; leaves filled to their limit keep the overhead small.
  EXPECT_LT(big.bytes(), static_cast<size_t>(n) * 22) << big.bytes() / n;
}

}  // namespace
}  // namespace vessel::ordered
