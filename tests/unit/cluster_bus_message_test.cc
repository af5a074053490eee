// The cluster bus packet: the header's byte layout, every message type's body and length, round
// trips, the decoder's refusals (each check Redis makes and the bounds it leaves to luck), every
// truncation and random bytes, and the framer fed at every split.
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "host/cluster/bus_message.h"

namespace vessel::cluster {
namespace {

const std::string kA(40, 'a');
const std::string kB = "0123456789abcdef0123456789abcdef01234567";
const std::string kC(40, 'c');

uint64_t BigEndian(const std::string& s, size_t at, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = v << 8 | static_cast<uint8_t>(s[at + i]);
  return v;
}

void PutBigEndian(std::string* s, size_t at, size_t n, uint64_t v) {
  for (size_t i = 0; i < n; ++i) (*s)[at + n - 1 - i] = static_cast<char>(v >> (8 * i));
}

BusHeader SampleHeader() {
  BusHeader h;
  h.port = 7000;
  h.pport = 7001;
  h.cport = 17000;
  h.current_epoch = 0x0102030405060708;
  h.config_epoch = 42;
  h.offset = 123456789;
  h.sender = kA;
  h.slots.Set(0);
  h.slots.Set(9);
  h.slots.Set(kSlots - 1);
  h.slaveof = kB;
  h.ip = "10.0.0.7";
  h.flags = kNodeSlave;
  h.state = kClusterFail;
  h.mflags = {kMsgFlagPaused, 0, 0};
  return h;
}

Gossip SampleGossip(const std::string& name, uint16_t port) {
  return {.name = name,
          .ping_sent = 1700000000,
          .pong_received = 1700000001,
          .ip = "192.168.1.20",
          .port = port,
          .cport = static_cast<uint16_t>(port + 10000),
          .flags = kNodeMaster | kNodePFail,
          .pport = 0};
}

std::string Reason(std::string_view bytes) {
  std::string error;
  EXPECT_FALSE(Decode(bytes, &error).has_value());
  return error;
}

BusMessage MustDecode(std::string_view bytes) {
  std::string error;
  std::optional<BusMessage> m = Decode(bytes, &error);
  EXPECT_TRUE(m.has_value()) << error;
  return m.value_or(BusMessage{});
}

TEST(BusMessageTest, HeaderLayout) {
  const std::string p = EncodeFailoverAuthRequest(SampleHeader());
  ASSERT_EQ(p.size(), kBusHeaderLen);
  EXPECT_EQ(p.substr(0, 4), "RCmb");
  EXPECT_EQ(BigEndian(p, 4, 4), kBusHeaderLen);
  EXPECT_EQ(BigEndian(p, 8, 2), 1u);
  EXPECT_EQ(BigEndian(p, 10, 2), 7000u);
  EXPECT_EQ(BigEndian(p, 12, 2), 5u);
  EXPECT_EQ(BigEndian(p, 14, 2), 0u);
  EXPECT_EQ(BigEndian(p, 16, 8), 0x0102030405060708u);
  EXPECT_EQ(BigEndian(p, 24, 8), 42u);
  EXPECT_EQ(BigEndian(p, 32, 8), 123456789u);
  EXPECT_EQ(p.substr(40, 40), kA);
  EXPECT_EQ(static_cast<uint8_t>(p[80]), 0x01);
  EXPECT_EQ(static_cast<uint8_t>(p[81]), 0x02);
  EXPECT_EQ(static_cast<uint8_t>(p[80 + 2047]), 0x80);
  EXPECT_EQ(p.substr(2128, 40), kB);
  EXPECT_EQ(p.substr(2168, 9), std::string("10.0.0.7\0", 9));
  EXPECT_EQ(p.substr(2168, 46).find_first_not_of('\0', 8), std::string::npos);
  EXPECT_EQ(BigEndian(p, 2214, 2), 0u);
  EXPECT_EQ(p.substr(2216, 30), std::string(30, '\0'));
  EXPECT_EQ(BigEndian(p, 2246, 2), 7001u);
  EXPECT_EQ(BigEndian(p, 2248, 2), 17000u);
  EXPECT_EQ(BigEndian(p, 2250, 2), uint64_t{kNodeSlave});
  EXPECT_EQ(static_cast<uint8_t>(p[2252]), kClusterFail);
  EXPECT_EQ(static_cast<uint8_t>(p[2253]), kMsgFlagPaused);
}

TEST(BusMessageTest, NoSlaveofIsZeros) {
  BusHeader h = SampleHeader();
  h.slaveof.clear();
  h.ip.clear();
  const std::string p = EncodeMfStart(h);
  EXPECT_EQ(p.substr(2128, 40), std::string(40, '\0'));
  EXPECT_EQ(p.substr(2168, 46), std::string(46, '\0'));
  EXPECT_EQ(MustDecode(p).header, h);
}

TEST(BusMessageTest, PingGossipLayout) {
  const std::string p = EncodePing(MessageType::kPing, SampleHeader(),
                                   {SampleGossip(kB, 7001), SampleGossip(kC, 7002)});
  ASSERT_EQ(p.size(), kBusHeaderLen + 2 * kGossipLen);
  EXPECT_EQ(BigEndian(p, 4, 4), p.size());
  EXPECT_EQ(BigEndian(p, 12, 2), 0u);
  EXPECT_EQ(BigEndian(p, 14, 2), 2u);
  EXPECT_EQ(static_cast<uint8_t>(p[2253]) & kMsgFlagExtData, 0);
  const size_t g = kBusHeaderLen + kGossipLen;  // the second entry
  EXPECT_EQ(p.substr(g, 40), kC);
  EXPECT_EQ(BigEndian(p, g + 40, 4), 1700000000u);
  EXPECT_EQ(BigEndian(p, g + 44, 4), 1700000001u);
  EXPECT_EQ(p.substr(g + 48, 13), std::string("192.168.1.20\0", 13));
  EXPECT_EQ(BigEndian(p, g + 94, 2), 7002u);
  EXPECT_EQ(BigEndian(p, g + 96, 2), 17002u);
  EXPECT_EQ(BigEndian(p, g + 98, 2), uint64_t{kNodeMaster | kNodePFail});
  EXPECT_EQ(BigEndian(p, g + 100, 2), 0u);
  EXPECT_EQ(BigEndian(p, g + 102, 2), 0u);
}

TEST(BusMessageTest, HostnameExtensionPadding) {
  // Redis: an 8-byte extension header, then the hostname and its NUL padded to 8 bytes.
  for (const auto& [hostname, len] : std::vector<std::pair<std::string, size_t>>{
           {"a", 16}, {"seven77", 16}, {"eight888", 24}, {std::string(23, 'h'), 32}}) {
    const std::string p = EncodePing(MessageType::kPong, SampleHeader(), {SampleGossip(kB, 7001)},
                                     {{.type = kExtHostname, .data = hostname}});
    ASSERT_EQ(p.size(), kBusHeaderLen + kGossipLen + len) << hostname;
    EXPECT_EQ(static_cast<uint8_t>(p[2253]), kMsgFlagPaused | kMsgFlagExtData);
    EXPECT_EQ(BigEndian(p, 2214, 2), 1u);
    const size_t e = kBusHeaderLen + kGossipLen;
    EXPECT_EQ(BigEndian(p, e, 4), len);
    EXPECT_EQ(BigEndian(p, e + 4, 2), uint64_t{kExtHostname});
    EXPECT_EQ(BigEndian(p, e + 6, 2), 0u);
    EXPECT_EQ(p.substr(e + 8), hostname + std::string(len - 8 - hostname.size(), '\0'));
    const BusMessage m = MustDecode(p);
    ASSERT_EQ(m.extensions.size(), 1u);
    EXPECT_EQ(m.extensions[0].data, hostname);
  }
}

TEST(BusMessageTest, BodyLengthsAndLayouts) {
  const BusHeader h = SampleHeader();
  const std::string fail = EncodeFail(h, kC);
  EXPECT_EQ(fail.size(), kBusHeaderLen + 40);
  EXPECT_EQ(fail.substr(kBusHeaderLen), kC);

  const std::string pub = EncodePublish(h, "news", "hello!");
  ASSERT_EQ(pub.size(), kBusHeaderLen + 8 + 4 + 6);
  EXPECT_EQ(BigEndian(pub, 12, 2), 4u);
  EXPECT_EQ(BigEndian(pub, kBusHeaderLen, 4), 4u);
  EXPECT_EQ(BigEndian(pub, kBusHeaderLen + 4, 4), 6u);
  EXPECT_EQ(pub.substr(kBusHeaderLen + 8), "newshello!");
  EXPECT_EQ(BigEndian(EncodePublish(h, "c", "m", true), 12, 2), 10u);

  SlotBitmap slots;
  slots.SetRange(8, 15);
  const std::string upd = EncodeUpdate(h, 0xA1B2, kC, slots);
  ASSERT_EQ(upd.size(), kBusHeaderLen + 8 + 40 + 2048);
  EXPECT_EQ(BigEndian(upd, 12, 2), 7u);
  EXPECT_EQ(BigEndian(upd, kBusHeaderLen, 8), 0xA1B2u);
  EXPECT_EQ(upd.substr(kBusHeaderLen + 8, 40), kC);
  EXPECT_EQ(static_cast<uint8_t>(upd[kBusHeaderLen + 48 + 1]), 0xFF);

  const std::string mod = EncodeModule(h, 0x1122334455667788, 7, "xyz");
  ASSERT_EQ(mod.size(), kBusHeaderLen + 13 + 3);
  EXPECT_EQ(BigEndian(mod, 12, 2), 9u);
  EXPECT_EQ(static_cast<uint8_t>(mod[kBusHeaderLen]), 0x88);  // the sender's (little) endianness
  EXPECT_EQ(BigEndian(mod, kBusHeaderLen + 8, 4), 3u);
  EXPECT_EQ(static_cast<uint8_t>(mod[kBusHeaderLen + 12]), 7);
  EXPECT_EQ(mod.substr(kBusHeaderLen + 13), "xyz");

  EXPECT_EQ(EncodeFailoverAuthAck(h).size(), kBusHeaderLen);
  EXPECT_EQ(BigEndian(EncodeFailoverAuthAck(h), 12, 2), 6u);
  EXPECT_EQ(BigEndian(EncodeMfStart(h), 12, 2), 8u);
  EXPECT_EQ(BigEndian(EncodePing(MessageType::kMeet, h, {}), 12, 2), 2u);
}

std::vector<BusMessage> SampleMessages() {
  std::vector<BusMessage> out;
  const BusHeader h = SampleHeader();
  for (MessageType t : {MessageType::kPing, MessageType::kPong, MessageType::kMeet}) {
    BusMessage m{.type = static_cast<uint16_t>(t), .header = h};
    m.gossip = {SampleGossip(kB, 7001), SampleGossip(kC, 7002)};
    m.extensions = {{.type = kExtHostname, .data = "node-1.example.com"},
                    {.type = 9, .data = std::string("\x01\x02\x03\0\0\0\0\0", 8)}};
    out.push_back(m);
    out.push_back({.type = static_cast<uint16_t>(t), .header = h});
  }
  BusMessage fail{.type = static_cast<uint16_t>(MessageType::kFail), .header = h};
  fail.node = kC;
  out.push_back(fail);
  for (MessageType t : {MessageType::kPublish, MessageType::kPublishShard}) {
    BusMessage pub{.type = static_cast<uint16_t>(t), .header = h};
    pub.channel = std::string("ch\0an", 5);
    pub.payload = std::string(5000, 'm');
    out.push_back(pub);
    out.push_back({.type = static_cast<uint16_t>(t), .header = h});  // empty channel and message
  }
  for (MessageType t :
       {MessageType::kFailoverAuthRequest, MessageType::kFailoverAuthAck, MessageType::kMfStart}) {
    out.push_back({.type = static_cast<uint16_t>(t), .header = h});
  }
  BusMessage upd{.type = static_cast<uint16_t>(MessageType::kUpdate), .header = h};
  upd.node = kB;
  upd.update_config_epoch = 77;
  upd.update_slots.SetRange(1000, 2000);
  out.push_back(upd);
  BusMessage mod{.type = static_cast<uint16_t>(MessageType::kModule), .header = h};
  mod.module_id = 0xDEADBEEFCAFEF00D;
  mod.module_type = 255;
  mod.payload = std::string("\0\1\2", 3);
  out.push_back(mod);
  BusMessage later{.type = 200, .header = h};
  later.raw_body = "a body of a type this version does not know";
  out.push_back(later);
  return out;
}

TEST(BusMessageTest, RoundTrips) {
  for (const BusMessage& m : SampleMessages()) {
    SCOPED_TRACE(MessageTypeName(m.type));
    const std::string p = Encode(m);
    BusMessage back = MustDecode(p);
    // The decoder reports the flag the encoder set for the extensions.
    BusMessage expected = m;
    if (!m.extensions.empty()) expected.header.mflags[0] |= kMsgFlagExtData;
    EXPECT_EQ(back, expected);
    EXPECT_EQ(Encode(back), p);
  }
}

TEST(BusMessageTest, EveryTruncationAndExtensionIsRefused) {
  for (const BusMessage& m : SampleMessages()) {
    const std::string p = Encode(m);
    for (size_t n = 0; n < p.size(); ++n) {
      std::string error;
      ASSERT_FALSE(Decode(std::string_view(p).substr(0, n), &error).has_value())
          << MessageTypeName(m.type) << " cut at " << n;
      EXPECT_FALSE(error.empty());
    }
    EXPECT_NE(Reason(p + "x"), "");
    // The same prefix with its totlen corrected, as a lying sender would send it (a type this
    // version does not know has no length of its own to check).
    if (m.type >= kMessageTypeCount) continue;
    for (size_t n = kBusHeaderLen; n < p.size(); n += 7) {
      std::string cut = p.substr(0, n);
      PutBigEndian(&cut, 4, 4, n);
      std::string error;
      EXPECT_FALSE(Decode(cut, &error).has_value()) << MessageTypeName(m.type) << " cut at " << n;
    }
  }
}

TEST(BusMessageTest, RefusesWhatRedisRefuses) {
  const BusHeader h = SampleHeader();
  const std::string ping = EncodePing(MessageType::kPing, h, {SampleGossip(kB, 7001)});
  EXPECT_EQ(Reason("RCm"), "packet shorter than 8 bytes");
  std::string bad = ping;
  bad[3] = 'B';
  EXPECT_EQ(Reason(bad), "bad signature");
  bad = ping;
  PutBigEndian(&bad, 4, 4, 100);
  EXPECT_EQ(Reason(bad.substr(0, 100)), "totlen 100 is shorter than the header");
  bad = ping;
  PutBigEndian(&bad, 8, 2, 2);
  EXPECT_EQ(Reason(bad), "protocol version 2");
  bad = ping;
  PutBigEndian(&bad, 14, 2, 2);  // two gossip entries announced, one present
  EXPECT_EQ(Reason(bad), "gossip count 2 exceeds the packet");
  bad = ping;
  PutBigEndian(&bad, 14, 2, 0);  // none announced, one present
  EXPECT_EQ(Reason(bad), "totlen 2360 but ping measures 2256");

  // FAIL, UPDATE, the empty bodies: fixed lengths.
  bad = EncodeFail(h, kC) + "pad";
  PutBigEndian(&bad, 4, 4, bad.size());
  EXPECT_EQ(Reason(bad), "totlen 2299 but fail measures 2296");
  bad = EncodeFailoverAuthAck(h) + "x";
  PutBigEndian(&bad, 4, 4, bad.size());
  EXPECT_EQ(Reason(bad), "totlen 2257 but auth-ack measures 2256");
  bad = EncodeUpdate(h, 1, kC, {});
  bad.pop_back();
  PutBigEndian(&bad, 4, 4, bad.size());
  EXPECT_EQ(Reason(bad), "totlen 4351 but update measures 4352");

  // PUBLISH: the lengths must add up, without 32-bit wrap-around.
  bad = EncodePublish(h, "ch", "msg");
  PutBigEndian(&bad, kBusHeaderLen, 4, 3);
  EXPECT_EQ(Reason(bad), "totlen 2269 but publish measures 2270");
  PutBigEndian(&bad, kBusHeaderLen, 4, 0xFFFFFFFF);
  PutBigEndian(&bad, kBusHeaderLen + 4, 4, 6);  // 0xFFFFFFFF + 6 wraps to 5 in 32 bits
  EXPECT_EQ(Reason(bad), "totlen 2269 but publish measures 4294969565");
  bad = EncodeFailoverAuthAck(h);
  PutBigEndian(&bad, 12, 2, 4);  // a PUBLISH too short for its two lengths
  EXPECT_EQ(Reason(bad), "totlen 2256 but publish measures 2264");

  // MODULE: its length must match.
  bad = EncodeModule(h, 1, 2, "abcd");
  PutBigEndian(&bad, kBusHeaderLen + 8, 4, 5);
  EXPECT_EQ(Reason(bad), "totlen 2273 but module measures 2274");
}

TEST(BusMessageTest, RefusesMalformedExtensions) {
  const BusHeader h = SampleHeader();
  const std::string ok =
      EncodePing(MessageType::kPing, h, {}, {{.type = kExtHostname, .data = "host"}});
  const size_t e = kBusHeaderLen;
  ASSERT_EQ(ok.size(), e + 16);
  std::string bad = ok;
  PutBigEndian(&bad, e, 4, 12);
  EXPECT_EQ(Reason(bad), "extension 0 length 12 is not a padded length");
  PutBigEndian(&bad, e, 4, 0);  // Redis would loop on the same extension; it must be refused
  EXPECT_EQ(Reason(bad), "extension 0 length 0 is not a padded length");
  PutBigEndian(&bad, e, 4, 24);
  EXPECT_EQ(Reason(bad), "extension 0 exceeds the packet");
  PutBigEndian(&bad, e, 4, 0x10010);  // Redis truncates the length to 16 bits here
  EXPECT_EQ(Reason(bad), "extension 0 exceeds the packet");
  bad = ok;
  PutBigEndian(&bad, 2214, 2, 2);  // a second extension whose header is not there
  EXPECT_EQ(Reason(bad), "extension 1 header exceeds the packet");
  bad = ok;
  bad[2253] = 0;  // extensions without the flag
  EXPECT_EQ(Reason(bad), "extensions without the extension-data flag");
  bad = ok;
  bad.replace(e + 8, 8, "12345678");  // the hostname fills its room: no NUL
  EXPECT_EQ(Reason(bad), "hostname extension without its terminating NUL");
  bad = ok;
  PutBigEndian(&bad, 2214, 2, 0);  // an extension present but not counted
  EXPECT_EQ(Reason(bad), "totlen 2272 but ping measures 2256");
}

TEST(BusMessageTest, RefusesMalformedNodeNames) {
  BusHeader h = SampleHeader();
  h.sender = std::string(39, 'a') + "A";
  EXPECT_EQ(Reason(EncodeMfStart(h)), "malformed sender node name");
  h.sender.clear();
  EXPECT_EQ(Reason(EncodeMfStart(h)), "malformed sender node name");
  h = SampleHeader();
  h.slaveof = std::string(39, 'b');  // one NUL at the end
  EXPECT_EQ(Reason(EncodeMfStart(h)), "malformed slaveof node name");
  h = SampleHeader();
  EXPECT_EQ(Reason(EncodePing(MessageType::kPing, h, {SampleGossip("x", 1)})),
            "gossip entry 0 has a malformed node name");
  EXPECT_EQ(Reason(EncodeFail(h, "")), "malformed failing node name");
  EXPECT_EQ(Reason(EncodeUpdate(h, 1, std::string(40, '-'), {})),
            "malformed slots owner node name");
}

TEST(BusMessageTest, UnterminatedIpIsCutAsRedisCutsIt) {
  std::string p = EncodeMfStart(SampleHeader());
  p.replace(2168, 46, std::string(46, '9'));
  EXPECT_EQ(MustDecode(p).header.ip, std::string(45, '9'));
}

TEST(BusMessageTest, RandomBytesAreRefusedSafely) {
  std::mt19937_64 rng(12345);
  const std::vector<BusMessage> samples = SampleMessages();
  int decoded = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string p;
    if (i % 2 == 0) {
      // Random bytes behind a plausible header start.
      p.resize(rng() % 6000);
      for (char& c : p) c = static_cast<char>(rng());
      if (p.size() >= 10) {
        p.replace(0, 4, "RCmb");
        PutBigEndian(&p, 4, 4, p.size());
        PutBigEndian(&p, 8, 2, 1);
      }
    } else {
      // A valid packet with a few bytes changed.
      p = Encode(samples[rng() % samples.size()]);
      for (int k = 0; k < 4; ++k) p[rng() % p.size()] = static_cast<char>(rng());
    }
    std::string error;
    std::optional<BusMessage> m = Decode(p, &error);
    if (m) {
      ++decoded;
      // A hostname cut short by a NUL re-encodes with less padding; otherwise the same size.
      const std::string again = Encode(*m);
      EXPECT_LE(again.size(), p.size());
      EXPECT_EQ(Decode(again, &error), m);
    } else {
      EXPECT_FALSE(error.empty());
    }
  }
  EXPECT_GT(decoded, 0);
}

TEST(FramerTest, NeedsEightBytesThenTotlen) {
  const std::string p = EncodePublish(SampleHeader(), "c", "m");
  for (size_t n = 0; n < 8; ++n) {
    const Frame f = NextFrame(std::string_view(p).substr(0, n));
    EXPECT_EQ(f.status, FrameStatus::kNeedMore);
    EXPECT_EQ(f.length, 8u);
  }
  for (size_t n = 8; n < p.size(); ++n) {
    const Frame f = NextFrame(std::string_view(p).substr(0, n));
    EXPECT_EQ(f.status, FrameStatus::kNeedMore);
    EXPECT_EQ(f.length, p.size());
  }
  const Frame f = NextFrame(p + p);
  EXPECT_EQ(f.status, FrameStatus::kReady);
  EXPECT_EQ(f.length, p.size());
}

TEST(FramerTest, RefusesBadSignatureAndLengths) {
  EXPECT_EQ(NextFrame("X").status, FrameStatus::kError);
  EXPECT_EQ(NextFrame("RCmX").status, FrameStatus::kError);
  EXPECT_EQ(NextFrame("RCm").status, FrameStatus::kNeedMore);
  std::string p = EncodeMfStart(SampleHeader());
  PutBigEndian(&p, 4, 4, kBusHeaderLen - 1);
  Frame f = NextFrame(p.substr(0, 8));
  EXPECT_EQ(f.status, FrameStatus::kError);
  EXPECT_EQ(f.error, "bad packet length 2255");
  PutBigEndian(&p, 4, 4, 0xFFFFFFFF);
  EXPECT_EQ(NextFrame(p.substr(0, 8)).status, FrameStatus::kError);
  PutBigEndian(&p, 4, 4, 5000);
  EXPECT_EQ(NextFrame(p.substr(0, 8), 4999).status, FrameStatus::kError);
  EXPECT_EQ(NextFrame(p.substr(0, 8), 5000).status, FrameStatus::kNeedMore);
}

TEST(FramerTest, StreamCutAtEveryOffset) {
  std::string stream;
  std::vector<std::string> packets;
  for (const BusMessage& m : SampleMessages()) {
    packets.push_back(Encode(m));
    stream += packets.back();
  }
  for (size_t chunk : {1, 7, 8, 100, 2256, 4097}) {
    std::string buffered;
    std::vector<std::string> got;
    for (size_t at = 0; at < stream.size(); at += chunk) {
      buffered.append(stream, at, chunk);
      while (true) {
        const Frame f = NextFrame(buffered);
        ASSERT_NE(f.status, FrameStatus::kError) << f.error;
        if (f.status == FrameStatus::kNeedMore) {
          EXPECT_GT(f.length, buffered.size());
          break;
        }
        got.push_back(buffered.substr(0, f.length));
        buffered.erase(0, f.length);
      }
    }
    EXPECT_EQ(got, packets) << "chunk " << chunk;
    EXPECT_TRUE(buffered.empty());
  }
}

}  // namespace
}  // namespace vessel::cluster
