// The context of one command invocation (CommandCtx) and its declared keys (CommandKey): what
// every built-in and module command runs with. The SDK's opaque handles vsl_ctx and vsl_key name
// these objects at the ABI boundary only (host/engine/abi.h, used by api.cc and by Engine::Run to
// call a module's handler); in the host they stay incomplete types.
#ifndef VESSEL_HOST_ENGINE_CONTEXT_H_
#define VESSEL_HOST_ENGINE_CONTEXT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "host/engine/keyspace.h"
#include "host/engine/registry.h"
#include "host/resp/writer.h"

namespace vessel::engine {

class Engine;
class Session;
struct CommandCtx;
struct RoutedKeys;

// A declared key of the running command. Handles do not cache the entry: two handles may name
// the same key (RPOPLPUSH a a) and both must see every change.
struct CommandKey {
  CommandCtx* ctx;
  std::string_view name;
  uint64_t hash;
  Database* db;
  Shard* shard;
  uint32_t flags;  // VSL_KS_* of the key spec that found it
  // The type the handler last asked key_get for (0: none yet): a client blocking on the key
  // waits for a value of that type, as Redis's blocked clients wait for their btype.
  uint16_t asked_type = 0;
  // The handler changed the key through this handle (key_set, key_delete, key_expire_set,
  // key_modified): what the host counts when the command reports no change count itself.
  bool changed = false;
  // The key's live entry (null: absent) as the last lookup through this handle found it, valid
  // while the shard's table is at generation found_gen: a command looks its key up once.
  Entry* found = nullptr;
  uint64_t found_gen = 0;
  bool writable() const { return !(flags & VSL_KS_RO); }
};

struct CommandCtx {
  Engine* engine = nullptr;
  Session* session = nullptr;  // null for host-internal calls
  const CommandSpec* cmd = nullptr;
  const std::string_view* argv = nullptr;
  int argc = 0;
  Database* db = nullptr;
  absl::InlinedVector<CommandKey, 4> keys;
  resp::Writer* w = nullptr;
  int64_t now_ms = 0;

  // Reply accounting: a handler sends exactly one reply.
  size_t out_mark = 0;  // output size when the handler started
  int top_replies = 0;  // complete top-level replies
  struct Open {
    resp::AggKind kind;
    int64_t remaining;  // elements still expected; -1 = deferred (unknown)
    int64_t written;    // elements written so far (for deferred)
    size_t mark;        // output position of a deferred header
    uint64_t id;        // handle id given to the module
  };
  absl::InlinedVector<Open, 4> open;
  uint64_t next_agg_id = 1;
  bool reply_error = false;  // the (last) reply was an error

  // Blocking.
  bool can_block = false;  // false inside MULTI/EXEC and on the timeout re-run
  bool blocked = false;    // the handler called block() successfully
  int64_t block_timeout_ms = 0;
  uint32_t block_flags = 0;  // VSL_BLOCK_* given to block_ex (ABI 1.7)
  std::string block_state;   // the state given to block_ex, kept for the re-runs
  bool in_exec = false;
  bool world = false;  // the whole keyspace is held exclusively: no per-shard locking
  // The shard locks the command runs under (null with the world): internal calls may only touch
  // keys of these shards (Engine::Call).
  const LockSet* locks = nullptr;
  // Shards a script locked beyond `locks` for keys it did not declare (host/scripting):
  // Engine::Call accepts keys of these shards too.
  const LockSet* extra_locks = nullptr;
  bool internal = false;  // run by the host for another command (Engine::Call): not accounted
  // The command meets a lock a running script holds and must wait for it without blocking the
  // event loop: set by Engine::Run before the handler runs, or by a handler before it changed
  // or replied anything (ShardGuard). Nothing of the call takes effect; the caller postpones it
  // until the scripts change since script_epoch (Engine::WhenScriptsChange).
  bool postponed = false;
  uint64_t script_epoch = 0;
  // A script learnt it needs more of the keyspace than the command holds, before it changed
  // anything: nothing of the call takes effect, and the caller runs the command again (it then
  // holds the whole keyspace: the script's key mode changed).
  bool rerun = false;
  // Used memory was over maxmemory when the command started, and eviction could not fix it
  // (Redis's pre_command_oom_state): scripts refuse their first write then.
  bool oom = false;
  // The keys cluster routing found for this command (Session::Admit), or null: ResolveKeys
  // reuses them.
  const RoutedKeys* routed = nullptr;
  // The script command (EVAL, FCALL, ...) a command called from a script runs for (its
  // declared keys are what client tracking remembers when the script reads, as Redis 7.0).
  const CommandCtx* script_caller = nullptr;

  bool reply_invalid = false;  // mismatched deferred lengths or too many elements

  // What the append-only file records for this call (vsl_api.propagate): when propagate_set,
  // these commands replace the command as called (none: nothing is recorded).
  bool propagate_set = false;
  // A command a script runs (Engine::Call from a script's context): the append-only file records
  // the effects of scripts, not the script.
  bool script_effect = false;
  // A command a script runs itself (not one a built-in runs for a command of the script, as
  // SORT ... STORE does): its changes count as a command's (Redis's server.dirty).
  bool script_call = false;
  std::vector<std::vector<std::string>> propagated;

  // Redis's server.dirty for this call (INFO rdb_changes_since_last_save, the save rules): what
  // the command reported (vsl_api.add_changes, or a built-in's AddChanges), added up; without a
  // report, one per key a module command changed through its handles, or, for a built-in, one
  // per change the host saw (`touches`: stores, removals, expiry changes of keys; never the
  // host's own expiry or eviction). Engine::Run adds it to the counter when the call ends.
  bool changes_reported = false;
  uint64_t changes = 0;
  uint64_t touches = 0;
  void AddChanges(uint64_t n) {
    changes_reported = true;
    changes += n;
  }
  // The change count Engine::Run adds for this call.
  uint64_t ChangeCount() const;

  // Reply accounting, called by every reply builder before writing.
  void CountElement();
  void CountScalar() {
    CountElement();
    PopCompleted();
  }
  void PopCompleted() {
    while (!open.empty() && open.back().remaining == 0) open.pop_back();
  }
  void ResetReplies(size_t mark) {
    out_mark = mark;
    top_replies = 0;
    open.clear();
    reply_error = false;
    reply_invalid = false;
  }
};

// The invocation running on this thread (innermost, for nested internal calls): the only one
// whose handles the SDK's entry points accept. Set by Engine::Run around a command.
const CommandCtx* RunningCtx();
class RunningScope {
 public:
  explicit RunningScope(const CommandCtx* ctx);
  ~RunningScope();
  RunningScope(const RunningScope&) = delete;
  RunningScope& operator=(const RunningScope&) = delete;

 private:
  const CommandCtx* prev_;
};

}  // namespace vessel::engine

#endif  // VESSEL_HOST_ENGINE_CONTEXT_H_
