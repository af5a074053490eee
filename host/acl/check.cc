// Permission checks (Redis 7.0's ACLSelectorCheckCmd and friends): the command bit or an allowed
// first argument, every key against the key patterns with the access the key spec declares, and
// the channels of the pub/sub commands.
#include "host/acl/user.h"
#include "host/engine/strutil.h"

namespace vessel::acl {
namespace {

// Redis's key permission needs from a key spec: ACCESS reads, INSERT/DELETE/UPDATE write. A key
// spec with none of them (EXISTS is RO without ACCESS) matches any pattern.
uint32_t KeyNeeds(uint32_t keyspec_flags) {
  uint32_t need = 0;
  if (keyspec_flags & VSL_KS_ACCESS) need |= kKeyRead;
  if (keyspec_flags & (VSL_KS_INSERT | VSL_KS_DELETE | VSL_KS_UPDATE)) need |= kKeyWrite;
  return need;
}

bool SelectorKey(const Selector& s, std::string_view key, uint32_t keyspec_flags) {
  if (s.allkeys) return true;
  const uint32_t need = KeyNeeds(keyspec_flags);
  for (const KeyPattern& k : s.keys) {
    if ((k.perms & need) != need) continue;
    if (k.literal_prefix >= 0 ? key.starts_with(std::string_view(k.pattern).substr(
                                    0, static_cast<size_t>(k.literal_prefix)))
                              : engine::GlobMatch(k.pattern, key))
      return true;
  }
  return false;
}

bool ChannelInList(const std::vector<std::string>& list, std::string_view channel,
                   bool is_pattern) {
  for (const std::string& p : list) {
    if (is_pattern ? p == channel : engine::GlobMatch(p, channel)) return true;
  }
  return false;
}

// Redis's commands_with_channels table: which arguments are channels, and how they are used.
struct ChannelSpec {
  std::string_view name;
  bool publish_or_subscribe;  // checked (unsubscribing is always allowed)
  bool pattern;
  int start, count;  // count -1: every remaining argument
};
constexpr ChannelSpec kChannelSpecs[] = {
    {"subscribe", true, false, 1, -1},    {"ssubscribe", true, false, 1, -1},
    {"unsubscribe", false, false, 1, -1}, {"sunsubscribe", false, false, 1, -1},
    {"psubscribe", true, true, 1, -1},    {"punsubscribe", false, true, 1, -1},
    {"publish", true, false, 1, 1},       {"spublish", true, false, 1, 1},
};

const ChannelSpec* ChannelSpecOf(const engine::CommandSpec& cmd) {
  if (cmd.parent != nullptr || !(cmd.flags & engine::kCmdPubsub)) return nullptr;
  for (const ChannelSpec& c : kChannelSpecs)
    if (cmd.name == c.name) return &c;
  return nullptr;
}

// SET and BITFIELD have VARIABLE_FLAGS key specs in Redis, which asks their getkeys functions
// for the real access (setGetKeys, bitfieldGetKeys). Modules cannot declare such a function yet
// (the strings module declares the widest flags), so the host resolves these two by name.
uint32_t ResolveVariableFlags(const engine::CommandSpec& cmd, const std::string_view* argv,
                              int argc, uint32_t flags) {
  if (cmd.parent != nullptr || cmd.module == nullptr) return flags;
  constexpr uint32_t kReadWrite = VSL_KS_RW | VSL_KS_ACCESS | VSL_KS_UPDATE;
  if (cmd.name == "set") {
    for (int i = 3; i < argc; ++i)
      if (engine::EqualsIgnoreCase(argv[i], "get")) return kReadWrite;
    return VSL_KS_OW | VSL_KS_UPDATE;
  }
  if (cmd.name == "bitfield") {
    for (int i = 2; i < argc; ++i) {
      const int more = argc - i - 1;
      if (engine::EqualsIgnoreCase(argv[i], "get") && more >= 2) {
        i += 2;
      } else if (engine::EqualsIgnoreCase(argv[i], "overflow") && more >= 1) {
        i += 1;
      } else {
        return kReadWrite;  // SET, INCRBY, or a syntax error (assumed to write)
      }
    }
    return VSL_KS_RO | VSL_KS_ACCESS;
  }
  return flags;
}

// Keys found once per check and shared by the selectors.
struct KeyCache {
  bool ready = false;
  engine::KeyRefs refs;
};

Verdict SelectorCheck(const Selector& s, const engine::CommandSpec& cmd,
                      const std::string_view* argv, int argc, int* pos, KeyCache* cache) {
  const uint32_t id = cmd.id;
  if (!s.allcommands && !(cmd.flags & engine::kCmdNoAuth) && !s.Allowed(id)) {
    auto it = s.firstargs.find(id);
    if (argc < 2 || it == s.firstargs.end()) return Verdict::kCommand;
    const int idx = cmd.parent != nullptr ? 2 : 1;
    bool found = false;
    for (const std::string& a : it->second)
      found |= idx < argc && engine::EqualsIgnoreCase(argv[idx], a);
    if (!found) return Verdict::kCommand;
  }
  if (!s.allkeys && !cmd.keyspecs.empty()) {
    if (!cache->ready) {
      engine::ExtractKeys(cmd, argv, argc, &cache->refs);
      for (engine::KeyRef& r : cache->refs)
        r.flags = ResolveVariableFlags(cmd, argv, argc, r.flags);
      cache->ready = true;
    }
    for (const engine::KeyRef& r : cache->refs) {
      if (!SelectorKey(s, argv[r.arg_index], r.flags)) {
        *pos = static_cast<int>(r.arg_index);
        return Verdict::kKey;
      }
    }
  }
  const ChannelSpec* ch = s.allchannels ? nullptr : ChannelSpecOf(cmd);
  if (ch != nullptr && ch->publish_or_subscribe) {
    const int stop = ch->count < 0 ? argc : std::min(argc, ch->start + ch->count);
    for (int i = ch->start; i < stop; ++i) {
      if (!ChannelInList(s.channels, argv[i], ch->pattern)) {
        *pos = i;
        return Verdict::kChannel;
      }
    }
  }
  return Verdict::kOk;
}

}  // namespace

Verdict CheckCommand(const User& u, const engine::CommandSpec& cmd, const std::string_view* argv,
                     int argc, int* pos) {
  Verdict relevant = Verdict::kCommand;
  int local = 0, last = 0;  // as in Redis, `local` carries over between selectors
  KeyCache cache;
  for (const Selector& s : u.selectors()) {
    const Verdict v = SelectorCheck(s, cmd, argv, argc, &local, &cache);
    if (v == Verdict::kOk) return Verdict::kOk;
    if (v > relevant || (v == relevant && local > last)) {
      relevant = v;
      last = local;
    }
  }
  *pos = last;
  return relevant;
}

bool CheckUnrestrictedKeyAccess(const User& u, const engine::CommandSpec& cmd,
                                const std::string_view* argv, int argc, uint32_t keyspec_flags) {
  const uint32_t need = KeyNeeds(keyspec_flags);
  int pos = 0;
  KeyCache cache;
  for (const Selector& s : u.selectors()) {
    if (SelectorCheck(s, cmd, argv, argc, &pos, &cache) != Verdict::kOk) continue;
    if (s.allkeys) return true;
    // Only the literal "*" pattern counts, as in Redis: "a*" or "[a-z]*" leave keys out, and a
    // pattern equivalent to "*" ("**") is not recognised.
    for (const KeyPattern& k : s.keys)
      if ((k.perms & need) == need && k.pattern == "*") return true;
  }
  return false;
}

bool CheckChannel(const User& u, std::string_view channel, bool is_pattern) {
  for (const Selector& s : u.selectors()) {
    if (s.allchannels || ChannelInList(s.channels, channel, is_pattern)) return true;
  }
  return false;
}

bool CheckKey(const User& u, std::string_view key, uint32_t keyspec_flags) {
  for (const Selector& s : u.selectors())
    if (SelectorKey(s, key, keyspec_flags)) return true;
  return false;
}

}  // namespace vessel::acl
