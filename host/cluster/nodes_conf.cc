// The nodes.conf file of a Redis 7.0 cluster node (see nodes_conf.h).
#include "host/cluster/nodes_conf.h"

#include <charconv>
#include <utility>

#include "host/cluster/bus_message.h"
#include "host/cluster/slots.h"

namespace vessel::cluster {
namespace {

// In the order Redis writes them (redisNodeFlagsTable).
struct FlagName {
  uint16_t flag;
  const char* name;
};
constexpr FlagName kFlagNames[] = {
    {kNodeMyself, "myself"}, {kNodeMaster, "master"},
    {kNodeSlave, "slave"},   {kNodePFail, "fail?"},
    {kNodeFail, "fail"},     {kNodeHandshake, "handshake"},
    {kNodeNoAddr, "noaddr"}, {kNodeNoFailover, "nofailover"},
};

std::vector<std::string_view> SplitWords(std::string_view line) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

template <typename T>
bool ParseNumber(std::string_view s, T* out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

bool ParsePort(std::string_view s, int* out) {
  return ParseNumber(s, out) && *out >= 0 && *out <= 65535;
}

bool ParseSlot(std::string_view s, int* out) {
  return ParseNumber(s, out) && *out >= 0 && *out < kSlots;
}

// Parses "<ip>:<port>[@<cport>][,<hostname>]" (the ip may itself hold ':', as IPv6 does).
bool ParseAddress(std::string_view s, NodeLine* n, std::string* why) {
  const size_t comma = s.find(',');
  if (comma != std::string_view::npos) {
    n->hostname = std::string(s.substr(comma + 1));
    s = s.substr(0, comma);
  }
  const size_t colon = s.rfind(':');
  if (colon == std::string_view::npos) {
    *why = "address without ':'";
    return false;
  }
  n->ip = std::string(s.substr(0, colon));
  std::string_view ports = s.substr(colon + 1);
  const size_t at = ports.find('@');
  if (!ParsePort(ports.substr(0, at), &n->port)) {
    *why = "bad port in address";
    return false;
  }
  if (at == std::string_view::npos) {
    n->cport = n->port + 10000;
  } else if (!ParsePort(ports.substr(at + 1), &n->cport)) {
    *why = "bad cluster bus port in address";
    return false;
  }
  return true;
}

bool ParseFlags(std::string_view s, uint16_t* flags, std::string* why) {
  *flags = 0;
  while (true) {
    const size_t comma = s.find(',');
    const std::string_view name = s.substr(0, comma);
    bool known = name == "noflags";
    for (const FlagName& f : kFlagNames) {
      if (name == f.name) {
        *flags |= f.flag;
        known = true;
      }
    }
    if (!known) {
      *why = "unknown flag '" + std::string(name) + "'";
      return false;
    }
    if (comma == std::string_view::npos) return true;
    s = s.substr(comma + 1);
  }
}

// "[<slot>->-<id>]" or "[<slot>-<-<id>]".
bool ParseMove(std::string_view s, SlotMove* move) {
  if (s.size() < 2 || s.back() != ']') return false;
  s = s.substr(1, s.size() - 2);
  const size_t dash = s.find('-');
  if (dash == std::string_view::npos || !ParseSlot(s.substr(0, dash), &move->slot)) return false;
  const std::string_view arrow = s.substr(dash, 3);
  if (arrow == "->-") {
    move->importing = false;
  } else if (arrow == "-<-") {
    move->importing = true;
  } else {
    return false;
  }
  move->node = std::string(s.substr(dash + 3));
  return IsValidNodeName(move->node);
}

bool ParseSlotRange(std::string_view s, SlotRange* range) {
  const size_t dash = s.find('-');
  if (dash == std::string_view::npos) {
    if (!ParseSlot(s, &range->first)) return false;
    range->last = range->first;
    return true;
  }
  return ParseSlot(s.substr(0, dash), &range->first) &&
         ParseSlot(s.substr(dash + 1), &range->last) && range->first <= range->last;
}

bool ParseNodeLine(const std::vector<std::string_view>& w, NodeLine* n, std::string* why) {
  if (w.size() < 8) {
    *why = "a node line has at least 8 fields";
    return false;
  }
  n->id = std::string(w[0]);
  if (!IsValidNodeName(n->id)) {
    *why = "malformed node id '" + n->id + "'";
    return false;
  }
  if (!ParseAddress(w[1], n, why) || !ParseFlags(w[2], &n->flags, why)) return false;
  if (w[3] != "-") {
    n->master = std::string(w[3]);
    if (!IsValidNodeName(n->master)) {
      *why = "malformed master id '" + n->master + "'";
      return false;
    }
  }
  if (!ParseNumber(w[4], &n->ping_sent) || !ParseNumber(w[5], &n->pong_received)) {
    *why = "bad ping_sent or pong_recv";
    return false;
  }
  if (!ParseNumber(w[6], &n->config_epoch)) {
    *why = "bad configEpoch";
    return false;
  }
  if (w[7] == "connected") {
    n->connected = true;
  } else if (w[7] != "disconnected") {
    *why = "bad link state '" + std::string(w[7]) + "'";
    return false;
  }
  for (size_t i = 8; i < w.size(); ++i) {
    if (w[i].front() == '[') {
      SlotMove move;
      if (!ParseMove(w[i], &move)) {
        *why = "bad migrating or importing slot '" + std::string(w[i]) + "'";
        return false;
      }
      n->moves.push_back(std::move(move));
      continue;
    }
    SlotRange range;
    if (!ParseSlotRange(w[i], &range)) {
      *why = "bad slot range '" + std::string(w[i]) + "'";
      return false;
    }
    n->slots.push_back(range);
  }
  return true;
}

bool ParseVars(const std::vector<std::string_view>& w, NodesConf* conf, std::string* why) {
  if (w.size() % 2 == 0) {
    *why = "vars needs name value pairs";
    return false;
  }
  for (size_t i = 1; i < w.size(); i += 2) {
    uint64_t* target = nullptr;
    if (w[i] == "currentEpoch") target = &conf->current_epoch;
    if (w[i] == "lastVoteEpoch") target = &conf->last_vote_epoch;
    if (target != nullptr && !ParseNumber(w[i + 1], target)) {
      *why = "bad value of " + std::string(w[i]);
      return false;
    }
  }
  return true;
}

}  // namespace

const NodeLine* NodesConf::myself() const {
  for (const NodeLine& n : nodes) {
    if (n.flags & kNodeMyself) return &n;
  }
  return nullptr;
}

std::optional<NodesConf> ParseNodesConf(std::string_view text, std::string* error) {
  NodesConf conf;
  int myself = 0;
  size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    const std::vector<std::string_view> words = SplitWords(line);
    if (words.empty()) continue;
    std::string why;
    if (words[0] == "vars") {
      if (!ParseVars(words, &conf, &why)) {
        *error = "line " + std::to_string(line_no) + ": " + why;
        return std::nullopt;
      }
      continue;
    }
    NodeLine node;
    if (!ParseNodeLine(words, &node, &why)) {
      *error = "line " + std::to_string(line_no) + ": " + why;
      return std::nullopt;
    }
    if (node.flags & kNodeMyself) ++myself;
    conf.nodes.push_back(std::move(node));
  }
  if (myself != 1) {
    *error = myself == 0 ? "no node is flagged myself" : "more than one node is flagged myself";
    return std::nullopt;
  }
  return conf;
}

std::string FormatNodeFlags(uint16_t flags) {
  std::string out;
  for (const FlagName& f : kFlagNames) {
    if (!(flags & f.flag)) continue;
    if (!out.empty()) out += ',';
    out += f.name;
  }
  return out.empty() ? "noflags" : out;
}

std::string FormatNodeLine(const NodeLine& n) {
  std::string out = n.id;
  out += ' ' + n.ip + ':' + std::to_string(n.port) + '@' + std::to_string(n.cport);
  if (!n.hostname.empty()) out += ',' + n.hostname;
  out += ' ' + FormatNodeFlags(n.flags);
  out += ' ' + (n.master.empty() ? std::string("-") : n.master);
  out += ' ' + std::to_string(n.ping_sent) + ' ' + std::to_string(n.pong_received) + ' ' +
         std::to_string(n.config_epoch);
  out += n.connected ? " connected" : " disconnected";
  for (const SlotRange& r : n.slots) {
    out += ' ' + std::to_string(r.first);
    if (r.last != r.first) out += '-' + std::to_string(r.last);
  }
  for (const SlotMove& m : n.moves) {
    out += " [" + std::to_string(m.slot) + (m.importing ? "-<-" : "->-") + m.node + ']';
  }
  return out;
}

std::string FormatNodesConf(const NodesConf& conf) {
  std::string out;
  for (const NodeLine& n : conf.nodes) out += FormatNodeLine(n) + '\n';
  out += "vars currentEpoch " + std::to_string(conf.current_epoch) + " lastVoteEpoch " +
         std::to_string(conf.last_vote_epoch) + '\n';
  return out;
}

}  // namespace vessel::cluster
