// nodes.conf: a file in Redis 7.0's format parsed field by field and written back byte for byte,
// round trips from structures, the older address format, and every malformed line refused with
// its line number and reason.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "host/cluster/bus_message.h"
#include "host/cluster/nodes_conf.h"

namespace vessel::cluster {
namespace {

const std::string kId1 = "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca";
const std::string kId2 = "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1";
const std::string kId3 = "292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f";
const std::string kId4 = "6ec23923021cf3ffec47632106199cb7f496ce01";
const std::string kId5 = "824fe116063bc5fcf9f4ffd895bc17aee7731ac3";

const std::string kFile =
    kId1 + " 127.0.0.1:30001@40001,node-1.example myself,master - 0 1700000000000 1 connected " +
    "0-5460 [100->-" + kId3 + "] [5461-<-" + kId2 + "]\n" + kId2 +
    " 127.0.0.1:30002@40002 master - 0 1700000000123 2 connected 5461-10922\n" + kId3 +
    " 127.0.0.1:30003@40003 master,fail? - 1700000000500 1700000000000 3 disconnected "
    "10923-16383\n" +
    kId4 + " 127.0.0.1:30004@40004 slave " + kId1 + " 0 1700000000321 1 connected\n" + kId5 +
    " :0@0 master,fail,noaddr,nofailover - 0 0 0 disconnected 7 9-10\n" +
    "vars currentEpoch 3 lastVoteEpoch 2\n";

NodesConf MustParse(std::string_view text) {
  std::string error;
  std::optional<NodesConf> conf = ParseNodesConf(text, &error);
  EXPECT_TRUE(conf.has_value()) << error;
  return conf.value_or(NodesConf{});
}

std::string ParseError(std::string_view text) {
  std::string error;
  EXPECT_FALSE(ParseNodesConf(text, &error).has_value()) << text;
  return error;
}

TEST(NodesConfTest, ParsesEveryField) {
  const NodesConf conf = MustParse(kFile);
  ASSERT_EQ(conf.nodes.size(), 5u);
  EXPECT_EQ(conf.current_epoch, 3u);
  EXPECT_EQ(conf.last_vote_epoch, 2u);
  const NodeLine& me = conf.nodes[0];
  EXPECT_EQ(conf.myself(), &me);
  EXPECT_EQ(me.id, kId1);
  EXPECT_EQ(me.ip, "127.0.0.1");
  EXPECT_EQ(me.port, 30001);
  EXPECT_EQ(me.cport, 40001);
  EXPECT_EQ(me.hostname, "node-1.example");
  EXPECT_EQ(me.flags, kNodeMyself | kNodeMaster);
  EXPECT_EQ(me.master, "");
  EXPECT_EQ(me.ping_sent, 0);
  EXPECT_EQ(me.pong_received, 1700000000000);
  EXPECT_EQ(me.config_epoch, 1u);
  EXPECT_TRUE(me.connected);
  EXPECT_EQ(me.slots, (std::vector<SlotRange>{{0, 5460}}));
  EXPECT_EQ(me.moves, (std::vector<SlotMove>{{100, false, kId3}, {5461, true, kId2}}));
  EXPECT_EQ(conf.nodes[2].flags, kNodeMaster | kNodePFail);
  EXPECT_FALSE(conf.nodes[2].connected);
  EXPECT_EQ(conf.nodes[2].ping_sent, 1700000000500);
  EXPECT_EQ(conf.nodes[3].flags, kNodeSlave);
  EXPECT_EQ(conf.nodes[3].master, kId1);
  EXPECT_TRUE(conf.nodes[3].slots.empty());
  const NodeLine& lost = conf.nodes[4];
  EXPECT_EQ(lost.ip, "");
  EXPECT_EQ(lost.port, 0);
  EXPECT_EQ(lost.flags, kNodeMaster | kNodeFail | kNodeNoAddr | kNodeNoFailover);
  EXPECT_EQ(lost.slots, (std::vector<SlotRange>{{7, 7}, {9, 10}}));
}

TEST(NodesConfTest, FormatsWhatItParsed) { EXPECT_EQ(FormatNodesConf(MustParse(kFile)), kFile); }

TEST(NodesConfTest, RoundTripsFromStructures) {
  NodesConf conf;
  conf.current_epoch = 18446744073709551615u;
  conf.last_vote_epoch = 5;
  NodeLine a{.id = kId1,
             .ip = "::1",
             .port = 7000,
             .cport = 17000,
             .flags = kNodeMyself | kNodeSlave,
             .master = kId2,
             .ping_sent = 1,
             .pong_received = 2,
             .config_epoch = 9,
             .connected = true};
  NodeLine b{.id = kId2,
             .ip = "10.1.2.3",
             .port = 7001,
             .cport = 7002,
             .hostname = "b.local",
             .flags = kNodeMaster | kNodeHandshake,
             .config_epoch = 4};
  b.slots = {{0, 0}, {2, 16383}};
  NodeLine c{.id = kId3, .ip = "10.1.2.4", .port = 7003, .cport = 17003, .flags = 0};
  conf.nodes = {a, b, c};
  const std::string text = FormatNodesConf(conf);
  EXPECT_EQ(text, kId1 + " ::1:7000@17000 myself,slave " + kId2 + " 1 2 9 connected\n" + kId2 +
                      " 10.1.2.3:7001@7002,b.local master,handshake - 0 0 4 disconnected 0 "
                      "2-16383\n" +
                      kId3 + " 10.1.2.4:7003@17003 noflags - 0 0 0 disconnected\n" +
                      "vars currentEpoch 18446744073709551615 lastVoteEpoch 5\n");
  EXPECT_EQ(MustParse(text), conf);
}

TEST(NodesConfTest, ReadsAsRedisReads) {
  // Without "@cport" (files of versions before 4.0) the bus port is port + 10000.
  NodesConf conf = MustParse(kId1 + " 127.0.0.1:7000 myself,master - 0 0 0 connected\n");
  EXPECT_EQ(conf.nodes[0].cport, 17000);
  EXPECT_EQ(conf.current_epoch, 0u);
  // Blank lines, the vars line anywhere, unknown vars, and the padding newlines Redis leaves when
  // the file shrank.
  conf = MustParse("\n" + std::string("vars lastVoteEpoch 4 futureVar x currentEpoch 6\n") + kId1 +
                   " 127.0.0.1:7000@17000 myself,master - 0 0 0 connected 1\n\n\n\n");
  EXPECT_EQ(conf.current_epoch, 6u);
  EXPECT_EQ(conf.last_vote_epoch, 4u);
  ASSERT_EQ(conf.nodes.size(), 1u);
  EXPECT_EQ(conf.nodes[0].slots, (std::vector<SlotRange>{{1, 1}}));
  // An IPv6 address keeps its colons; the port is after the last one.
  conf = MustParse(kId1 + " fe80::1:7000@17000 myself,master - 0 0 0 connected\n");
  EXPECT_EQ(conf.nodes[0].ip, "fe80::1");
  EXPECT_EQ(conf.nodes[0].port, 7000);
}

TEST(NodesConfTest, RefusesMalformedLines) {
  const std::string me = kId1 + " 127.0.0.1:7000@17000 myself,master - 0 0 0 connected";
  const std::string other = kId2 + " 127.0.0.1:7001@17001 master - 0 0 0 connected";
  struct Case {
    std::string line;
    std::string error;
  };
  const std::vector<Case> cases = {
      {kId2 + " 127.0.0.1:7001@17001 master - 0 0 0", "line 2: a node line has at least 8 fields"},
      {"abc 127.0.0.1:7001@17001 master - 0 0 0 connected", "line 2: malformed node id 'abc'"},
      {std::string(40, 'A') + " 127.0.0.1:7001 master - 0 0 0 connected",
       "line 2: malformed node id '" + std::string(40, 'A') + "'"},
      {kId2 + " 127.0.0.1 master - 0 0 0 connected", "line 2: address without ':'"},
      {kId2 + " 127.0.0.1:70x1 master - 0 0 0 connected", "line 2: bad port in address"},
      {kId2 + " 127.0.0.1:70001@1 master - 0 0 0 connected", "line 2: bad port in address"},
      {kId2 + " 127.0.0.1:7001@ master - 0 0 0 connected",
       "line 2: bad cluster bus port in address"},
      {kId2 + " 127.0.0.1:7001@17001 mastr - 0 0 0 connected", "line 2: unknown flag 'mastr'"},
      {kId2 + " 127.0.0.1:7001@17001 master, - 0 0 0 connected", "line 2: unknown flag ''"},
      {kId2 + " 127.0.0.1:7001@17001 slave 12345 0 0 0 connected",
       "line 2: malformed master id '12345'"},
      {kId2 + " 127.0.0.1:7001@17001 master - x 0 0 connected",
       "line 2: bad ping_sent or pong_recv"},
      {kId2 + " 127.0.0.1:7001@17001 master - 0 0 -1 connected", "line 2: bad configEpoch"},
      {kId2 + " 127.0.0.1:7001@17001 master - 0 0 0 up", "line 2: bad link state 'up'"},
      {other + " 16384", "line 2: bad slot range '16384'"},
      {other + " -1", "line 2: bad slot range '-1'"},
      {other + " 10-5", "line 2: bad slot range '10-5'"},
      {other + " 1-2-3", "line 2: bad slot range '1-2-3'"},
      {other + " 5x", "line 2: bad slot range '5x'"},
      {other + " [5->-" + kId1 + "", "line 2: bad migrating or importing slot '[5->-" + kId1 + "'"},
      {other + " [5-x-" + kId1 + "]",
       "line 2: bad migrating or importing slot '[5-x-" + kId1 + "]'"},
      {other + " [16384->-" + kId1 + "]",
       "line 2: bad migrating or importing slot '[16384->-" + kId1 + "]'"},
      {other + " [5->-abc]", "line 2: bad migrating or importing slot '[5->-abc]'"},
      {"vars currentEpoch", "line 2: vars needs name value pairs"},
      {"vars currentEpoch x", "line 2: bad value of currentEpoch"},
  };
  for (const Case& c : cases) EXPECT_EQ(ParseError(me + "\n" + c.line + "\n"), c.error) << c.line;
  EXPECT_EQ(ParseError(other + "\n"), "no node is flagged myself");
  EXPECT_EQ(ParseError(""), "no node is flagged myself");
  EXPECT_EQ(
      ParseError(me + "\n" + kId2 + " 127.0.0.1:7001@17001 myself,master - 0 0 0 connected\n"),
      "more than one node is flagged myself");
}

TEST(NodesConfTest, FlagNames) {
  EXPECT_EQ(FormatNodeFlags(0), "noflags");
  EXPECT_EQ(FormatNodeFlags(kNodeMaster | kNodeMyself), "myself,master");
  EXPECT_EQ(FormatNodeFlags(0x3FF), "myself,master,slave,fail?,fail,handshake,noaddr,nofailover");
}

}  // namespace
}  // namespace vessel::cluster
