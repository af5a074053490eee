// The Redis Cluster bus packet of Redis 7.0 (cluster.h's clusterMsg and its bodies), byte for
// byte: encoders for every message type, one validating decoder, and the framer that cuts a
// byte stream into packets. Pure functions on caller-owned buffers, safe from any thread.
//
// Wire format: a 2256-byte header ("RCmb", totlen, version 1, ...; integers in network byte
// order) followed by the type's body. PING, PONG and MEET carry `count` gossip entries of 104
// bytes and, when mflags[0] has kMsgFlagExtData, `extensions` extensions (an 8-byte header, then
// data padded to a multiple of 8). Redis 7.0.15 defines one extension type, the hostname (0).
// The MODULE body's module id is written in the sender's byte order (Redis treats it as opaque);
// it is read here as little-endian, the order of every platform Redis runs on.
#ifndef VESSEL_HOST_CLUSTER_BUS_MESSAGE_H_
#define VESSEL_HOST_CLUSTER_BUS_MESSAGE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/cluster/slots.h"

namespace vessel::cluster {

inline constexpr size_t kNodeNameLen = 40;  // a node id: 40 characters [a-z0-9]
inline constexpr size_t kIpFieldLen = 46;   // NET_IP_STR_LEN: an IPv6 text and its NUL
inline constexpr size_t kBusHeaderLen = 2256;
inline constexpr size_t kGossipLen = 104;
inline constexpr size_t kExtensionHeaderLen = 8;
inline constexpr uint16_t kBusProtocolVersion = 1;
// The largest totlen the framer accepts by default: a PUBLISH of a channel and a message of
// Redis's 512 MB proto-max-bulk-len each, plus headers. Callers may choose less.
inline constexpr uint64_t kDefaultMaxPacketLen = (uint64_t{1} << 30) + 4096;

enum class MessageType : uint16_t {
  kPing = 0,
  kPong = 1,
  kMeet = 2,
  kFail = 3,
  kPublish = 4,
  kFailoverAuthRequest = 5,
  kFailoverAuthAck = 6,
  kUpdate = 7,
  kMfStart = 8,
  kModule = 9,
  kPublishShard = 10,
};
inline constexpr uint16_t kMessageTypeCount = 11;
// Redis's name of a type ("ping", "update", ...; "unknown" past the known ones).
const char* MessageTypeName(uint16_t type);

// Node flags (clusterNode.flags, carried in the header and in gossip entries).
inline constexpr uint16_t kNodeMaster = 1;
inline constexpr uint16_t kNodeSlave = 2;
inline constexpr uint16_t kNodePFail = 4;
inline constexpr uint16_t kNodeFail = 8;
inline constexpr uint16_t kNodeMyself = 16;
inline constexpr uint16_t kNodeHandshake = 32;
inline constexpr uint16_t kNodeNoAddr = 64;
inline constexpr uint16_t kNodeMeet = 128;
inline constexpr uint16_t kNodeMigrateTo = 256;
inline constexpr uint16_t kNodeNoFailover = 512;

// mflags[0] bits.
inline constexpr uint8_t kMsgFlagPaused = 1;    // master paused for a manual failover
inline constexpr uint8_t kMsgFlagForceAck = 2;  // vote even though the master is up
inline constexpr uint8_t kMsgFlagExtData = 4;   // PING/PONG/MEET carries extensions

// The cluster state byte of the header.
inline constexpr uint8_t kClusterOk = 0;
inline constexpr uint8_t kClusterFail = 1;

// Extension types of Redis 7.0 (later versions add more; unknown ones are kept, not refused).
inline constexpr uint16_t kExtHostname = 0;

// Whether `name` is a node id as Redis accepts one (verifyClusterNodeId: 40 bytes of a-z, 0-9).
bool IsValidNodeName(std::string_view name);

// The header fields a sender chooses. Names are node ids or empty (sent as 40 NUL bytes, "no
// node"); ip is at most 45 bytes (empty: the receiver uses the connection's address). The type,
// totlen, count and extensions fields are derived from the message.
struct BusHeader {
  uint16_t port = 0;   // client port (TLS port when TLS is on)
  uint16_t pport = 0;  // plaintext client port when `port` is TLS
  uint16_t cport = 0;  // cluster bus port
  uint64_t current_epoch = 0;
  uint64_t config_epoch = 0;  // the master's, for a replica
  uint64_t offset = 0;        // replication offset
  std::string sender;
  SlotBitmap slots;     // the master's slots, for a replica
  std::string slaveof;  // empty for a master
  std::string ip;
  uint16_t flags = 0;  // kNode* of the sender
  uint8_t state = kClusterOk;
  std::array<uint8_t, 3> mflags{};  // kMsgFlagExtData is set by the encoder when needed
  bool operator==(const BusHeader&) const = default;
};

// One clusterMsgDataGossip entry: what the sender knows of another node.
struct Gossip {
  std::string name;
  uint32_t ping_sent = 0;      // seconds
  uint32_t pong_received = 0;  // seconds
  std::string ip;
  uint16_t port = 0;
  uint16_t cport = 0;
  uint16_t flags = 0;
  uint16_t pport = 0;
  bool operator==(const Gossip&) const = default;
};

// One ping extension. For kExtHostname, data is the hostname (no NUL); for other types, the raw
// bytes after the extension header, padding included.
struct PingExtension {
  uint16_t type = kExtHostname;
  std::string data;
  bool operator==(const PingExtension&) const = default;
};

// A decoded packet: the header, the type, and the fields of that type's body (the others stay
// empty).
struct BusMessage {
  uint16_t type = 0;  // a MessageType, or a later version's type (body kept in `raw_body`)
  BusHeader header;
  std::vector<Gossip> gossip;             // PING, PONG, MEET
  std::vector<PingExtension> extensions;  // PING, PONG, MEET
  std::string node;                       // FAIL: the failing node; UPDATE: the slots' owner
  std::string channel;                    // PUBLISH, PUBLISHSHARD
  std::string payload;                    // PUBLISH, PUBLISHSHARD: the message; MODULE: the data
  uint64_t update_config_epoch = 0;       // UPDATE
  SlotBitmap update_slots;                // UPDATE
  uint64_t module_id = 0;                 // MODULE
  uint8_t module_type = 0;                // MODULE
  std::string raw_body;                   // an unknown type: everything after the header
  bool operator==(const BusMessage&) const = default;
};

// The packet of any message (the fields of its type's body are used, the others ignored).
std::string Encode(const BusMessage& message);

// One encoder per message type. `type` of EncodePing is kPing, kPong or kMeet.
std::string EncodePing(MessageType type, const BusHeader& header, const std::vector<Gossip>& gossip,
                       const std::vector<PingExtension>& extensions = {});
std::string EncodeFail(const BusHeader& header, std::string_view failing_node);
std::string EncodePublish(const BusHeader& header, std::string_view channel,
                          std::string_view message, bool shard = false);
std::string EncodeFailoverAuthRequest(const BusHeader& header);
std::string EncodeFailoverAuthAck(const BusHeader& header);
std::string EncodeMfStart(const BusHeader& header);
std::string EncodeUpdate(const BusHeader& header, uint64_t config_epoch, std::string_view owner,
                         const SlotBitmap& slots);
std::string EncodeModule(const BusHeader& header, uint64_t module_id, uint8_t module_type,
                         std::string_view payload);

// Decodes exactly one packet (`bytes` is the whole packet, as the framer delimits it). Checks
// what Redis's read handler and clusterProcessPacket check (signature, totlen at least the
// header and equal to the size, version, totlen against the type's own length, every
// extension's length: a multiple of 8 that fits) and what Redis leaves to luck (node ids well
// formed, an extension's header inside the packet, a hostname NUL-terminated, no extension
// without the flag). On failure returns nullopt with the reason in *error. Reads nothing outside
// `bytes`.
std::optional<BusMessage> Decode(std::string_view bytes, std::string* error);

// Cuts a stream of packets: given the bytes received so far, starting at a packet boundary.
enum class FrameStatus { kNeedMore, kReady, kError };
struct Frame {
  FrameStatus status = FrameStatus::kNeedMore;
  // kReady: the length of the first packet (its totlen). kNeedMore: the total the packet needs,
  // once its length is known (else 8, the bytes that carry it).
  uint64_t length = 0;
  std::string error;  // kError: why the stream cannot go on (the link is to be closed)
};
// Refuses, as Redis does after the first 8 bytes, a wrong signature and a totlen shorter than
// the header; also a totlen above max_len.
Frame NextFrame(std::string_view buffered, uint64_t max_len = kDefaultMaxPacketLen);

}  // namespace vessel::cluster

#endif  // VESSEL_HOST_CLUSTER_BUS_MESSAGE_H_
