// The argument trees of COMMAND DOCS: module descriptors and the syntax-notation parser.
#include "host/engine/command_args.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <utility>

#include "host/engine/abi_sizes.h"
#include "host/engine/strutil.h"

namespace vessel::engine {
namespace {

// ---- the notation, tokenized and parsed into a tree of nodes ----

struct Node {
  enum class Kind { kWord, kOptional, kGroup, kAlt, kRepeat, kEllipsis };
  Kind kind = Kind::kWord;
  std::string word;
  std::vector<Node> items;              // optional, group, repeat: the sequence inside
  std::vector<std::vector<Node>> alts;  // alt: the alternatives
  bool tight = false;                   // alt: "a | b" outside brackets (binds single units)
};

bool IsToken(std::string_view w) {
  bool upper = false;
  for (char c : w) {
    if (c >= 'a' && c <= 'z') return false;
    upper |= c >= 'A' && c <= 'Z';
  }
  return upper;
}

bool IsTokenNode(const Node& n) { return n.kind == Node::Kind::kWord && IsToken(n.word); }
bool IsNameNode(const Node& n) { return n.kind == Node::Kind::kWord && !IsToken(n.word); }

// The node as text, to compare the group before "..." with what precedes it.
std::string Print(const std::vector<Node>& seq);
std::string Print(const Node& n) {
  switch (n.kind) {
    case Node::Kind::kWord:
      return n.word;
    case Node::Kind::kOptional:
      return "[" + Print(n.items) + "]";
    case Node::Kind::kGroup:
      return "<" + Print(n.items) + ">";
    case Node::Kind::kRepeat:
      return "{" + Print(n.items) + "}...";
    case Node::Kind::kEllipsis:
      return "...";
    case Node::Kind::kAlt: {
      std::string s = "(";
      for (const auto& a : n.alts) s += (s.size() > 1 ? " | " : "") + Print(a);
      return s + ")";
    }
  }
  return "";
}
std::string Print(const std::vector<Node>& seq) {
  std::string s;
  for (const Node& n : seq) s += (s.empty() ? "" : " ") + Print(n);
  return s;
}

class Parser {
 public:
  explicit Parser(std::string_view text) {
    size_t i = 0;
    while (i < text.size()) {
      const char c = text[i];
      if (c == ' ' || c == '\t') {
        ++i;
      } else if (c == '|' && i > 0 && i + 1 < text.size() && text[i - 1] != ' ' &&
                 text[i + 1] != ' ') {
        toks_.emplace_back("|!");  // "a|b" written tight binds its neighbours, even in brackets
        ++i;
      } else if (c == '[' || c == ']' || c == '<' || c == '>' || c == '|') {
        toks_.emplace_back(1, c);
        ++i;
      } else {
        const size_t from = i;
        while (i < text.size() && std::string_view(" \t[]<>|").find(text[i]) == std::string::npos)
          ++i;
        toks_.emplace_back(text.substr(from, i - from));
      }
    }
  }

  bool Parse(std::vector<Node>* out, std::string* error) {
    if (!Seq("", out)) {
      *error = error_;
      return false;
    }
    return true;
  }

 private:
  bool Fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
    return false;
  }

  // A sequence up to `closer` ("" = the end). Inside brackets "|" separates whole alternatives;
  // outside it binds the units on either side.
  bool Seq(std::string_view closer, std::vector<Node>* out) {
    const bool inside = !closer.empty();
    std::vector<std::vector<Node>> alts(1);
    while (pos_ < toks_.size() && toks_[pos_] != closer) {
      if (toks_[pos_] == "|" || toks_[pos_] == "|!") {
        const bool tight = !inside || toks_[pos_] == "|!";
        ++pos_;
        if (alts.back().empty()) return Fail("'|' without an alternative before it");
        if (!tight) {
          alts.emplace_back();
          continue;
        }
        Node next;
        if (!Unit(&next)) return false;
        Node prev = std::move(alts.back().back());
        alts.back().pop_back();
        if (prev.kind != Node::Kind::kAlt || !prev.tight) {
          Node alt{.kind = Node::Kind::kAlt, .tight = true};
          alt.alts.push_back({std::move(prev)});
          prev = std::move(alt);
        }
        prev.alts.push_back({std::move(next)});
        alts.back().push_back(std::move(prev));
        continue;
      }
      Node u;
      if (!Unit(&u)) return false;
      alts.back().push_back(std::move(u));
    }
    if (inside) {
      if (pos_ >= toks_.size()) return Fail(Cat("missing '", closer, "'"));
      ++pos_;
    }
    // "[a | b ...]" repeats the choice: the "..." is taken off the last alternative and stays
    // after the choice, for the enclosing sequence, which sees what it repeats.
    bool repeated = false;
    if (closer == "]" && alts.size() > 1 && !alts.back().empty() &&
        alts.back().back().kind == Node::Kind::kEllipsis) {
      alts.back().pop_back();
      repeated = true;
    }
    // "a | b [a | b ...]": the last alternative ends with the repetition of the whole choice.
    std::vector<Node> tail;
    if (alts.size() > 1 && alts.back().size() > 1) {
      const Node& last = alts.back().back();
      if (last.kind == Node::Kind::kOptional && last.items.size() == 2 &&
          last.items[0].kind == Node::Kind::kAlt && last.items[1].kind == Node::Kind::kEllipsis) {
        tail = std::move(alts.back().back().items);
        alts.back().pop_back();
      }
    }
    for (auto& a : alts) {
      if (a.empty() && (inside || alts.size() > 1))
        return Fail(alts.size() > 1 ? "an empty alternative" : "an empty group");
      // "[x ...]": the "..." stays for the enclosing sequence, which sees what it repeats.
      if (!Repeats(&a, closer == "]" && alts.size() == 1)) return false;
    }
    out->clear();
    if (alts.size() == 1) {
      *out = std::move(alts[0]);
      return true;
    }
    if (!tail.empty()) {
      Node choice{.kind = Node::Kind::kAlt};
      choice.alts = std::move(alts);
      if (Print(choice) != Print(tail[0]))
        return Fail(Cat("'[", Print(tail[0]), " ...]' does not repeat what precedes it"));
      Node r{.kind = Node::Kind::kRepeat};
      r.items.push_back(std::move(choice));
      out->push_back(std::move(r));
      return true;
    }
    // "[AGGREGATE SUM | MIN | MAX]": a token before a choice of single tokens is the choice's.
    if (alts[0].size() == 2 && IsTokenNode(alts[0][0]) && IsTokenNode(alts[0][1]) &&
        std::all_of(alts.begin() + 1, alts.end(), [](const std::vector<Node>& a) {
          return a.size() == 1 && IsTokenNode(a[0]);
        })) {
      out->push_back(std::move(alts[0][0]));
      alts[0].erase(alts[0].begin());
    }
    Node alt{.kind = Node::Kind::kAlt};
    alt.alts = std::move(alts);
    out->push_back(std::move(alt));
    if (repeated) out->push_back(Node{.kind = Node::Kind::kEllipsis, .word = "..."});
    return true;
  }

  bool Unit(Node* out) {
    if (pos_ >= toks_.size()) return Fail("the text ends where an argument was expected");
    const std::string& t = toks_[pos_++];
    if (t == "[" || t == "<") {
      out->kind = t == "[" ? Node::Kind::kOptional : Node::Kind::kGroup;
      return Seq(t == "[" ? "]" : ">", &out->items);
    }
    if (t == "]" || t == ">" || t == "|") return Fail(Cat("unexpected '", t, "'"));
    out->kind = t == "..." ? Node::Kind::kEllipsis : Node::Kind::kWord;
    out->word = t;
    return true;
  }

  // "x [x ...]": an optional group ending in "..." repeats the units just before it.
  bool Repeats(std::vector<Node>* seq, bool trailing_ellipsis) {
    std::vector<Node> out;
    for (size_t i = 0; i < seq->size(); ++i) {
      Node& n = (*seq)[i];
      if (n.kind == Node::Kind::kEllipsis) {
        if (!trailing_ellipsis || i + 1 != seq->size())
          return Fail("'...' outside the group it repeats");
        out.push_back(std::move(n));
        continue;
      }
      if (n.kind != Node::Kind::kOptional || n.items.back().kind != Node::Kind::kEllipsis) {
        out.push_back(std::move(n));
        continue;
      }
      std::vector<Node> body(std::make_move_iterator(n.items.begin()),
                             std::make_move_iterator(n.items.end() - 1));
      if (body.empty() || body.size() > out.size() ||
          Print(body) !=
              Print(std::vector<Node>(out.end() - static_cast<long>(body.size()), out.end())))
        return Fail(Cat("'[", Print(body), " ...]' does not repeat what precedes it"));
      out.resize(out.size() - body.size());
      Node r{.kind = Node::Kind::kRepeat};
      r.items = std::move(body);
      out.push_back(std::move(r));
    }
    *seq = std::move(out);
    return true;
  }

  std::vector<std::string> toks_;
  size_t pos_ = 0;
  std::string error_;
};

// ---- nodes to arguments ----

std::string Lower(std::string_view s) {
  std::string out;
  AsciiLower(s, &out);
  return out;
}

bool IsKeyName(std::string_view n) {
  static constexpr std::array<std::string_view, 6> kKeys = {"destination", "source", "dst",
                                                            "src",         "key1",   "key2"};
  return n == "key" || n.ends_with("key") ||
         std::find(kKeys.begin(), kKeys.end(), n) != kKeys.end();
}

// The type Redis's own commands give an argument of this name most often.
uint32_t TypeOfName(std::string_view n) {
  static constexpr std::array<std::string_view, 30> kIntegers = {
      "bit",     "bits",          "count",     "cursor", "decrement", "end",
      "index",   "index1",        "index2",    "len",    "limit",     "milliseconds",
      "numkeys", "num-matches",   "numfields", "offset", "rank",      "seconds",
      "start",   "stop",          "ttl",       "db",     "ms",        "frequency",
      "port",    "min-match-len", "increment", "slot",   "weight",    "destination-db"};
  static constexpr std::array<std::string_view, 7> kDoubles = {
      "timeout", "score", "latitude", "longitude", "radius", "width", "height"};
  if (std::find(kIntegers.begin(), kIntegers.end(), n) != kIntegers.end()) return VSL_ARG_INTEGER;
  if (std::find(kDoubles.begin(), kDoubles.end(), n) != kDoubles.end()) return VSL_ARG_DOUBLE;
  if (n.starts_with("unix-time")) return VSL_ARG_UNIX_TIME;
  if (n == "pattern") return VSL_ARG_PATTERN;
  if (IsKeyName(n)) return VSL_ARG_KEY;
  return VSL_ARG_STRING;
}

// Redis's names for its usual choices between tokens; else the alternatives' tokens (or names)
// joined by '-'.
std::string OneofName(const std::vector<CommandArg>& alts) {
  std::string names;
  for (const CommandArg& a : alts)
    names += (names.empty() ? "" : ",") + (a.token.empty() ? a.name : Lower(a.token));
  static constexpr std::pair<std::string_view, std::string_view> kNames[] = {
      {"nx,xx", "condition"},
      {"nx,xx,gt,lt", "condition"},
      {"xx,nx", "condition"},
      {"gt,lt", "comparison"},
      {"byscore,bylex", "sortby"},
      {"byte,bit", "unit"},
      {"m,km,ft,mi", "unit"},
      {"before,after", "where"},
      {"left,right", "where"},
      {"min,max", "where"},
      {"and,or,xor,not", "operation"},
      {"asc,desc", "order"},
      {"ex,px,exat,pxat,keepttl", "expiration"},
      {"ex,px,exat,pxat,persist", "expiration"}};
  for (const auto& [set, name] : kNames)
    if (names == set) return std::string(name);
  std::replace(names.begin(), names.end(), ',', '-');
  return names;
}

CommandArg Named(const std::string& word) {
  CommandArg a;
  a.name = word;
  a.type = TypeOfName(word);
  return a;
}

CommandArg PureToken(const std::string& token) {
  CommandArg a;
  a.name = Lower(token);
  a.type = VSL_ARG_PURE_TOKEN;
  a.token = token;
  return a;
}

CommandArg Block(std::string name, std::vector<CommandArg> parts) {
  CommandArg a;
  a.name = std::move(name);
  a.type = VSL_ARG_BLOCK;
  a.subargs = std::move(parts);
  return a;
}

std::vector<CommandArg> Convert(const std::vector<Node>& seq, bool group);

// Redis names a block after its parts: "offset_count", "field_value".
std::string JoinedNames(const std::vector<CommandArg>& parts) {
  std::string name;
  for (const CommandArg& p : parts) name += (name.empty() ? "" : "_") + p.name;
  return name;
}

// A group (brackets, an alternative, a repeated part) as one argument; several arguments make a
// block named `block_name`, or after its parts when that is null.
CommandArg One(const std::vector<Node>& seq, const char* block_name) {
  std::vector<CommandArg> v = Convert(seq, true);
  if (v.size() == 1) return std::move(v[0]);
  std::string name = block_name != nullptr ? block_name : JoinedNames(v);
  return Block(std::move(name), std::move(v));
}

CommandArg FromNode(const Node& n) {
  switch (n.kind) {
    case Node::Kind::kWord:
      return IsToken(n.word) ? PureToken(n.word) : Named(n.word);
    case Node::Kind::kOptional: {
      CommandArg a = One(n.items, "options");
      a.flags |= VSL_ARG_OPTIONAL;
      return a;
    }
    case Node::Kind::kGroup:
      return One(n.items, "options");
    case Node::Kind::kRepeat: {
      CommandArg a = One(n.items, nullptr);
      a.flags |= VSL_ARG_MULTIPLE;
      if (!a.token.empty() && IsTokenNode(n.items[0])) a.flags |= VSL_ARG_MULTIPLE_TOKEN;
      return a;
    }
    case Node::Kind::kAlt: {
      CommandArg a;
      a.type = VSL_ARG_ONEOF;
      for (const auto& alt : n.alts) a.subargs.push_back(One(alt, "options"));
      a.name = OneofName(a.subargs);
      return a;
    }
    case Node::Kind::kEllipsis:
      break;
  }
  return {};
}

// A token names the one argument after it ("COUNT count"); in a group, a token followed by several
// makes a block named after it ("LIMIT offset count").
std::vector<CommandArg> Convert(const std::vector<Node>& seq, bool group) {
  std::vector<CommandArg> out;
  if (group && seq.size() > 2 && IsTokenNode(seq[0])) {
    std::vector<Node> rest(seq.begin() + 1, seq.end());
    CommandArg b = Block("", Convert(rest, false));
    b.name = JoinedNames(b.subargs);
    b.token = seq[0].word;
    out.push_back(std::move(b));
    return out;
  }
  for (size_t i = 0; i < seq.size(); ++i) {
    const Node& n = seq[i];
    const Node* next = i + 1 < seq.size() ? &seq[i + 1] : nullptr;
    const bool next_takes_token =
        next != nullptr &&
        (IsNameNode(*next) || (next->kind == Node::Kind::kRepeat && next->items.size() == 1 &&
                               IsNameNode(next->items[0])));
    // "OVERFLOW <WRAP | SAT | FAIL>": the choice carries the token and is named after it.
    const bool next_is_choice =
        next != nullptr && (next->kind == Node::Kind::kAlt ||
                            (next->kind == Node::Kind::kGroup && next->items.size() == 1 &&
                             next->items[0].kind == Node::Kind::kAlt));
    if (IsTokenNode(n) && (next_takes_token || next_is_choice)) {
      CommandArg a = FromNode(seq[++i]);
      a.token = n.word;
      if (next_is_choice) a.name = Lower(n.word);
      out.push_back(std::move(a));
      continue;
    }
    out.push_back(FromNode(n));
  }
  return out;
}

// Key arguments in order take the key specs in order (the last spec for any beyond); without key
// specs a key-named argument is a plain string.
void AssignKeySpecs(std::vector<CommandArg>* args, size_t n_keyspecs, size_t* next) {
  for (CommandArg& a : *args) {
    if (a.type == VSL_ARG_KEY) {
      if (n_keyspecs == 0) {
        a.type = VSL_ARG_STRING;
      } else {
        a.key_spec_index = static_cast<int32_t>(std::min(*next, n_keyspecs - 1));
        ++*next;
      }
    }
    AssignKeySpecs(&a.subargs, n_keyspecs, next);
  }
}

// LMOVE's "LEFT | RIGHT LEFT | RIGHT": Redis names the two choices wherefrom and whereto.
void NameMoves(std::vector<CommandArg>* args) {
  for (size_t i = 0; i + 1 < args->size(); ++i) {
    CommandArg &a = (*args)[i], &b = (*args)[i + 1];
    if (a.type == VSL_ARG_ONEOF && a.name == "where" && b.type == VSL_ARG_ONEOF &&
        b.name == "where" && a.subargs == b.subargs) {
      a.name = "wherefrom";
      b.name = "whereto";
    }
  }
}

}  // namespace

bool ParseSyntax(std::string_view syntax, size_t n_keyspecs, std::vector<CommandArg>* out,
                 std::string* error) {
  out->clear();
  std::vector<Node> seq;
  if (!Parser(syntax).Parse(&seq, error)) return false;
  *out = Convert(seq, false);
  size_t next = 0;
  AssignKeySpecs(out, n_keyspecs, &next);
  NameMoves(out);
  return true;
}

std::string_view ArgTypeName(uint32_t type) {
  static constexpr std::string_view kNames[] = {
      "string", "integer", "double", "key", "pattern", "unix-time", "pure-token", "oneof", "block"};
  return type < std::size(kNames) ? kNames[type] : "string";
}

bool ConvertArgs(const vsl_command_arg* args, uint32_t n, size_t n_keyspecs,
                 std::vector<CommandArg>* out, std::string* error) {
  struct Walk {
    size_t n_keyspecs;
    std::string* error;
    bool Level(const vsl_command_arg* args, uint32_t n, int depth, std::vector<CommandArg>* out) {
      if (args == nullptr) {
        *error = "arguments missing (NULL with a nonzero count)";
        return false;
      }
      if (depth > 8) {
        *error = "arguments nested deeper than 8";
        return false;
      }
      const uint32_t stride = args[0].struct_size;
      if (std::string why = abi::CheckStructSize("vsl_command_arg", abi::kCommandArgSizes,
                                                 sizeof(vsl_command_arg), &args[0], stride);
          !why.empty()) {
        *error = why;
        return false;
      }
      for (uint32_t i = 0; i < n; ++i) {
        const auto* in = reinterpret_cast<const vsl_command_arg*>(
            reinterpret_cast<const char*>(args) + uint64_t{i} * stride);
        const std::string name = in->name != nullptr ? in->name : "";
        auto fail = [&](std::string_view why) {
          *error = Cat("argument ", i, name.empty() ? "" : " '", name, name.empty() ? "" : "'",
                       ": ", why);
          return false;
        };
        if (in->struct_size != stride) return fail("struct_size differs from the first argument's");
        if (name.empty()) return fail("no name");
        if (in->type > VSL_ARG_BLOCK) return fail(Cat("unknown type ", in->type));
        if (in->flags & ~VSL_ARG_ALL_FLAGS)
          return fail(Cat("unknown flags ", in->flags & ~VSL_ARG_ALL_FLAGS));
        CommandArg a;
        a.name = name;
        a.type = in->type;
        a.flags = in->flags;
        if (in->token != nullptr) a.token = in->token;
        if ((a.flags & VSL_ARG_MULTIPLE_TOKEN) &&
            (!(a.flags & VSL_ARG_MULTIPLE) || a.token.empty()))
          return fail("MULTIPLE_TOKEN needs MULTIPLE and a token");
        if (a.type == VSL_ARG_PURE_TOKEN && a.token.empty())
          return fail("a pure token without token");
        if (a.type == VSL_ARG_KEY) {
          if (in->key_spec_index < 0 || static_cast<size_t>(in->key_spec_index) >= n_keyspecs)
            return fail(
                Cat("key_spec_index ", in->key_spec_index, " names no key spec of the command"));
          a.key_spec_index = in->key_spec_index;
        }
        if (in->summary != nullptr) a.summary = in->summary;
        if (in->since != nullptr) a.since = in->since;
        if (in->deprecated_since != nullptr) a.deprecated_since = in->deprecated_since;
        const bool nested = a.type == VSL_ARG_ONEOF || a.type == VSL_ARG_BLOCK;
        if (nested != (in->n_subargs > 0))
          return fail(nested ? "oneof or block without sub-arguments"
                             : "sub-arguments on an argument that is not a oneof or block");
        if (nested) {
          std::string inner;
          Walk sub{n_keyspecs, &inner};
          if (!sub.Level(in->subargs, in->n_subargs, depth + 1, &a.subargs)) return fail(inner);
        }
        out->push_back(std::move(a));
      }
      return true;
    }
  };
  out->clear();
  if (n == 0) return true;
  return Walk{n_keyspecs, error}.Level(args, n, 1, out);
}

}  // namespace vessel::engine
