// Key slots: CRC16/XMODEM and the hash-tag rule against values Redis documents and computes.
#include <random>
#include <string>

#include "gtest/gtest.h"
#include "host/cluster/slots.h"

namespace vessel::cluster {
namespace {

TEST(Crc16Test, WordStepsAgreeWithTheDefinition) {
  std::mt19937 rng(7);
  for (int len = 0; len < 70; ++len) {
    for (int round = 0; round < 50; ++round) {
      std::string s(static_cast<size_t>(len), '\0');
      for (char& c : s) c = static_cast<char>(rng());
      ASSERT_EQ(Crc16(s), Crc16Reference(s)) << len;
      ASSERT_EQ(Crc16Portable(s), Crc16Reference(s)) << len;
    }
  }
}

TEST(Crc16Test, XmodemCheckValue) {
  EXPECT_EQ(Crc16("123456789"), 0x31C3);  // the catalogued check value of CRC-16/XMODEM
  EXPECT_EQ(Crc16(""), 0);
  EXPECT_EQ(Crc16(std::string(1, '\0')), 0);
  EXPECT_EQ(Crc16("\x01"), 0x1021);  // one set bit shifts through as the polynomial
}

TEST(KeySlotTest, ValuesRedisDocuments) {
  EXPECT_EQ(KeySlot("foo"), 12182);
  EXPECT_EQ(KeySlot("somekey"), 11058);
  EXPECT_EQ(KeySlot("foo{hash_tag}"), 2515);
  EXPECT_EQ(KeySlot("bar{hash_tag}"), 2515);
  EXPECT_EQ(KeySlot(""), 0);
}

// KeySlot's one pass (CRC steps that also look for a '{') against the definition, with braces
// (and bytes one bit away from '{') anywhere; both the carry-less and the table steps.
TEST(KeySlotTest, OnePassAgreesWithTheDefinition) {
  std::mt19937 rng(11);
  const char kAlphabet[] = {'a', '{', '}', 'z', '\x7A', '\x7F', '\xFB', '\x3B', '\0'};
  for (int len = 0; len < 40; ++len) {
    for (int round = 0; round < 200; ++round) {
      std::string s(static_cast<size_t>(len), '\0');
      for (char& c : s) c = kAlphabet[rng() % sizeof(kAlphabet)];
      ASSERT_EQ(KeySlot(s), Crc16Reference(HashTag(s)) & (kSlots - 1)) << s;
      ASSERT_EQ(KeySlotPortable(s), KeySlot(s)) << s;
    }
  }
}

TEST(KeySlotTest, HashTags) {
  EXPECT_EQ(KeySlot("{user1000}.following"), KeySlot("{user1000}.followers"));
  EXPECT_EQ(KeySlot("{user1000}.following"), KeySlot("user1000"));
  EXPECT_EQ(HashTag("{user1000}.following"), "user1000");
  // An empty tag does not count, and the first '{' decides: the whole key.
  EXPECT_EQ(HashTag("foo{}{bar}"), "foo{}{bar}");
  EXPECT_EQ(KeySlot("foo{}{bar}"), Crc16("foo{}{bar}") & 0x3FFF);
  // The tag runs from the first '{' to the first '}' after it.
  EXPECT_EQ(HashTag("foo{{bar}}zap"), "{bar");
  EXPECT_EQ(KeySlot("foo{{bar}}zap"), KeySlot("{bar"));
  EXPECT_EQ(HashTag("foo{bar}{zap}"), "bar");
  // No closing brace, or only one before the opening one: the whole key.
  EXPECT_EQ(HashTag("foo{bar"), "foo{bar");
  EXPECT_EQ(HashTag("}foo{bar}"), "bar");
  EXPECT_EQ(HashTag("{"), "{");
  EXPECT_EQ(HashTag("{}"), "{}");
  EXPECT_EQ(HashTag("{}}"), "{}}");
  EXPECT_EQ(HashTag("{a}"), "a");
}

TEST(KeySlotTest, BinaryKeys) {
  const std::string key("a\0{b\0}c", 7);
  EXPECT_EQ(HashTag(key), std::string("b\0", 2));
  for (int c = 0; c < 256; ++c) {
    const std::string k(1, static_cast<char>(c));
    EXPECT_LT(KeySlot(k), kSlots);
  }
}

TEST(SlotBitmapTest, RedisBitOrder) {
  SlotBitmap b;
  b.Set(0);
  b.Set(9);
  b.Set(kSlots - 1);
  EXPECT_EQ(b.bytes()[0], 0x01);
  EXPECT_EQ(b.bytes()[1], 0x02);
  EXPECT_EQ(b.bytes()[kSlots / 8 - 1], 0x80);
  EXPECT_EQ(b.Count(), 3);
  EXPECT_TRUE(b.Test(9));
  EXPECT_FALSE(b.Test(8));
  b.Clear(9);
  EXPECT_FALSE(b.Test(9));
  b.SetRange(100, 199);
  EXPECT_EQ(b.Count(), 102);
}

}  // namespace
}  // namespace vessel::cluster
