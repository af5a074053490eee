// COMMAND and its subcommands, all derived from the command specs (built-in and module).
//
// Deliberate differences: module commands do not carry Redis's "module" flag in COMMAND INFO. The
// in-tree families implement Redis's own commands and clients compare their COMMAND INFO with
// Redis's; MODULE LIST, COMMAND DOCS and COMMAND LIST FILTERBY MODULE name the module. COMMAND
// DOCS adds each command's syntax string ("syntax"); a module command's "arguments" are the tree
// its descriptor declares or, without one, the tree derived from that syntax (command_args.h);
// built-in commands have no "arguments" and no "history".
#include <algorithm>
#include <bit>

#include "host/engine/access.h"
#include "host/engine/builtins.h"
#include "host/engine/command_args.h"

namespace vessel::engine {

int AclCategoryIndex(std::string_view name) {
  for (int i = 0; i < kAclCategoryCount; ++i)
    if (EqualsIgnoreCase(name, kAclCategories[i])) return i;
  return -1;
}

uint64_t AclCategoryBits(const CommandSpec& c) {
  uint64_t bits = 0;
  auto add = [&](std::string_view cat) {
    const int i = AclCategoryIndex(cat);
    if (i >= 0) bits |= uint64_t{1} << i;
  };
  if (c.flags & VSL_CMD_WRITE) add("write");
  // As Redis's setImplicitACLCategories: read-only scripting commands (EVAL_RO) are not @read.
  if ((c.flags & VSL_CMD_READONLY) && c.group != "scripting") add("read");
  if (c.flags & VSL_CMD_ADMIN) {
    add("admin");
    add("dangerous");
  }
  if (c.flags & kCmdPubsub) add("pubsub");
  if (c.flags & VSL_CMD_BLOCKING) add("blocking");
  add(c.flags & VSL_CMD_FAST ? "fast" : "slow");
  // Redis lists the categories of each command explicitly; the group gives them here, except
  // for containers (only @slow in Redis) and commands whose extra_acl starts with '!' ("!name":
  // that category instead of the group's, as WAIT is @connection in the generic group).
  const bool own_group = !c.is_container() && (c.extra_acl.empty() || c.extra_acl[0][0] != '!');
  const std::string& g = own_group ? c.group : std::string();
  if (g.empty()) {
  } else if (g == "generic") {
    add("keyspace");
  } else if (g == "transactions") {
    add("transaction");
  } else if (g == "sorted-set") {
    add("sortedset");
  } else if (g == "pubsub") {
    // @pubsub comes from the flag: PUBSUB's subcommands carry it, PUBSUB HELP does not.
  } else if (g != "server") {
    add(g);
  }
  for (const auto& extra : c.extra_acl) add(extra[0] == '!' ? extra.substr(1) : extra);
  return bits | c.module_acl;
}

bool ModuleAclCategories(std::string_view text, std::vector<std::string>* extra_acl,
                         std::string* error) {
  extra_acl->clear();
  for (std::string word : SplitWords(text)) {
    if (!word.empty() && word[0] == '@') word.erase(0, 1);
    const int i = AclCategoryIndex(word);
    if (i < 0) {
      *error = Cat("unknown ACL category '", word, "'");
      return false;
    }
    extra_acl->push_back(Cat(extra_acl->empty() ? "!" : "", kAclCategories[i]));
  }
  if (extra_acl->empty()) extra_acl->push_back("!");  // declared none: no group category
  return true;
}

namespace {

Engine& E(CommandCtx* ctx) { return *ctx->engine; }

// Redis's addReplyFlagsForCommand, in its order: may_replicate and sentinel are hidden there too.
std::vector<std::string_view> FlagNames(const CommandSpec& c) {
  static const std::pair<uint64_t, const char*> kFlags[] = {
      {VSL_CMD_WRITE, "write"},
      {VSL_CMD_READONLY, "readonly"},
      {VSL_CMD_DENYOOM, "denyoom"},
      {VSL_CMD_ADMIN, "admin"},
      {kCmdPubsub, "pubsub"},
      {VSL_CMD_NOSCRIPT, "noscript"},
      {VSL_CMD_BLOCKING, "blocking"},
      {kCmdLoading, "loading"},
      {kCmdStale, "stale"},
      {kCmdSkipMonitor, "skip_monitor"},
      {kCmdSkipSlowlog, "skip_slowlog"},
      {kCmdAsking, "asking"},
      {VSL_CMD_FAST, "fast"},
      {kCmdNoAuth, "no_auth"},
      {kCmdNoMandatoryKeys, "no_mandatory_keys"},
      {kCmdNoAsyncLoading, "no_async_loading"},
      {kCmdNoMulti, "no_multi"}};
  std::vector<std::string_view> out;
  for (auto& [bit, name] : kFlags) {
    if (c.flags & bit) out.push_back(name);
  }
  // As Redis's populateCommandMovableKeys: a key spec that is not an index and a range, or a
  // function that finds keys.
  bool movable = c.getkeys != nullptr;
  for (const KeySpec& k : c.keyspecs)
    movable |=
        !k.begin_keyword.empty() || (k.flags & (VSL_KS_KEYNUM | VSL_KS_INCOMPLETE | kKsUnknown));
  if (movable) out.push_back("movablekeys");
  if (c.flags & kCmdAllowBusy) out.push_back("allow_busy");
  return out;
}

// In the order of the category table (Redis's ACLCommandCategories, then the modules'), which
// COMMAND INFO follows.
std::vector<std::string> AclCategories(const Registry& r, const CommandSpec& c) {
  const uint64_t bits = AclCategoryBits(c);
  std::vector<std::string> out;
  for (size_t i = 0; i < r.acl_categories().size(); ++i)
    if (bits & (uint64_t{1} << i)) out.push_back(Cat("@", r.acl_categories()[i]));
  return out;
}

std::vector<std::string_view> KeySpecFlags(uint32_t f) {
  static const std::pair<uint32_t, const char*> kNames[] = {
      {VSL_KS_RO, "RO"},
      {VSL_KS_RW, "RW"},
      {VSL_KS_OW, "OW"},
      {VSL_KS_RM, "RM"},
      {VSL_KS_ACCESS, "access"},
      {VSL_KS_UPDATE, "update"},
      {VSL_KS_INSERT, "insert"},
      {VSL_KS_DELETE, "delete"},
      {kKsNotKey, "not_key"},
      {VSL_KS_INCOMPLETE, "incomplete"},
      {VSL_KS_VARIABLE_FLAGS, "variable_flags"}};
  std::vector<std::string_view> out;
  for (auto& [bit, name] : kNames)
    if (f & bit) out.push_back(name);
  return out;
}

void ReplyKeySpec(CommandCtx* ctx, const KeySpec& k) {
  resp::Writer& w = W(ctx);
  w.Aggregate(resp::AggKind::kMap, k.notes.empty() ? 3 : 4);
  if (!k.notes.empty()) {
    w.Bulk("notes");
    w.Bulk(k.notes);
  }
  w.Bulk("flags");
  const auto flags = KeySpecFlags(k.flags);
  w.Aggregate(resp::AggKind::kSet, static_cast<int64_t>(flags.size()));
  for (auto f : flags) w.Simple(f);
  w.Bulk("begin_search");
  w.Aggregate(resp::AggKind::kMap, 2);
  w.Bulk("type");
  if (k.flags & kKsUnknown) {
    w.Bulk("unknown");
    w.Bulk("spec");
    w.Aggregate(resp::AggKind::kMap, 0);
    w.Bulk("find_keys");
    w.Aggregate(resp::AggKind::kMap, 2);
    w.Bulk("type");
    w.Bulk("unknown");
    w.Bulk("spec");
    w.Aggregate(resp::AggKind::kMap, 0);
    return;
  }
  if (k.begin_keyword.empty()) {
    w.Bulk("index");
    w.Bulk("spec");
    w.Aggregate(resp::AggKind::kMap, 1);
    w.Bulk("index");
    w.Int(k.begin_index);
  } else {
    w.Bulk("keyword");
    w.Bulk("spec");
    w.Aggregate(resp::AggKind::kMap, 2);
    w.Bulk("keyword");
    w.Bulk(k.begin_keyword);
    w.Bulk("startfrom");
    w.Int(k.begin_index);
  }
  w.Bulk("find_keys");
  w.Aggregate(resp::AggKind::kMap, 2);
  w.Bulk("type");
  if (k.flags & VSL_KS_KEYNUM) {
    w.Bulk("keynum");
    w.Bulk("spec");
    w.Aggregate(resp::AggKind::kMap, 3);
    w.Bulk("keynumidx");
    w.Int(k.keynum_index);
    w.Bulk("firstkey");
    w.Int(k.first_key);
    w.Bulk("keystep");
    w.Int(k.key_step);
  } else {
    w.Bulk("range");
    w.Bulk("spec");
    w.Aggregate(resp::AggKind::kMap, 3);
    w.Bulk("lastkey");
    w.Int(k.last_key);
    w.Bulk("keystep");
    w.Int(k.key_step);
    w.Bulk("limit");
    w.Int(k.limit);
  }
}

std::vector<const CommandSpec*> Sorted(const StrMap<std::unique_ptr<CommandSpec>>& m) {
  std::vector<const CommandSpec*> v;
  for (auto& [name, spec] : m) v.push_back(spec.get());
  std::sort(v.begin(), v.end(),
            [](const CommandSpec* a, const CommandSpec* b) { return a->name < b->name; });
  return v;
}

void ReplyCommandInfo(CommandCtx* ctx, const CommandSpec& c) {
  resp::Writer& w = W(ctx);
  w.Aggregate(resp::AggKind::kArray, 10);
  w.Bulk(c.name);
  w.Int(c.arity);
  const auto flags = FlagNames(c);
  w.Aggregate(resp::AggKind::kSet, static_cast<int64_t>(flags.size()));
  for (auto f : flags) w.Simple(f);
  w.Int(c.legacy_first);
  w.Int(c.legacy_last);
  w.Int(c.legacy_step);
  const auto cats = AclCategories(E(ctx).registry(), c);
  w.Aggregate(resp::AggKind::kSet, static_cast<int64_t>(cats.size()));
  for (const auto& a : cats) w.Simple(a);
  w.Aggregate(resp::AggKind::kSet, static_cast<int64_t>(c.tips.size()));
  for (const auto& t : c.tips) w.Bulk(t);
  w.Aggregate(resp::AggKind::kArray, static_cast<int64_t>(c.keyspecs.size()));
  for (const KeySpec& k : c.keyspecs) ReplyKeySpec(ctx, k);
  const auto subs = Sorted(c.subcommands);
  w.Aggregate(resp::AggKind::kArray, static_cast<int64_t>(subs.size()));
  for (const CommandSpec* s : subs) ReplyCommandInfo(ctx, *s);
}

// Redis's addReplyCommandArgList: each argument a map of name, type and the fields it has.
void ReplyArgs(resp::Writer& w, const std::vector<CommandArg>& args) {
  w.Aggregate(resp::AggKind::kArray, static_cast<int64_t>(args.size()));
  for (const CommandArg& a : args) {
    const bool nested = a.type == VSL_ARG_ONEOF || a.type == VSL_ARG_BLOCK;
    w.Aggregate(resp::AggKind::kMap, 2 + (a.key_spec_index >= 0) + !a.token.empty() +
                                         !a.summary.empty() + !a.since.empty() +
                                         !a.deprecated_since.empty() + (a.flags != 0) + nested);
    w.Bulk("name");
    w.Bulk(a.name);
    w.Bulk("type");
    w.Bulk(ArgTypeName(a.type));
    if (a.key_spec_index >= 0) {
      w.Bulk("key_spec_index");
      w.Int(a.key_spec_index);
    }
    auto field = [&](std::string_view k, const std::string& v) {
      if (v.empty()) return;
      w.Bulk(k);
      w.Bulk(v);
    };
    field("token", a.token);
    field("summary", a.summary);
    field("since", a.since);
    field("deprecated_since", a.deprecated_since);
    if (a.flags != 0) {
      static const std::pair<uint32_t, const char*> kFlags[] = {
          {VSL_ARG_OPTIONAL, "optional"},
          {VSL_ARG_MULTIPLE, "multiple"},
          {VSL_ARG_MULTIPLE_TOKEN, "multiple_token"}};
      w.Bulk("flags");
      w.Aggregate(resp::AggKind::kSet, std::popcount(a.flags));
      for (auto& [bit, name] : kFlags)
        if (a.flags & bit) w.Simple(name);
    }
    if (nested) {
      w.Bulk("arguments");
      ReplyArgs(w, a.subargs);
    }
  }
}

void ReplyCommandDocs(CommandCtx* ctx, const CommandSpec& c) {
  resp::Writer& w = W(ctx);
  int64_t n = 1 + !c.summary.empty() + !c.since.empty() + !c.complexity.empty() +
              (c.module != nullptr) + !c.syntax.empty() + !c.args.empty() + !c.subcommands.empty();
  w.Aggregate(resp::AggKind::kMap, n);
  auto field = [&](std::string_view k, std::string_view v) {
    if (v.empty()) return;
    w.Bulk(k);
    w.Bulk(v);
  };
  field("summary", c.summary);
  field("since", c.since);
  w.Bulk("group");
  w.Bulk(c.group.empty() ? "module" : c.group);
  field("complexity", c.complexity);
  if (c.module != nullptr) field("module", c.module->name);
  field("syntax", c.syntax);
  if (!c.args.empty()) {
    w.Bulk("arguments");
    ReplyArgs(w, c.args);
  }
  if (!c.subcommands.empty()) {
    w.Bulk("subcommands");
    const auto subs = Sorted(c.subcommands);
    w.Aggregate(resp::AggKind::kMap, static_cast<int64_t>(subs.size()));
    for (const CommandSpec* s : subs) {
      w.Bulk(s->name);
      ReplyCommandDocs(ctx, *s);
    }
  }
}

// Finds "name" or "container|sub".
const CommandSpec* FindByName(Engine& e, std::string_view name) {
  std::string lower;
  AsciiLower(name, &lower);
  const size_t bar = lower.find('|');
  if (bar == std::string::npos) return e.registry().Find(lower);
  const CommandSpec* parent = e.registry().Find(lower.substr(0, bar));
  if (parent == nullptr) return nullptr;
  auto it = parent->subcommands.find(std::string_view(lower).substr(bar + 1));
  return it == parent->subcommands.end() ? nullptr : it->second.get();
}

// COMMAND
void CmdCommand(CommandCtx* ctx) {
  const auto all = Sorted(E(ctx).registry().commands());
  W(ctx).Aggregate(resp::AggKind::kArray, static_cast<int64_t>(all.size()));
  for (const CommandSpec* c : all) ReplyCommandInfo(ctx, *c);
}

// COMMAND COUNT
void CmdCommandCount(CommandCtx* ctx) {
  W(ctx).Int(static_cast<int64_t>(E(ctx).registry().commands().size()));
}

// COMMAND INFO [command-name [command-name ...]]
void CmdCommandInfo(CommandCtx* ctx) {
  if (ctx->argc == 2) return CmdCommand(ctx);
  W(ctx).Aggregate(resp::AggKind::kArray, ctx->argc - 2);
  for (int i = 2; i < ctx->argc; ++i) {
    const CommandSpec* c = FindByName(E(ctx), Arg(ctx, i));
    c != nullptr ? ReplyCommandInfo(ctx, *c) : W(ctx).Null();
  }
}

// COMMAND DOCS [command-name [command-name ...]]
void CmdCommandDocs(CommandCtx* ctx) {
  std::vector<const CommandSpec*> cmds;
  if (ctx->argc == 2) {
    cmds = Sorted(E(ctx).registry().commands());
  } else {
    for (int i = 2; i < ctx->argc; ++i)
      if (const CommandSpec* c = FindByName(E(ctx), Arg(ctx, i))) cmds.push_back(c);
  }
  W(ctx).Aggregate(resp::AggKind::kMap, static_cast<int64_t>(cmds.size()));
  for (const CommandSpec* c : cmds) {
    W(ctx).Bulk(c->name);
    ReplyCommandDocs(ctx, *c);
  }
}

// COMMAND GETKEYS command [arg [arg ...]] and COMMAND GETKEYSANDFLAGS ...
void GetKeys(CommandCtx* ctx, bool with_flags) {
  const std::string_view* argv = ctx->argv + 2;
  const int argc = ctx->argc - 2;
  std::string lower;
  AsciiLower(argv[0], &lower);
  const CommandSpec* c = E(ctx).registry().Find(lower);
  if (c != nullptr && c->is_container() && argc >= 2) {
    std::string sub;
    AsciiLower(argv[1], &sub);
    auto it = c->subcommands.find(sub);
    c = it == c->subcommands.end() ? nullptr : it->second.get();
  }
  if (c == nullptr) return W(ctx).ErrorLine("ERR Invalid command specified");
  // As Redis's doesCommandHaveKeys, checked before the arity: not_key specs do not count.
  if (std::all_of(c->keyspecs.begin(), c->keyspecs.end(),
                  [](const KeySpec& k) { return (k.flags & kKsNotKey) != 0; }))
    return W(ctx).ErrorLine("ERR The command has no key arguments");
  if (!c->ArityOk(argc))
    return W(ctx).ErrorLine("ERR Invalid number of arguments specified for command");
  KeyRefs refs;
  ExtractKeys(*c, argv, argc, &refs);
  if (refs.empty()) return W(ctx).ErrorLine("ERR Invalid arguments specified for command");
  W(ctx).Aggregate(resp::AggKind::kArray, static_cast<int64_t>(refs.size()));
  for (const KeyRef& r : refs) {
    if (!with_flags) {
      W(ctx).Bulk(argv[r.arg_index]);
      continue;
    }
    W(ctx).Aggregate(resp::AggKind::kArray, 2);
    W(ctx).Bulk(argv[r.arg_index]);
    const auto flags = KeySpecFlags(r.flags);
    W(ctx).Aggregate(resp::AggKind::kSet, static_cast<int64_t>(flags.size()));
    for (auto f : flags) W(ctx).Simple(f);
  }
}
void CmdCommandGetKeys(CommandCtx* ctx) { GetKeys(ctx, false); }
void CmdCommandGetKeysAndFlags(CommandCtx* ctx) { GetKeys(ctx, true); }

// COMMAND LIST [FILTERBY MODULE module-name | ACLCAT category | PATTERN pattern]
void CmdCommandList(CommandCtx* ctx) {
  std::string_view kind, value;
  if (ctx->argc == 5 && EqualsIgnoreCase(Arg(ctx, 2), "filterby")) {
    kind = Arg(ctx, 3);
    value = Arg(ctx, 4);
    if (!EqualsIgnoreCase(kind, "module") && !EqualsIgnoreCase(kind, "aclcat") &&
        !EqualsIgnoreCase(kind, "pattern"))
      return ReplySyntaxError(ctx);
  } else if (ctx->argc != 2) {
    return ReplySyntaxError(ctx);
  }
  std::vector<std::string> names;
  auto consider = [&](const CommandSpec& c) {
    if (EqualsIgnoreCase(kind, "module")) {
      if (c.module == nullptr || c.module->name != value) return;
    } else if (EqualsIgnoreCase(kind, "aclcat")) {
      bool found = false;
      for (const auto& cat : AclCategories(E(ctx).registry(), c))
        found |= EqualsIgnoreCase(cat.substr(1), value);
      if (!found) return;
    } else if (EqualsIgnoreCase(kind, "pattern")) {
      if (!GlobMatch(value, c.name, true)) return;
    }
    names.push_back(c.name);
  };
  for (const CommandSpec* c : Sorted(E(ctx).registry().commands())) {
    consider(*c);
    for (const CommandSpec* s : Sorted(c->subcommands)) consider(*s);
  }
  W(ctx).Aggregate(resp::AggKind::kArray, static_cast<int64_t>(names.size()));
  for (const auto& n : names) W(ctx).Bulk(n);
}

void CmdCommandHelp(CommandCtx* ctx) {
  static const char* kLines[] = {"COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                                 "(no subcommand)",
                                 "    Return details about all commands.",
                                 "COUNT",
                                 "    Return the total number of commands in this server.",
                                 "LIST",
                                 "    Return a list of all commands in this server.",
                                 "INFO [<command-name> ...]",
                                 "    Return details about multiple commands.",
                                 "    If no command names are given, documentation details for all",
                                 "    commands are returned.",
                                 "DOCS [<command-name> ...]",
                                 "    Return documentation details about multiple commands.",
                                 "    If no command names are given, documentation details for all",
                                 "    commands are returned.",
                                 "GETKEYS <full-command>",
                                 "    Return the keys from a full command.",
                                 "GETKEYSANDFLAGS <full-command>",
                                 "    Return the keys and the access flags from a full command.",
                                 "HELP",
                                 "    Print this help."};
  W(ctx).Aggregate(resp::AggKind::kArray, std::size(kLines));
  for (const char* l : kLines) W(ctx).Simple(l);
}

constexpr uint64_t kL = kCmdLoading | kCmdStale;

}  // namespace

void RegisterCommandCommand(Registry& r) {
  const char* s = "server";
  // clang-format off
  AddBuiltins(r, {
      {.name = "COMMAND", .arity = -1, .flags = kL, .fn = CmdCommand, .group = s, .since = "2.8.13",
       .summary = "Returns detailed information about all commands.", .syntax = "",
       .complexity = "O(N)", .tips = "nondeterministic_output_order", .acl = "connection"},
  });
  // clang-format on
  // clang-format off
  AddBuiltins(r, {
      {.name = "COUNT", .arity = 2, .flags = kL, .fn = CmdCommandCount, .group = s,
       .since = "2.8.13", .summary = "Returns a count of commands.", .syntax = "",
       .complexity = "O(1)", .acl = "connection"},
      {.name = "INFO", .arity = -2, .flags = kL, .fn = CmdCommandInfo, .group = s,
       .since = "2.8.13", .summary = "Returns information about one, multiple or all commands.",
       .syntax = "[command-name [command-name ...]]",
       .complexity = "O(N) where N is the number of commands to look up",
       .tips = "nondeterministic_output_order", .acl = "connection"},
      {.name = "DOCS", .arity = -2, .flags = kL, .fn = CmdCommandDocs, .group = s, .since = "7.0.0",
       .summary = "Returns documentary information about one, multiple or all commands.",
       .syntax = "[command-name [command-name ...]]",
       .complexity = "O(N) where N is the number of commands to look up",
       .tips = "nondeterministic_output_order", .acl = "connection"},
      {.name = "GETKEYS", .arity = -4, .flags = kL, .fn = CmdCommandGetKeys, .group = s,
       .since = "2.8.13", .summary = "Extracts the key names from an arbitrary command.",
       .syntax = "command [arg [arg ...]]",
       .complexity = "O(N) where N is the number of arguments to the command", .acl = "connection"},
      {.name = "GETKEYSANDFLAGS", .arity = -4, .flags = kL, .fn = CmdCommandGetKeysAndFlags,
       .group = s, .since = "7.0.0",
       .summary = "Extracts the key names and access flags for an arbitrary command.",
       .syntax = "command [arg [arg ...]]",
       .complexity = "O(N) where N is the number of arguments to the command", .acl = "connection"},
      {.name = "LIST", .arity = -2, .flags = kL, .fn = CmdCommandList, .group = s, .since = "7.0.0",
       .summary = "Returns a list of command names.",
       .syntax = "[FILTERBY MODULE module-name | ACLCAT category | PATTERN pattern]",
       .complexity = "O(N) where N is the total number of Redis commands",
       .tips = "nondeterministic_output_order", .acl = "connection"},
      {.name = "HELP", .arity = 2, .flags = kL, .fn = CmdCommandHelp, .group = s, .since = "5.0.0",
       .summary = "Returns helpful text about the different subcommands.", .syntax = "",
       .complexity = "O(1)", .acl = "connection"},
  }, "command");
  // clang-format on
}

}  // namespace vessel::engine
