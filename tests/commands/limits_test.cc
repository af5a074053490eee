// Limits that protect the process: maxclients, the output buffer of a client that never reads,
// the query buffer of a client that never finishes a command. Vessel runs with small limits.
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

constexpr int kMaxClients = 24;

const bool kConfigured = [] {
  Servers::Configure([](config::Config& c) {
    c.server.maxclients = kMaxClients;
    c.server.output_buffer_limit = 1 << 20;
    c.server.query_buffer_limit = 1 << 20;
  });
  return true;
}();

class LimitsTest : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
};

TEST_F(LimitsTest, MaxclientsRejectsWithRedisError) {
  std::vector<RespClient> clients;
  int accepted = 0, rejected = 0;
  for (int i = 0; i < kMaxClients + 8; ++i) {
    RespClient c = Servers::Get().Vessel();
    const Reply r = c("PING");
    if (r.type == Reply::Type::kStatus) {
      ++accepted;
      clients.push_back(std::move(c));
    } else {
      ++rejected;
      EXPECT_EQ(r.str, "ERR max number of clients reached") << r.ToString();
    }
  }
  EXPECT_LE(accepted, kMaxClients);
  EXPECT_GE(rejected, 8);
  // Closing connections frees their slots.
  clients.resize(clients.size() - 4);
  bool ok = false;
  for (int i = 0; i < 100 && !ok; ++i) {
    RespClient c = Servers::Get().Vessel();
    ok = c("PING").type == Reply::Type::kStatus;
    if (!ok) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(ok);
}

TEST_F(LimitsTest, ClientThatNeverReadsIsDisconnected) {
  RespClient setup = Servers::Get().Vessel();
  setup("SET", "big", std::string(100 * 1024, 'x'));
  RespClient greedy = Servers::Get().Vessel();
  // 400 pipelined GETs of 100 KiB: 40 MiB of replies the client never reads.
  std::string batch;
  for (int i = 0; i < 400; ++i) batch += RespClient::Encode({"GET", "big"});
  greedy.SendRaw(batch);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // The server dropped it: draining what the kernel buffered ends in EOF, well before 40 MiB.
  greedy.SetTimeout(2000);
  size_t replies = 0;
  while (greedy.Read().type == Reply::Type::kBulk) ++replies;
  EXPECT_LT(replies, 400u);
  // Everyone else is unaffected.
  EXPECT_EQ(setup("PING").str, "PONG");
  const Reply info = setup("INFO", "clients");
  EXPECT_NE(info.str.find("connected_clients:"), std::string::npos);
}

// The peak resident memory of this process (the in-process vessel), in bytes.
int64_t PeakRss() {
  FILE* f = std::fopen("/proc/self/status", "r");
  char line[256];
  int64_t kb = -1;
  while (f != nullptr && std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::sscanf(line, "VmHWM: %ld kB", &kb) == 1) break;
  }
  if (f != nullptr) std::fclose(f);
  return kb * 1024;
}

// One pipelined batch of 2,000 GETs of a 1 MiB value (2 GiB of replies) from a client that never
// reads: the server stops producing replies for it the moment it passes its limit (1 MiB here)
// and closes it, instead of building the whole batch first; the others keep being served.
TEST_F(LimitsTest, OutputLimitHoldsInsideOnePipelinedBatch) {
  RespClient setup = Servers::Get().Vessel();
  setup("SET", "big", std::string(1 << 20, 'x'));
  const int64_t before = PeakRss();
  RespClient greedy = Servers::Get().Vessel();
  std::string batch;
  for (int i = 0; i < 2000; ++i) batch += RespClient::Encode({"GET", "big"});
  greedy.SendRaw(batch);
  greedy.SetTimeout(5000);
  size_t replies = 0;
  while (greedy.Read().type == Reply::Type::kBulk) ++replies;
  EXPECT_LT(replies, 2u);
  EXPECT_EQ(setup("PING").str, "PONG");
  // Without the check inside the batch the peak grew by about 2 GiB.
  EXPECT_LT(PeakRss() - before, int64_t{256} << 20);
}

TEST_F(LimitsTest, EndlessBulkHitsTheQueryBufferLimit) {
  RespClient c = Servers::Get().Vessel();
  c.SendRaw("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100000000\r\n");
  const std::string chunk(64 * 1024, 'y');
  for (int i = 0; i < 40; ++i) c.SendRaw(chunk);  // 2.5 MiB of an unfinished command
  c.SetTimeout(3000);
  EXPECT_TRUE(c.ReadEof());
  RespClient other = Servers::Get().Vessel();
  EXPECT_EQ(other("EXISTS", "k").integer, 0);
}

TEST_F(LimitsTest, ConfigSetMaxclientsAppliesAtOnce) {
  RespClient admin = Servers::Get().Vessel();
  EXPECT_EQ(admin("CONFIG", "SET", "maxclients", "1").str, "OK");
  RespClient late = Servers::Get().Vessel();
  EXPECT_EQ(late("PING").str, "ERR max number of clients reached");
  EXPECT_EQ(admin("CONFIG", "SET", "maxclients", std::to_string(kMaxClients)).str, "OK");
  RespClient again = Servers::Get().Vessel();
  EXPECT_EQ(again("PING").str, "PONG");
}

}  // namespace
}  // namespace vessel::test
