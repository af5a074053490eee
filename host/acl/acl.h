// The ACL subsystem: the table of users, the ACL log, the ACL file, and the engine's
// AccessControl (authentication, permission checks, protected mode) on top of them. Created by
// the server after the modules are loaded (rules name module commands), then installed in the
// engine; it lives as long as the engine serves.
//
// Locking rule: mu_ guards users_ (name -> immutable User snapshot) and log_. Every change builds
// new snapshots, swaps them in under mu_, then calls Publish() (engine/access.h), so sessions on
// any worker pick them up at their next command. The catalog is immutable after construction.
#ifndef VESSEL_HOST_ACL_ACL_H_
#define VESSEL_HOST_ACL_ACL_H_

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "host/acl/user.h"
#include "host/engine/engine.h"

namespace vessel::acl {

// One ACL LOG entry (Redis 7.0's fields).
struct LogEntry {
  uint64_t count = 1;
  Verdict reason = Verdict::kCommand;
  bool multi = false;  // context: "multi", else "toplevel"
  std::string object;  // command, key, channel, or the AUTH command as typed
  std::string username;
  int64_t ctime_ms = 0;
  std::string client_info;
};

class Acl final : public engine::AccessControl {
 public:
  explicit Acl(engine::Engine* engine);

  // Loads the users of the configuration ([[users]]) or of the aclfile (not both), as Redis does
  // once the modules are loaded; false with a one-line *error.
  bool LoadAtStartup(std::string* error);
  // requirepass: the default user's password ("" = nopass).
  void SetDefaultPassword(std::string_view password);

  // ACL SETUSER name rules...: "" or the error text (without "ERR ").
  // After ACL SETUSER of `name`: as Redis's ACLKillPubsubClientsIfNeeded, closes that user's
  // clients subscribed to a channel, shard channel or pattern the user may no longer use (self
  // after its reply; the others on their workers).
  void KillRevokedSubscribers(std::string_view name, engine::Session* self);
  std::string SetUser(std::string_view name, const std::vector<std::string>& rules);
  // ACL DELUSER: the number deleted; the clients of a deleted user are closed (`self` after
  // its reply).
  int DelUsers(const std::vector<std::string>& names, engine::Session* self);
  std::shared_ptr<const User> Find(std::string_view name) const;
  std::vector<std::shared_ptr<const User>> Users() const;  // by name
  const Catalog& catalog() const { return catalog_; }
  // ACL LOAD / ACL SAVE with the aclfile: "" or the error text.
  std::string LoadFile(engine::Session* self);
  std::string SaveFile();
  bool has_file() const { return !aclfile_.empty(); }

  // ACL LOG
  void AddLog(engine::Session& s, Verdict reason, bool multi, std::string object,
              std::string username);
  std::vector<LogEntry> Log(size_t count) const;
  void ResetLog();

  // ---- engine::AccessControl ----
  std::shared_ptr<const engine::AccessUser> DefaultUser() override;
  std::shared_ptr<const engine::AccessUser> Current(const engine::AccessUser& user) override;
  std::shared_ptr<const engine::AccessUser> Authenticate(engine::Session& s, std::string_view user,
                                                         std::string_view password,
                                                         std::string_view cmd_name) override;
  std::string Check(engine::Session& s, const engine::AccessUser& user,
                    const engine::CommandSpec& cmd, const std::string_view* argv, int argc,
                    bool in_exec) override;
  bool UnrestrictedKeyAccess(const engine::AccessUser& user, const engine::CommandSpec& cmd,
                             const std::string_view* argv, int argc,
                             uint32_t keyspec_flags) override;
  bool RefusesPeer(std::string_view peer) override;
  bool HasUser(std::string_view name) override;

 private:
  bool PubsubAllChannels() const;
  std::shared_ptr<User> NewDefaultUser();
  // Applies rules to a fresh user; "" or the first error in Redis's startup wording.
  std::string ApplyAll(User* u, const std::vector<std::string>& rules) const;
  // Builds the users of an ACL file; "" on success, else Redis's error text.
  std::string ParseFile(const std::string& text, std::map<std::string, std::shared_ptr<User>>* out);
  // Closes every session authenticated as one of these users (name and incarnation).
  void KillClientsOf(const std::vector<std::shared_ptr<const User>>& users, engine::Session* self);
  void PublishLocked();

  engine::Engine* engine_;
  const Catalog catalog_;
  std::string aclfile_;
  int p_acllog_max_len_, p_pubsub_default_, p_protected_mode_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const User>, std::less<>> users_;
  std::shared_ptr<const User> default_;
  uint64_t next_incarnation_ = 1;
  std::deque<LogEntry> log_;
};

// For pub/sub: whether the session's user may use `channel` (SUBSCRIBE/PUBLISH), or with
// is_pattern the pattern given to PSUBSCRIBE (it must equal one of the user's channel patterns).
// True without access control. Call on the session's worker (the session's user snapshot is
// refreshed by every command, so it is current while its command runs).
bool SessionMayUseChannel(const engine::Session& s, std::string_view channel, bool is_pattern);

// Registers the ACL command and its subcommands (acl_commands.cc).
void RegisterAclCommands(engine::Registry& r);
// Creates the ACL subsystem for a server whose modules are loaded, loads its users and installs
// it in the engine (with the requirepass hook for CONFIG SET). false with *error.
std::unique_ptr<Acl> InstallAcl(engine::Engine* engine, std::string* error);

}  // namespace vessel::acl

#endif  // VESSEL_HOST_ACL_ACL_H_
