// The diskless synchronization's RDB stream (host/repl/rdb_stream.h): every reader gets every
// byte in order, the writer waits for the slowest reader, and gives up when all readers left or
// the snapshot is cancelled.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>

#include "host/repl/rdb_stream.h"

namespace vessel::repl {
namespace {

// Reads everything reader `r` gets until the end (or a failure); spins when nothing is there.
RdbStream::Read ReadAll(RdbStream& s, size_t r, std::string* out) {
  for (;;) {
    const RdbStream::Read got = s.Take(r, 4096, out);
    if (got == RdbStream::Read::kEnd || got == RdbStream::Read::kFailed) return got;
    if (got == RdbStream::Read::kNothingYet) std::this_thread::yield();
  }
}

TEST(RdbStream, EveryReaderGetsEveryByteInOrder) {
  RdbStream s;
  const size_t a = s.AddReader(), b = s.AddReader();
  std::string expected;
  std::atomic<bool> cancelled{false};
  std::thread writer([&] {
    // More than the window, in pieces of varying sizes: the writer has to wait for the readers.
    for (int i = 0; i < 3000; ++i) {
      const std::string piece(1 + (i * 7919) % 9000, static_cast<char>('a' + i % 26));
      ASSERT_TRUE(s.Write(piece, cancelled));
    }
    s.Finish(true);
  });
  for (int i = 0; i < 3000; ++i) expected += std::string(1 + (i * 7919) % 9000, 'a' + i % 26);
  std::string got_a, got_b;
  std::thread reader_b([&] { EXPECT_EQ(ReadAll(s, b, &got_b), RdbStream::Read::kEnd); });
  EXPECT_EQ(ReadAll(s, a, &got_a), RdbStream::Read::kEnd);
  reader_b.join();
  writer.join();
  ASSERT_GT(expected.size(), RdbStream::kWindow);
  EXPECT_EQ(got_a, expected);
  EXPECT_EQ(got_b, expected);
}

TEST(RdbStream, WriterWaitsForTheSlowestReaderAndGoesOnWhenItLeaves) {
  RdbStream s;
  const size_t fast = s.AddReader(), slow = s.AddReader();
  std::atomic<bool> cancelled{false};
  const std::string window(RdbStream::kWindow, 'x');
  ASSERT_TRUE(s.Write(window, cancelled));  // up to the window: no wait
  std::atomic<bool> written{false};
  std::thread writer([&] {
    EXPECT_TRUE(s.Write("more", cancelled));
    written = true;
    s.Finish(true);
  });
  std::string out;
  while (out.size() < window.size()) s.Take(fast, 1 << 20, &out);
  EXPECT_FALSE(written.load());  // the slow reader has read nothing
  s.Leave(slow);
  writer.join();
  EXPECT_TRUE(written.load());
  EXPECT_EQ(ReadAll(s, fast, &out), RdbStream::Read::kEnd);
  EXPECT_EQ(out, window + "more");
  EXPECT_EQ(s.Take(slow, 10, &out), RdbStream::Read::kFailed);
}

TEST(RdbStream, WriterGivesUpWhenEveryReaderLeftOrTheSnapshotIsCancelled) {
  std::atomic<bool> cancelled{false};
  {
    RdbStream s;
    const size_t r = s.AddReader();
    ASSERT_TRUE(s.Write("abc", cancelled));
    s.Leave(r);
    EXPECT_FALSE(s.Write("def", cancelled));
  }
  {
    RdbStream s;
    s.AddReader();
    const std::string window(RdbStream::kWindow + 1, 'x');
    ASSERT_TRUE(s.Write(window, cancelled));
    std::thread writer([&] { EXPECT_FALSE(s.Write("blocked", cancelled)); });
    cancelled = true;
    writer.join();
  }
}

TEST(RdbStream, AFailedSnapshotFailsItsReadersAtTheEndOfWhatWasWritten) {
  RdbStream s;
  const size_t r = s.AddReader();
  std::atomic<bool> cancelled{false};
  ASSERT_TRUE(s.Write("partial", cancelled));
  s.Finish(false);
  std::string out;
  EXPECT_EQ(s.Take(r, 100, &out), RdbStream::Read::kData);
  EXPECT_EQ(out, "partial");
  EXPECT_EQ(s.Take(r, 100, &out), RdbStream::Read::kFailed);
}

}  // namespace
}  // namespace vessel::repl
