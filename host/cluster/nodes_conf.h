// The nodes.conf file of a Redis 7.0 cluster node (clusterSaveConfig / clusterLoadConfig): one
// line per node, as CLUSTER NODES shows it, and a final "vars" line. Parsing refuses a malformed
// line with its number and the reason; formatting writes what Redis writes. Pure functions,
// safe from any thread.
//
// A node line:
//   <id> <ip>:<port>@<cport>[,<hostname>] <flags> <master id|-> <ping_sent> <pong_recv>
//   <configEpoch> <connected|disconnected>
//   [<slot>|<first>-<last>|[<slot>->-<id>]|[<slot>-<-id>]]...
// flags: a comma list of myself, master, slave, fail?, fail, handshake, noaddr, nofailover, or
// noflags. The last line: vars currentEpoch <n> lastVoteEpoch <n>.
#ifndef VESSEL_HOST_CLUSTER_NODES_CONF_H_
#define VESSEL_HOST_CLUSTER_NODES_CONF_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vessel::cluster {

struct SlotRange {
  int first = 0;
  int last = 0;  // inclusive
  bool operator==(const SlotRange&) const = default;
};

// A slot being moved: "[slot->-id]" (migrating to id) or "[slot-<-id]" (importing from id).
struct SlotMove {
  int slot = 0;
  bool importing = false;
  std::string node;
  bool operator==(const SlotMove&) const = default;
};

struct NodeLine {
  std::string id;
  std::string ip;  // may be empty (a node without an address yet)
  int port = 0;
  int cport = 0;  // without "@cport" (files of old versions), port + 10000, as Redis reads it
  std::string hostname;
  uint16_t flags = 0;  // kNode* of bus_message.h; "noflags" is 0
  std::string master;  // empty for "-"
  int64_t ping_sent = 0;
  int64_t pong_received = 0;
  uint64_t config_epoch = 0;
  bool connected = false;
  std::vector<SlotRange> slots;  // in the file's order
  std::vector<SlotMove> moves;   // in the file's order (Redis writes them for myself only)
  bool operator==(const NodeLine&) const = default;
};

struct NodesConf {
  std::vector<NodeLine> nodes;  // in the file's order
  uint64_t current_epoch = 0;
  uint64_t last_vote_epoch = 0;
  bool operator==(const NodesConf&) const = default;
  // The node flagged myself (Parse guarantees exactly one).
  const NodeLine* myself() const;
};

// Parses a whole file. Blank lines are skipped and a "vars" line may be anywhere, as Redis reads
// them; unknown vars are ignored (Redis logs and skips them). Errors name the line: "line 3:
// unknown flag 'mastr'". Stricter than Redis where Redis reads with atoi and would take garbage
// for a number, or crash (an unknown flag, a second myself).
std::optional<NodesConf> ParseNodesConf(std::string_view text, std::string* error);

// The file Redis would write for `conf`: one line per node, then the vars line.
std::string FormatNodesConf(const NodesConf& conf);
// One node line without its newline (CLUSTER NODES's line).
std::string FormatNodeLine(const NodeLine& node);

// Node flags as Redis names them ("myself,master"; "noflags" for none).
std::string FormatNodeFlags(uint16_t flags);

}  // namespace vessel::cluster

#endif  // VESSEL_HOST_CLUSTER_NODES_CONF_H_
