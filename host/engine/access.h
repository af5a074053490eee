// The engine's view of access control: users, authentication and command permissions. host/acl
// implements AccessControl and installs it (Engine::set_access); with none installed (engine unit
// tests) every client is authenticated and may run every command.
//
// Locking rule: users are immutable snapshots (AccessUser) shared through shared_ptr. A change to
// any user (ACL SETUSER, DELUSER, LOAD, requirepass) publishes new snapshots under the
// implementation's mutex and then bumps generation() with a release store. A session keeps its
// own snapshot and the generation it read it at; before checking a command it compares that with
// generation() (one relaxed load on the hot path) and re-reads its user when they differ. So a
// permission change applies to every connected client from its next command on, as in Redis.
#ifndef VESSEL_HOST_ENGINE_ACCESS_H_
#define VESSEL_HOST_ENGINE_ACCESS_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace vessel::engine {

struct CommandSpec;
class Session;

// Redis's ACL categories in the order of its ACLCommandCategories table; a command's category
// bits are 1 << index.
inline constexpr std::string_view kAclCategories[] = {
    "keyspace", "read",   "write",       "set",       "sortedset",  "list",        "hash",
    "string",   "bitmap", "hyperloglog", "geo",       "stream",     "pubsub",      "admin",
    "fast",     "slow",   "blocking",    "dangerous", "connection", "transaction", "scripting"};
inline constexpr int kAclCategoryCount = static_cast<int>(std::size(kAclCategories));
// The index of a category name (case-insensitive, without '@'), or -1.
int AclCategoryIndex(std::string_view name);
// The categories of a command, derived as Redis does: @write from WRITE, @read from READONLY,
// @admin and @dangerous from ADMIN, @fast or @slow, @blocking, @pubsub from the pubsub flag, the
// group's category (generic = @keyspace, string, list, ...), plus the command's extra_acl and
// its module's own category (CommandSpec::module_acl). Bits index Registry::acl_categories(),
// whose first entries are kAclCategories.
uint64_t AclCategoryBits(const CommandSpec& cmd);
// For the SDK slot a module will declare its categories with ("@read @hash", space separated,
// '@' optional): the CommandSpec::extra_acl entries that make them the command's categories
// beside the flag-implied ones (the group then adds none). false with *error on an unknown name.
bool ModuleAclCategories(std::string_view text, std::vector<std::string>* extra_acl,
                         std::string* error);

// An immutable snapshot of a user (host/acl derives its User from it).
class AccessUser {
 public:
  virtual ~AccessUser() = default;
  const std::string& name() const { return name_; }
  // Identifies the user across snapshots: kept by ACL SETUSER, new after DELUSER or ACL LOAD.
  uint64_t incarnation() const { return incarnation_; }
  // May run every command on every key and channel: the engine skips the permission check.
  bool unrestricted() const { return unrestricted_; }
  // Enabled and without password: connections start authenticated as this (default) user.
  bool open() const { return open_; }
  // Any password works (the nopass flag), enabled or not.
  bool nopass() const { return nopass_; }

 protected:
  std::string name_;
  uint64_t incarnation_ = 0;
  bool unrestricted_ = false;
  bool open_ = false;
  bool nopass_ = false;
};

class AccessControl {
 public:
  virtual ~AccessControl() = default;

  // Moves (release) after every change to the users.
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  // The default user is open (enabled, nopass): new connections need no AUTH.
  bool default_open() const { return default_open_.load(std::memory_order_acquire); }

  virtual std::shared_ptr<const AccessUser> DefaultUser() = 0;
  // The current snapshot of `user` (same name and incarnation), or null when it was deleted.
  virtual std::shared_ptr<const AccessUser> Current(const AccessUser& user) = 0;
  // AUTH and HELLO AUTH: the user when enabled and the password matches (constant-time), else
  // null after recording the failure in the ACL log (`cmd_name` is the command as typed).
  virtual std::shared_ptr<const AccessUser> Authenticate(Session& s, std::string_view user,
                                                         std::string_view password,
                                                         std::string_view cmd_name) = 0;
  // Checks s's user may run cmd with these arguments: "" when allowed, else Redis's error line
  // (-NOPERM ..., without the '-'), after recording the denial in the ACL log. `in_exec`: the
  // command was queued by MULTI and EXEC runs it now (EXEC's wording of the error).
  virtual std::string Check(Session& s, const AccessUser& user, const CommandSpec& cmd,
                            const std::string_view* argv, int argc, bool in_exec) = 0;
  // Redis's ACLUserCheckCmdWithUnrestrictedKeyAccess: whether one of the user's selectors both
  // allows cmd with these arguments and reaches every key with the access `keyspec_flags` asks
  // for (VSL_KS_ACCESS: read; INSERT, DELETE, UPDATE: write), through allkeys or a "*" pattern.
  // SORT's BY and GET patterns read keys no key spec names: they need this.
  virtual bool UnrestrictedKeyAccess(const AccessUser& user, const CommandSpec& cmd,
                                     const std::string_view* argv, int argc,
                                     uint32_t keyspec_flags) = 0;
  // Whether a user of this name exists (CLIENT KILL USER).
  virtual bool HasUser(std::string_view name) = 0;
  // Protected mode refuses a connection from this peer ("ip:port" or "[ip]:port").
  virtual bool RefusesPeer(std::string_view peer) = 0;

 protected:
  void Publish(bool default_open) {
    default_open_.store(default_open, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }

 private:
  std::atomic<uint64_t> generation_{1};
  std::atomic<bool> default_open_{true};
};

// Whether argv[i] is a secret MONITOR and SLOWLOG show as "(redacted)", as Redis does: AUTH's
// arguments, HELLO's AUTH username and password, ACL SETUSER's rules, and the values CONFIG SET
// gives sensitive parameters (requirepass, tls-key-file-pass, ...).
bool RedactedArgument(const CommandSpec& cmd, const std::string_view* argv, int argc, int i);

// Redis's text for a connection refused by protected mode (with its trailing CRLF).
extern const char kProtectedModeDenied[];

}  // namespace vessel::engine

#endif  // VESSEL_HOST_ENGINE_ACCESS_H_
