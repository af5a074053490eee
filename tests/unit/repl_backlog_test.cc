// The replication backlog's ring buffer on its own, against a std::string holding the whole
// stream: offsets, wrap-around, eviction of the oldest bytes, resizing.
#include <random>
#include <string>

#include "gtest/gtest.h"
#include "host/repl/backlog.h"

namespace vessel::repl {
namespace {

// What the backlog must hold: the last `size` bytes of `stream`, whose first byte is offset
// first_offset.
void ExpectHolds(const Backlog& b, const std::string& stream, uint64_t start_offset) {
  const uint64_t end = start_offset + stream.size();
  ASSERT_EQ(b.end_offset(), end);
  const uint64_t held = std::min<uint64_t>(stream.size(), b.size());
  ASSERT_EQ(b.histlen(), held);
  ASSERT_EQ(b.first_offset(), end - held + 1);
  for (uint64_t from : {b.first_offset(), b.first_offset() + held / 2, end, end + 1}) {
    if (from > end + 1) continue;
    std::string got;
    b.CopyFrom(from, &got);
    EXPECT_EQ(got, stream.substr(from - start_offset - 1)) << "from " << from;
  }
  EXPECT_FALSE(b.Covers(b.first_offset() - 1));
  EXPECT_FALSE(b.Covers(end + 2));
}

TEST(ReplBacklog, EmptyContinuesAfterItsOffset) {
  Backlog b(16, 100);
  EXPECT_EQ(b.histlen(), 0u);
  EXPECT_EQ(b.first_offset(), 101u);  // Redis: master_repl_offset + 1
  EXPECT_TRUE(b.Covers(101));
  EXPECT_FALSE(b.Covers(100));
  std::string got;
  b.CopyFrom(101, &got);
  EXPECT_EQ(got, "");
}

TEST(ReplBacklog, WrapsAndKeepsTheNewestBytes) {
  Backlog b(10, 0);
  std::string stream;
  for (const char* piece : {"abc", "defg", "hij", "klmnopq", "r", "stuvwxyz0123456789"}) {
    b.Append(piece);
    stream += piece;
    ExpectHolds(b, stream, 0);
  }
}

TEST(ReplBacklog, MatchesAModelUnderRandomAppendsAndResizes) {
  std::mt19937 rng(7);
  Backlog b(64, 1000);
  std::string stream;
  for (int step = 0; step < 2000; ++step) {
    if (rng() % 50 == 0) {
      b.Resize(1 + rng() % 200);
    } else {
      std::string piece(rng() % 90, 'a');
      for (char& c : piece) c = static_cast<char>('a' + rng() % 26);
      b.Append(piece);
      stream += piece;
    }
    // After a resize only what fit stays: compare against the bytes the backlog claims.
    const uint64_t held = b.histlen();
    std::string got;
    b.CopyFrom(b.first_offset(), &got);
    ASSERT_EQ(got, stream.substr(stream.size() - held)) << "step " << step;
    ASSERT_EQ(b.end_offset(), 1000 + stream.size());
  }
}

}  // namespace
}  // namespace vessel::repl
