// ACL users as Redis 7.0 models them: flags, password hashes and selectors (the root selector
// plus any "(...)" ones), each with a command bitmap, allowed first arguments, key patterns with
// read/write permissions and channel patterns. The rule language of ACL SETUSER applies to a
// User (rules.cc), a User describes itself back in Redis's canonical form (describe.cc), and the
// permission checks run over a User (check.cc).
//
// A User is built by one thread and then published as an immutable snapshot (see
// engine/access.h for the locking rule); nothing here is thread safe on its own.
#ifndef VESSEL_HOST_ACL_USER_H_
#define VESSEL_HOST_ACL_USER_H_

#include <bitset>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "host/engine/access.h"
#include "host/engine/registry.h"

namespace vessel::acl {

// One bit per command id, plus the "future commands" bit that +@all sets (Redis's reserved last
// bit): it tells ACL LIST to describe the user from +@all rather than -@all.
inline constexpr size_t kFutureBit = engine::kMaxCommandIds;
using CommandBits = std::bitset<engine::kMaxCommandIds + 1>;

// The command table as ACL rules see it, built once after the modules are loaded: every command
// and subcommand with its category bits, in a fixed order (by name, subcommands after their
// container) that ACL LIST follows for single-command rules, and the categories, Redis's and
// those the modules added (their commands' own categories, e.g. @vectors).
class Catalog {
 public:
  struct Entry {
    const engine::CommandSpec* spec;
    uint64_t categories;
    std::vector<Entry> subs;
  };
  explicit Catalog(const engine::Registry& registry);
  // "get" or "config|get", case-insensitive; null when unknown.
  const Entry* Find(std::string_view name) const;
  const Entry* ById(uint32_t id) const { return id < by_id_.size() ? by_id_[id] : nullptr; }
  const std::vector<Entry>& top() const { return top_; }
  // The ACL categories (Redis's, then the modules'); an entry's category bits index this.
  const std::vector<std::string>& categories() const { return categories_; }
  // The index of a category name (case-insensitive, without '@'), or -1.
  int CategoryIndex(std::string_view name) const;

 private:
  std::vector<Entry> top_;
  std::vector<std::string> categories_;
  std::vector<const Entry*> by_id_;
};

// Key pattern permissions (Redis's ACL_READ_PERMISSION / ACL_WRITE_PERMISSION).
inline constexpr uint32_t kKeyRead = 1;
inline constexpr uint32_t kKeyWrite = 2;
inline constexpr uint32_t kKeyAll = kKeyRead | kKeyWrite;

struct KeyPattern {
  uint32_t perms;
  std::string pattern;
  // The pattern is a literal prefix then one '*' ("user:*"), matched without the glob matcher:
  // the length of that prefix, else -1.
  int literal_prefix = -1;
};

// KeyPattern::literal_prefix of a pattern.
int LiteralPrefix(std::string_view pattern);

struct Selector {
  bool root = false;
  bool allkeys = false;
  bool allchannels = false;
  bool allcommands = false;
  CommandBits commands;
  // Allowed first arguments of otherwise denied commands (+select|0), by command id.
  std::map<uint32_t, std::vector<std::string>> firstargs;
  std::vector<KeyPattern> keys;
  std::vector<std::string> channels;

  bool Allowed(uint32_t id) const { return id < commands.size() && commands.test(id); }
  void SetCommand(uint32_t id, bool allow) {
    if (id >= commands.size()) return;
    commands.set(id, allow);
    if (!allow) allcommands = false;
  }
};

// Why a rule was refused (Redis's errno values in ACLSetUser).
enum class RuleError {
  kOk,
  kSyntax,           // EINVAL
  kUnknown,          // ENOENT: unknown command or category
  kKeyAfterAll,      // EEXIST
  kChannelAfterAll,  // EISDIR
  kNoSuchPassword,   // ENODEV
  kBadHash,          // EBADMSG
  kFirstArgOfSub,    // ECHILD
};
// Redis's text for the error (ACLSetUserStringError).
std::string_view RuleErrorText(RuleError e);

class User final : public engine::AccessUser {
 public:
  // A new user as ACLCreateUser makes it: off, no password, a root selector with nothing
  // allowed (but all channels when acl-pubsub-default is allchannels).
  User(std::string name, uint64_t incarnation, bool pubsub_allchannels);
  // A copy under another identity (the staging copy ACL SETUSER works on).
  User(const User& other) = default;

  // Applies one rule of the ACL SETUSER language; on error the user may be half changed (callers
  // work on a copy).
  RuleError Apply(std::string_view op, const Catalog& catalog, bool pubsub_allchannels);
  // Recomputes the flags the engine reads (unrestricted, open); call before publishing.
  void Seal();
  void set_incarnation(uint64_t v) { incarnation_ = v; }

  bool enabled() const { return flags_ & kEnabled; }
  const std::vector<std::string>& passwords() const { return passwords_; }
  const std::vector<Selector>& selectors() const { return selectors_; }
  // Flag names in Redis's order: on, off, nopass, skip-sanitize-payload, sanitize-payload.
  std::vector<std::string_view> FlagNames() const;

 private:
  enum : uint32_t {
    kEnabled = 1,
    kDisabled = 2,
    kNoPass = 4,
    kSanitize = 8,
    kSkipSanitize = 16,
  };
  uint32_t flags_ = kDisabled;
  std::vector<std::string> passwords_;  // SHA-256 hex, in insertion order
  std::vector<Selector> selectors_;     // [0] is the root selector
};

// Splits ACL SETUSER arguments, joining a selector spread over several ("(~a" "+get)"); false
// with the first argument of the unclosed selector in *bad.
bool MergeSelectorArgs(const std::vector<std::string>& args, std::vector<std::string>* out,
                       size_t* bad);
// Redis's sdssplitargs: words, "double quoted" with escapes, 'single quoted'; false on
// unbalanced quotes.
bool SplitArgs(std::string_view line, std::vector<std::string>* out);

// ---- describe.cc ----

// The command rules of a selector as ACL LIST prints them ("+@all -@dangerous", "-@all +get").
std::string DescribeCommandRules(const Selector& s, const Catalog& catalog);
// Keys, channels and command rules of a selector.
std::string DescribeSelector(const Selector& s, const Catalog& catalog);
// The whole user after its name, as ACL LIST and the ACL file show it.
std::string DescribeUser(const User& u, const Catalog& catalog);
// The key patterns of a selector for ACL GETUSER ("~a %R~b"), "~*" for allkeys.
std::string DescribeKeys(const Selector& s);
std::string DescribeChannels(const Selector& s);

// ---- check.cc ----

// Redis's ACL_* results, in its numeric order (the order picks which denial is reported).
enum class Verdict { kOk = 0, kCommand = 1, kKey = 2, kAuth = 3, kChannel = 4 };
// ACLCheckAllUserCommandPerm: kOk when any selector allows the command with its keys and
// channels; else the denial to report and, for keys and channels, the argument index in *pos.
Verdict CheckCommand(const User& u, const engine::CommandSpec& cmd, const std::string_view* argv,
                     int argc, int* pos);
// ACLUserCheckCmdWithUnrestrictedKeyAccess: a selector allows the command with its keys and
// channels, and reaches any key with the access keyspec_flags needs (allkeys, or a "*" pattern
// with those permissions).
bool CheckUnrestrictedKeyAccess(const User& u, const engine::CommandSpec& cmd,
                                const std::string_view* argv, int argc, uint32_t keyspec_flags);
// Whether the user may use `channel` (a PUBLISH/SUBSCRIBE channel, or with is_pattern a
// PSUBSCRIBE pattern, which must equal one of the user's channel patterns literally).
bool CheckChannel(const User& u, std::string_view channel, bool is_pattern);
// Whether the user may access `key` with the given VSL_KS_* key spec flags.
bool CheckKey(const User& u, std::string_view key, uint32_t keyspec_flags);

}  // namespace vessel::acl

#endif  // VESSEL_HOST_ACL_USER_H_
