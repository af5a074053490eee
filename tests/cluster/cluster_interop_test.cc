// The cluster library against real redis-server 7.0 nodes: CLUSTER KEYSLOT agrees with KeySlot,
// a nodes.conf written by a three-node cluster parses and formats back byte for byte, a MEET
// encoded here is accepted and the PONG redis answers decodes to what CLUSTER MYID / INFO say, a
// handshake with a node speaking through this library completes (redis's PING decoded, our PONG
// taken, our slots adopted), and a malformed packet makes redis close the link.
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "host/cluster/bus_message.h"
#include "host/cluster/nodes_conf.h"
#include "host/cluster/slots.h"
#include "tests/cluster/redis_node.h"

namespace vessel::cluster {
namespace {

using test::RedisNode;
using test::Reply;

const std::string kFakeId = "f00dfacef00dfacef00dfacef00dfacef00dface";

// A field of CLUSTER INFO ("cluster_state" -> "ok").
std::string ClusterInfo(const RedisNode& node, const std::string& field) {
  auto c = node.Client();
  const std::string info = c("CLUSTER", "INFO").str;
  const size_t at = info.find(field + ":");
  if (at == std::string::npos) return "";
  const size_t end = info.find("\r\n", at);
  return info.substr(at + field.size() + 1, end - at - field.size() - 1);
}

// Polls `ready` every 50 ms until it holds or 30 s pass.
bool WaitFor(const std::function<bool()>& ready) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

TEST(ClusterInteropTest, KeySlotAgreesWithRedis) {
  RedisNode node;
  auto c = node.Client();
  std::vector<std::string> keys = {"foo",
                                   "bar",
                                   "",
                                   "{user1000}.following",
                                   "{user1000}.followers",
                                   "foo{}{bar}",
                                   "foo{{bar}}zap",
                                   "foo{bar}{zap}",
                                   "{",
                                   "}",
                                   "{}",
                                   "a{b}",
                                   std::string("\0{\0}", 4)};
  std::mt19937 rng(7);
  const std::string alphabet("ab{}\0\xff", 6);
  for (int i = 0; i < 500; ++i) {
    std::string key(rng() % 12, ' ');
    for (char& ch : key) {
      ch = i % 2 ? alphabet[rng() % alphabet.size()] : static_cast<char>(rng());
    }
    keys.push_back(key);
  }
  for (const std::string& key : keys) c.Send({"CLUSTER", "KEYSLOT", key});
  for (const std::string& key : keys) {
    const Reply r = c.Read();
    ASSERT_EQ(r.type, Reply::Type::kInt) << r.ToString();
    EXPECT_EQ(r.integer, KeySlot(key)) << "key of " << key.size() << " bytes: " << key;
  }
}

TEST(ClusterInteropTest, ParsesTheNodesConfOfARealCluster) {
  RedisNode n0;
  RedisNode n1;
  RedisNode n2({"--cluster-announce-hostname", "node-two.example"});
  const std::string id0 = n0.Id(), id1 = n1.Id(), id2 = n2.Id();
  {
    auto c = n0.Client();
    ASSERT_EQ(c("CLUSTER", "MEET", "127.0.0.1", std::to_string(n1.port())).str, "OK");
    ASSERT_EQ(c("CLUSTER", "MEET", "127.0.0.1", std::to_string(n2.port())).str, "OK");
    ASSERT_EQ(c("CLUSTER", "ADDSLOTSRANGE", "0", "5000", "5002", "5460").str, "OK");
  }
  ASSERT_EQ(n1.Client()("CLUSTER", "ADDSLOTSRANGE", "5461", "10922").str, "OK");
  ASSERT_EQ(n2.Client()("CLUSTER", "ADDSLOTSRANGE", "10923", "16383").str, "OK");
  // SETSLOT names nodes by id, which node 0 learns when its handshakes end; node two's hostname
  // comes with its next pings. Redis does not save the file for a hostname alone: the SETSLOTs
  // below save it.
  ASSERT_TRUE(WaitFor([&] {
    const std::string nodes = n0.Client()("CLUSTER", "NODES").str;
    return nodes.find(id1) != std::string::npos && nodes.find(id2) != std::string::npos &&
           nodes.find("handshake") == std::string::npos &&
           nodes.find(",node-two.example") != std::string::npos;
  }));
  ASSERT_EQ(n0.Client()("CLUSTER", "SETSLOT", "100", "MIGRATING", id1).str, "OK");
  ASSERT_EQ(n0.Client()("CLUSTER", "SETSLOT", "10923", "IMPORTING", id2).str, "OK");

  // The file once it shows the whole picture: three connected nodes with their slots, node two's
  // hostname learnt from its ping extension, and the slots being moved.
  std::string text;
  std::optional<NodesConf> conf;
  const bool complete = WaitFor([&] {
    text = test::ReadFile(n0.nodes_conf_path());
    std::string error;
    conf = ParseNodesConf(text, &error);
    if (!conf || conf->nodes.size() != 3) return false;
    for (const NodeLine& n : conf->nodes) {
      if (!n.connected || n.slots.empty()) return false;
      if (n.id == id2 && n.hostname.empty()) return false;
    }
    return conf->myself()->moves.size() == 2;
  });
  ASSERT_TRUE(complete) << text;

  const NodeLine* me = conf->myself();
  EXPECT_EQ(me->id, id0);
  EXPECT_EQ(me->ip, "127.0.0.1");
  EXPECT_EQ(me->port, n0.port());
  EXPECT_EQ(me->cport, n0.bus_port());
  EXPECT_EQ(me->flags, kNodeMyself | kNodeMaster);
  EXPECT_EQ(me->slots, (std::vector<SlotRange>{{0, 5000}, {5002, 5460}}));
  EXPECT_EQ(me->moves, (std::vector<SlotMove>{{100, false, id1}, {10923, true, id2}}));
  for (const NodeLine& n : conf->nodes) {
    if (n.id == id1) {
      EXPECT_EQ(n.port, n1.port());
      EXPECT_EQ(n.flags, kNodeMaster);
      EXPECT_EQ(n.slots, (std::vector<SlotRange>{{5461, 10922}}));
    } else if (n.id == id2) {
      EXPECT_EQ(n.cport, n2.bus_port());
      EXPECT_EQ(n.hostname, "node-two.example");
      EXPECT_EQ(n.slots, (std::vector<SlotRange>{{10923, 16383}}));
    } else {
      EXPECT_EQ(n.id, id0);
    }
  }
  // Redis pads a file that shrank with newlines (and truncates them when it can).
  std::string written = text;
  while (written.size() > 1 && written.ends_with("\n\n")) written.pop_back();
  EXPECT_EQ(FormatNodesConf(*conf), written);
  // The masters' equal config epochs are being told apart meanwhile, so only the invariant holds.
  EXPECT_GE(conf->current_epoch, me->config_epoch);
}

// Our MEET as a handshaking node would send it.
BusHeader FakeNodeHeader() {
  BusHeader h;
  h.sender = kFakeId;
  h.port = 1;  // nobody listens there: redis's own handshake towards us simply fails
  h.cport = 2;
  h.ip = "127.0.0.1";
  h.flags = kNodeMaster;
  return h;
}

TEST(ClusterInteropTest, MeetGetsAPongThatDecodes) {
  RedisNode node({"--cluster-announce-hostname", "redis-one.example"});
  const std::string id = node.Id();
  ASSERT_EQ(node.Client()("CLUSTER", "ADDSLOTSRANGE", "0", "99", "200", "200").str, "OK");
  const int fd = test::ConnectTcp(node.bus_port());
  ASSERT_GE(fd, 0);
  const std::string meet = EncodePing(MessageType::kMeet, FakeNodeHeader(), {});
  ASSERT_EQ(send(fd, meet.data(), meet.size(), 0), static_cast<ssize_t>(meet.size()));

  const std::string packet = test::ReadBusPacket(fd);
  ASSERT_FALSE(packet.empty());
  std::string error;
  const std::optional<BusMessage> pong = Decode(packet, &error);
  ASSERT_TRUE(pong.has_value()) << error;
  EXPECT_EQ(pong->type, static_cast<uint16_t>(MessageType::kPong));
  EXPECT_EQ(pong->header.sender, id);
  EXPECT_EQ(pong->header.port, node.port());
  EXPECT_EQ(pong->header.cport, node.bus_port());
  EXPECT_EQ(pong->header.flags, kNodeMyself | kNodeMaster);
  EXPECT_EQ(pong->header.slaveof, "");
  EXPECT_EQ(pong->header.current_epoch, std::stoull(ClusterInfo(node, "cluster_current_epoch")));
  EXPECT_EQ(pong->header.config_epoch, std::stoull(ClusterInfo(node, "cluster_my_epoch")));
  EXPECT_EQ(pong->header.state, kClusterFail);  // not every slot is served
  EXPECT_EQ(pong->header.slots.Count(), 101);
  EXPECT_TRUE(pong->header.slots.Test(0) && pong->header.slots.Test(99) &&
              pong->header.slots.Test(200) && !pong->header.slots.Test(100));
  EXPECT_TRUE(pong->gossip.empty());  // redis knows no third node to gossip about
  ASSERT_EQ(pong->extensions.size(), 1u);
  EXPECT_EQ(pong->extensions[0].type, kExtHostname);
  EXPECT_EQ(pong->extensions[0].data, "redis-one.example");
  EXPECT_EQ(Encode(*pong), packet);

  // redis took the MEET: it now handshakes with a node at our announced address.
  EXPECT_TRUE(WaitFor([&] {
    const std::string nodes = node.Client()("CLUSTER", "NODES").str;
    return nodes.find("127.0.0.1:1@2 handshake") != std::string::npos;
  }));

  // A PING with the right framing but a FAIL body's wrong length is dropped (as our decoder
  // refuses it) and the link stays: the next PING still gets its PONG.
  std::string bad = EncodeFail(FakeNodeHeader(), kFakeId) + "xx";
  bad[6] = static_cast<char>(bad.size() >> 8);  // totlen 2298 (< 65536: its high bytes are 0)
  bad[7] = static_cast<char>(bad.size());
  EXPECT_FALSE(Decode(bad, &error).has_value());
  ASSERT_EQ(send(fd, bad.data(), bad.size(), 0), static_cast<ssize_t>(bad.size()));
  const std::string ping = EncodePing(MessageType::kPing, FakeNodeHeader(), {});
  ASSERT_EQ(send(fd, ping.data(), ping.size(), 0), static_cast<ssize_t>(ping.size()));
  const std::optional<BusMessage> pong2 = Decode(test::ReadBusPacket(fd), &error);
  ASSERT_TRUE(pong2.has_value()) << error;
  EXPECT_EQ(pong2->type, static_cast<uint16_t>(MessageType::kPong));
  close(fd);
}

TEST(ClusterInteropTest, HandshakeCompletesWithOurNode) {
  // Our node listens on its bus port; redis, told of it by our MEET, connects there, sends its
  // PING, and takes our PONG as the end of the handshake: our id replaces the placeholder it
  // gave the node.
  RedisNode node({"--cluster-announce-hostname", "redis-one.example"});
  const std::string id = node.Id();
  int our_bus_port = 0;
  const int listen_fd = test::ListenTcp(&our_bus_port);
  ASSERT_GE(listen_fd, 0);
  BusHeader us = FakeNodeHeader();
  us.cport = static_cast<uint16_t>(our_bus_port);
  us.slots.SetRange(16000, 16383);
  const int fd = test::ConnectTcp(node.bus_port());
  ASSERT_GE(fd, 0);
  const std::string meet = EncodePing(MessageType::kMeet, us, {});
  ASSERT_EQ(send(fd, meet.data(), meet.size(), 0), static_cast<ssize_t>(meet.size()));
  std::string error;
  ASSERT_TRUE(Decode(test::ReadBusPacket(fd), &error).has_value()) << error;

  const int in_fd = test::AcceptTcp(listen_fd);
  ASSERT_GE(in_fd, 0);
  const std::optional<BusMessage> ping = Decode(test::ReadBusPacket(in_fd), &error);
  ASSERT_TRUE(ping.has_value()) << error;
  EXPECT_EQ(ping->type, static_cast<uint16_t>(MessageType::kPing));
  EXPECT_EQ(ping->header.sender, id);
  EXPECT_EQ(ping->header.port, node.port());
  ASSERT_EQ(ping->extensions.size(), 1u);
  EXPECT_EQ(ping->extensions[0].data, "redis-one.example");

  const std::string pong = EncodePing(MessageType::kPong, us, {});
  ASSERT_EQ(send(in_fd, pong.data(), pong.size(), 0), static_cast<ssize_t>(pong.size()));
  std::string line;
  auto our_line = [&] {
    const std::string nodes = node.Client()("CLUSTER", "NODES").str;
    const size_t at = nodes.find(kFakeId);
    line = at == std::string::npos ? "" : nodes.substr(at, nodes.find('\n', at) - at);
    return !line.empty();
  };
  ASSERT_TRUE(WaitFor(our_line));
  // Known by our id, as a connected master at our address.
  EXPECT_EQ(line.substr(0, line.find(" 0 ")),
            kFakeId + " 127.0.0.1:1@" + std::to_string(our_bus_port) + " master -")
      << line;
  // The PONG that ends the handshake names the node; the next one, from a known sender, is
  // where redis reads the slots it claims.
  ASSERT_EQ(send(in_fd, pong.data(), pong.size(), 0), static_cast<ssize_t>(pong.size()));
  EXPECT_TRUE(WaitFor([&] { return our_line() && line.ends_with(" connected 16000-16383"); }))
      << line;
  close(in_fd);
  close(fd);
  close(listen_fd);
}

TEST(ClusterInteropTest, MalformedPacketsCloseTheLink) {
  RedisNode node;
  const std::string good = EncodePing(MessageType::kPing, FakeNodeHeader(), {});
  std::string bad_signature = good;
  bad_signature[0] = 'X';
  std::string too_short = good.substr(0, 8);
  too_short[6] = 0x01;  // totlen 256 < the header's 2256
  too_short[7] = 0x00;
  for (const std::string& bytes : {bad_signature.substr(0, 8), too_short}) {
    EXPECT_EQ(NextFrame(bytes).status, FrameStatus::kError);
    const int fd = test::ConnectTcp(node.bus_port());
    ASSERT_GE(fd, 0);
    ASSERT_EQ(send(fd, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
    EXPECT_TRUE(test::PeerCloses(fd));
    close(fd);
  }
  // redis is unharmed: a well-formed PING on a new link gets its PONG.
  const int fd = test::ConnectTcp(node.bus_port());
  ASSERT_GE(fd, 0);
  ASSERT_EQ(send(fd, good.data(), good.size(), 0), static_cast<ssize_t>(good.size()));
  std::string error;
  const std::optional<BusMessage> pong = Decode(test::ReadBusPacket(fd), &error);
  ASSERT_TRUE(pong.has_value()) << error;
  EXPECT_EQ(pong->header.sender, node.Id());
  close(fd);
}

}  // namespace
}  // namespace vessel::cluster
