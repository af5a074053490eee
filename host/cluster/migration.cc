// Slot migration on the node: CLUSTER SETSLOT's importing/migrating states, their nodes.conf form,
// and the routing of a slot open here (-ASK, ASKING, -TRYAGAIN), as Redis 7.0's cluster.c
// (clusterCommand SETSLOT, getNodeByQuery). MIGRATE itself is in migrate_command.cc.
#include <string>

#include "host/cluster/node.h"
#include "host/engine/builtins.h"
#include "host/engine/engine.h"
#include "host/engine/keyspace.h"
#include "host/engine/session.h"
#include "spdlog/spdlog.h"

namespace vessel::cluster {

using engine::Arg;
using engine::CommandCtx;
using engine::W;

namespace {

// Whether key lives in database 0 now (an expired key does not, as Redis's lookup with
// LOOKUP_NOEXPIRE). Takes the key's shard lock shared for the look-up only; a shard a running
// script holds counts as present (the command is then served here, and Admit makes it wait for
// the script or answers BUSY, as for any other key).
bool KeyPresent(engine::Engine* eng, std::string_view key) {
  if (eng == nullptr) return false;
  const engine::WorkerState& ws = eng->current_worker();
  if (eng->scripts_busy() || ws.pumping || ws.world_hold != engine::ScriptHold::kFree) return true;
  engine::Database& db = eng->db(0);
  const uint64_t hash = engine::HashKey(key);
  const uint32_t shard = db.ShardOf(hash);
  engine::LockSet locks;
  locks.Add(0, shard, /*exclusive=*/false);
  if (!eng->LockUnlessScript(&locks)) return true;
  const engine::Entry* e = db.shard(shard).table.Find(key, hash);
  return e != nullptr && (e->expire_ms == 0 || e->expire_ms > eng->Now());
}

}  // namespace

// ---- the states ----

void Node::CloseSlotsOf(const NodeInfo* n) {
  for (int s = 0; s < kSlots; ++s) {
    if (migrating_to_[s] == n) migrating_to_[s] = nullptr;
    if (importing_from_[s] == n) importing_from_[s] = nullptr;
  }
  Changed();
}

void Node::CloseAllSlots() {
  migrating_to_.fill(nullptr);
  importing_from_.fill(nullptr);
  Changed();
}

void Node::AddMoves(NodeLine* line) const {
  for (int s = 0; s < kSlots; ++s) {
    // As clusterGenNodeDescription: a slot both migrating and importing shows as migrating.
    if (migrating_to_[s] != nullptr) {
      line->moves.push_back({s, false, migrating_to_[s]->id});
    } else if (importing_from_[s] != nullptr) {
      line->moves.push_back({s, true, importing_from_[s]->id});
    }
  }
}

void Node::LoadMoves(const NodeLine& line) {
  for (const SlotMove& m : line.moves) {
    NodeInfo* n = Lookup(m.node);
    if (n == nullptr) {
      spdlog::warn("cluster: nodes.conf names unknown node {} for slot {}; state dropped", m.node,
                   m.slot);
      continue;
    }
    (m.importing ? importing_from_ : migrating_to_)[m.slot] = n;
  }
}

// ---- routing of an open slot (getNodeByQuery) ----

std::optional<std::string> Node::RedirectOpenSlot(const Snapshot& snap, engine::Session* session,
                                                  const engine::CommandSpec* cmd,
                                                  const std::string_view* argv, int argc, int slot,
                                                  bool shard_channels) {
  const bool mine = snap.owner[slot] == snap.me;
  const auto mig = snap.migrating.find(slot);
  const bool migrating = mine && mig != snap.migrating.end();
  const bool importing = !migrating && snap.importing.contains(slot);
  if (!migrating && !importing) return std::nullopt;
  // MIGRATE works on the local keys of an open slot.
  if (cmd->name == "migrate") return std::string();
  // Count the keys present and missing; shard channels are served by the source until the slot
  // is closed, so they count as neither.
  int missing = 0, existing = 0;
  bool multiple = false;
  std::string_view first;
  bool have_first = false;
  auto count = [&](const engine::CommandSpec& c, const std::string_view* av, int ac) {
    engine::KeyRefs refs;
    engine::ExtractKeys(c, av, ac, &refs, /*partial=*/true);
    for (const engine::KeyRef& r : refs) {
      const std::string_view key = av[r.arg_index];
      if (!have_first) {
        first = key;
        have_first = true;
      } else if (key != first) {
        multiple = true;
      }
      if (KeyPresent(opt_.engine, key)) {
        ++existing;
      } else {
        ++missing;
      }
    }
  };
  if (!shard_channels) {
    if (cmd->name == "exec") {
      std::vector<std::string_view> views;
      for (const engine::QueuedCommand& q : session->queued()) {
        views.assign(q.args.begin(), q.args.end());
        count(*q.cmd, views.data(), static_cast<int>(views.size()));
      }
    } else {
      count(*cmd, argv, argc);
    }
  }
  static const std::string kTryAgain = "TRYAGAIN Multiple keys request during rehashing of slot";
  if (migrating && missing > 0) {
    if (existing > 0) return kTryAgain;
    return "ASK " + std::to_string(slot) + " " + snap.endpoints[mig->second];
  }
  if (importing && (session->asking() || (cmd->flags & engine::kCmdAsking))) {
    if (multiple && missing > 0) return kTryAgain;
    return std::string();
  }
  return std::nullopt;
}

// ---- CLUSTER SETSLOT ----

struct Migration {
  static int64_t KeysInSlot(CommandCtx* ctx, int slot) {
    return static_cast<int64_t>(ctx->engine->db(0).KeysInSlot(static_cast<uint32_t>(slot)));
  }

  // CLUSTER SETSLOT slot IMPORTING node-id | MIGRATING node-id | STABLE | NODE node-id
  static void SetSlot(CommandCtx* ctx) {
    if (ctx->engine->cluster() == nullptr)
      return W(ctx).ErrorLine("ERR This instance has cluster support disabled");
    Node* node = static_cast<Node*>(ctx->engine->cluster());
    std::lock_guard l(node->mu_);
    NodeInfo* myself = node->myself_;
    if (myself->flags & kNodeSlave)
      return W(ctx).ErrorLine("ERR Please use SETSLOT only with masters.");
    int64_t v;
    if (!engine::ParseInt64(Arg(ctx, 2), &v) || v < 0 || v >= kSlots)
      return W(ctx).ErrorLine("ERR Invalid or out of range slot");
    const int slot = static_cast<int>(v);
    const std::string_view action = Arg(ctx, 3);
    auto is = [&](const char* name, int argc) {
      return engine::EqualsIgnoreCase(action, name) && ctx->argc == argc;
    };
    auto master_arg = [&](const char* unknown) -> NodeInfo* {
      NodeInfo* n = node->Lookup(Arg(ctx, 4));
      if (n == nullptr) {
        W(ctx).ErrorLine(engine::Cat("ERR ", unknown, Arg(ctx, 4)));
      } else if (n->flags & kNodeSlave) {
        W(ctx).ErrorLine("ERR Target node is not a master");
        n = nullptr;
      }
      return n;
    };
    if (is("migrating", 5)) {
      if (node->owner_[slot] != myself)
        return W(ctx).ErrorLine(engine::Cat("ERR I'm not the owner of hash slot ", slot));
      NodeInfo* n = master_arg("I don't know about node ");
      if (n == nullptr) return;
      node->migrating_to_[slot] = n;
    } else if (is("importing", 5)) {
      if (node->owner_[slot] == myself)
        return W(ctx).ErrorLine(engine::Cat("ERR I'm already the owner of hash slot ", slot));
      NodeInfo* n = master_arg("I don't know about node ");
      if (n == nullptr) return;
      node->importing_from_[slot] = n;
    } else if (is("stable", 4)) {
      node->importing_from_[slot] = nullptr;
      node->migrating_to_[slot] = nullptr;
    } else if (is("node", 5)) {
      NodeInfo* n = master_arg("Unknown node ");
      if (n == nullptr) return;
      // Runs with the whole keyspace held (ClusterSetSlotNeedsWorld): the count is exact.
      const int64_t keys = KeysInSlot(ctx, slot);
      if (node->owner_[slot] == myself && n != myself && keys != 0)
        return W(ctx).ErrorLine(engine::Cat("ERR Can't assign hashslot ", slot,
                                            " to a different node while I still hold keys for "
                                            "this hash slot."));
      // A migrating slot without keys left is closed by giving it away.
      if (keys == 0) node->migrating_to_[slot] = nullptr;
      const bool slot_was_mine = node->owner_[slot] == myself;
      node->ClearSlot(slot);
      node->SetSlot(slot, n);
      // A master left without slots becomes a replica of the new owner, unless
      // cluster-allow-replica-migration is off.
      if (slot_was_mine && n != myself && myself->numslots == 0 &&
          node->opt_.allow_replica_migration) {
        spdlog::warn("Configuration change detected. Reconfiguring myself as a replica of {}",
                     n->id);
        node->SetMaster(n);
      }
      if (n == myself && node->importing_from_[slot] != nullptr) {
        // A slot migrated by hand: a new config epoch lets the cluster adopt the new owner.
        if (node->BumpEpochWithoutConsensus())
          spdlog::warn("configEpoch updated after importing slot {}", slot);
        node->importing_from_[slot] = nullptr;
        node->broadcast_pong_ = true;
        node->Wake();
      }
    } else {
      return W(ctx).ErrorLine(
          "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP");
    }
    node->Changed();
    node->Flush();
    engine::ReplyOk(ctx);
  }
};

void ClusterSetSlot(CommandCtx* ctx) { Migration::SetSlot(ctx); }

bool ClusterSetSlotNeedsWorld(const std::string_view* argv, int argc) {
  return argc == 5 && engine::EqualsIgnoreCase(argv[3], "node");
}

}  // namespace vessel::cluster
