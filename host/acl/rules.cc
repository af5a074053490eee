// The ACL rule language (Redis 7.0's ACLSetUser and ACLSetSelector) and the command catalog the
// rules name commands and categories from.
#include <algorithm>
#include <cctype>

#include "host/acl/crypto.h"
#include "host/acl/user.h"
#include "host/engine/strutil.h"

namespace vessel::acl {

int LiteralPrefix(std::string_view pattern) {
  if (pattern.empty() || pattern.back() != '*') return -1;
  const std::string_view prefix = pattern.substr(0, pattern.size() - 1);
  return prefix.find_first_of("*?[\\") == std::string_view::npos ? static_cast<int>(prefix.size())
                                                                 : -1;
}

namespace {

using engine::EqualsIgnoreCase;

Catalog::Entry MakeEntry(const engine::CommandSpec* spec) {
  Catalog::Entry e{spec, engine::AclCategoryBits(*spec), {}};
  for (const auto& [name, sub] : spec->subcommands) e.subs.push_back(MakeEntry(sub.get()));
  std::sort(e.subs.begin(), e.subs.end(), [](const Catalog::Entry& a, const Catalog::Entry& b) {
    return a.spec->name < b.spec->name;
  });
  return e;
}

void IndexEntry(const Catalog::Entry& e, std::vector<const Catalog::Entry*>* by_id) {
  if (e.spec->id < by_id->size()) (*by_id)[e.spec->id] = &e;
  for (const auto& s : e.subs) IndexEntry(s, by_id);
}

// ACLStringHasSpaces: spaces (isspace) and NUL bytes are refused in names and patterns.
bool HasSpaces(std::string_view s) {
  for (char c : s)
    if (std::isspace(static_cast<unsigned char>(c)) || c == '\0') return true;
  return false;
}

// ACLChangeSelectorPerm: a command's bit, its first-args reset, and the bits of its subcommands.
void ChangePerm(Selector* s, const Catalog::Entry& e, bool allow) {
  s->SetCommand(e.spec->id, allow);
  s->firstargs.erase(e.spec->id);
  for (const auto& sub : e.subs) s->SetCommand(sub.spec->id, allow);
}

void SetCategory(Selector* s, const std::vector<Catalog::Entry>& entries, uint64_t bit,
                 bool allow) {
  for (const auto& e : entries) {
    if (e.categories & bit) ChangePerm(s, e, allow);
    if (!e.subs.empty()) SetCategory(s, e.subs, bit, allow);
  }
}

void AddFirstArg(Selector* s, uint32_t id, std::string_view arg) {
  auto& args = s->firstargs[id];
  for (const auto& a : args)
    if (EqualsIgnoreCase(a, arg)) return;
  args.emplace_back(arg);
}

// "+cmd", "+cmd|sub" and "+cmd|firstarg".
RuleError AllowCommand(Selector* s, std::string_view name, const Catalog& catalog) {
  const size_t bar = name.rfind('|');
  if (bar == std::string_view::npos) {
    const Catalog::Entry* e = catalog.Find(name);
    if (e == nullptr) return RuleError::kUnknown;
    ChangePerm(s, *e, true);
    return RuleError::kOk;
  }
  const Catalog::Entry* e = catalog.Find(name.substr(0, bar));
  if (e == nullptr) return RuleError::kUnknown;
  if (e->spec->parent != nullptr) return RuleError::kFirstArgOfSub;
  const std::string_view sub = name.substr(bar + 1);
  if (sub.empty() || sub.find('\0') == 0) return RuleError::kSyntax;
  if (!e->subs.empty()) {
    const Catalog::Entry* full = catalog.Find(name);
    if (full == nullptr) return RuleError::kUnknown;
    ChangePerm(s, *full, true);
  } else {
    AddFirstArg(s, e->spec->id, sub.substr(0, sub.find('\0')));
  }
  return RuleError::kOk;
}

// "~pattern" and "%RW~pattern".
RuleError AddKeyPattern(Selector* s, std::string_view op) {
  if (s->allkeys) return RuleError::kKeyAfterAll;
  uint32_t perms = 0;
  size_t offset = 1;
  if (op[0] == '%') {
    for (; offset < op.size(); ++offset) {
      const char c = static_cast<char>(std::toupper(static_cast<unsigned char>(op[offset])));
      if (c == 'R' && !(perms & kKeyRead)) {
        perms |= kKeyRead;
      } else if (c == 'W' && !(perms & kKeyWrite)) {
        perms |= kKeyWrite;
      } else if (op[offset] == '~') {
        ++offset;
        break;
      } else {
        return RuleError::kSyntax;
      }
    }
    // Redis 7.0 accepts a bare "%" and then aborts describing it; refuse it instead.
    if (perms == 0) return RuleError::kSyntax;
  } else {
    perms = kKeyAll;
  }
  const std::string_view pattern = op.substr(std::min(offset, op.size()));
  if (HasSpaces(pattern)) return RuleError::kSyntax;
  for (KeyPattern& k : s->keys) {
    if (k.pattern == pattern) {
      k.perms |= perms;
      return RuleError::kOk;
    }
  }
  s->keys.push_back({perms, std::string(pattern), LiteralPrefix(pattern)});
  return RuleError::kOk;
}

RuleError ApplyToSelector(Selector* s, std::string_view op, const Catalog& catalog) {
  if (EqualsIgnoreCase(op, "allkeys") || op == "~*") {
    s->allkeys = true;
    s->keys.clear();
  } else if (EqualsIgnoreCase(op, "resetkeys")) {
    s->allkeys = false;
    s->keys.clear();
  } else if (EqualsIgnoreCase(op, "allchannels") || op == "&*") {
    s->allchannels = true;
    s->channels.clear();
  } else if (EqualsIgnoreCase(op, "resetchannels")) {
    s->allchannels = false;
    s->channels.clear();
  } else if (EqualsIgnoreCase(op, "allcommands") || EqualsIgnoreCase(op, "+@all")) {
    s->commands.set();
    s->allcommands = true;
    s->firstargs.clear();
  } else if (EqualsIgnoreCase(op, "nocommands") || EqualsIgnoreCase(op, "-@all")) {
    s->commands.reset();
    s->allcommands = false;
    s->firstargs.clear();
  } else if (op[0] == '~' || op[0] == '%') {
    return AddKeyPattern(s, op);
  } else if (op[0] == '&') {
    if (s->allchannels) return RuleError::kChannelAfterAll;
    const std::string_view pattern = op.substr(1);
    if (HasSpaces(pattern)) return RuleError::kSyntax;
    if (std::find(s->channels.begin(), s->channels.end(), pattern) == s->channels.end())
      s->channels.emplace_back(pattern);
    s->allchannels = false;
  } else if ((op[0] == '+' || op[0] == '-') && (op.size() < 2 || op[1] != '@')) {
    // A command name ends at a NUL byte, as Redis reads it as a C string.
    const std::string_view name = op.substr(1, op.find('\0', 1) - 1);
    if (op[0] == '+') return AllowCommand(s, name, catalog);
    const Catalog::Entry* e = catalog.Find(name);
    if (e == nullptr) return RuleError::kUnknown;
    ChangePerm(s, *e, false);
  } else if (op[0] == '+' || op[0] == '-') {
    const std::string_view name = op.substr(2, op.find('\0', 2) - 2);
    const int cat = catalog.CategoryIndex(name);
    if (cat < 0 || name.empty()) return RuleError::kUnknown;
    SetCategory(s, catalog.top(), uint64_t{1} << cat, op[0] == '+');
  } else {
    return RuleError::kSyntax;
  }
  return RuleError::kOk;
}

Selector NewSelector(bool root, bool pubsub_allchannels) {
  Selector s;
  s.root = root;
  s.allchannels = pubsub_allchannels;
  return s;
}

}  // namespace

// ---- Catalog ----

Catalog::Catalog(const engine::Registry& registry) : categories_(registry.acl_categories()) {
  for (const auto& [name, spec] : registry.commands()) top_.push_back(MakeEntry(spec.get()));
  std::sort(top_.begin(), top_.end(),
            [](const Entry& a, const Entry& b) { return a.spec->name < b.spec->name; });
  by_id_.assign(engine::kMaxCommandIds, nullptr);
  for (const auto& e : top_) IndexEntry(e, &by_id_);
}

int Catalog::CategoryIndex(std::string_view name) const {
  for (size_t i = 0; i < categories_.size(); ++i)
    if (EqualsIgnoreCase(name, categories_[i])) return static_cast<int>(i);
  return -1;
}

const Catalog::Entry* Catalog::Find(std::string_view name) const {
  std::string lower;
  engine::AsciiLower(name, &lower);
  const size_t bar = lower.find('|');
  const std::string_view base = std::string_view(lower).substr(0, bar);
  auto it = std::lower_bound(top_.begin(), top_.end(), base,
                             [](const Entry& e, std::string_view n) { return e.spec->name < n; });
  if (it == top_.end() || it->spec->name != base) return nullptr;
  if (bar == std::string::npos) return &*it;
  const std::string_view sub = std::string_view(lower).substr(bar + 1);
  if (sub.find('|') != std::string_view::npos) return nullptr;
  for (const Entry& s : it->subs)
    if (s.spec->sub_name == sub) return &s;
  return nullptr;
}

// ---- errors ----

std::string_view RuleErrorText(RuleError e) {
  switch (e) {
    case RuleError::kUnknown:
      return "Unknown command or category name in ACL";
    case RuleError::kSyntax:
      return "Syntax error";
    case RuleError::kKeyAfterAll:
      return "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does "
             "not have any effect. Try 'resetkeys' to start with an empty list of patterns";
    case RuleError::kChannelAfterAll:
      return "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and "
             "does not have any effect. Try 'resetchannels' to start with an empty list of "
             "channels";
    case RuleError::kNoSuchPassword:
      return "The password you are trying to remove from the user does not exist";
    case RuleError::kBadHash:
      return "The password hash must be exactly 64 characters and contain only lowercase "
             "hexadecimal characters";
    case RuleError::kFirstArgOfSub:
      return "Allowing first-arg of a subcommand is not supported";
    case RuleError::kOk:
      break;
  }
  return "Wrong format";
}

// ---- User ----

User::User(std::string name, uint64_t incarnation, bool pubsub_allchannels) {
  name_ = std::move(name);
  incarnation_ = incarnation;
  selectors_.push_back(NewSelector(true, pubsub_allchannels));
  Seal();
}

std::vector<std::string_view> User::FlagNames() const {
  std::vector<std::string_view> out;
  if (flags_ & kEnabled) out.push_back("on");
  if (flags_ & kDisabled) out.push_back("off");
  if (flags_ & kNoPass) out.push_back("nopass");
  if (flags_ & kSkipSanitize) out.push_back("skip-sanitize-payload");
  if (flags_ & kSanitize) out.push_back("sanitize-payload");
  return out;
}

void User::Seal() {
  unrestricted_ = false;
  for (const Selector& s : selectors_) unrestricted_ |= s.allcommands && s.allkeys && s.allchannels;
  nopass_ = flags_ & kNoPass;
  open_ = (flags_ & kEnabled) && nopass_;
}

RuleError User::Apply(std::string_view op, const Catalog& catalog, bool pubsub_allchannels) {
  if (op.empty()) return RuleError::kOk;
  if (EqualsIgnoreCase(op, "on")) {
    flags_ = (flags_ | kEnabled) & ~kDisabled;
  } else if (EqualsIgnoreCase(op, "off")) {
    flags_ = (flags_ | kDisabled) & ~kEnabled;
  } else if (EqualsIgnoreCase(op, "skip-sanitize-payload")) {
    flags_ = (flags_ | kSkipSanitize) & ~kSanitize;
  } else if (EqualsIgnoreCase(op, "sanitize-payload")) {
    flags_ = (flags_ | kSanitize) & ~kSkipSanitize;
  } else if (EqualsIgnoreCase(op, "nopass")) {
    flags_ |= kNoPass;
    passwords_.clear();
  } else if (EqualsIgnoreCase(op, "resetpass")) {
    flags_ &= ~kNoPass;
    passwords_.clear();
  } else if (op[0] == '>' || op[0] == '#') {
    std::string hash;
    if (op[0] == '>') {
      hash = Sha256Hex(op.substr(1));
    } else {
      if (!IsPasswordHash(op.substr(1))) return RuleError::kBadHash;
      hash = std::string(op.substr(1));
    }
    if (std::find(passwords_.begin(), passwords_.end(), hash) == passwords_.end())
      passwords_.push_back(std::move(hash));
    flags_ &= ~kNoPass;
  } else if (op[0] == '<' || op[0] == '!') {
    std::string hash;
    if (op[0] == '<') {
      hash = Sha256Hex(op.substr(1));
    } else {
      if (!IsPasswordHash(op.substr(1))) return RuleError::kBadHash;
      hash = std::string(op.substr(1));
    }
    auto it = std::find(passwords_.begin(), passwords_.end(), hash);
    if (it == passwords_.end()) return RuleError::kNoSuchPassword;
    passwords_.erase(it);
  } else if (op[0] == '(' && op.back() == ')') {
    Selector s = NewSelector(false, pubsub_allchannels);
    std::vector<std::string> args;
    // Unbalanced quotes leave the selector empty, as sdssplitargs returning NULL does in Redis.
    if (SplitArgs(op.substr(1, op.size() - 2), &args)) {
      for (const std::string& a : args) {
        const RuleError e = ApplyToSelector(&s, a, catalog);
        if (e != RuleError::kOk) return e;
      }
    }
    selectors_.push_back(std::move(s));
  } else if (EqualsIgnoreCase(op, "clearselectors")) {
    selectors_.resize(1);
  } else if (EqualsIgnoreCase(op, "reset")) {
    Apply("resetpass", catalog, pubsub_allchannels);
    Apply("resetkeys", catalog, pubsub_allchannels);
    Apply("resetchannels", catalog, pubsub_allchannels);
    if (pubsub_allchannels) Apply("allchannels", catalog, pubsub_allchannels);
    Apply("off", catalog, pubsub_allchannels);
    Apply("sanitize-payload", catalog, pubsub_allchannels);
    Apply("clearselectors", catalog, pubsub_allchannels);
    Apply("-@all", catalog, pubsub_allchannels);
  } else {
    return ApplyToSelector(&selectors_[0], op, catalog);
  }
  return RuleError::kOk;
}

// ---- argument splitting ----

bool MergeSelectorArgs(const std::vector<std::string>& args, std::vector<std::string>* out,
                       size_t* bad) {
  out->clear();
  std::string selector;
  bool open = false;
  size_t start = 0;
  for (size_t j = 0; j < args.size(); ++j) {
    const std::string& op = args[j];
    if (!op.empty() && op[0] == '(' && op.back() != ')') {
      selector = op;  // a later unclosed "(" restarts the selector, as in Redis
      open = true;
      start = j;
      continue;
    }
    if (open) {
      selector += ' ';
      selector += op;
      if (!op.empty() && op.back() == ')') {
        open = false;
        out->push_back(std::move(selector));
        selector.clear();
      }
      continue;
    }
    out->push_back(op);
  }
  if (open) {
    *bad = start;
    return false;
  }
  return true;
}

bool SplitArgs(std::string_view line, std::vector<std::string>* out) {
  out->clear();
  // sdssplitargs reads a C string: a NUL byte ends the line.
  line = line.substr(0, line.find('\0'));
  auto at = [&](size_t i) -> char { return i < line.size() ? line[i] : '\0'; };
  auto is_hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  auto hex_value = [](char c) {
    return std::isdigit(static_cast<unsigned char>(c))
               ? c - '0'
               : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
  };
  size_t p = 0;
  while (true) {
    while (p < line.size() && std::isspace(static_cast<unsigned char>(line[p]))) ++p;
    if (p >= line.size()) return true;
    bool inq = false, insq = false, done = false;
    std::string current;
    while (!done) {
      const char c = at(p);
      if (inq) {
        if (c == '\\' && at(p + 1) == 'x' && is_hex(at(p + 2)) && is_hex(at(p + 3))) {
          current += static_cast<char>(hex_value(at(p + 2)) * 16 + hex_value(at(p + 3)));
          p += 3;
        } else if (c == '\\' && at(p + 1) != '\0') {
          ++p;
          switch (at(p)) {
            case 'n':
              current += '\n';
              break;
            case 'r':
              current += '\r';
              break;
            case 't':
              current += '\t';
              break;
            case 'b':
              current += '\b';
              break;
            case 'a':
              current += '\a';
              break;
            default:
              current += at(p);
          }
        } else if (c == '"') {
          if (at(p + 1) != '\0' && !std::isspace(static_cast<unsigned char>(at(p + 1))))
            return false;
          done = true;
        } else if (c == '\0') {
          return false;
        } else {
          current += c;
        }
      } else if (insq) {
        if (c == '\\' && at(p + 1) == '\'') {
          ++p;
          current += '\'';
        } else if (c == '\'') {
          if (at(p + 1) != '\0' && !std::isspace(static_cast<unsigned char>(at(p + 1))))
            return false;
          done = true;
        } else if (c == '\0') {
          return false;
        } else {
          current += c;
        }
      } else {
        switch (c) {
          case ' ':
          case '\n':
          case '\r':
          case '\t':
          case '\0':
            done = true;
            break;
          case '"':
            inq = true;
            break;
          case '\'':
            insq = true;
            break;
          default:
            current += c;
        }
      }
      if (at(p) != '\0') ++p;
    }
    out->push_back(std::move(current));
  }
}

}  // namespace vessel::acl
