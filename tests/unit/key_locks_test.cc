// Key locks and key extraction: LockSet orders and deduplicates shards, never deadlocks under
// opposite acquisition orders; ExtractKeys follows Redis 7 key specs; the shard table keeps the
// SCAN guarantee across resizes.
#include <atomic>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "host/cluster/slots.h"
#include "host/engine/entry_table.h"
#include "host/engine/keyspace.h"
#include "host/engine/registry.h"

namespace vessel::engine {
namespace {

std::vector<std::unique_ptr<Database>> Dbs(int n, uint32_t bits) {
  std::vector<std::unique_ptr<Database>> dbs;
  for (int i = 0; i < n; ++i) dbs.push_back(std::make_unique<Database>(i, bits));
  return dbs;
}

TEST(LockSetTest, DeduplicatesAndUpgradesToExclusive) {
  auto dbs = Dbs(2, 4);
  LockSet locks;
  locks.Add(0, 3, false);
  locks.Add(0, 3, true);
  locks.Add(1, 0, false);
  locks.Add(0, 1, false);
  EXPECT_EQ(locks.size(), 3u);
  locks.Lock(dbs);
  // Shard 0/3 is held exclusively: another thread can take neither a shared nor a unique lock.
  std::thread probe([&] {
    EXPECT_FALSE(dbs[0]->shard(3).mu.try_lock_shared());
    // 0/1 and 1/0 are shared: readers may join.
    EXPECT_TRUE(dbs[0]->shard(1).mu.try_lock_shared());
    dbs[0]->shard(1).mu.unlock_shared();
    EXPECT_FALSE(dbs[1]->shard(0).mu.try_lock());
  });
  probe.join();
  locks.Unlock();
  EXPECT_TRUE(dbs[0]->shard(3).mu.try_lock());
  dbs[0]->shard(3).mu.unlock();
}

// Threads add the same shards in opposite orders, exclusively; global ordering must prevent a
// deadlock and the protected counters must stay exact.
TEST(LockSetTest, OppositeOrdersDoNotDeadlock) {
  auto dbs = Dbs(2, 3);
  std::vector<int64_t> counters(16, 0);
  constexpr int kRounds = 20000;
  auto body = [&](bool reverse, int seed) {
    std::mt19937 rng(seed);
    for (int i = 0; i < kRounds; ++i) {
      std::vector<std::pair<uint32_t, uint32_t>> picks;
      for (int j = 0; j < 3; ++j) picks.push_back({rng() % 2, rng() % 8});
      if (reverse) std::reverse(picks.begin(), picks.end());
      LockSet locks;
      for (auto [db, shard] : picks) locks.Add(db, shard, true);
      locks.Lock(dbs);
      std::set<int> seen;
      for (auto [db, shard] : picks) seen.insert(db * 8 + shard);
      for (int slot : seen) ++counters[slot];
    }
  };
  std::thread a(body, false, 1), b(body, true, 2), c(body, false, 3);
  a.join();
  b.join();
  c.join();
  int64_t total = 0;
  for (int64_t n : counters) total += n;
  EXPECT_GT(total, 0);
  // Recount with the same seeds to know the exact expected sum.
  int64_t expected = 0;
  for (int seed : {1, 2, 3}) {
    std::mt19937 rng(seed);
    for (int i = 0; i < kRounds; ++i) {
      std::set<int> seen;
      for (int j = 0; j < 3; ++j) {
        const uint32_t db = rng() % 2, shard = rng() % 8;
        seen.insert(static_cast<int>(db * 8 + shard));
      }
      expected += static_cast<int64_t>(seen.size());
    }
  }
  EXPECT_EQ(total, expected);
}

std::vector<uint32_t> Positions(const CommandSpec& c, std::vector<std::string_view> argv) {
  KeyRefs refs;
  ExtractKeys(c, argv.data(), static_cast<int>(argv.size()), &refs);
  std::vector<uint32_t> out;
  for (const KeyRef& r : refs) out.push_back(r.arg_index);
  return out;
}

TEST(ExtractKeysTest, RangeStepKeywordAndKeynum) {
  CommandSpec mset;
  KeySpec k;
  k.flags = VSL_KS_OW;
  k.begin_index = 1;
  k.last_key = -1;
  k.key_step = 2;
  mset.keyspecs = {k};
  EXPECT_EQ(Positions(mset, {"MSET", "a", "1", "b", "2"}), (std::vector<uint32_t>{1, 3}));

  CommandSpec blpop;  // BLPOP key [key ...] timeout
  k = KeySpec{};
  k.flags = VSL_KS_RW;
  k.begin_index = 1;
  k.last_key = -2;
  blpop.keyspecs = {k};
  EXPECT_EQ(Positions(blpop, {"BLPOP", "a", "b", "0"}), (std::vector<uint32_t>{1, 2}));

  CommandSpec lmpop;  // LMPOP numkeys key [key ...] LEFT|RIGHT
  k = KeySpec{};
  k.flags = VSL_KS_RW | VSL_KS_KEYNUM;
  k.begin_index = 1;
  k.keynum_index = 0;
  k.first_key = 1;
  lmpop.keyspecs = {k};
  EXPECT_EQ(Positions(lmpop, {"LMPOP", "2", "a", "b", "LEFT"}), (std::vector<uint32_t>{2, 3}));
  EXPECT_TRUE(Positions(lmpop, {"LMPOP", "5", "a", "LEFT"}).empty());  // too few: no keys
  EXPECT_TRUE(Positions(lmpop, {"LMPOP", "x", "a", "LEFT"}).empty());
  EXPECT_TRUE(Positions(lmpop, {"LMPOP", "-1", "a", "LEFT"}).empty());

  CommandSpec xread;  // keyword search: ... STREAMS key [key ...] id [id ...]
  k = KeySpec{};
  k.flags = VSL_KS_RO;
  k.begin_index = 1;
  k.begin_keyword = "STREAMS";
  k.last_key = -1;
  k.limit = 2;
  xread.keyspecs = {k};
  EXPECT_EQ(Positions(xread, {"XREAD", "COUNT", "2", "streams", "a", "b", "0", "0"}),
            (std::vector<uint32_t>{4, 5}));
  EXPECT_TRUE(Positions(xread, {"XREAD", "COUNT", "2"}).empty());
}

TEST(EntryTableTest, ScanReturnsEveryStableKeyAcrossResizes) {
  EntryTable table;
  std::vector<Entry*> owned;
  auto insert = [&](const std::string& k) {
    Entry* e = Entry::Create(k);
    table.Insert(e, HashKey(k));
    owned.push_back(e);
  };
  for (int i = 0; i < 1000; ++i) insert("stable:" + std::to_string(i));
  std::set<std::string> seen;
  uint64_t cursor = 0;
  int steps = 0;
  do {
    cursor = table.Scan(cursor, [&](const Entry* e) { seen.insert(std::string(e->key())); });
    ++steps;
    if (steps == 50) {  // grow 8x mid-scan
      for (int i = 0; i < 7000; ++i) insert("grow:" + std::to_string(i));
    }
    if (steps == 400) {  // then shrink back
      for (int i = 0; i < 7000; ++i) {
        const std::string k = "grow:" + std::to_string(i);
        Entry* e = table.Remove(k, HashKey(k));
        ASSERT_NE(e, nullptr);
        owned.erase(std::find(owned.begin(), owned.end(), e));
        Entry::Destroy(e);
      }
    }
  } while (cursor != 0);
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(seen.contains("stable:" + std::to_string(i))) << i;
  EXPECT_EQ(table.size(), 1000u);
  table.Drain([](Entry* e) { Entry::Destroy(e); });
}

TEST(EntryTableTest, FindRemoveReplaceRandom) {
  EntryTable table;
  for (int i = 0; i < 100; ++i) {
    const std::string k = "k" + std::to_string(i);
    table.Insert(Entry::Create(k), HashKey(k));
  }
  EXPECT_NE(table.Find("k42", HashKey("k42")), nullptr);
  EXPECT_EQ(table.Find("k100", HashKey("k100")), nullptr);
  Entry* old = table.Find("k7", HashKey("k7"));
  Entry* fresh = Entry::Create("k7");
  table.Replace(old, fresh, HashKey("k7"));
  Entry::Destroy(old);
  EXPECT_EQ(table.Find("k7", HashKey("k7")), fresh);
  std::set<std::string> sampled;
  for (uint64_t r = 0; r < 2000; ++r)
    sampled.insert(std::string(table.Random(r * 0x9E3779B97F4A7C15ull)->key()));
  EXPECT_GT(sampled.size(), 60u);  // random sampling reaches most keys
  Entry* gone = table.Remove("k42", HashKey("k42"));
  Entry::Destroy(gone);
  EXPECT_EQ(table.size(), 99u);
  table.Drain([](Entry* e) { Entry::Destroy(e); });
  EXPECT_EQ(table.size(), 0u);
}

// Cluster hashing: a key's hash carries its slot in the top bits, so a slot's keys (and a hash
// tag's) share a shard, and the shard counts its keys per slot.
TEST(ClusterHashingTest, SlotsMapOntoShardsAndAreCounted) {
  SetClusterHashing(true);
  for (uint32_t bits : {0u, 4u, 10u, 14u, 16u}) {
    Database db(0, bits);
    std::vector<uint64_t> expected(cluster::kSlots);
    for (int i = 0; i < 3000; ++i) {
      const std::string key = (i % 3 == 0 ? "{user7}." : "k") + std::to_string(i);
      const uint64_t hash = HashKey(key);
      const uint32_t slot = cluster::KeySlot(key);
      ASSERT_EQ(SlotOfHash(hash), slot);
      // The low bits are the key's own hash: its bucket and snapshot chunk.
      ASSERT_EQ(hash & ((uint64_t{1} << kSlotShift) - 1),
                EntryTable::BucketHash(key) & ((uint64_t{1} << kSlotShift) - 1));
      uint32_t first, last;
      db.ShardsOfSlot(slot, &first, &last);
      const uint32_t shard = db.ShardOf(hash);
      ASSERT_TRUE(first <= shard && shard <= last) << key << " bits " << bits;
      Entry* e = Entry::Create(key);
      db.shard(shard).table.Insert(e, hash);
      db.shard(shard).CountSlotKey(hash, 1);
      ++expected[slot];
    }
    for (uint32_t s = 0; s < cluster::kSlots; ++s) ASSERT_EQ(db.KeysInSlot(s), expected[s]) << s;
    EXPECT_EQ(db.KeysInSlot(cluster::KeySlot("{user7}")), 1000u);
    for (uint32_t i = 0; i < db.shard_count(); ++i)
      db.shard(i).table.Drain([](Entry* e) { Entry::Destroy(e); });
  }
  SetClusterHashing(false);
  Database plain(0, 4);
  EXPECT_EQ(plain.shard(0).slot_keys, nullptr);
  EXPECT_EQ(HashKey("abc"), EntryTable::BucketHash("abc"));
}

}  // namespace
}  // namespace vessel::engine
