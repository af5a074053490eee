// HashSet (modules/sets/hash_set.h), the sets module's large representation, against a
// std::unordered_set: thousands of random inserts and removals (by member and by position)
// across many index and member-array resizes, checking membership, size, the dense positions,
// the bytes it reports, copies, and SSCAN's guarantee that a walk of positions from the top down
// returns every member present for the whole walk.
#include "hash_set.h"

#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

#include "tests/ds/ds_test.h"

namespace vessel::ds {
namespace {

using sets::HashSet;

class HashSetTest : public DsTest {
 protected:
  // Every position holds a distinct member of the model, and every member has a position.
  void ExpectSame(const HashSet& s, const std::unordered_set<std::string>& model) {
    ASSERT_EQ(s.size(), model.size()) << Trace();
    std::unordered_set<std::string> seen;
    for (size_t i = 0; i < s.size(); ++i) {
      const std::string m(s.At(i));
      ASSERT_TRUE(model.contains(m)) << "position " << i << " holds a stranger; " << Trace();
      ASSERT_TRUE(seen.insert(m).second) << "member twice: " << m << "; " << Trace();
    }
    for (const std::string& m : model) ASSERT_TRUE(s.Contains(m)) << m << "; " << Trace();
  }
};

TEST_F(HashSetTest, RandomOperationsMatchTheModel) {
  HashSet s;
  std::unordered_set<std::string> model;
  for (int op = 0; op < 20000; ++op) {
    const std::string m = RandomString(op < 10000 ? 3000 : 300);  // grow, then shrink
    switch (Below(op < 10000 ? 4 : 8)) {
      case 0:
      case 1:
        ASSERT_EQ(s.Insert(m), model.insert(m).second) << m << "; " << Trace();
        break;
      case 2:
        ASSERT_EQ(s.Contains(m), model.contains(m)) << m << "; " << Trace();
        break;
      case 3:
        if (s.size() > 0) {  // the last member moves into the hole
          const size_t i = Below(s.size()), last = s.size() - 1;
          const std::string gone(s.At(i)), moved(s.At(last));
          s.EraseAt(i);
          model.erase(gone);
          if (i != last) {
            ASSERT_EQ(s.At(i), moved) << Trace();
          }
        }
        break;
      default:
        ASSERT_EQ(s.Erase(m), model.erase(m) == 1) << m << "; " << Trace();
    }
    ASSERT_EQ(s.size(), model.size()) << Trace();
    if (op % 1000 == 0) ExpectSame(s, model);
  }
  ExpectSame(s, model);
  while (s.size() > 0) {
    ASSERT_TRUE(s.Erase(std::string(s.At(s.size() / 2)))) << Trace();
  }
  EXPECT_EQ(s.MemUsage(), Allocated()) << "an emptied set still accounts for its tables";
}

TEST_F(HashSetTest, MemUsageIsWhatItAllocatedAndCopiesAreEqual) {
  HashSet s;
  std::unordered_set<std::string> model;
  for (int i = 0; i < 5000; ++i) {
    const std::string m = RandomString(100000);
    s.Insert(m);
    model.insert(m);
    if (i % 500 == 0) {
      ASSERT_EQ(s.MemUsage(), Allocated()) << Trace();
    }
  }
  s.Reserve(20000);  // room for more without growing again
  ASSERT_EQ(s.MemUsage(), Allocated()) << Trace();
  HashSet* copy = s.Clone();
  ExpectSame(*copy, model);
  for (size_t i = 0; i < s.size(); ++i) ASSERT_EQ(copy->At(i), s.At(i)) << "positions differ";
  copy->Erase(std::string(s.At(0)));  // the copy owns its members
  EXPECT_TRUE(s.Contains(s.At(0)));
  vsl::Delete(copy);
  EXPECT_EQ(s.MemUsage(), Allocated()) << Trace();
}

// SSCAN's walk (Set::ScanStep on a hashtable): positions [lo, hi) from the top down, `count` at a
// time, with inserts and removals between the steps that grow and shrink both tables.
TEST_F(HashSetTest, ScanReturnsEveryMemberPresentThroughoutAcrossResizes) {
  for (int round = 0; round < 20; ++round) {
    HashSet s;
    std::vector<std::string> stable;
    Churn churn;
    for (int i = 0; i < 200 + round * 50; ++i) {
      stable.push_back("stable:" + std::to_string(round) + ":" + std::to_string(i));
      s.Insert(stable.back());
    }
    std::unordered_set<std::string> returned;
    const uint64_t count = 1 + Below(40);
    uint64_t cursor = 0;
    do {
      const size_t hi = cursor == 0 || cursor > s.size() ? s.size() : cursor;
      const size_t lo = hi > count ? hi - count : 0;
      for (size_t i = lo; i < hi; ++i) returned.insert(std::string(s.At(i)));
      cursor = lo;
      // Between steps: bursts of inserts (index and array grow) or removals of what is not
      // stable (both shrink), moving members from the top into holes anywhere.
      const bool grow = Below(3) != 0 || churn.size() < 10;
      for (uint64_t k = Below(grow ? 300 : 600); k > 0; --k) {
        if (grow) {
          s.Insert(AddChurn(churn));
        } else if (!churn.empty()) {
          ASSERT_TRUE(s.Erase(TakeChurn(churn))) << Trace();
        }
      }
    } while (cursor != 0);  // COUNT positions a step from the top: it ends
    ExpectScanned(stable, returned, count);
  }
}

}  // namespace
}  // namespace vessel::ds
