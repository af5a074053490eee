// OrderTree over a MemberTable (modules/zsets/order_tree.h, member_table.h), the large sorted
// set, against a std::set of (score, member) and a std::map of member -> score: thousands of
// random inserts (with and without Reserve first), score updates and removals, with compaction
// of the table's holes as the module does it, across many splits, merges and height changes.
// Checked: sizes, ranks both ways, the element at every rank, walks in both directions, counts
// below a score or a member bound, Build from sorted input, copies, the bytes they report, and
// ZSCAN's guarantee on the table: a walk of positions from the top down returns every member
// present for the whole walk, across growth and compaction.
#include "order_tree.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "member_table.h"
#include "tests/ds/ds_test.h"

namespace vessel::ds {
namespace {

using zsets::MemberTable;
using zsets::OrderTree;

// Score, then member bytes (std::string compares as unsigned bytes, shorter first): the order of
// a sorted set.
using Model = std::set<std::pair<double, std::string>>;

// The sorted set's large representation as zsets_type.cc drives it.
struct Big {
  MemberTable table;
  OrderTree tree;

  void Insert(std::string_view m, double score, bool reserve) {
    const uint32_t pos = table.Insert(m, score);
    if (reserve) tree.Reserve(table, score, pos);
    tree.Insert(table, score, pos);
  }
  void Erase(uint32_t pos) {
    tree.Erase(table, table.Score(pos), pos);
    table.Erase(pos);
    if (!table.WantsCompaction()) return;
    std::vector<uint32_t> map(table.high());
    table.Compact(map.data());
    tree.Remap(map.data());
  }
  void SetScore(uint32_t pos, double score) {
    tree.Erase(table, table.Score(pos), pos);
    table.SetScore(pos, score);
    tree.Insert(table, score, pos);
  }
  size_t MemUsage() const { return table.MemUsage() + tree.MemUsage(); }
};

class OrderTreeTest : public DsTest {
 protected:
  void SetUp() override {
    DsTest::SetUp();
    vsl::SetHashSeed(seed_ * 0x9E3779B97F4A7C15ull);
  }

  // Few distinct scores, so that many elements tie on the score and order by member.
  double RandomScore() {
    static constexpr double kScores[] = {-1e300, -2.5, -1, -0.0, 0, 0.5, 1, 3, 1e300};
    switch (Below(12)) {
      case 0:
        return -std::numeric_limits<double>::infinity();
      case 1:
        return std::numeric_limits<double>::infinity();
      case 2:
        return static_cast<double>(Below(1000000)) / 7;
      default:
        return kScores[Below(std::size(kScores))];
    }
  }

  // Walks, ranks and the element at each rank agree with the model.
  void ExpectSame(const Big& b, const Model& model) {
    ASSERT_EQ(b.tree.size(), model.size()) << Trace();
    ASSERT_EQ(b.table.size(), model.size()) << Trace();
    size_t r = 0;
    auto c = b.tree.First();
    for (const auto& [score, member] : model) {
      ASSERT_TRUE(c.valid()) << "the walk ends at " << r << "; " << Trace();
      ASSERT_EQ(c.score(), score) << Trace();
      ASSERT_EQ(b.table.Member(c.pos()), member) << "rank " << r << "; " << Trace();
      ASSERT_EQ(b.tree.Rank(b.table, c.score(), c.pos()), r) << Trace();
      c.Next();
      ++r;
    }
    ASSERT_FALSE(c.valid()) << Trace();
    auto back = b.tree.Last();
    for (auto it = model.rbegin(); it != model.rend(); ++it) {
      ASSERT_TRUE(back.valid()) << Trace();
      ASSERT_EQ(b.table.Member(back.pos()), it->second) << Trace();
      back.Prev();
    }
    ASSERT_FALSE(back.valid()) << Trace();
  }

  // A few ranks, score counts and lookups, cheaper than a full ExpectSame.
  void SpotCheck(const Big& b, const Model& model, const std::map<std::string, double>& scores) {
    for (int k = 0; k < 5 && !model.empty(); ++k) {
      const size_t r = Below(model.size());
      const auto& [score, member] = *std::next(model.begin(), static_cast<ptrdiff_t>(r));
      const OrderTree::Cursor c = b.tree.At(r);
      ASSERT_EQ(b.table.Member(c.pos()), member) << "At(" << r << "); " << Trace();
      const int64_t pos = b.table.Find(member);
      ASSERT_GE(pos, 0) << Trace();
      ASSERT_EQ(b.table.Score(static_cast<uint32_t>(pos)), scores.at(member)) << Trace();
      ASSERT_EQ(b.tree.Rank(b.table, score, static_cast<uint32_t>(pos)), r) << Trace();
    }
    const double s = RandomScore();
    const auto below = std::distance(model.begin(), model.lower_bound({s, std::string()}));
    size_t at_most = 0;
    for (const auto& e : model) at_most += e.first <= s ? 1 : 0;
    ASSERT_EQ(b.tree.CountBelow(s, false), static_cast<size_t>(below)) << s << "; " << Trace();
    ASSERT_EQ(b.tree.CountBelow(s, true), at_most) << s << "; " << Trace();
  }
};

TEST_F(OrderTreeTest, RandomOperationsMatchTheModel) {
  Big b;
  Model model;
  std::map<std::string, double> scores;
  for (int op = 0; op < 30000; ++op) {
    const std::string m = RandomString(op < 15000 ? 5000 : 500);  // grow, then shrink
    const int64_t pos = b.table.Find(m);
    const auto it = scores.find(m);
    ASSERT_EQ(pos >= 0, it != scores.end()) << m << "; " << Trace();
    switch (Below(op < 15000 ? 3 : 5)) {
      case 0:
      case 1: {
        const double s = RandomScore();
        if (pos < 0) {
          b.Insert(m, s, OneIn(2));
          scores[m] = s;
        } else {  // ZADD of a member already there: a new score, a new place
          model.erase({it->second, m});
          b.SetScore(static_cast<uint32_t>(pos), s);
          it->second = s;
        }
        model.insert({s, m});
        break;
      }
      default:
        if (pos >= 0) {
          b.Erase(static_cast<uint32_t>(pos));
          model.erase({it->second, m});
          scores.erase(it);
        }
    }
    if (op % 97 == 0) SpotCheck(b, model, scores);
    if (op % 2000 == 0) {
      ExpectSame(b, model);
      ASSERT_EQ(b.MemUsage(), Allocated()) << Trace();
    }
  }
  ExpectSame(b, model);
  while (b.tree.size() > 0) b.Erase(b.tree.At(b.tree.size() / 2).pos());  // merges to the root
  ExpectSame(b, Model());
}

// ZRANGEBYLEX's count on a set whose scores are all equal, so that the order is the members'.
TEST_F(OrderTreeTest, CountLexBelowFollowsMemberOrder) {
  Big b;
  std::set<std::string> model;
  for (int i = 0; i < 5000; ++i) {
    const std::string m = RandomString(100000);
    if (model.insert(m).second) b.Insert(m, 1.0, false);
  }
  for (int k = 0; k < 500; ++k) {
    const std::string s = OneIn(10) ? std::string() : RandomString(100000);
    const auto lt = std::distance(model.begin(), model.lower_bound(s));
    const auto le = std::distance(model.begin(), model.upper_bound(s));
    ASSERT_EQ(b.tree.CountLexBelow(b.table, s, false), static_cast<size_t>(lt)) << s << Trace();
    ASSERT_EQ(b.tree.CountLexBelow(b.table, s, true), static_cast<size_t>(le)) << s << Trace();
  }
}

TEST_F(OrderTreeTest, BuildAndCopyGiveTheSameSet) {
  std::map<std::string, double> scores;
  while (scores.size() < 20000) scores.emplace(RandomString(1000000), RandomScore());
  Model model;
  for (const auto& [m, s] : scores) model.insert({s, m});
  Big built;
  std::vector<uint32_t> pos;
  std::vector<double> score;
  for (const auto& [s, m] : model) {
    pos.push_back(built.table.Insert(m, s));
    score.push_back(s);
  }
  built.tree.Build(pos.data(), score.data(), pos.size());
  ExpectSame(built, model);
  Big copy;
  copy.table.CopyFrom(built.table);
  copy.tree.CopyFrom(built.tree);
  ExpectSame(copy, model);
  copy.Erase(copy.tree.First().pos());  // the copy owns its members and nodes
  ExpectSame(built, model);
  EXPECT_EQ(built.MemUsage() + copy.MemUsage(), Allocated()) << Trace();
}

// ZSCAN's walk of a large set (zsets_pop.cc): table positions [lo, hi) from the top down, `count`
// at a time, while inserts fill holes or append and removals trigger compactions.
TEST_F(OrderTreeTest, ScanReturnsEveryMemberPresentThroughoutAcrossCompactions) {
  for (int round = 0; round < 20; ++round) {
    Big b;
    std::vector<std::string> stable;
    Churn churn;
    for (int i = 0; i < 300 + round * 100; ++i) {
      b.Insert(AddChurn(churn), RandomScore(), false);
      if (i % 3 == 0) {
        stable.push_back("stable:" + std::to_string(i));
        b.Insert(stable.back(), RandomScore(), false);
      }
    }
    std::unordered_set<std::string> returned;
    const uint64_t count = 1 + Below(50);
    uint64_t cursor = 0;
    do {
      const uint64_t high = b.table.high();
      const uint64_t hi = cursor == 0 || cursor > high ? high : cursor;
      const uint64_t lo = hi > count ? hi - count : 0;
      for (uint64_t p = lo; p < hi; ++p) {
        if (b.table.Live(static_cast<uint32_t>(p))) {
          returned.insert(std::string(b.table.Member(static_cast<uint32_t>(p))));
        }
      }
      cursor = lo;
      if (OneIn(3)) {  // removals leave holes, then compaction moves members down
        for (uint64_t k = Below(churn.size() + 1); k > 0 && !churn.empty(); --k) {
          b.Erase(static_cast<uint32_t>(b.table.Find(TakeChurn(churn))));
        }
      } else if (churn.size() < 5000) {  // inserts fill holes, then append above the top
        for (uint64_t k = Below(200); k > 0; --k) b.Insert(AddChurn(churn), RandomScore(), false);
      }
    } while (cursor != 0);  // COUNT positions a step from the top: it ends
    ExpectScanned(stable, returned, count);
  }
}

}  // namespace
}  // namespace vessel::ds
