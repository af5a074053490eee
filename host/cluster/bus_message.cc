// The Redis Cluster bus packet: encoders, the validating decoder and the framer (see
// bus_message.h).
#include "host/cluster/bus_message.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace vessel::cluster {
namespace {

// Offsets in the header (cluster.h's static asserts give the same numbers).
constexpr size_t kOffTotlen = 4;
constexpr size_t kOffVersion = 8;
constexpr size_t kOffPort = 10;
constexpr size_t kOffType = 12;
constexpr size_t kOffCount = 14;
constexpr size_t kOffCurrentEpoch = 16;
constexpr size_t kOffConfigEpoch = 24;
constexpr size_t kOffOffset = 32;
constexpr size_t kOffSender = 40;
constexpr size_t kOffSlots = 80;
constexpr size_t kOffSlaveof = 2128;
constexpr size_t kOffIp = 2168;
constexpr size_t kOffExtensions = 2214;
constexpr size_t kOffPPort = 2246;
constexpr size_t kOffCPort = 2248;
constexpr size_t kOffFlags = 2250;
constexpr size_t kOffState = 2252;
constexpr size_t kOffMFlags = 2253;
static_assert(kOffMFlags + 3 == kBusHeaderLen);

// Body sizes: the fixed part of each type (PUBLISH and MODULE add their data).
constexpr size_t kFailBodyLen = kNodeNameLen;
constexpr size_t kPublishFixedLen = 8;  // channel_len, message_len
constexpr size_t kUpdateBodyLen = 8 + kNodeNameLen + kSlots / 8;
constexpr size_t kModuleFixedLen = 13;  // module_id, len, type
constexpr char kSignature[4] = {'R', 'C', 'm', 'b'};

bool IsPingType(uint16_t type) {
  return type == static_cast<uint16_t>(MessageType::kPing) ||
         type == static_cast<uint16_t>(MessageType::kPong) ||
         type == static_cast<uint16_t>(MessageType::kMeet);
}

size_t Padded8(size_t n) { return (n + 7) / 8 * 8; }

// Writes into a buffer sized in advance; every position is inside it by construction.
class Writer {
 public:
  explicit Writer(size_t size) : out_(size, '\0') {}
  void U8(size_t at, uint8_t v) { out_[at] = static_cast<char>(v); }
  void U16(size_t at, uint16_t v) {
    U8(at, static_cast<uint8_t>(v >> 8));
    U8(at + 1, static_cast<uint8_t>(v));
  }
  void U32(size_t at, uint32_t v) {
    U16(at, static_cast<uint16_t>(v >> 16));
    U16(at + 2, static_cast<uint16_t>(v));
  }
  void U64(size_t at, uint64_t v) {
    U32(at, static_cast<uint32_t>(v >> 32));
    U32(at + 4, static_cast<uint32_t>(v));
  }
  void U64Le(size_t at, uint64_t v) {
    for (int i = 0; i < 8; ++i) U8(at + i, static_cast<uint8_t>(v >> (8 * i)));
  }
  // A fixed-size text field, NUL-padded; at most `field - keep_nul` bytes of `s` go in.
  void Text(size_t at, std::string_view s, size_t field, size_t keep_nul) {
    const size_t n = std::min(s.size(), field - keep_nul);
    if (n > 0) std::memcpy(out_.data() + at, s.data(), n);
  }
  void Bytes(size_t at, std::string_view s) {
    if (!s.empty()) std::memcpy(out_.data() + at, s.data(), s.size());
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

// Reads from a packet whose size the caller checked covers every position asked for.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  uint8_t U8(size_t at) const { return static_cast<uint8_t>(in_[at]); }
  uint16_t U16(size_t at) const { return static_cast<uint16_t>(U8(at) << 8 | U8(at + 1)); }
  uint32_t U32(size_t at) const { return uint32_t{U16(at)} << 16 | U16(at + 2); }
  uint64_t U64(size_t at) const { return uint64_t{U32(at)} << 32 | U32(at + 4); }
  uint64_t U64Le(size_t at) const {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = v << 8 | U8(at + i);
    return v;
  }
  // A NUL-terminated text in a fixed field; Redis cuts an unterminated one at field - 1 bytes.
  std::string Text(size_t at, size_t field) const {
    std::string_view f = in_.substr(at, field - 1);
    return std::string(f.substr(0, f.find('\0')));
  }
  std::string_view Bytes(size_t at, size_t n) const { return in_.substr(at, n); }

 private:
  std::string_view in_;
};

// A node name field: 40 NUL bytes read as "" (no node), anything else as its 40 bytes.
std::string NameField(const Reader& r, size_t at) {
  std::string_view f = r.Bytes(at, kNodeNameLen);
  if (f.find_first_not_of('\0') == std::string_view::npos) return "";
  return std::string(f);
}

size_t ExtensionLen(const PingExtension& ext) {
  const size_t data = ext.type == kExtHostname ? ext.data.size() + 1 : ext.data.size();
  return kExtensionHeaderLen + Padded8(data);
}

void WriteHeader(Writer& w, uint16_t type, size_t totlen, uint16_t count, uint16_t extensions,
                 const BusHeader& h, uint8_t extra_mflags) {
  w.Bytes(0, std::string_view(kSignature, 4));
  w.U32(kOffTotlen, static_cast<uint32_t>(totlen));
  w.U16(kOffVersion, kBusProtocolVersion);
  w.U16(kOffPort, h.port);
  w.U16(kOffType, type);
  w.U16(kOffCount, count);
  w.U64(kOffCurrentEpoch, h.current_epoch);
  w.U64(kOffConfigEpoch, h.config_epoch);
  w.U64(kOffOffset, h.offset);
  w.Text(kOffSender, h.sender, kNodeNameLen, 0);
  w.Bytes(kOffSlots, std::string_view(reinterpret_cast<const char*>(h.slots.bytes().data()),
                                      h.slots.bytes().size()));
  w.Text(kOffSlaveof, h.slaveof, kNodeNameLen, 0);
  w.Text(kOffIp, h.ip, kIpFieldLen, 1);
  w.U16(kOffExtensions, extensions);
  w.U16(kOffPPort, h.pport);
  w.U16(kOffCPort, h.cport);
  w.U16(kOffFlags, h.flags);
  w.U8(kOffState, h.state);
  w.U8(kOffMFlags, h.mflags[0] | extra_mflags);
  w.U8(kOffMFlags + 1, h.mflags[1]);
  w.U8(kOffMFlags + 2, h.mflags[2]);
}

BusHeader ReadHeader(const Reader& r) {
  BusHeader h;
  h.port = r.U16(kOffPort);
  h.current_epoch = r.U64(kOffCurrentEpoch);
  h.config_epoch = r.U64(kOffConfigEpoch);
  h.offset = r.U64(kOffOffset);
  h.sender = NameField(r, kOffSender);
  std::memcpy(h.slots.bytes().data(), r.Bytes(kOffSlots, kSlots / 8).data(), kSlots / 8);
  h.slaveof = NameField(r, kOffSlaveof);
  h.ip = r.Text(kOffIp, kIpFieldLen);
  h.pport = r.U16(kOffPPort);
  h.cport = r.U16(kOffCPort);
  h.flags = r.U16(kOffFlags);
  h.state = r.U8(kOffState);
  h.mflags = {r.U8(kOffMFlags), r.U8(kOffMFlags + 1), r.U8(kOffMFlags + 2)};
  return h;
}

std::optional<BusMessage> Fail(std::string* error, std::string why) {
  *error = std::move(why);
  return std::nullopt;
}

// The gossip entries and extensions of a PING, PONG or MEET, after the header was read.
bool DecodePingBody(const Reader& r, size_t totlen, BusMessage* m, std::string* error) {
  const uint16_t count = r.U16(kOffCount);
  const uint16_t extensions = r.U16(kOffExtensions);
  size_t expected = kBusHeaderLen + size_t{count} * kGossipLen;
  if (expected > totlen) {
    *error = "gossip count " + std::to_string(count) + " exceeds the packet";
    return false;
  }
  m->gossip.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const size_t at = kBusHeaderLen + i * kGossipLen;
    Gossip g;
    g.name = NameField(r, at);
    if (!IsValidNodeName(g.name)) {
      *error = "gossip entry " + std::to_string(i) + " has a malformed node name";
      return false;
    }
    g.ping_sent = r.U32(at + 40);
    g.pong_received = r.U32(at + 44);
    g.ip = r.Text(at + 48, kIpFieldLen);
    g.port = r.U16(at + 94);
    g.cport = r.U16(at + 96);
    g.flags = r.U16(at + 98);
    g.pport = r.U16(at + 100);
    m->gossip.push_back(std::move(g));
  }
  const bool has_ext = m->header.mflags[0] & kMsgFlagExtData;
  // Without the flag Redis does not measure the extensions, yet processes `extensions` of them:
  // a count without the flag would have it read past the packet.
  if (!has_ext && extensions != 0) {
    *error = "extensions without the extension-data flag";
    return false;
  }
  for (size_t i = 0; has_ext && i < extensions; ++i) {
    if (totlen - expected < kExtensionHeaderLen) {
      *error = "extension " + std::to_string(i) + " header exceeds the packet";
      return false;
    }
    const uint32_t len = r.U32(expected);
    const uint16_t type = r.U16(expected + 4);
    if (len % 8 != 0 || len < kExtensionHeaderLen) {
      *error = "extension " + std::to_string(i) + " length " + std::to_string(len) +
               " is not a padded length";
      return false;
    }
    if (totlen - expected < len) {
      *error = "extension " + std::to_string(i) + " exceeds the packet";
      return false;
    }
    std::string_view data = r.Bytes(expected + kExtensionHeaderLen, len - kExtensionHeaderLen);
    PingExtension ext{.type = type};
    if (type == kExtHostname) {
      const size_t nul = data.find('\0');
      if (nul == std::string_view::npos) {
        *error = "hostname extension without its terminating NUL";
        return false;
      }
      ext.data = std::string(data.substr(0, nul));
    } else {
      ext.data = std::string(data);
    }
    m->extensions.push_back(std::move(ext));
    expected += len;
  }
  if (expected != totlen) {
    *error = "totlen " + std::to_string(totlen) + " but " + MessageTypeName(m->type) +
             " measures " + std::to_string(expected);
    return false;
  }
  return true;
}

}  // namespace

const char* MessageTypeName(uint16_t type) {
  static constexpr const char* kNames[kMessageTypeCount] = {
      "ping",     "pong",   "meet",    "fail",   "publish",     "auth-req",
      "auth-ack", "update", "mfstart", "module", "publishshard"};
  return type < kMessageTypeCount ? kNames[type] : "unknown";
}

bool IsValidNodeName(std::string_view name) {
  if (name.size() != kNodeNameLen) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

std::string Encode(const BusMessage& m) {
  const uint16_t type = m.type;
  size_t totlen = kBusHeaderLen;
  uint16_t count = 0;
  uint16_t extensions = 0;
  uint8_t extra_mflags = 0;
  if (IsPingType(type)) {
    count = static_cast<uint16_t>(m.gossip.size());
    extensions = static_cast<uint16_t>(m.extensions.size());
    totlen += m.gossip.size() * kGossipLen;
    for (const PingExtension& ext : m.extensions) totlen += ExtensionLen(ext);
    if (!m.extensions.empty()) extra_mflags = kMsgFlagExtData;
  } else if (type == static_cast<uint16_t>(MessageType::kFail)) {
    totlen += kFailBodyLen;
  } else if (type == static_cast<uint16_t>(MessageType::kPublish) ||
             type == static_cast<uint16_t>(MessageType::kPublishShard)) {
    totlen += kPublishFixedLen + m.channel.size() + m.payload.size();
  } else if (type == static_cast<uint16_t>(MessageType::kUpdate)) {
    totlen += kUpdateBodyLen;
  } else if (type == static_cast<uint16_t>(MessageType::kModule)) {
    totlen += kModuleFixedLen + m.payload.size();
  } else if (type >= kMessageTypeCount) {
    totlen += m.raw_body.size();
  }

  Writer w(totlen);
  WriteHeader(w, type, totlen, count, extensions, m.header, extra_mflags);
  size_t at = kBusHeaderLen;
  if (IsPingType(type)) {
    for (const Gossip& g : m.gossip) {
      w.Text(at, g.name, kNodeNameLen, 0);
      w.U32(at + 40, g.ping_sent);
      w.U32(at + 44, g.pong_received);
      w.Text(at + 48, g.ip, kIpFieldLen, 1);
      w.U16(at + 94, g.port);
      w.U16(at + 96, g.cport);
      w.U16(at + 98, g.flags);
      w.U16(at + 100, g.pport);
      at += kGossipLen;
    }
    for (const PingExtension& ext : m.extensions) {
      const size_t len = ExtensionLen(ext);
      w.U32(at, static_cast<uint32_t>(len));
      w.U16(at + 4, ext.type);
      // The hostname's NUL and the padding are the Writer's zero fill.
      w.Bytes(at + kExtensionHeaderLen, ext.data);
      at += len;
    }
  } else if (type == static_cast<uint16_t>(MessageType::kFail)) {
    w.Text(at, m.node, kNodeNameLen, 0);
  } else if (type == static_cast<uint16_t>(MessageType::kPublish) ||
             type == static_cast<uint16_t>(MessageType::kPublishShard)) {
    w.U32(at, static_cast<uint32_t>(m.channel.size()));
    w.U32(at + 4, static_cast<uint32_t>(m.payload.size()));
    w.Bytes(at + kPublishFixedLen, m.channel);
    w.Bytes(at + kPublishFixedLen + m.channel.size(), m.payload);
  } else if (type == static_cast<uint16_t>(MessageType::kUpdate)) {
    w.U64(at, m.update_config_epoch);
    w.Text(at + 8, m.node, kNodeNameLen, 0);
    w.Bytes(at + 8 + kNodeNameLen,
            std::string_view(reinterpret_cast<const char*>(m.update_slots.bytes().data()),
                             m.update_slots.bytes().size()));
  } else if (type == static_cast<uint16_t>(MessageType::kModule)) {
    w.U64Le(at, m.module_id);
    w.U32(at + 8, static_cast<uint32_t>(m.payload.size()));
    w.U8(at + 12, m.module_type);
    w.Bytes(at + kModuleFixedLen, m.payload);
  } else if (type >= kMessageTypeCount) {
    w.Bytes(at, m.raw_body);
  }
  return w.Take();
}

std::string EncodePing(MessageType type, const BusHeader& header, const std::vector<Gossip>& gossip,
                       const std::vector<PingExtension>& extensions) {
  BusMessage m{.type = static_cast<uint16_t>(type), .header = header};
  m.gossip = gossip;
  m.extensions = extensions;
  return Encode(m);
}

std::string EncodeFail(const BusHeader& header, std::string_view failing_node) {
  BusMessage m{.type = static_cast<uint16_t>(MessageType::kFail), .header = header};
  m.node = std::string(failing_node);
  return Encode(m);
}

std::string EncodePublish(const BusHeader& header, std::string_view channel,
                          std::string_view message, bool shard) {
  BusMessage m{
      .type = static_cast<uint16_t>(shard ? MessageType::kPublishShard : MessageType::kPublish),
      .header = header};
  m.channel = std::string(channel);
  m.payload = std::string(message);
  return Encode(m);
}

std::string EncodeFailoverAuthRequest(const BusHeader& header) {
  return Encode(
      {.type = static_cast<uint16_t>(MessageType::kFailoverAuthRequest), .header = header});
}

std::string EncodeFailoverAuthAck(const BusHeader& header) {
  return Encode({.type = static_cast<uint16_t>(MessageType::kFailoverAuthAck), .header = header});
}

std::string EncodeMfStart(const BusHeader& header) {
  return Encode({.type = static_cast<uint16_t>(MessageType::kMfStart), .header = header});
}

std::string EncodeUpdate(const BusHeader& header, uint64_t config_epoch, std::string_view owner,
                         const SlotBitmap& slots) {
  BusMessage m{.type = static_cast<uint16_t>(MessageType::kUpdate), .header = header};
  m.update_config_epoch = config_epoch;
  m.node = std::string(owner);
  m.update_slots = slots;
  return Encode(m);
}

std::string EncodeModule(const BusHeader& header, uint64_t module_id, uint8_t module_type,
                         std::string_view payload) {
  BusMessage m{.type = static_cast<uint16_t>(MessageType::kModule), .header = header};
  m.module_id = module_id;
  m.module_type = module_type;
  m.payload = std::string(payload);
  return Encode(m);
}

std::optional<BusMessage> Decode(std::string_view bytes, std::string* error) {
  if (bytes.size() < 8) return Fail(error, "packet shorter than 8 bytes");
  if (std::memcmp(bytes.data(), kSignature, 4) != 0) return Fail(error, "bad signature");
  const Reader r(bytes);
  const uint32_t totlen = r.U32(kOffTotlen);
  if (totlen < kBusHeaderLen) {
    return Fail(error, "totlen " + std::to_string(totlen) + " is shorter than the header");
  }
  if (totlen != bytes.size()) {
    return Fail(error, "totlen " + std::to_string(totlen) + " but the packet has " +
                           std::to_string(bytes.size()) + " bytes");
  }
  if (r.U16(kOffVersion) != kBusProtocolVersion) {
    return Fail(error, "protocol version " + std::to_string(r.U16(kOffVersion)));
  }
  BusMessage m;
  m.type = r.U16(kOffType);
  m.header = ReadHeader(r);
  if (!IsValidNodeName(m.header.sender)) return Fail(error, "malformed sender node name");
  if (!m.header.slaveof.empty() && !IsValidNodeName(m.header.slaveof)) {
    return Fail(error, "malformed slaveof node name");
  }

  // The length each type must have, computed in 64 bits: a sender's 32-bit lengths cannot wrap.
  const size_t body = totlen - kBusHeaderLen;
  const char* name = MessageTypeName(m.type);
  auto wrong_length = [&](uint64_t expected) {
    return Fail(error, "totlen " + std::to_string(totlen) + " but " + name + " measures " +
                           std::to_string(expected));
  };
  const size_t at = kBusHeaderLen;
  switch (m.type) {
    case static_cast<uint16_t>(MessageType::kPing):
    case static_cast<uint16_t>(MessageType::kPong):
    case static_cast<uint16_t>(MessageType::kMeet):
      if (!DecodePingBody(r, totlen, &m, error)) return std::nullopt;
      break;
    case static_cast<uint16_t>(MessageType::kFail):
      if (body != kFailBodyLen) return wrong_length(kBusHeaderLen + kFailBodyLen);
      m.node = NameField(r, at);
      if (!IsValidNodeName(m.node)) return Fail(error, "malformed failing node name");
      break;
    case static_cast<uint16_t>(MessageType::kPublish):
    case static_cast<uint16_t>(MessageType::kPublishShard): {
      if (body < kPublishFixedLen) return wrong_length(kBusHeaderLen + kPublishFixedLen);
      const uint64_t channel_len = r.U32(at);
      const uint64_t message_len = r.U32(at + 4);
      if (body != kPublishFixedLen + channel_len + message_len) {
        return wrong_length(kBusHeaderLen + kPublishFixedLen + channel_len + message_len);
      }
      m.channel = std::string(r.Bytes(at + kPublishFixedLen, channel_len));
      m.payload = std::string(r.Bytes(at + kPublishFixedLen + channel_len, message_len));
      break;
    }
    case static_cast<uint16_t>(MessageType::kFailoverAuthRequest):
    case static_cast<uint16_t>(MessageType::kFailoverAuthAck):
    case static_cast<uint16_t>(MessageType::kMfStart):
      if (body != 0) return wrong_length(kBusHeaderLen);
      break;
    case static_cast<uint16_t>(MessageType::kUpdate):
      if (body != kUpdateBodyLen) return wrong_length(kBusHeaderLen + kUpdateBodyLen);
      m.update_config_epoch = r.U64(at);
      m.node = NameField(r, at + 8);
      if (!IsValidNodeName(m.node)) return Fail(error, "malformed slots owner node name");
      std::memcpy(m.update_slots.bytes().data(), r.Bytes(at + 8 + kNodeNameLen, kSlots / 8).data(),
                  kSlots / 8);
      break;
    case static_cast<uint16_t>(MessageType::kModule): {
      if (body < kModuleFixedLen) return wrong_length(kBusHeaderLen + kModuleFixedLen);
      const uint64_t len = r.U32(at + 8);
      if (body != kModuleFixedLen + len) return wrong_length(kBusHeaderLen + kModuleFixedLen + len);
      m.module_id = r.U64Le(at);
      m.module_type = r.U8(at + 12);
      m.payload = std::string(r.Bytes(at + kModuleFixedLen, len));
      break;
    }
    default:
      // A later version's type: Redis takes its length on trust and ignores it; so may the caller.
      m.raw_body = std::string(r.Bytes(at, body));
      break;
  }
  return m;
}

Frame NextFrame(std::string_view buffered, uint64_t max_len) {
  Frame f;
  // A wrong signature is refused as soon as its bytes are in, not only once 8 have arrived.
  const size_t sig = std::min<size_t>(buffered.size(), 4);
  if (sig > 0 && std::memcmp(buffered.data(), kSignature, sig) != 0) {
    f.status = FrameStatus::kError;
    f.error = "bad signature";
    return f;
  }
  if (buffered.size() < 8) {
    f.length = 8;
    return f;
  }
  const uint32_t totlen = Reader(buffered).U32(kOffTotlen);
  if (totlen < kBusHeaderLen || totlen > max_len) {
    f.status = FrameStatus::kError;
    f.error = "bad packet length " + std::to_string(totlen);
    return f;
  }
  f.length = totlen;
  if (buffered.size() >= totlen) f.status = FrameStatus::kReady;
  return f;
}

}  // namespace vessel::cluster
