// Command specs, registered value types and loaded modules: everything the host knows about a
// command or a type comes from here. Built once at startup, read-only afterwards (no locks).
#ifndef VESSEL_HOST_ENGINE_REGISTRY_H_
#define VESSEL_HOST_ENGINE_REGISTRY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "host/engine/stats.h"
#include "host/engine/strutil.h"
#include "vessel/module.h"

namespace vessel::engine {
class Registry;
struct CommandCtx;
}  // namespace vessel::engine

// A loaded module (the opaque vsl_module of the SDK).
struct vsl_module {
  int id = 0;  // memory accounting slot; 0 is the host
  std::string name;
  std::string version;
  std::string path;
  std::vector<std::string> args;
  void* handle = nullptr;  // dlopen handle
  bool initializing = false;
  vessel::engine::Registry* registry = nullptr;
  std::string last_error;  // why the last registration failed
  std::vector<std::string> commands;
  std::vector<std::string> types;
};

// A registered value type (the opaque vsl_type of the SDK). Only the fields the module's
// struct_size covers are copied; the rest stay null.
struct vsl_type {
  uint16_t id = 0;
  std::string name;
  uint32_t encoding_version = 0;
  vsl_module* module = nullptr;
  vsl_type_desc desc{};
  // Its name and id in RDB module records (vsl_type_desc.rdb_name, ABI 1.5): 54 bits of name and
  // the 10-bit encoding version. rdb_id 0: cannot be saved, rdb_error says why.
  std::string rdb_name;
  uint64_t rdb_id = 0;
  std::string rdb_error;
  std::string parts_expired_event;  // desc.parts_expired_event points here (ABI 1.5)
  // False for VSL_TYPE_NOT_PERSISTED (ABI 1.6), and for a type of an older module without both
  // serialize and deserialize: saves leave its keys out, DUMP refuses them.
  bool persisted = true;
  // ABI 1.7: saved in one of Redis's own RDB encodings (desc.rdb_type, 0: module records) and
  // loaded from the RDB type bytes of desc.rdb_load_types.
  bool rdb_native() const { return desc.rdb_type != 0; }
};

namespace vessel::engine {

// Host-only command flags, above the SDK's VSL_CMD_* bits.
enum HostFlags : uint64_t {
  kCmdLoading = 1ull << 32,    // allowed while loading
  kCmdStale = 1ull << 33,      // allowed on a stale replica
  kCmdNoMulti = 1ull << 34,    // Redis's no-multi: refused inside MULTI (SHUTDOWN, SAVE)
  kCmdNoAuth = 1ull << 36,     // allowed before AUTH
  kCmdAllowBusy = 1ull << 37,  // flags for COMMAND INFO fidelity only
  kCmdSkipMonitor = 1ull << 39,
  kCmdSkipSlowlog = 1ull << 40,
  kCmdMayReplicate = 1ull << 41,
  kCmdSentinel = 1ull << 42,
  kCmdPubsub = 1ull << 43,
  kCmdExclusiveKeys = 1ull << 44,    // locks its keys exclusively though they are read-only (WATCH)
  kCmdTxWorld = 1ull << 45,          // locks shards itself or changes the db: EXEC takes the world
  kCmdGlobalWorld = 1ull << 46,      // always runs with the whole keyspace held (FLUSHALL, SWAPDB)
  kCmdTxControl = 1ull << 47,        // runs at once inside MULTI, never queued (EXEC, WATCH, QUIT)
  kCmdProtected = 1ull << 48,        // DEBUG: refused unless enable-debug-command allows it
  kCmdNoMandatoryKeys = 1ull << 49,  // COMMAND INFO fidelity only: EVAL and FCALL may have no key
  kCmdNoAsyncLoading = 1ull << 50,   // COMMAND INFO fidelity only: no replica loads asynchronously
  kCmdAsking = 1ull << 51,           // cluster: served in an importing slot without ASKING
};

// Host-only key spec flag, above the SDK's VSL_KS_*: Redis's not_key (shard channels, which cluster
// routing treats as keys): shown by COMMAND INFO, never extracted, locked or tracked.
inline constexpr uint32_t kKsNotKey = 1u << 16;
// Host-only key spec flag: Redis's "unknown" begin_search and find_keys (SORT's BY/GET patterns
// and STORE, which the command finds itself): shown by COMMAND INFO, never extracted.
inline constexpr uint32_t kKsUnknown = 1u << 17;

// One key found in a command's arguments.
struct KeyRef {
  uint32_t arg_index;
  uint32_t flags;  // the key spec's VSL_KS_* flags
};
using KeyRefs = absl::InlinedVector<KeyRef, 4>;

// A key spec with defaults applied (see vsl_keyspec for the meaning of each field).
struct KeySpec {
  uint32_t flags = 0;
  int32_t begin_index = 0;
  std::string begin_keyword;
  int32_t last_key = 0;
  int32_t key_step = 1;
  int32_t limit = 0;
  int32_t keynum_index = 0;
  int32_t first_key = 1;
  std::string notes;
};

// One argument of a command as COMMAND DOCS shows it (Redis 7's argument tree; see
// vsl_command_arg). From the module's descriptor, or derived from the syntax string
// (command_args.h).
struct CommandArg {
  std::string name;
  uint32_t type = VSL_ARG_STRING;  // VSL_ARG_*
  std::string token;
  uint32_t flags = 0;  // VSL_ARG_*
  int32_t key_spec_index = -1;
  std::string summary, since, deprecated_since;
  std::vector<CommandArg> subargs;  // ONEOF and BLOCK
  bool operator==(const CommandArg&) const = default;
};

// A host built-in handler: same calling convention as a module handler.
using NativeHandler = void (*)(CommandCtx* ctx);

struct CommandSpec {
  uint32_t id = 0;       // index of its counters (stats.h), unique per command and subcommand
  std::string name;      // lowercase: "get", or "config|get" for a subcommand
  std::string sub_name;  // lowercase subcommand name ("get"), empty for a top-level command
  int32_t arity = 0;
  uint64_t flags = 0;
  std::vector<KeySpec> keyspecs;
  NativeHandler native = nullptr;
  // Built-ins whose keys live in another database (MOVE, COPY DB) or follow a keyword anywhere
  // (SORT ... STORE) append them here.
  NativeHandler resolve_hook = nullptr;
  // Keys the key specs cannot find (Redis's getkeys_proc: SORT ... STORE destination), appended
  // after theirs by ExtractKeys, for locking and COMMAND GETKEYS alike.
  void (*getkeys)(const std::string_view* argv, int argc, KeyRefs* out) = nullptr;
  // Built-ins that, for some arguments, touch keys their key specs cannot name (SORT BY/GET
  // patterns): true when this call must run with the whole keyspace held.
  bool (*needs_world)(const std::string_view* argv, int argc) = nullptr;
  // Commands whose flags depend on their arguments (EVAL and FCALL take their script's
  // declared flags, as Redis's getCommandFlags): the flags this call is checked with (deny-oom,
  // write) before it runs.
  uint64_t (*call_flags)(const std::string_view* argv, int argc, uint64_t flags) = nullptr;
  uint64_t FlagsFor(const std::string_view* argv, int argc) const {
    return call_flags != nullptr ? call_flags(argv, argc, flags) : flags;
  }
  vsl_cmd_fn handler = nullptr;
  vsl_module* module = nullptr;  // null for built-ins
  std::string summary, syntax, complexity, since, group;
  std::vector<std::string> tips;       // COMMAND INFO tips, e.g. "nondeterministic_output"
  std::vector<std::string> extra_acl;  // ACL categories beyond those the flags imply
  std::vector<CommandArg> args;        // COMMAND DOCS "arguments"; empty: none known
  // Module-added ACL categories (bits at Registry::acl_categories() indexes past Redis's).
  uint64_t module_acl = 0;
  // Container commands (CONFIG, CLIENT, ...) hold subcommands; lookup by lowercase name.
  StrMap<std::unique_ptr<CommandSpec>> subcommands;
  const CommandSpec* parent = nullptr;
  // Legacy (first, last, step) derived from the key specs, for COMMAND INFO.
  int32_t legacy_first = 0, legacy_last = 0, legacy_step = 0;

  bool is_write() const { return flags & VSL_CMD_WRITE; }
  bool is_container() const { return !subcommands.empty(); }
  // A container's subcommand by its name in any case, or null.
  const CommandSpec* Subcommand(std::string_view name) const;
  bool ArityOk(int argc) const { return arity >= 0 ? argc == arity : argc >= -arity; }
};

// Finds the keys of a command in argv in argument order, duplicates kept. A command whose key
// specs point past its arguments (e.g. a bad numkeys) has no keys; the handler reports the
// error. With `partial` (what locking uses, Redis's GET_KEYSPEC_RETURN_PARTIAL), a spec that
// finds nothing is skipped and the keys of the others are kept: PFMERGE dest with no source
// still opens dest. COMMAND GETKEYS is not partial, as in Redis.
void ExtractKeys(const CommandSpec& cmd, const std::string_view* argv, int argc, KeyRefs* out,
                 bool partial = false);

class Registry {
 public:
  Registry();
  ~Registry();

  // Registers a command; false (with *error) on a duplicate or invalid spec.
  bool AddCommand(std::unique_ptr<CommandSpec> spec, std::string* error);
  // Adds a subcommand to a container registered earlier.
  bool AddSubcommand(std::string_view parent, std::unique_ptr<CommandSpec> spec,
                     std::string* error);
  const CommandSpec* Find(std::string_view lower_name) const;
  // The command argv names, in any case, with a container's subcommand (argv[1]) resolved; null
  // when either is unknown. What every caller that runs a command by name uses.
  const CommandSpec* Resolve(const std::string_view* argv, int argc) const;
  const StrMap<std::unique_ptr<CommandSpec>>& commands() const { return commands_; }
  // Every command and subcommand, sorted by name.
  std::vector<const CommandSpec*> AllCommands() const;

  // Validates and converts a module descriptor. false with *error on bad input. A descriptor
  // without handler is a container (ABI 1.7); "NAME|SUB" adds a subcommand to the container NAME
  // the same module registered before.
  bool AddModuleCommand(vsl_module* m, const vsl_command_desc* desc, std::string* error);
  // After a module's init: every container it registered got a subcommand; else the reason.
  std::string CheckContainers(const vsl_module* m) const;
  bool AddType(vsl_module* m, const vsl_type_desc* desc, const vsl_type** out, std::string* error);
  const vsl_type* TypeById(uint16_t id) const {
    return id < types_.size() ? types_[id].get() : nullptr;
  }
  const std::vector<std::unique_ptr<vsl_type>>& types() const { return types_; }
  // The type whose RDB id has the same 54-bit name as `rdb_id` (any encoding version), or null.
  const vsl_type* TypeByRdbId(uint64_t rdb_id) const;
  // The type that loads RDB type byte `rdb_type` in its own encoding (ABI 1.7), or null.
  const vsl_type* TypeByRdbType(uint8_t rdb_type) const;
  const vsl_type* TypeByName(std::string_view name) const;

  vsl_module* AddModule(std::unique_ptr<vsl_module> m);
  const std::vector<std::unique_ptr<vsl_module>>& modules() const { return modules_; }

  // ACL categories: Redis's (kAclCategories, in their order), then those modules added, as Redis
  // 7.2's RedisModule_AddACLCategory appends to its table. A command's category bits index this.
  const std::vector<std::string>& acl_categories() const { return acl_categories_; }
  // The index of a category (case-insensitive, without '@'), or -1.
  int AclCategoryIndex(std::string_view name) const;
  static constexpr size_t kMaxAclCategories = 64;  // one bit each

 private:
  // The category of module m's own commands (its name), added on first use: its bit, or 0 when
  // the name cannot be one (a Redis category's name, or characters other than letters, digits,
  // '-' and '_'); false with *error when the table is full.
  bool ModuleCategoryBit(vsl_module* m, uint64_t* bit, std::string* error);
  bool AssignRdbName(vsl_type* t, std::string* error);
  StrMap<std::unique_ptr<CommandSpec>> commands_;
  uint32_t next_id_ = 0;
  std::vector<std::unique_ptr<vsl_type>> types_;  // index = id; slot 0 unused
  std::vector<std::unique_ptr<vsl_module>> modules_;
  std::vector<std::string> acl_categories_;
};

// Fills legacy_first/last/step from the key specs, as Redis does for COMMAND INFO.
void DeriveLegacyRange(CommandSpec* spec);

}  // namespace vessel::engine

#endif  // VESSEL_HOST_ENGINE_REGISTRY_H_
