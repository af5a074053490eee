// The CLUSTER command family, ASKING, READONLY and READWRITE, with Redis 7.0's replies and errors.
// Every handler that reads or changes the cluster state holds the node's mutex (node.h).
#include <cstring>
#include <string>

#include "host/cluster/node.h"
#include "host/engine/builtins.h"
#include "host/engine/keyspace.h"
#include "host/engine/session.h"
#include "spdlog/spdlog.h"

namespace vessel::cluster {

using engine::Arg;
using engine::CommandCtx;
using engine::W;

struct Commands {
  static Node* Get(CommandCtx* ctx) {
    if (ctx->engine->cluster() == nullptr) {
      W(ctx).ErrorLine("ERR This instance has cluster support disabled");
      return nullptr;
    }
    return static_cast<Node*>(ctx->engine->cluster());
  }

  // A slot argument, or Redis's getSlotOrReply error.
  static bool SlotArg(CommandCtx* ctx, int i, int* slot) {
    int64_t v;
    if (!engine::ParseInt64(Arg(ctx, i), &v) || v < 0 || v >= kSlots) {
      W(ctx).ErrorLine("ERR Invalid or out of range slot");
      return false;
    }
    *slot = static_cast<int>(v);
    return true;
  }

  // Up to `max` keys of the slot, from the shard that holds it (the world is held). As Redis's,
  // keys past their expiry that are not removed yet count.
  static void KeysInSlot(CommandCtx* ctx, int slot, int64_t max, std::vector<std::string>* keys) {
    engine::Database& db = ctx->engine->db(0);
    uint32_t first, last;
    db.ShardsOfSlot(static_cast<uint32_t>(slot), &first, &last);
    for (uint32_t i = first; i <= last; ++i) {
      db.shard(i).table.ForEach([&](const engine::Entry* e) {
        if (static_cast<int64_t>(keys->size()) >= max || KeySlot(e->key()) != slot) return;
        keys->emplace_back(e->key());
      });
    }
  }

  // CLUSTER HELP
  static void Help(CommandCtx* ctx) {
    if (Get(ctx) == nullptr) return;
    engine::ReplyHelp(
        ctx,
        {"CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
         "ADDSLOTS <slot> [<slot> ...]",
         "    Assign slots to current node.",
         "ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
         "    Assign slots which are between <start-slot> and <end-slot> to current node.",
         "BUMPEPOCH",
         "    Advance the cluster config epoch.",
         "COUNT-FAILURE-REPORTS <node-id>",
         "    Return number of failure reports for <node-id>.",
         "COUNTKEYSINSLOT <slot>",
         "    Return the number of keys in <slot>.",
         "DELSLOTS <slot> [<slot> ...]",
         "    Delete slots information from current node.",
         "DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
         "    Delete slots information which are between <start-slot> and <end-slot> from "
         "current node.",
         "FAILOVER [FORCE|TAKEOVER]",
         "    Promote current replica node to being a master.",
         "FORGET <node-id>",
         "    Remove a node from the cluster.",
         "GETKEYSINSLOT <slot> <count>",
         "    Return key names stored by current node in a slot.",
         "FLUSHSLOTS",
         "    Delete current node own slots information.",
         "INFO",
         "    Return information about the cluster.",
         "KEYSLOT <key>",
         "    Return the hash slot for <key>.",
         "MEET <ip> <port> [<bus-port>]",
         "    Connect nodes into a working cluster.",
         "MYID",
         "    Return the node id.",
         "NODES",
         "    Return cluster configuration seen by node. Output format:",
         "    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
         "REPLICATE <node-id>",
         "    Configure current node as replica to <node-id>.",
         "RESET [HARD|SOFT]",
         "    Reset current node (default: soft).",
         "SET-CONFIG-EPOCH <epoch>",
         "    Set config epoch of current node.",
         "SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
         "    Set slot state.",
         "REPLICAS <node-id>",
         "    Return <node-id> replicas.",
         "SAVECONFIG",
         "    Force saving cluster configuration on disk.",
         "SLOTS",
         "    Return information about slots range mappings. Each range is made of:",
         "    start, end, master and replicas IP addresses, ports and ids",
         "SHARDS",
         "    Return information about slot range mappings and the nodes associated with them.",
         "LINKS",
         "    Return information about all network links between this node and its peers.",
         "    Output format is an array where each array element is a map containing attributes "
         "of a link",
         "HELP",
         "    Print this help."});
  }

  // CLUSTER INFO
  static void Info(CommandCtx* ctx) {
    Node* n = Get(ctx);
    if (n == nullptr) return;
    std::lock_guard l(n->mu_);
    int assigned = 0, pfail = 0, fail = 0;
    for (int s = 0; s < kSlots; ++s) {
      const NodeInfo* o = n->owner_[s];
      if (o == nullptr) continue;
      ++assigned;
      if (o->flags & kNodeFail) {
        ++fail;
      } else if (o->flags & kNodePFail) {
        ++pfail;
      }
    }
    uint64_t my_epoch = n->myself_->config_epoch;
    if (!n->myself_->master.empty()) {
      if (NodeInfo* m = n->Lookup(n->myself_->master)) my_epoch = m->config_epoch;
    }
    std::string out;
    auto line = [&](std::string_view k, const auto& v) {
      out += k;
      out += ':';
      if constexpr (std::is_convertible_v<decltype(v), std::string_view>) {
        out += v;
      } else {
        out += std::to_string(v);
      }
      out += "\r\n";
    };
    line("cluster_state", n->ok_ ? "ok" : "fail");
    line("cluster_slots_assigned", assigned);
    line("cluster_slots_ok", assigned - pfail - fail);
    line("cluster_slots_pfail", pfail);
    line("cluster_slots_fail", fail);
    line("cluster_known_nodes", n->nodes_.size());
    line("cluster_size", n->size_);
    line("cluster_current_epoch", n->current_epoch_);
    line("cluster_my_epoch", my_epoch);
    uint64_t total = 0;
    for (uint16_t t = 0; t < kMessageTypeCount; ++t) {
      if (n->sent_[t] == 0) continue;
      total += n->sent_[t];
      line(std::string("cluster_stats_messages_") + MessageTypeName(t) + "_sent", n->sent_[t]);
    }
    line("cluster_stats_messages_sent", total);
    total = 0;
    for (uint16_t t = 0; t < kMessageTypeCount; ++t) {
      if (n->received_[t] == 0) continue;
      total += n->received_[t];
      line(std::string("cluster_stats_messages_") + MessageTypeName(t) + "_received",
           n->received_[t]);
    }
    line("cluster_stats_messages_received", total);
    line("total_cluster_links_buffer_limit_exceeded", n->links_buffer_limit_exceeded_);
    W(ctx).Verbatim("txt", out);
  }

  // CLUSTER MYID
  static void MyId(CommandCtx* ctx) {
    Node* n = Get(ctx);
    if (n == nullptr) return;
    std::lock_guard l(n->mu_);
    W(ctx).Bulk(n->myself_->id);
  }

  // CLUSTER NODES
  static void Nodes(CommandCtx* ctx) {
    Node* n = Get(ctx);
    if (n == nullptr) return;
    std::lock_guard l(n->mu_);
    W(ctx).Verbatim("txt", n->NodesText());
  }

  // A node of CLUSTER SLOTS (addNodeToNodeReply): the preferred endpoint, port, id, then the
  // other known addresses.
  static void NodeReply(CommandCtx* ctx, const Node& n, const NodeInfo& node) {
    using E = NodeOptions::Endpoint;
    const E type = n.EndpointTypeNow();
    W(ctx).Aggregate(resp::AggKind::kArray, 4);
    if (type == E::kUnknown) {
      W(ctx).Null();
    } else {
      W(ctx).Bulk(Node::PreferredEndpoint(node, type));
    }
    W(ctx).Int(node.port);
    W(ctx).Bulk(node.id);
    const bool ip = type != E::kIp, hostname = type != E::kHostname && !node.hostname.empty();
    W(ctx).Aggregate(resp::AggKind::kMap, int{ip} + int{hostname});
    if (ip) {
      W(ctx).Bulk("ip");
      W(ctx).Bulk(node.ip);
    }
    if (hostname) {
      W(ctx).Bulk("hostname");
      W(ctx).Bulk(node.hostname);
    }
  }

  // CLUSTER SLOTS
  static void Slots(CommandCtx* ctx) {
    Node* n = Get(ctx);
    if (n == nullptr) return;
    std::lock_guard l(n->mu_);
    std::vector<std::pair<int, int>> ranges;
    for (int s = 0; s < kSlots; ++s) {
      if (n->owner_[s] == nullptr) continue;
      int e = s;
      while (e + 1 < kSlots && n->owner_[e + 1] == n->owner_[s]) ++e;
      ranges.emplace_back(s, e);
      s = e;
    }
    W(ctx).Aggregate(resp::AggKind::kArray, static_cast<int64_t>(ranges.size()));
    for (auto [first, last] : ranges) {
      // The master, then its replicas that are up and have data.
      const NodeInfo* master = n->owner_[first];
      std::vector<const NodeInfo*> replicas;
      for (auto& [id, r] : n->nodes_)
        if ((r->flags & kNodeSlave) && r->master == master->id && n->ReplicaAvailable(*r))
          replicas.push_back(r.get());
      W(ctx).Aggregate(resp::AggKind::kArray, 3 + static_cast<int64_t>(replicas.size()));
      W(ctx).Int(first);
      W(ctx).Int(last);
      NodeReply(ctx, *n, *master);
      for (const NodeInfo* r : replicas) NodeReply(ctx, *n, *r);
    }
  }

  // One node of a CLUSTER SHARDS entry (addNodeDetailsToShardReply).
  static void ShardNode(CommandCtx* ctx, NodeOptions::Endpoint type, const NodeInfo& node) {
    const bool replica = (node.flags & kNodeSlave) != 0;
    W(ctx).Aggregate(resp::AggKind::kMap, node.hostname.empty() ? 7 : 8);
    W(ctx).Bulk("id");
    W(ctx).Bulk(node.id);
    W(ctx).Bulk("port");
    W(ctx).Int(node.port);
    W(ctx).Bulk("ip");
    W(ctx).Bulk(node.ip);
    W(ctx).Bulk("endpoint");
    W(ctx).Bulk(Node::PreferredEndpoint(node, type));
    if (!node.hostname.empty()) {
      W(ctx).Bulk("hostname");
      W(ctx).Bulk(node.hostname);
    }
    W(ctx).Bulk("role");
    W(ctx).Bulk(replica ? "replica" : "master");
    // This server's own offset is not followed here: a master without replicas reports 0.
    W(ctx).Bulk("replication-offset");
    W(ctx).Int(static_cast<int64_t>(node.repl_offset));
    W(ctx).Bulk("health");
    W(ctx).Bulk((node.flags & kNodeFail)             ? "fail"
                : (replica && node.repl_offset == 0) ? "loading"
                                                     : "online");
  }

  // CLUSTER SHARDS
  static void Shards(CommandCtx* ctx) {
    Node* n = Get(ctx);
    if (n == nullptr) return;
    std::lock_guard l(n->mu_);
    const NodeOptions::Endpoint type = n->EndpointTypeNow();
    std::vector<const NodeInfo*> masters;
    for (auto& [id, node] : n->nodes_)
      if (node->flags & kNodeMaster) masters.push_back(node.get());
    W(ctx).Aggregate(resp::AggKind::kArray, static_cast<int64_t>(masters.size()));
    for (const NodeInfo* m : masters) {
      W(ctx).Aggregate(resp::AggKind::kMap, 2);
      W(ctx).Bulk("slots");
      std::vector<int> pairs;
      for (int s = 0; s < kSlots; ++s) {
        if (!m->slots.Test(s)) continue;
        int e = s;
        while (e + 1 < kSlots && m->slots.Test(e + 1)) ++e;
        pairs.push_back(s);
        pairs.push_back(e);
        s = e;
      }
      W(ctx).Aggregate(resp::AggKind::kArray, static_cast<int64_t>(pairs.size()));
      for (int p : pairs) W(ctx).Int(p);
      W(ctx).Bulk("nodes");
      // The master, then its replicas (clusterGetNodesServingMySlots).
      std::vector<const NodeInfo*> members = {m};
      for (auto& [id, node] : n->nodes_)
        if ((node->flags & kNodeSlave) && node->master == m->id) members.push_back(node.get());
      W(ctx).Aggregate(resp::AggKind::kArray, static_cast<int64_t>(members.size()));
      for (const NodeInfo* node : members) ShardNode(ctx, type, *node);
    }
  }

  // CLUSTER KEYSLOT key
  static void KeySlotCmd(CommandCtx* ctx) {
    if (Get(ctx) == nullptr) return;
    W(ctx).Int(KeySlot(Arg(ctx, 2)));
  }

  // CLUSTER MEET ip port [bus-port]
  static void Meet(CommandCtx* ctx) {
    Node* n = Get(ctx);
    if (n == nullptr) return;
    if (ctx->argc > 5) return SubcommandError(ctx);
    int64_t port, cport;
    if (!engine::ParseInt64(Arg(ctx, 3), &port))
      return W(ctx).ErrorLine(engine::Cat("ERR Invalid TCP base port specified: ", Arg(ctx, 3)));
    if (ctx->argc == 5) {
      if (!engine::ParseInt64(Arg(ctx, 4), &cport))
        return W(ctx).ErrorLine(engine::Cat("ERR Invalid TCP bus port specified: ", Arg(ctx, 4)));
    } else {
      cport = port + 10000;
    }
    std::lock_guard l(n->mu_);
    if (port < 0 || port > 65535 || cport < 0 || cport > 65535 ||
        !n->StartHandshake(std::string(Arg(ctx, 2)), static_cast<int>(port),
                           static_cast<int>(cport))) {
      return W(ctx).ErrorLine(
          engine::Cat("ERR Invalid node address specified: ", Arg(ctx, 2), ":", Arg(ctx, 3)));
    }
    n->Flush();
    engine::ReplyOk(ctx);
  }

  static void SubcommandError(CommandCtx* ctx) {
    W(ctx).ErrorLine(engine::Cat("ERR unknown subcommand or wrong number of arguments for '",
                                 Arg(ctx, 1), "'. Try CLUSTER HELP."));
  }

  // CLUSTER ADDSLOTS|DELSLOTS slot [slot ...] and ADDSLOTSRANGE|DELSLOTSRANGE first last [...]
  static void ChangeSlots(CommandCtx* ctx, bool del, bool range) {
    Node* n = Get(ctx);
    if (n == nullptr) return;
    if (range && ctx->argc % 2 == 1)
      return W(ctx).ErrorLine(
          engine::Cat("ERR wrong number of arguments for '", ctx->cmd->name, "' command"));
    std::vector<std::pair<int, int>> ranges;
    const int step = range ? 2 : 1;
    for (int i = 2; i < ctx->argc; i += step) {
      int first, last;
      if (!SlotArg(ctx, i, &first)) return;
      last = first;
      if (range) {
        if (!SlotArg(ctx, i + 1, &last)) return;
        if (first > last)
          return W(ctx).ErrorLine(engine::Cat("ERR start slot number ", first,
                                              " is greater than end slot number ", last));
      }
      ranges.emplace_back(first, last);
    }
    std::lock_guard l(n->mu_);
    std::vector<uint8_t> seen(kSlots, 0);
    for (auto [first, last] : ranges) {
      for (int s = first; s <= last; ++s) {
        if (del && n->owner_[s] == nullptr)
          return W(ctx).ErrorLine(engine::Cat("ERR Slot ", s, " is already unassigned"));
        if (!del && n->owner_[s] != nullptr)
          return W(ctx).ErrorLine(engine::Cat("ERR Slot ", s, " is already busy"));
        if (seen[s]++ == 1)
          return W(ctx).ErrorLine(engine::Cat("ERR Slot ", s, " specified multiple times"));
      }
    }
    for (auto [first, last] : ranges) {
      for (int s = first; s <= last; ++s) {
        n->importing_from_[s] = nullptr;  // now really mine or nobody's (clusterUpdateSlots)
        if (del) {
          n->ClearSlot(s);
        } else {
          n->SetSlot(s, n->myself_);
        }
      }
    }
    n->Flush();
    engine::ReplyOk(ctx);
  }

  // CLUSTER FLUSHSLOTS
  static void FlushSlots(CommandCtx* ctx) {
    Node* n = Get(ctx);
    if (n == nullptr) return;
    if (ctx->engine->db(0).KeyCount() != 0)
      return W(ctx).ErrorLine("ERR DB must be empty to perform CLUSTER FLUSHSLOTS.");
    std::lock_guard l(n->mu_);
    for (int s = 0; s < kSlots; ++s)
      if (n->owner_[s] == n->myself_) n->ClearSlot(s);
    n->Flush();
    engine::ReplyOk(ctx);
  }

  // CLUSTER SET-CONFIG-EPOCH epoch
  static void SetConfigEpoch(CommandCtx* ctx) {
    Node* n = Get(ctx);
    if (n == nullptr) return;
    int64_t epoch;
    if (!engine::IntArg(ctx, 2, &epoch)) return;
    std::lock_guard l(n->mu_);
    if (epoch < 0)
      return W(ctx).ErrorLine(engine::Cat("ERR Invalid config epoch specified: ", epoch));
    if (n->nodes_.size() > 1)
      return W(ctx).ErrorLine(
          "ERR The user can assign a config epoch only when the node does not know any other "
          "node.");
    if (n->myself_->config_epoch != 0)
      return W(ctx).ErrorLine("ERR Node config epoch is already non-zero");
    n->myself_->config_epoch = static_cast<uint64_t>(epoch);
    if (n->current_epoch_ < static_cast<uint64_t>(epoch))
      n->current_epoch_ = static_cast<uint64_t>(epoch);
    n->Changed();
    n->Flush();
    engine::ReplyOk(ctx);
  }

  // CLUSTER BUMPEPOCH
  static void BumpEpoch(CommandCtx* ctx) {
    Node* n = Get(ctx);
    if (n == nullptr) return;
    std::lock_guard l(n->mu_);
    const bool bumped = n->BumpEpochWithoutConsensus();
    n->Flush();
    W(ctx).Simple(engine::Cat(bumped ? "BUMPED " : "STILL ", n->myself_->config_epoch));
  }

  // CLUSTER SAVECONFIG
  static void SaveConfig(CommandCtx* ctx) {
    Node* n = Get(ctx);
    if (n == nullptr) return;
    std::lock_guard l(n->mu_);
    std::string error;
    if (!n->Save(&error))
      return W(ctx).ErrorLine("ERR error saving the cluster node config: " + error);
    engine::ReplyOk(ctx);
  }

  // CLUSTER COUNTKEYSINSLOT slot
  static void CountKeysInSlot(CommandCtx* ctx) {
    if (Get(ctx) == nullptr) return;
    int64_t slot;
    if (!engine::IntArg(ctx, 2, &slot)) return;
    if (slot < 0 || slot >= kSlots) return W(ctx).ErrorLine("ERR Invalid slot");
    W(ctx).Int(static_cast<int64_t>(ctx->engine->db(0).KeysInSlot(static_cast<uint32_t>(slot))));
  }

  // CLUSTER GETKEYSINSLOT slot count
  static void GetKeysInSlot(CommandCtx* ctx) {
    if (Get(ctx) == nullptr) return;
    int64_t slot, max;
    if (!engine::IntArg(ctx, 2, &slot) || !engine::IntArg(ctx, 3, &max)) return;
    if (slot < 0 || slot >= kSlots || max < 0)
      return W(ctx).ErrorLine("ERR Invalid slot or number of keys");
    std::vector<std::string> keys;
    KeysInSlot(ctx, static_cast<int>(slot), max, &keys);
    W(ctx).Aggregate(resp::AggKind::kArray, static_cast<int64_t>(keys.size()));
    for (const std::string& k : keys) W(ctx).Bulk(k);
  }

  // CLUSTER COUNT-FAILURE-REPORTS node-id
  static void CountFailureReports(CommandCtx* ctx) {
    Node* n = Get(ctx);
    if (n == nullptr) return;
    std::lock_guard l(n->mu_);
    NodeInfo* node = n->Lookup(Arg(ctx, 2));
    if (node == nullptr) return W(ctx).ErrorLine(engine::Cat("ERR Unknown node ", Arg(ctx, 2)));
    W(ctx).Int(n->FailureReports(node));
  }

  // CLUSTER FORGET node-id
  static void Forget(CommandCtx* ctx) {
    Node* n = Get(ctx);
    if (n == nullptr) return;
    std::lock_guard l(n->mu_);
    NodeInfo* node = n->Lookup(Arg(ctx, 2));
    if (node == nullptr) return W(ctx).ErrorLine(engine::Cat("ERR Unknown node ", Arg(ctx, 2)));
    if (node == n->myself_)
      return W(ctx).ErrorLine("ERR I tried hard but I can't forget myself...");
    if (n->myself_->master == node->id) return W(ctx).ErrorLine("ERR Can't forget my master!");
    n->blacklist_[node->id] = n->Now() + kBlacklistTtl;
    n->DelNode(node);
    n->Flush();
    engine::ReplyOk(ctx);
  }

  // CLUSTER RESET [HARD|SOFT]
  static void Reset(CommandCtx* ctx) {
    Node* n = Get(ctx);
    if (n == nullptr) return;
    bool hard = false;
    if (ctx->argc > 3) return SubcommandError(ctx);
    if (ctx->argc == 3) {
      if (engine::EqualsIgnoreCase(Arg(ctx, 2), "hard")) {
        hard = true;
      } else if (!engine::EqualsIgnoreCase(Arg(ctx, 2), "soft")) {
        return engine::ReplySyntaxError(ctx);
      }
    }
    // Runs with the whole keyspace held (ResetNeedsWorld): a replica turned master empties its
    // dataset, as Redis's clusterReset does; a master must have none.
    bool was_replica = false;
    {
      std::lock_guard l(n->mu_);
      was_replica = (n->myself_->flags & kNodeSlave) != 0;
      if (!was_replica && ctx->engine->db(0).KeyCount() != 0)
        return W(ctx).ErrorLine(
            "ERR CLUSTER RESET can't be called with master nodes containing keys");
      n->Reset(hard);
      n->Flush();
    }
    if (was_replica) {
      for (auto& db : ctx->engine->dbs()) ctx->engine->FlushDb(*db, /*lazy=*/false);
      if (ctx->engine->messaging() != nullptr) ctx->engine->messaging()->Flushed();
    }
    engine::ReplyOk(ctx);
  }
  static bool ResetNeedsWorld(const std::string_view*, int) { return true; }

  // CLUSTER REPLICAS node-id / CLUSTER SLAVES node-id
  static void Replicas(CommandCtx* ctx) {
    Node* n = Get(ctx);
    if (n == nullptr) return;
    std::lock_guard l(n->mu_);
    NodeInfo* node = n->Lookup(Arg(ctx, 2));
    if (node == nullptr) return W(ctx).ErrorLine(engine::Cat("ERR Unknown node ", Arg(ctx, 2)));
    if (node->flags & kNodeSlave) return W(ctx).ErrorLine("ERR The specified node is not a master");
    std::vector<std::string> lines;
    for (auto& [id, other] : n->nodes_)
      if ((other->flags & kNodeSlave) && other->master == node->id)
        lines.push_back(FormatNodeLine(n->LineOf(*other)));
    W(ctx).Aggregate(resp::AggKind::kArray, static_cast<int64_t>(lines.size()));
    for (const std::string& line : lines) W(ctx).Bulk(line);
  }

  // CLUSTER LINKS
  static void Links(CommandCtx* ctx) {
    Node* n = Get(ctx);
    if (n == nullptr) return;
    std::lock_guard l(n->mu_);
    std::vector<const Link*> links;
    for (auto& [id, node] : n->nodes_) {
      if (node->link != nullptr) links.push_back(node->link);
      if (node->inbound_link != nullptr) links.push_back(node->inbound_link);
    }
    W(ctx).Aggregate(resp::AggKind::kArray, static_cast<int64_t>(links.size()));
    for (const Link* link : links) {
      const size_t pending = link->out.size() - link->out_off;
      W(ctx).Aggregate(resp::AggKind::kMap, 6);
      W(ctx).Bulk("direction");
      W(ctx).Bulk(link->inbound ? "from" : "to");
      W(ctx).Bulk("node");
      W(ctx).Bulk(link->node->id);
      W(ctx).Bulk("create-time");
      W(ctx).Int(link->ctime);
      W(ctx).Bulk("events");
      W(ctx).Bulk(pending != 0 || link->connecting ? "rw" : "r");
      W(ctx).Bulk("send-buffer-allocated");
      W(ctx).Int(static_cast<int64_t>(link->out.capacity()));
      W(ctx).Bulk("send-buffer-used");
      W(ctx).Int(static_cast<int64_t>(pending));
    }
  }

  // CLUSTER REPLICATE node-id
  static void Replicate(CommandCtx* ctx) {
    Node* n = Get(ctx);
    if (n == nullptr) return;
    const bool empty = ctx->engine->db(0).KeyCount() == 0;
    std::lock_guard l(n->mu_);
    NodeInfo* node = n->Lookup(Arg(ctx, 2));
    if (node == nullptr) return W(ctx).ErrorLine(engine::Cat("ERR Unknown node ", Arg(ctx, 2)));
    if (node == n->myself_) return W(ctx).ErrorLine("ERR Can't replicate myself");
    if (node->flags & kNodeSlave)
      return W(ctx).ErrorLine("ERR I can only replicate a master, not a replica.");
    if ((n->myself_->flags & kNodeMaster) && (n->myself_->numslots != 0 || !empty))
      return W(ctx).ErrorLine(
          "ERR To set a master the node must be empty and without assigned slots.");
    n->SetMaster(node);
    n->Flush();
    engine::ReplyOk(ctx);
  }

  // CLUSTER FAILOVER [FORCE|TAKEOVER]
  static void Failover(CommandCtx* ctx) {
    Node* n = Get(ctx);
    if (n == nullptr) return;
    if (ctx->argc > 3) return SubcommandError(ctx);
    bool force = false, takeover = false;
    if (ctx->argc == 3) {
      if (engine::EqualsIgnoreCase(Arg(ctx, 2), "force")) {
        force = true;
      } else if (engine::EqualsIgnoreCase(Arg(ctx, 2), "takeover")) {
        force = takeover = true;
      } else {
        return engine::ReplySyntaxError(ctx);
      }
    }
    std::lock_guard l(n->mu_);
    NodeInfo* master = n->MasterOf(n->myself_);
    if (n->myself_->flags & kNodeMaster)
      return W(ctx).ErrorLine("ERR You should send CLUSTER FAILOVER to a replica");
    if (master == nullptr)
      return W(ctx).ErrorLine("ERR I'm a replica but my master is unknown to me");
    if (!force && ((master->flags & kNodeFail) || master->link == nullptr))
      return W(ctx).ErrorLine("ERR Master is down or failed, please use CLUSTER FAILOVER FORCE");
    n->ResetManualFailover();
    n->mf_end_ = n->Now() + 5000;
    if (takeover) {
      // No agreement: a new config epoch of my own, the slots, and the news to every node.
      spdlog::warn("Taking over the master (user request).");
      n->BumpEpochWithoutConsensus();
      n->ReplaceMyMaster();
    } else if (force) {
      spdlog::warn("Forced failover user request accepted.");
      n->mf_can_start_ = true;
    } else {
      spdlog::warn("Manual failover user request accepted.");
      n->Send(master->link, MessageType::kMfStart, EncodeMfStart(n->Header()));
    }
    n->Flush();
    n->Wake();
    engine::ReplyOk(ctx);
  }

  // READONLY / READWRITE: reads of a replica's master's slots served here, or not
  // (Session::readonly).
  static void ReadOnly(CommandCtx* ctx, bool on) {
    if (Get(ctx) == nullptr) return;
    if (ctx->session != nullptr) engine::S(ctx).set_readonly(on);
    engine::ReplyOk(ctx);
  }
  // ASKING: the next command may use a slot importing here (Session::asking).
  static void Asking(CommandCtx* ctx) {
    if (Get(ctx) == nullptr) return;
    if (ctx->session != nullptr) engine::S(ctx).set_asking();
    engine::ReplyOk(ctx);
  }

  static constexpr int64_t kBlacklistTtl = 60000;
};

void Node::RegisterCommands(engine::Registry& r) {
  using engine::kCmdLoading;
  using engine::kCmdStale;
  const char* g = "cluster";
  constexpr uint64_t kA = VSL_CMD_ADMIN | kCmdStale;
  constexpr uint64_t kAn = kA | engine::kCmdNoAsyncLoading;
  constexpr uint64_t kS = kCmdStale;
  // clang-format off
  engine::AddBuiltins(r, {
      {.name = "CLUSTER", .arity = -2, .flags = 0, .fn = [](CommandCtx*) {}, .group = g,
       .since = "3.0.0", .summary = "A container for cluster commands", .syntax = "",
       .complexity = "Depends on subcommand."},
      {.name = "ASKING", .arity = 1, .flags = VSL_CMD_FAST, .fn = Commands::Asking, .group = g,
       .since = "3.0.0", .summary = "Sent by cluster clients after an -ASK redirect",
       .syntax = "", .complexity = "O(1)",
       .acl = "connection"},
      {.name = "READONLY", .arity = 1, .flags = VSL_CMD_FAST | kCmdLoading | kS,
       .fn = [](CommandCtx* c) { Commands::ReadOnly(c, true); }, .group = g, .since = "3.0.0",
       .summary = "Enables read queries for a connection to a cluster replica node",
       .syntax = "", .complexity = "O(1)",
       .acl = "connection"},
      {.name = "READWRITE", .arity = 1, .flags = VSL_CMD_FAST | kCmdLoading | kS,
       .fn = [](CommandCtx* c) { Commands::ReadOnly(c, false); }, .group = g, .since = "3.0.0",
       .summary = "Disables read queries for a connection to a cluster replica node",
       .syntax = "", .complexity = "O(1)",
       .acl = "connection"},
  });
  RegisterMigrateCommand(r);  // migrate_command.cc
  engine::AddBuiltins(r, {
      {.name = "ADDSLOTS", .arity = -3, .flags = kAn, .fn = [](CommandCtx* c) {
         Commands::ChangeSlots(c, false, false); }, .group = g, .since = "3.0.0",
       .summary = "Assign new hash slots to receiving node", .syntax = "slot [slot ...]",
       .complexity = "O(N) where N is the total number of hash slot arguments"},
      {.name = "ADDSLOTSRANGE", .arity = -4, .flags = kAn, .fn = [](CommandCtx* c) {
         Commands::ChangeSlots(c, false, true); }, .group = g, .since = "7.0.0",
       .summary = "Assign new hash slots to receiving node",
       .syntax = "start-slot end-slot [start-slot end-slot ...]",
       .complexity = "O(N) where N is the total number of the slots between the start slot "
                     "and end slot arguments."},
      {.name = "BUMPEPOCH", .arity = 2, .flags = kAn, .fn = Commands::BumpEpoch, .group = g,
       .since = "3.0.0", .summary = "Advance the cluster config epoch", .syntax = "",
       .complexity = "O(1)",
       .tips = "nondeterministic_output"},
      {.name = "COUNT-FAILURE-REPORTS", .arity = 3, .flags = kA,
       .fn = Commands::CountFailureReports, .group = g, .since = "3.0.0",
       .summary = "Return the number of failure reports active for a given node",
       .syntax = "node-id", .complexity = "O(N) where N is the number of failure reports",
       .tips = "nondeterministic_output"},
      {.name = "COUNTKEYSINSLOT", .arity = 3, .flags = kS,
       .fn = Commands::CountKeysInSlot, .group = g, .since = "3.0.0",
       .summary = "Return the number of local keys in the specified hash slot", .syntax = "slot",
       .complexity = "O(1)"},
      {.name = "DELSLOTS", .arity = -3, .flags = kAn, .fn = [](CommandCtx* c) {
         Commands::ChangeSlots(c, true, false); }, .group = g, .since = "3.0.0",
       .summary = "Set hash slots as unbound in receiving node", .syntax = "slot [slot ...]",
       .complexity = "O(N) where N is the total number of hash slot arguments"},
      {.name = "DELSLOTSRANGE", .arity = -4, .flags = kAn, .fn = [](CommandCtx* c) {
         Commands::ChangeSlots(c, true, true); }, .group = g, .since = "7.0.0",
       .summary = "Set hash slots as unbound in receiving node",
       .syntax = "start-slot end-slot [start-slot end-slot ...]",
       .complexity = "O(N) where N is the total number of the slots between the start slot "
                     "and end slot arguments."},
      {.name = "FAILOVER", .arity = -2, .flags = kAn, .fn = Commands::Failover, .group = g,
       .since = "3.0.0", .summary = "Forces a replica to perform a manual failover of its master.",
       .syntax = "[FORCE|TAKEOVER]", .complexity = "O(1)"},
      {.name = "FLUSHSLOTS", .arity = 2, .flags = kAn, .fn = Commands::FlushSlots, .group = g,
       .since = "3.0.0", .summary = "Delete a node's own slots information", .syntax = "",
       .complexity = "O(1)"},
      {.name = "FORGET", .arity = 3, .flags = kAn, .fn = Commands::Forget, .group = g,
       .since = "3.0.0", .summary = "Remove a node from the nodes table", .syntax = "node-id",
       .complexity = "O(1)"},
      {.name = "GETKEYSINSLOT", .arity = 4, .flags = kS | engine::kCmdGlobalWorld,
       .fn = Commands::GetKeysInSlot, .group = g, .since = "3.0.0",
       .summary = "Return local key names in the specified hash slot", .syntax = "slot count",
       .complexity = "O(log(N)) where N is the number of requested keys",
       .tips = "nondeterministic_output"},
      {.name = "HELP", .arity = 2, .flags = kCmdLoading | kS, .fn = Commands::Help, .group = g,
       .since = "5.0.0", .summary = "Show helpful text about the different subcommands",
       .syntax = "", .complexity = "O(1)"},
      {.name = "INFO", .arity = 2, .flags = kS, .fn = Commands::Info, .group = g,
       .since = "3.0.0", .summary = "Provides info about Redis Cluster node state",
       .syntax = "", .complexity = "O(1)",
       .tips = "nondeterministic_output"},
      {.name = "KEYSLOT", .arity = 3, .flags = kS, .fn = Commands::KeySlotCmd, .group = g,
       .since = "3.0.0", .summary = "Returns the hash slot of the specified key", .syntax = "key",
       .complexity = "O(N) where N is the number of bytes in the key"},
      {.name = "LINKS", .arity = 2, .flags = kS, .fn = Commands::Links, .group = g,
       .since = "7.0.0",
       .summary = "Returns a list of all TCP links to and from peer nodes in cluster",
       .syntax = "", .complexity = "O(N) where N is the total number of Cluster nodes",
       .tips = "nondeterministic_output"},
      {.name = "MEET", .arity = -4, .flags = kAn, .fn = Commands::Meet, .group = g,
       .since = "3.0.0", .summary = "Force a node cluster to handshake with another node",
       .syntax = "ip port [cluster-bus-port]", .complexity = "O(1)"},
      {.name = "MYID", .arity = 2, .flags = kS, .fn = Commands::MyId, .group = g,
       .since = "3.0.0", .summary = "Return the node id", .syntax = "",
       .complexity = "O(1)"},
      {.name = "NODES", .arity = 2, .flags = kS, .fn = Commands::Nodes, .group = g,
       .since = "3.0.0", .summary = "Get Cluster config for the node",
       .syntax = "", .complexity = "O(N) where N is the total number of Cluster nodes",
       .tips = "nondeterministic_output"},
      {.name = "REPLICAS", .arity = 3, .flags = kA, .fn = Commands::Replicas, .group = g,
       .since = "5.0.0", .summary = "List replica nodes of the specified master node",
       .syntax = "node-id", .complexity = "O(1)",
       .tips = "nondeterministic_output"},
      {.name = "REPLICATE", .arity = 3, .flags = kAn, .fn = Commands::Replicate, .group = g,
       .since = "3.0.0", .summary = "Reconfigure a node as a replica of the specified master node",
       .syntax = "node-id", .complexity = "O(1)"},
      {.name = "RESET", .arity = -2, .flags = kA | VSL_CMD_NOSCRIPT, .fn = Commands::Reset,
       .group = g, .since = "3.0.0", .summary = "Reset a Redis Cluster node",
       .syntax = "[HARD|SOFT]",
       .complexity = "O(N) where N is the number of known nodes. The command may execute a "
                     "FLUSHALL as a side effect.",
       .needs_world = Commands::ResetNeedsWorld},
      {.name = "SAVECONFIG", .arity = 2, .flags = kAn, .fn = Commands::SaveConfig, .group = g,
       .since = "3.0.0", .summary = "Forces the node to save cluster state on disk",
       .syntax = "", .complexity = "O(1)"},
      {.name = "SET-CONFIG-EPOCH", .arity = 3, .flags = kAn, .fn = Commands::SetConfigEpoch,
       .group = g, .since = "3.0.0", .summary = "Set the configuration epoch in a new node",
       .syntax = "config-epoch", .complexity = "O(1)"},
      {.name = "SETSLOT", .arity = -4, .flags = kAn, .fn = ClusterSetSlot, .group = g,
       .since = "3.0.0", .summary = "Bind a hash slot to a specific node",
       .syntax = "slot IMPORTING node-id|MIGRATING node-id|NODE node-id|STABLE",
       .complexity = "O(1)", .needs_world = ClusterSetSlotNeedsWorld},  // migration.cc
      {.name = "SHARDS", .arity = 2, .flags = kS, .fn = Commands::Shards, .group = g,
       .since = "7.0.0", .summary = "Get array of cluster slots to node mappings",
       .syntax = "", .complexity = "O(N) where N is the total number of cluster nodes",
       .tips = "nondeterministic_output"},
      {.name = "SLAVES", .arity = 3, .flags = kA, .fn = Commands::Replicas, .group = g,
       .since = "3.0.0", .summary = "List replica nodes of the specified master node",
       .syntax = "node-id", .complexity = "O(1)",
       .tips = "nondeterministic_output"},
      {.name = "SLOTS", .arity = 2, .flags = kS, .fn = Commands::Slots, .group = g,
       .since = "3.0.0", .summary = "Get array of Cluster slot to node mappings",
       .syntax = "", .complexity = "O(N) where N is the total number of Cluster nodes",
       .tips = "nondeterministic_output"},
  }, "cluster");
  // clang-format on
}

}  // namespace vessel::cluster
