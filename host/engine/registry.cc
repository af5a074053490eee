// Command specs, registered value types and loaded modules.
#include "host/engine/registry.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstddef>
#include <cstring>

#include "host/engine/abi_sizes.h"
#include "host/engine/access.h"
#include "host/engine/command_args.h"
#include "host/engine/entry_table.h"
#include "host/engine/strutil.h"
#include "spdlog/spdlog.h"

namespace vessel::engine {
namespace {

// True when a module struct of `size` bytes contains `field` (structs grow at the end).
#define VSL_COVERS(size, type, field) (offsetof(type, field) + sizeof(((type*)0)->field) <= (size))

std::string Str(const char* s) { return s == nullptr ? std::string() : std::string(s); }

bool ValidName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    if (c <= ' ' || c == '|' || c > '~') return false;
  }
  return true;
}

bool ConvertKeySpec(const vsl_keyspec* in, size_t stride, KeySpec* out, std::string* error) {
  const uint32_t size = in->struct_size;
  if (size > stride) {
    *error = Cat("struct_size ", size, " is larger than keyspec_stride ", stride);
    return false;
  }
  *error = abi::CheckStructSize("vsl_keyspec", abi::kKeySpecSizes, sizeof(vsl_keyspec), in, size);
  if (!error->empty()) return false;
  out->flags = in->flags;
  if (out->flags & ~VSL_KS_ALL_FLAGS) {
    *error = Cat("unknown key spec flags ", out->flags & ~VSL_KS_ALL_FLAGS);
    return false;
  }
  if (!(out->flags & (VSL_KS_RO | VSL_KS_RW | VSL_KS_OW | VSL_KS_RM))) {
    *error = "key spec needs one of RO, RW, OW, RM";
    return false;
  }
  out->begin_index = in->begin_index;
  out->begin_keyword = Str(in->begin_keyword);
  if (out->begin_keyword.empty() && out->begin_index <= 0) {
    *error = "key spec begin_index must be > 0 without a keyword";
    return false;
  }
  if (VSL_COVERS(size, vsl_keyspec, last_key)) out->last_key = in->last_key;
  if (VSL_COVERS(size, vsl_keyspec, key_step)) out->key_step = in->key_step == 0 ? 1 : in->key_step;
  if (VSL_COVERS(size, vsl_keyspec, limit)) out->limit = in->limit;
  if (VSL_COVERS(size, vsl_keyspec, keynum_index)) out->keynum_index = in->keynum_index;
  if (VSL_COVERS(size, vsl_keyspec, first_key)) out->first_key = in->first_key;
  if (VSL_COVERS(size, vsl_keyspec, notes)) out->notes = Str(in->notes);
  if (out->key_step < 1 || out->limit < 0 || out->keynum_index < 0 || out->first_key < 0) {
    *error = "key spec has a negative step, limit or index";
    return false;
  }
  if (out->limit > 0 && out->last_key != -1) {
    *error = "key spec limit needs last_key -1";
    return false;
  }
  return true;
}

}  // namespace

void ExtractKeys(const CommandSpec& cmd, const std::string_view* argv, int argc, KeyRefs* out,
                 bool partial) {
  out->clear();
  if (cmd.getkeys != nullptr) {
    // As Redis's getKeysFromCommandWithSpecs: incomplete specs leave the finding to the command's
    // own function (MIGRATE ... KEYS, Redis's migrateGetKeys).
    for (const KeySpec& ks : cmd.keyspecs) {
      if (ks.flags & VSL_KS_INCOMPLETE) {
        cmd.getkeys(argv, argc, out);
        return;
      }
    }
  }
  for (const KeySpec& ks : cmd.keyspecs) {
    // As Redis without GET_KEYSPEC_INCLUDE_NOT_KEYS; an unknown spec finds nothing itself.
    if (ks.flags & (kKsNotKey | kKsUnknown)) continue;
    int first = 0;
    if (ks.begin_keyword.empty()) {
      first = ks.begin_index;
    } else {
      const int from = ks.begin_index > 0 ? ks.begin_index : argc + ks.begin_index;
      const int step = ks.begin_index > 0 ? 1 : -1;
      for (int i = from; i >= 1 && i < argc; i += step) {
        if (EqualsIgnoreCase(argv[i], ks.begin_keyword)) {
          first = i + 1;
          break;
        }
      }
      if (first == 0) continue;  // keyword absent: no keys from this spec
    }
    int last = 0;
    if (ks.flags & VSL_KS_KEYNUM) {
      int64_t numkeys = 0;
      if (ks.keynum_index >= argc - first) goto invalid;
      if (!ParseInt64(argv[first + ks.keynum_index], &numkeys) || numkeys < 0 ||
          numkeys > INT_MAX / 2)
        goto invalid;
      first += ks.first_key;
      last = first + static_cast<int>(numkeys) * ks.key_step - ks.key_step;
      if (numkeys == 0) continue;
    } else if (ks.last_key >= 0) {
      last = first + ks.last_key;
    } else if (ks.limit == 0) {
      last = argc + ks.last_key;
    } else {
      last = first + ((argc - first) / ks.limit + ks.last_key);
    }
    if (last >= argc || last < first || first >= argc) goto invalid;
    for (int i = first; i <= last; i += ks.key_step) {
      out->push_back({static_cast<uint32_t>(i), ks.flags});
    }
    continue;
  invalid:
    if (partial) continue;
    out->clear();  // as Redis: a malformed command has no keys; its handler reports why
    return;
  }
  if (cmd.getkeys != nullptr) cmd.getkeys(argv, argc, out);
}

void DeriveLegacyRange(CommandSpec* c) {
  c->legacy_first = c->legacy_last = c->legacy_step = 0;
  if (c->keyspecs.empty()) return;
  auto plain = [](const KeySpec& k) {
    return k.begin_keyword.empty() && !(k.flags & (VSL_KS_KEYNUM | kKsUnknown));
  };
  if (c->keyspecs.size() == 1 && plain(c->keyspecs[0])) {
    const KeySpec& k = c->keyspecs[0];
    c->legacy_first = k.begin_index;
    c->legacy_last = k.last_key >= 0 ? k.begin_index + k.last_key : k.last_key;
    c->legacy_step = k.key_step;
    return;
  }
  int first = INT_MAX;
  unsigned last = 0;
  int prev_last = 0;
  for (const KeySpec& k : c->keyspecs) {
    if (!plain(k) || k.key_step != 1 || (prev_last && prev_last != k.begin_index - 1)) continue;
    first = std::min(first, k.begin_index);
    int abs_last = k.last_key >= 0 ? k.last_key + k.begin_index : k.last_key;
    last = std::max(last, static_cast<unsigned>(abs_last));
    prev_last = static_cast<int>(last);
  }
  if (first == INT_MAX) return;
  c->legacy_first = first;
  c->legacy_last = static_cast<int>(last);
  c->legacy_step = 1;
}

Registry::Registry() : acl_categories_(std::begin(kAclCategories), std::end(kAclCategories)) {
  types_.emplace_back(nullptr);
}

int Registry::AclCategoryIndex(std::string_view name) const {
  for (size_t i = 0; i < acl_categories_.size(); ++i)
    if (EqualsIgnoreCase(name, acl_categories_[i])) return static_cast<int>(i);
  return -1;
}

bool Registry::ModuleCategoryBit(vsl_module* m, uint64_t* bit, std::string* error) {
  *bit = 0;
  const std::string& name = m->name;
  // Redis 7.2's moduleVerifyResourceName: the name must survive ACL rules ("+@name") as a word.
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return true;
  const int at = AclCategoryIndex(name);
  if (at >= 0 && at < kAclCategoryCount) return true;  // Redis's own: not the module's to extend
  if (at >= 0) {
    *bit = uint64_t{1} << at;
    return true;
  }
  if (acl_categories_.size() >= kMaxAclCategories) {
    *error = Cat("too many ACL categories for the module's own (at most ", kMaxAclCategories, ")");
    return false;
  }
  *bit = uint64_t{1} << acl_categories_.size();
  acl_categories_.push_back(name);
  return true;
}
Registry::~Registry() = default;

bool Registry::AddCommand(std::unique_ptr<CommandSpec> spec, std::string* error) {
  if (commands_.contains(spec->name)) {
    *error = Cat("duplicate command name '", spec->name, "'");
    return false;
  }
  if (next_id_ >= kMaxCommandIds) {
    *error = Cat("too many commands (at most ", kMaxCommandIds, ")");
    return false;
  }
  spec->id = next_id_++;
  DeriveLegacyRange(spec.get());
  std::string name = spec->name;
  commands_.emplace(std::move(name), std::move(spec));
  return true;
}

bool Registry::AddSubcommand(std::string_view parent, std::unique_ptr<CommandSpec> spec,
                             std::string* error) {
  auto it = commands_.find(parent);
  if (it == commands_.end()) {
    *error = Cat("no container command '", parent, "'");
    return false;
  }
  CommandSpec* p = it->second.get();
  if (p->subcommands.contains(spec->sub_name)) {
    *error = Cat("duplicate subcommand '", spec->name, "'");
    return false;
  }
  if (next_id_ >= kMaxCommandIds) {
    *error = Cat("too many commands (at most ", kMaxCommandIds, ")");
    return false;
  }
  spec->id = next_id_++;
  spec->parent = p;
  DeriveLegacyRange(spec.get());
  std::string sub = spec->sub_name;
  p->subcommands.emplace(std::move(sub), std::move(spec));
  return true;
}

std::vector<const CommandSpec*> Registry::AllCommands() const {
  std::vector<const CommandSpec*> out;
  for (const auto& [name, c] : commands_) {
    out.push_back(c.get());
    for (const auto& [sub, sc] : c->subcommands) out.push_back(sc.get());
  }
  std::sort(out.begin(), out.end(),
            [](const CommandSpec* a, const CommandSpec* b) { return a->name < b->name; });
  return out;
}

const CommandSpec* Registry::Find(std::string_view lower_name) const {
  auto it = commands_.find(lower_name);
  return it == commands_.end() ? nullptr : it->second.get();
}

const CommandSpec* CommandSpec::Subcommand(std::string_view name) const {
  std::string lower;
  AsciiLower(name, &lower);
  auto it = subcommands.find(lower);
  return it == subcommands.end() ? nullptr : it->second.get();
}

const CommandSpec* Registry::Resolve(const std::string_view* argv, int argc) const {
  if (argc < 1) return nullptr;
  std::string lower;
  AsciiLower(argv[0], &lower);
  const CommandSpec* cmd = Find(lower);
  if (cmd != nullptr && cmd->is_container() && argc >= 2) return cmd->Subcommand(argv[1]);
  return cmd;
}

bool Registry::AddModuleCommand(vsl_module* m, const vsl_command_desc* d, std::string* error) {
  if (d == nullptr) {
    *error = "command descriptor missing";
    return false;
  }
  if (std::string why = abi::CheckStructSize("vsl_command_desc", abi::kCommandDescSizes,
                                             sizeof(vsl_command_desc), d, d->struct_size);
      !why.empty()) {
    *error = Cat("command descriptor: ", why);  // its name may lie past what it has
    return false;
  }
  const std::string raw = Str(d->name);
  // "NAME|SUB" (ABI 1.7): a subcommand of the container NAME.
  const size_t bar = raw.find('|');
  const std::string top = raw.substr(0, bar);
  const std::string sub = bar == std::string::npos ? std::string() : raw.substr(bar + 1);
  if (!ValidName(top) || (bar != std::string::npos && !ValidName(sub))) {
    *error = Cat("invalid command name '", raw, "'");
    return false;
  }
  auto spec = std::make_unique<CommandSpec>();
  AsciiLower(raw, &spec->name);
  AsciiLower(sub, &spec->sub_name);
  auto fail = [&](std::string why) {
    *error = Cat("command '", spec->name, "': ", why);
    return false;
  };
  std::string parent;
  AsciiLower(top, &parent);
  const CommandSpec* container = bar == std::string::npos ? nullptr : Find(parent);
  if (bar != std::string::npos &&
      (container == nullptr || container->module != m || container->handler != nullptr))
    return fail(Cat("'", parent, "' is no container this module registered"));
  if (d->arity == 0) return fail("arity must not be 0");
  if (d->flags & ~VSL_CMD_ALL_FLAGS)
    return fail(Cat("unknown flag bits ", d->flags & ~VSL_CMD_ALL_FLAGS));
  if ((d->flags & VSL_CMD_WRITE) && (d->flags & VSL_CMD_READONLY))
    return fail("both WRITE and READONLY");
  // No handler: a container, which only holds subcommands (as Redis's XGROUP and XINFO).
  const bool is_container = d->handler == nullptr;
  if (is_container &&
      (bar != std::string::npos || d->flags != 0 || d->n_keyspecs != 0 || d->arity != -2))
    return fail("no handler (a container has arity -2, no flags and no key specs)");
  spec->arity = d->arity;
  spec->flags = d->flags;
  spec->handler = d->handler;
  spec->module = m;
  if (d->n_keyspecs > 0) {
    if (d->keyspecs == nullptr) return fail("n_keyspecs > 0 but no keyspecs");
    const size_t stride = d->keyspec_stride == 0 ? sizeof(vsl_keyspec) : d->keyspec_stride;
    if (stride < sizeof(vsl_keyspec) &&
        std::none_of(std::begin(abi::kKeySpecSizes), std::end(abi::kKeySpecSizes),
                     [&](const abi::ReleasedSize& r) { return r.size == stride; }))
      return fail(Cat("keyspec_stride ", stride, " is no released vsl_keyspec size"));
    for (uint32_t i = 0; i < d->n_keyspecs; ++i) {
      const auto* ks = reinterpret_cast<const vsl_keyspec*>(
          reinterpret_cast<const char*>(d->keyspecs) + i * stride);
      KeySpec k;
      std::string why;
      if (!ConvertKeySpec(ks, stride, &k, &why)) return fail(Cat("key spec ", i, ": ", why));
      // A READONLY command may read-modify a key (PFCOUNT caches its count: RW, as in Redis;
      // such keys are locked exclusively), never overwrite or delete one.
      if ((d->flags & VSL_CMD_READONLY) && (k.flags & (VSL_KS_OW | VSL_KS_RM)))
        return fail("READONLY command with an overwritten or deleted key");
      spec->keyspecs.push_back(std::move(k));
    }
  }
  // A command that reads or writes keys must say where they are: without key specs its handler
  // could open none (key_open would answer NULL), so the mistake is refused at load time.
  if (spec->keyspecs.empty() && !(d->flags & VSL_CMD_NO_KEYS) && !is_container) {
    if (d->flags & (VSL_CMD_READONLY | VSL_CMD_WRITE)) {
      return fail(
          "WRITE or READONLY command without key specs (declare its keys, or flag it "
          "VSL_CMD_NO_KEYS)");
    }
    spec->flags |= VSL_CMD_NO_KEYS;
  }
  if (VSL_COVERS(d->struct_size, vsl_command_desc, summary)) spec->summary = Str(d->summary);
  if (VSL_COVERS(d->struct_size, vsl_command_desc, syntax)) spec->syntax = Str(d->syntax);
  if (VSL_COVERS(d->struct_size, vsl_command_desc, complexity))
    spec->complexity = Str(d->complexity);
  if (VSL_COVERS(d->struct_size, vsl_command_desc, since)) spec->since = Str(d->since);
  if (VSL_COVERS(d->struct_size, vsl_command_desc, group)) spec->group = Str(d->group);
  if (spec->group.empty()) spec->group = "module";
  if (VSL_COVERS(d->struct_size, vsl_command_desc, tips) && d->tips != nullptr)
    spec->tips = SplitWords(d->tips);
  // The module's own category (its name) holds the commands whose group names no Redis category
  // (VEC.* of the "vector" group are @vectors) and those that declare it in acl_categories.
  bool own_category = ::vessel::engine::AclCategoryIndex(
                          spec->group == "sorted-set" ? "sortedset" : spec->group) < 0;
  if (VSL_COVERS(d->struct_size, vsl_command_desc, acl_categories) &&
      d->acl_categories != nullptr) {
    std::string declared, why;
    for (const std::string& word : SplitWords(d->acl_categories)) {
      const std::string_view bare = word[0] == '@' ? std::string_view(word).substr(1) : word;
      if (::vessel::engine::AclCategoryIndex(bare) < 0 && EqualsIgnoreCase(bare, m->name)) {
        own_category = true;
      } else {
        declared += word + " ";
      }
    }
    if (!ModuleAclCategories(declared, &spec->extra_acl, &why))
      return fail(Cat("acl_categories: ", why));
  }
  // The argument tree of COMMAND DOCS: the module's, or derived from its syntax.
  const bool has_args = VSL_COVERS(d->struct_size, vsl_command_desc, n_args) && d->n_args > 0;
  if (has_args) {
    std::string why;
    if (!ConvertArgs(d->args, d->n_args, spec->keyspecs.size(), &spec->args, &why))
      return fail(Cat("args: ", why));
  } else if (!spec->syntax.empty()) {
    std::string why;
    if (!ParseSyntax(spec->syntax, spec->keyspecs.size(), &spec->args, &why))
      spdlog::warn(
          "module={} cmd={} COMMAND DOCS has no arguments: syntax '{}' is not in Redis's "
          "notation ({})",
          m->name, spec->name, spec->syntax, why);
  }
  if (own_category) {
    uint64_t bit = 0;
    std::string why;
    if (!ModuleCategoryBit(m, &bit, &why)) return fail(why);
    spec->module_acl = bit;
  }
  const std::string name = spec->name;
  if (container != nullptr) {
    if (!AddSubcommand(parent, std::move(spec), error)) return false;
    m->commands.push_back(name);
    return true;
  }
  if (auto* existing = Find(name); existing != nullptr) {
    *error = Cat("duplicate command name '", raw, "' (already registered by ",
                 existing->module ? "module " + existing->module->name : "the host", ")");
    return false;
  }
  if (!AddCommand(std::move(spec), error)) return false;
  m->commands.push_back(name);
  return true;
}

std::string Registry::CheckContainers(const vsl_module* m) const {
  for (const std::string& name : m->commands) {
    const CommandSpec* c = Find(name);
    if (c != nullptr && c->handler == nullptr && c->native == nullptr && !c->is_container())
      return Cat("command '", name, "': a container (no handler) without subcommands");
  }
  return {};
}

bool Registry::AddType(vsl_module* m, const vsl_type_desc* d, const vsl_type** out,
                       std::string* error) {
  if (d == nullptr) {
    *error = "type descriptor missing";
    return false;
  }
  if (std::string why = abi::CheckStructSize("vsl_type_desc", abi::kTypeDescSizes,
                                             sizeof(vsl_type_desc), d, d->struct_size);
      !why.empty()) {
    *error = Cat("type descriptor: ", why);
    return false;
  }
  const std::string name = Str(d->name);
  if (!ValidName(name)) {
    *error = Cat("invalid type name '", name, "'");
    return false;
  }
  if (d->free == nullptr || d->mem_usage == nullptr) {
    *error = Cat("type '", name, "': free and mem_usage are required");
    return false;
  }
  // Saving a value needs serialize and loading it deserialize: a type without them says so with
  // VSL_TYPE_NOT_PERSISTED (ABI 1.6), rather than failing every save of the server.
  const bool can_persist = d->serialize != nullptr && d->deserialize != nullptr;
  bool persisted = can_persist;
  if (VSL_COVERS(d->struct_size, vsl_type_desc, flags)) {
    if (d->flags & ~VSL_TYPE_ALL_FLAGS) {
      *error = Cat("type '", name, "': unknown flag bits ", d->flags & ~VSL_TYPE_ALL_FLAGS);
      return false;
    }
    persisted = !(d->flags & VSL_TYPE_NOT_PERSISTED);
    if (persisted && !can_persist) {
      *error = Cat("type '", name,
                   "': serialize and deserialize are required (or flag it "
                   "VSL_TYPE_NOT_PERSISTED)");
      return false;
    }
  } else if (!can_persist) {
    // Built against an SDK before the flag: it could not say, so it is taken as not persisted.
    spdlog::warn("module={} type={} has no serialize/deserialize: its keys are not saved", m->name,
                 name);
  }
  for (size_t i = 1; i < types_.size(); ++i) {
    if (types_[i]->name == name) {
      *error = Cat("duplicate type name '", name, "' (already registered by module ",
                   types_[i]->module->name, ")");
      return false;
    }
  }
  if (types_.size() >= Entry::kMaxTypes) {
    *error = Cat("too many types (at most ", Entry::kMaxTypes - 1, ")");
    return false;
  }
  auto t = std::make_unique<vsl_type>();
  t->id = static_cast<uint16_t>(types_.size());
  t->name = name;
  t->encoding_version = d->encoding_version;
  t->module = m;
  t->persisted = persisted;
  const size_t n = std::min<size_t>(d->struct_size, sizeof(vsl_type_desc));
  std::memcpy(&t->desc, d, n);  // fields past the module's struct_size stay zero
  t->desc.struct_size = sizeof(vsl_type_desc);
  if (!AssignRdbName(t.get(), error)) return false;
  // ABI 1.7: a type saved in Redis's own RDB encoding. The host reads these bytes itself:
  // strings, lists, sets, hashes, sorted sets (every encoding of each), module records.
  constexpr uint64_t kHostRdbTypes = [] {
    uint64_t m = 0;
    for (int b : {0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 16, 17, 18, 20, 22, 23, 24, 25})
      m |= uint64_t{1} << b;
    return m;
  }();
  if (t->desc.rdb_type != 0 || t->desc.rdb_load_types != 0) {
    const uint32_t own = t->desc.rdb_type;
    const uint64_t loads = t->desc.rdb_load_types;
    if (own >= 64 || !(loads & (uint64_t{1} << own)) || (loads & kHostRdbTypes) != 0 ||
        !persisted) {
      *error = Cat("type '", name,
                   "': rdb_type must be a byte below 64 that rdb_load_types includes, and no "
                   "RDB type the host reads itself (strings, lists, sets, hashes, sorted sets, "
                   "module records)");
      return false;
    }
    for (size_t i = 1; i < types_.size(); ++i) {
      if (types_[i]->desc.rdb_load_types & loads) {
        *error = Cat("type '", name, "': its RDB types are already read by type '", types_[i]->name,
                     "'");
        return false;
      }
    }
  }
  if (t->desc.parts_expired_event != nullptr) {
    constexpr int kClasses = VSL_NOTIFY_GENERIC | VSL_NOTIFY_STRING | VSL_NOTIFY_LIST |
                             VSL_NOTIFY_SET | VSL_NOTIFY_HASH | VSL_NOTIFY_ZSET |
                             VSL_NOTIFY_STREAM | VSL_NOTIFY_MODULE;
    const int c = t->desc.parts_expired_class;
    if (*t->desc.parts_expired_event == '\0' || c == 0 || (c & ~kClasses) != 0 ||
        (c & (c - 1)) != 0) {
      *error = Cat("type '", name, "': parts_expired_event needs a non-empty name and one ",
                   "VSL_NOTIFY_* class");
      return false;
    }
    t->parts_expired_event = t->desc.parts_expired_event;  // the module's string, copied
    t->desc.parts_expired_event = t->parts_expired_event.c_str();
  }
  *out = t.get();
  m->types.push_back(name);
  types_.push_back(std::move(t));
  return true;
}

// Redis's module type names: 9 characters of this set, 6 bits each (module.c).
constexpr std::string_view kRdbNameChars =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

uint64_t RdbTypeId(std::string_view name, uint32_t encver) {
  uint64_t id = 0;
  for (char c : name) id = (id << 6) | kRdbNameChars.find(c);
  return (id << 10) | encver;
}

bool Registry::AssignRdbName(vsl_type* t, std::string* error) {
  const bool declared = t->desc.rdb_name != nullptr;
  std::string name;
  if (declared) {
    name = t->desc.rdb_name;
    if (name.size() != 9 || name.find_first_not_of(kRdbNameChars) != std::string::npos) {
      *error = Cat("type '", t->name, "': invalid rdb_name '", name,
                   "' (9 characters of A-Z a-z 0-9 - _)");
      return false;
    }
  } else {
    // Old modules: the type's name, characters outside the set as '_', padded with '_'.
    for (size_t i = 0; i < 9; ++i) {
      const char c = i < t->name.size() ? t->name[i] : '_';
      name += kRdbNameChars.find(c) == std::string_view::npos ? '_' : c;
    }
  }
  for (size_t i = 1; i < types_.size(); ++i) {
    if (types_[i]->rdb_name != name) continue;
    if (declared) {
      *error = Cat("type '", t->name, "': duplicate rdb_name '", name, "' (type '", types_[i]->name,
                   "')");
      return false;
    }
    t->rdb_name = name;
    t->rdb_error = Cat("type '", t->name, "' has no rdb_name and its default '", name,
                       "' is taken by type '", types_[i]->name, "'");
    return true;
  }
  t->rdb_name = name;
  if (t->encoding_version > 1023) {
    t->rdb_error = Cat("type '", t->name, "' has encoding version ", t->encoding_version,
                       " (RDB module records hold at most 1023)");
  } else {
    t->rdb_id = RdbTypeId(name, t->encoding_version);
    if (t->rdb_id == 0)
      t->rdb_error = Cat("type '", t->name, "': rdb_name AAAAAAAAA with version 0");
  }
  return true;
}

const vsl_type* Registry::TypeByRdbId(uint64_t rdb_id) const {
  for (size_t i = 1; i < types_.size(); ++i)
    if (types_[i]->rdb_id != 0 && (types_[i]->rdb_id >> 10) == (rdb_id >> 10))
      return types_[i].get();
  return nullptr;
}

const vsl_type* Registry::TypeByRdbType(uint8_t rdb_type) const {
  if (rdb_type >= 64) return nullptr;
  for (size_t i = 1; i < types_.size(); ++i)
    if (types_[i]->desc.rdb_load_types & (uint64_t{1} << rdb_type)) return types_[i].get();
  return nullptr;
}

const vsl_type* Registry::TypeByName(std::string_view name) const {
  for (size_t i = 1; i < types_.size(); ++i)
    if (types_[i]->name == name) return types_[i].get();
  return nullptr;
}

vsl_module* Registry::AddModule(std::unique_ptr<vsl_module> m) {
  m->id = static_cast<int>(modules_.size()) + 1;
  modules_.push_back(std::move(m));
  return modules_.back().get();
}

}  // namespace vessel::engine
