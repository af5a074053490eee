// HashTable (modules/hashes/hash_table.h), the hashes module's large representation, against a
// std::map of field -> (value, expiry): thousands of random inserts, assignments (in place and
// moved, the value read from the record itself too), removals and reservations across many
// resizes, checking lookups, iteration, the expiry bookkeeping, the bytes it reports, copies,
// random picks, and HSCAN's guarantee: a walk of buckets by cursor returns every field present
// for the whole walk, whatever growth and shrinking happen between the steps.
#include "hash_table.h"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tests/ds/ds_test.h"

namespace vessel::ds {
namespace {

using hashes::GetEntry;
using hashes::HashEntry;
using hashes::HashTable;

struct Value {
  std::string value;
  int64_t expire = 0;
};
using Model = std::map<std::string, Value>;

class HashTableTest : public DsTest {
 protected:
  void SetUp() override {
    DsTest::SetUp();
    vsl::SetHashSeed(seed_ * 0x9E3779B97F4A7C15ull);  // every seed its own layout
  }

  int64_t RandomExpire() {
    return OneIn(3) ? 0 : 1700000000000 + static_cast<int64_t>(Below(1000));
  }

  // Iteration visits exactly the model's fields with their values and expiries.
  void ExpectSame(const HashTable& t, const Model& model) {
    ASSERT_EQ(t.size(), model.size()) << Trace();
    size_t seen = 0, expiring = 0;
    int64_t earliest = INT64_MAX;
    for (size_t i = 0; i < t.slot_count(); ++i) {
      const unsigned char* rec = t.At(i);
      if (rec == nullptr) continue;
      const HashEntry e = GetEntry(rec);
      const auto it = model.find(std::string(e.field));
      ASSERT_NE(it, model.end()) << "a stranger: " << e.field << "; " << Trace();
      ASSERT_EQ(e.value, it->second.value) << Trace();
      ASSERT_EQ(e.expire, it->second.expire) << Trace();
      ++seen;
    }
    ASSERT_EQ(seen, model.size()) << Trace();
    for (const auto& [f, v] : model) {
      ASSERT_NE(t.Find(f), nullptr) << f << "; " << Trace();
      if (v.expire != 0) {
        ++expiring;
        earliest = std::min(earliest, v.expire);
      }
    }
    ASSERT_EQ(t.expiring(), expiring) << Trace();
    ASSERT_LE(t.min_expire(), earliest) << "min_expire is a lower bound; " << Trace();
  }
};

TEST_F(HashTableTest, RandomOperationsMatchTheModel) {
  HashTable t;
  Model model;
  for (int op = 0; op < 30000; ++op) {
    const std::string f = RandomString(op < 15000 ? 4000 : 400);  // grow, then shrink
    const ptrdiff_t slot = t.Locate(f);
    const auto it = model.find(f);
    ASSERT_EQ(slot >= 0, it != model.end()) << f << "; " << Trace();
    switch (Below(op < 15000 ? 4 : 7)) {
      case 0:
      case 1: {  // HSET: a new record, or a new value (in place or in a new block)
        Value v{RandomString(50), RandomExpire()};
        if (slot < 0) {
          t.Insert(f, v.value, v.expire);
        } else {
          t.Assign(static_cast<size_t>(slot), v.value, v.expire);
        }
        model[f] = v;
        break;
      }
      case 2:  // HEXPIRE: the record's own value given back with another expiry
        if (slot >= 0) {
          const int64_t expire = RandomExpire();
          t.Assign(static_cast<size_t>(slot), GetEntry(t.Find(f)).value, expire);
          it->second.expire = expire;
        }
        break;
      case 3:
        if (slot >= 0) {
          const HashEntry e = GetEntry(t.Find(f));
          ASSERT_EQ(e.value, it->second.value) << Trace();
          ASSERT_EQ(e.expire, it->second.expire) << Trace();
        }
        break;
      case 4:
        if (slot >= 0) {
          t.EraseSlot(static_cast<size_t>(slot));
          model.erase(it);
        }
        break;
      default:
        ASSERT_EQ(t.Erase(f), it != model.end()) << Trace();
        if (it != model.end()) model.erase(it);
    }
    ASSERT_EQ(t.size(), model.size()) << Trace();
    if (op % 1000 == 0) {
      ExpectSame(t, model);
      ASSERT_EQ(t.MemUsage(), Allocated()) << Trace();
    }
  }
  ExpectSame(t, model);
}

TEST_F(HashTableTest, RandomPicksCopiesAndReservations) {
  HashTable t;
  Model model;
  for (int i = 0; i < 3000; ++i) {
    const std::string f = "field:" + std::to_string(i);
    const Value v{RandomString(), RandomExpire()};
    t.Insert(f, v.value, v.expire);
    model[f] = v;
  }
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(model.contains(std::string(GetEntry(t.Random()).field))) << Trace();
  }
  t.Reserve(50000);  // room without growing again: the slots stay, only the array grew
  ASSERT_EQ(t.MemUsage(), Allocated()) << Trace();
  ExpectSame(t, model);
  HashTable* copy = t.Clone();
  ExpectSame(*copy, model);
  ASSERT_TRUE(copy->Erase("field:7"));  // the copy owns its records
  ASSERT_NE(t.Find("field:7"), nullptr);
  vsl::Delete(copy);
  EXPECT_EQ(t.MemUsage(), Allocated()) << Trace();
}

// HSCAN's walk: one bucket per step, starting and ending at cursor 0, while inserts and removals
// between the steps grow the table many times over and shrink it back.
TEST_F(HashTableTest, ScanReturnsEveryFieldPresentThroughoutAcrossResizes) {
  for (int round = 0; round < 30; ++round) {
    HashTable t;
    std::vector<std::string> stable;
    Churn churn;
    for (int i = 0; i < 50 + round * 40; ++i) {
      stable.push_back("stable:" + std::to_string(round) + ":" + std::to_string(i));
      t.Insert(stable.back(), "v", 0);
    }
    std::unordered_set<std::string> returned;
    uint64_t cursor = 0;
    int steps = 0;
    do {
      cursor = t.ScanBucket(cursor, [&](const unsigned char* rec) {
        returned.insert(std::string(GetEntry(rec).field));
      });
      // Now and then a burst that grows the table several times over, or one that removes most
      // of what is not stable (the table shrinks); the churn stays bounded so the walk ends.
      if (OneIn(4)) {
        const bool grow = churn.size() < 3000 && Below(2) == 0;
        for (uint64_t k = Below(grow ? 1000 : churn.size() + 1); k > 0; --k) {
          if (grow) {
            t.Insert(AddChurn(churn), "c", 0);
          } else if (!churn.empty()) {
            ASSERT_TRUE(t.Erase(TakeChurn(churn))) << Trace();
          }
        }
      }
      ASSERT_LT(++steps, 1000000) << "the scan never ends; " << Trace();
    } while (cursor != 0);
    ExpectScanned(stable, returned, 1);
  }
}

}  // namespace
}  // namespace vessel::ds
