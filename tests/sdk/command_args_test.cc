// The argument trees COMMAND DOCS shows for module commands that declare none: Redis's syntax
// notation parsed into Redis 7's tree (host/engine/command_args.h), shape by shape, the text
// redis-cli renders back from each tree, and the notation's errors.
#include "host/engine/command_args.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace vessel::engine {
namespace {

// A tree in one line: name:type, @key spec, =TOKEN, ? optional, * multiple, ! multiple_token,
// (sub-arguments).
std::string Describe(const std::vector<CommandArg>& args) {
  std::string out;
  for (const CommandArg& a : args) {
    if (!out.empty()) out += " ";
    out += a.name + ":" + std::string(ArgTypeName(a.type));
    if (a.key_spec_index >= 0) out += "@" + std::to_string(a.key_spec_index);
    if (!a.token.empty()) out += "=" + a.token;
    if (a.flags & VSL_ARG_OPTIONAL) out += "?";
    if (a.flags & VSL_ARG_MULTIPLE) out += "*";
    if (a.flags & VSL_ARG_MULTIPLE_TOKEN) out += "!";
    if (!a.subargs.empty()) out += "(" + Describe(a.subargs) + ")";
  }
  return out;
}

// The hint redis-cli 7.0 builds from a tree (cliAddArgument): oneof as "a|b", no angle brackets.
std::string Render(const std::vector<CommandArg>& args, const char* sep = " ") {
  std::string out;
  for (const CommandArg& a : args) {
    if (!out.empty()) out += sep;
    std::string token = a.token, repeat;
    if (a.type == VSL_ARG_ONEOF) {
      repeat = Render(a.subargs, "|");
    } else if (a.type == VSL_ARG_BLOCK) {
      repeat = Render(a.subargs, " ");
    } else if (a.type != VSL_ARG_PURE_TOKEN) {
      repeat = a.name;
    }
    if (!token.empty() && a.type != VSL_ARG_PURE_TOKEN) token += " ";
    std::string s = token + repeat;
    if (a.flags & VSL_ARG_MULTIPLE)
      s += " [" + std::string((a.flags & VSL_ARG_MULTIPLE_TOKEN) ? token : "") + repeat + " ...]";
    out += (a.flags & VSL_ARG_OPTIONAL) ? "[" + s + "]" : s;
  }
  return out;
}

// The notation as redis-cli would print it back: "a | b" as "a|b", without "<" ">".
std::string AsCliPrints(std::string s) {
  for (size_t at; (at = s.find(" | ")) != std::string::npos;) s.replace(at, 3, "|");
  std::erase(s, '<');
  std::erase(s, '>');
  return s;
}

struct Case {
  const char* syntax;
  size_t keyspecs;
  const char* tree;
};

TEST(ParseSyntax, RedisShapes) {
  const Case cases[] = {
      {"key", 1, "key:key@0"},
      {"key [key ...]", 1, "key:key@0*"},
      {"key element [element ...]", 1, "key:key@0 element:string*"},
      {"key start stop", 1, "key:key@0 start:integer stop:integer"},
      {"key element [RANK rank] [COUNT num-matches] [MAXLEN len]", 1,
       "key:key@0 element:string rank:integer=RANK? num-matches:integer=COUNT? "
       "len:integer=MAXLEN?"},
      {"key BEFORE | AFTER pivot element", 1,
       "key:key@0 where:oneof(before:pure-token=BEFORE after:pure-token=AFTER) pivot:string "
       "element:string"},
      {"source destination LEFT | RIGHT LEFT | RIGHT timeout", 2,
       "source:key@0 destination:key@1 wherefrom:oneof(left:pure-token=LEFT "
       "right:pure-token=RIGHT) whereto:oneof(left:pure-token=LEFT right:pure-token=RIGHT) "
       "timeout:double"},
      {"key value [NX | XX] [GET] [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT "
       "unix-time-milliseconds | KEEPTTL]",
       1,
       "key:key@0 value:string condition:oneof?(nx:pure-token=NX xx:pure-token=XX) "
       "get:pure-token=GET? expiration:oneof?(seconds:integer=EX "
       "milliseconds:integer=PX unix-time-seconds:unix-time=EXAT "
       "unix-time-milliseconds:unix-time=PXAT keepttl:pure-token=KEEPTTL)"},
      {"key field value [field value ...]", 1,
       "key:key@0 field_value:block*(field:string value:string)"},
      {"key [NX | XX] [GT | LT] [CH] [INCR] score member [score member ...]", 1,
       "key:key@0 condition:oneof?(nx:pure-token=NX xx:pure-token=XX) "
       "comparison:oneof?(gt:pure-token=GT lt:pure-token=LT) ch:pure-token=CH? "
       "incr:pure-token=INCR? score_member:block*(score:double member:string)"},
      {"key min max [WITHSCORES] [LIMIT offset count]", 1,
       "key:key@0 min:string max:string withscores:pure-token=WITHSCORES? "
       "offset_count:block=LIMIT?(offset:integer count:integer)"},
      {"key cursor [MATCH pattern] [COUNT count]", 1,
       "key:key@0 cursor:integer pattern:pattern=MATCH? count:integer=COUNT?"},
      {"destkey [sourcekey [sourcekey ...]]", 2, "destkey:key@0 sourcekey:key@1?*"},
      {"numkeys key [key ...] LEFT | RIGHT [COUNT count]", 1,
       "numkeys:integer key:key@0* where:oneof(left:pure-token=LEFT right:pure-token=RIGHT) "
       "count:integer=COUNT?"},
      {"destination numkeys key [key ...]", 2, "destination:key@0 numkeys:integer key:key@1*"},
      {"<AND | OR | XOR | NOT> destkey key [key ...]", 2,
       "operation:oneof(and:pure-token=AND or:pure-token=OR xor:pure-token=XOR "
       "not:pure-token=NOT) destkey:key@0 key:key@1*"},
      {"key1 key2 [LEN] [IDX] [MINMATCHLEN min-match-len] [WITHMATCHLEN]", 1,
       "key1:key@0 key2:key@0 len:pure-token=LEN? idx:pure-token=IDX? "
       "min-match-len:integer=MINMATCHLEN? withmatchlen:pure-token=WITHMATCHLEN?"},
      {"key [count [WITHSCORES]]", 1,
       "key:key@0 options:block?(count:integer withscores:pure-token=WITHSCORES?)"},
      {"key [GET encoding offset [GET encoding offset ...]]", 1,
       "key:key@0 encoding_offset:block=GET?*!(encoding:string offset:integer)"},
      {"key [COUNT count [count ...]]", 1, "key:key@0 count:integer=COUNT?*"},
      {"key FIELDS numfields field [field ...]", 1,
       "key:key@0 numfields:integer=FIELDS field:string*"},
      {"[FILTERBY MODULE module-name | ACLCAT category | PATTERN pattern]", 0,
       "filterby-aclcat-pattern:oneof?(module-name:block=FILTERBY(module-name:string=MODULE) "
       "category:string=ACLCAT pattern:pattern=PATTERN)"},
      {"numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM | MIN | MAX]", 1,
       "numkeys:integer key:key@0* weight:integer=WEIGHTS?* aggregate:oneof=AGGREGATE?("
       "sum:pure-token=SUM min:pure-token=MIN max:pure-token=MAX)"},
      {"key INDEX name field HASH|ORDERED [UNIQUE] [INDEX name field HASH|ORDERED [UNIQUE] ...]", 1,
       "key:key@0 name_field_hash-ordered_unique:block=INDEX*!(name:string field:string "
       "hash-ordered:oneof(hash:pure-token=HASH ordered:pure-token=ORDERED) "
       "unique:pure-token=UNIQUE?)"},
      {"key [GET encoding offset | [OVERFLOW <WRAP | SAT | FAIL>] SET encoding offset value "
       "[GET encoding offset | [OVERFLOW <WRAP | SAT | FAIL>] SET encoding offset value ...]]",
       1,
       "key:key@0 get-options:oneof?*(encoding_offset:block=GET(encoding:string offset:integer) "
       "options:block(overflow:oneof=OVERFLOW?(wrap:pure-token=WRAP sat:pure-token=SAT "
       "fail:pure-token=FAIL) encoding:string=SET offset:integer value:string))"},
      {"key [key ...]", 0, "key:string*"},  // no key specs: not a key
      {"", 1, ""},
  };
  for (const Case& c : cases) {
    std::vector<CommandArg> args;
    std::string error;
    ASSERT_TRUE(ParseSyntax(c.syntax, c.keyspecs, &args, &error)) << c.syntax << ": " << error;
    EXPECT_EQ(Describe(args), c.tree) << c.syntax;
    EXPECT_EQ(Render(args), AsCliPrints(c.syntax)) << c.syntax;
  }
}

TEST(ParseSyntax, NotTheNotation) {
  const std::pair<const char*, const char*> cases[] = {
      {"key [value", "missing ']'"},
      {"key value]", "unexpected ']'"},
      {"key <a | b", "missing '>'"},
      {"[key ...]", "'[key ...]' does not repeat what precedes it"},
      {"key [field ...]", "'[field ...]' does not repeat what precedes it"},
      {"key ... value", "'...' outside the group it repeats"},
      {"| key", "'|' without an alternative before it"},
      {"key |", "the text ends where an argument was expected"},
      {"key [a | ]", "an empty alternative"},
      {"key []", "an empty group"},
  };
  for (const auto& [syntax, want] : cases) {
    std::vector<CommandArg> args;
    std::string error;
    EXPECT_FALSE(ParseSyntax(syntax, 1, &args, &error)) << syntax << " gave " << Describe(args);
    EXPECT_EQ(error, want) << syntax;
  }
}

}  // namespace
}  // namespace vessel::engine
