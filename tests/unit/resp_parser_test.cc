// Unit tests for resp::Parser: round trips, split input, Redis 7.0 error texts, inline commands.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "host/resp/parser.h"

namespace vessel::resp {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Command = std::vector<std::string>;

using namespace std::string_literals;  // "...\0..."s keeps NUL bytes

// Encodes a command as a RESP array of bulk strings.
std::string Encode(const Command& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& arg : args) {
    out += "$" + std::to_string(arg.size()) + "\r\n" + arg + "\r\n";
  }
  return out;
}

Command ToCommand(const std::vector<std::string_view>& args) {
  return Command(args.begin(), args.end());
}

// What a connection would see: the commands, then how the input ended.
struct Outcome {
  std::vector<Command> commands;
  ParseStatus last = ParseStatus::kNeedMore;
  std::string error;
  std::string rest;  // unconsumed bytes at the end
};

// Feeds `input` to `parser` the way a connection does: the buffer receives the bytes up to each
// cut point in turn, every command found is taken off, and consumed bytes are dropped.
Outcome ParseInPieces(Parser& parser, std::string_view input, std::vector<size_t> cuts) {
  cuts.push_back(input.size());
  Outcome outcome;
  std::string buffer;
  std::vector<std::string_view> args;
  size_t fed = 0;
  for (size_t cut : cuts) {
    buffer.append(input.substr(fed, cut - fed));
    fed = cut;
    while (true) {
      ParseStatus status = parser.Parse(buffer, &args);
      EXPECT_LE(parser.consumed(), buffer.size());
      outcome.last = status;
      if (status == ParseStatus::kError) {
        outcome.error = std::string(parser.error());
        outcome.rest = buffer;
        return outcome;
      }
      if (status == ParseStatus::kOk) {
        EXPECT_FALSE(args.empty());
        outcome.commands.push_back(ToCommand(args));
      } else {
        EXPECT_TRUE(args.empty());
      }
      buffer.erase(0, parser.consumed());
      if (status == ParseStatus::kNeedMore) break;
    }
  }
  outcome.rest = buffer;
  return outcome;
}

Outcome ParseWhole(std::string_view input, const ParserLimits& limits = {}) {
  Parser parser(limits);
  return ParseInPieces(parser, input, {});
}

// A single error expected from `input`, however it is split.
std::string ErrorOf(std::string_view input, const ParserLimits& limits = {}) {
  Outcome whole = ParseWhole(input, limits);
  EXPECT_EQ(whole.last, ParseStatus::kError) << input;
  for (size_t cut = 0; cut <= input.size(); ++cut) {
    Parser parser(limits);
    Outcome split = ParseInPieces(parser, input, {cut});
    EXPECT_EQ(split.error, whole.error) << "cut at " << cut;
  }
  return whole.error;
}

// Commands in varied shapes, each with its expected arguments.
struct Case {
  std::string wire;
  Command args;
};

std::vector<Case> VariedCommands() {
  std::vector<Case> cases;
  for (const Command& args : std::vector<Command>{
           {"PING"},
           {"SET", "key:000123", "xxx"},
           {"SET", "k", ""},
           {""},
           {"SET", "bin", "a\r\nb\r\n\r\n"},
           {"SET", "nul", "\0\xff\x80\r"s},
           {"RPUSH", "list", "1", "22", "333", "4444", "55555", "666666", "7777777"},
           {"SET", "big", std::string(300, 'v')},
       }) {
    cases.push_back({Encode(args), args});
  }
  cases.push_back({"PING\r\n", {"PING"}});
  cases.push_back({"SET a b\n", {"SET", "a", "b"}});
  cases.push_back({"  SET  \"a b\"  'c d' \"\\x41\\n\"\r\n", {"SET", "a b", "c d", "A\n"}});
  cases.push_back({"*0\r\n*1\r\n$4\r\nPING\r\n", {"PING"}});  // a skipped empty command first
  cases.push_back({"\r\n\n  \r\nECHO hi\r\n", {"ECHO", "hi"}});
  return cases;
}

TEST(RespParserTest, RoundTrip) {
  Parser parser;
  std::vector<std::string_view> args;
  for (const Command& command : std::vector<Command>{
           {"PING"},
           {"SET", "a", "b"},
           {"MSET", "k1", "v1", "k2", "v2"},
           {"", "", ""},
           {"SET", "k", std::string(100000, 'x')},
           {"X", "\r\n", "\n", "\r", "$3", "*2", "\0"s},
       }) {
    std::string wire = Encode(command);
    ASSERT_EQ(parser.Parse(wire, &args), ParseStatus::kOk);
    EXPECT_EQ(ToCommand(args), command);
    EXPECT_EQ(parser.consumed(), wire.size());
  }
}

TEST(RespParserTest, MultibulkArgumentsPointIntoTheInput) {
  Parser parser;
  std::vector<std::string_view> args;
  std::string wire = Encode({"SET", "key", "value"});
  ASSERT_EQ(parser.Parse(wire, &args), ParseStatus::kOk);
  ASSERT_EQ(args.size(), 3u);
  EXPECT_EQ(args[0].data(), wire.data() + 8);
  EXPECT_EQ(args[2].data(), wire.data() + wire.size() - 7);
}

TEST(RespParserTest, ClearsTheArgumentVector) {
  Parser parser;
  std::vector<std::string_view> args = {"stale"};
  ASSERT_EQ(parser.Parse("*1\r\n$1\r\na\r\n", &args), ParseStatus::kOk);
  EXPECT_THAT(args, ElementsAre("a"));
  args.push_back("stale");
  EXPECT_EQ(parser.Parse("*1\r\n", &args), ParseStatus::kNeedMore);
  EXPECT_THAT(args, IsEmpty());
}

TEST(RespParserTest, EveryCommandSplitAtEveryOffset) {
  for (const Case& c : VariedCommands()) {
    for (size_t cut = 0; cut < c.wire.size(); ++cut) {
      SCOPED_TRACE(testing::Message() << c.wire << " cut at " << cut);
      Parser parser;
      std::vector<std::string_view> args;
      std::string buffer = c.wire.substr(0, cut);
      ASSERT_EQ(parser.Parse(buffer, &args), ParseStatus::kNeedMore);
      buffer.erase(0, parser.consumed());  // skipped empty commands
      buffer += c.wire.substr(cut);
      ASSERT_EQ(parser.Parse(buffer, &args), ParseStatus::kOk);
      EXPECT_EQ(ToCommand(args), c.args);
      EXPECT_EQ(parser.consumed(), buffer.size());
    }
  }
}

TEST(RespParserTest, EveryCommandFedOneByteAtATime) {
  for (const Case& c : VariedCommands()) {
    std::vector<size_t> cuts;
    for (size_t i = 1; i < c.wire.size(); ++i) cuts.push_back(i);
    Parser parser;
    Outcome outcome = ParseInPieces(parser, c.wire, cuts);
    EXPECT_THAT(outcome.commands, ElementsAre(c.args)) << c.wire;
    EXPECT_EQ(outcome.rest, "");
  }
}

TEST(RespParserTest, PipelineSplitAtEveryPairOfOffsets) {
  std::string stream;
  std::vector<Command> expected;
  for (const Case& c : VariedCommands()) {
    if (c.wire.size() > 100) continue;  // keeps the quadratic loop small
    stream += c.wire;
    expected.push_back(c.args);
  }
  stream += "*1\r\n$3\r\nfoo";  // an incomplete command at the end stays unconsumed
  Outcome whole = ParseWhole(stream);
  ASSERT_EQ(whole.commands, expected);
  ASSERT_EQ(whole.rest, "*1\r\n$3\r\nfoo");
  for (size_t a = 0; a <= stream.size(); ++a) {
    for (size_t b = a; b <= stream.size(); b += 7) {
      Parser parser;
      Outcome split = ParseInPieces(parser, stream, {a, b});
      ASSERT_EQ(split.commands, expected) << "cuts " << a << " " << b;
      ASSERT_EQ(split.last, ParseStatus::kNeedMore);
      ASSERT_EQ(split.rest, whole.rest);
    }
  }
}

TEST(RespParserTest, ParserIsReusedAcrossManyCommands) {
  Parser parser;
  std::string stream;
  std::vector<Command> expected;
  for (int i = 0; i < 1000; ++i) {
    Command command = {"SET", "key:" + std::to_string(i), std::string(i % 37, 'v')};
    stream +=
        i % 3 == 0 ? "SET key:" + std::to_string(i) + " " + command[2] + "\r\n" : Encode(command);
    if (command[2].empty() && i % 3 == 0) command.pop_back();
    expected.push_back(command);
  }
  std::vector<size_t> cuts;
  for (size_t cut = 1000; cut < stream.size(); cut += 1000) cuts.push_back(cut);
  Outcome outcome = ParseInPieces(parser, stream, cuts);
  EXPECT_EQ(outcome.commands, expected);
}

TEST(RespParserTest, EmptyCommandsAreSkipped) {
  Parser parser;
  std::vector<std::string_view> args;
  std::string input =
      "*0\r\n*-1\r\n\r\n\n   \t\r\n*-9223372036854775808\r\n*1\r\n$4\r\nPING\r\nECHO";
  ASSERT_EQ(parser.Parse(input, &args), ParseStatus::kOk);
  EXPECT_THAT(args, ElementsAre("PING"));
  EXPECT_EQ(parser.consumed(), input.size() - 4);

  EXPECT_EQ(parser.Parse("*0\r\n\r\n*1\r\n", &args), ParseStatus::kNeedMore);
  EXPECT_EQ(parser.consumed(), 6u);
  EXPECT_THAT(args, IsEmpty());
}

TEST(RespParserTest, MultibulkErrors) {
  struct ErrorCase {
    std::string input;
    std::string error;
  };
  const std::string kMultibulk = "Protocol error: invalid multibulk length";
  const std::string kBulk = "Protocol error: invalid bulk length";
  for (const ErrorCase& c : std::vector<ErrorCase>{
           {"*abc\r\n", kMultibulk},
           {"*\r\n", kMultibulk},
           {"*+1\r\n", kMultibulk},
           {"* 1\r\n", kMultibulk},
           {"*1 \r\n", kMultibulk},
           {"*01\r\n", kMultibulk},
           {"*-0\r\n", kMultibulk},
           {"*2147483648\r\n", kMultibulk},
           {"*3000000000\r\n", kMultibulk},
           {"*-9223372036854775809\r\n", kMultibulk},
           {"*99999999999999999999\r\n", kMultibulk},
           {"*1\r\n$-1\r\n", kBulk},
           {"*1\r\n$-5\r\n", kBulk},
           {"*1\r\n$\r\n", kBulk},
           {"*1\r\n$-0\r\n", kBulk},
           {"*1\r\n$abc\r\n", kBulk},
           {"*1\r\n$03\r\nfoo\r\n", kBulk},
           {"*1\r\n$+3\r\nfoo\r\n", kBulk},
           {"*1\r\n$536870913\r\n", kBulk},
           {"*1\r\n$9223372036854775808\r\n", kBulk},
           {"*1\r\nfoo\r\n", "Protocol error: expected '$', got 'f'"},
           {"*2\r\n$1\r\na\r\n:1\r\n", "Protocol error: expected '$', got ':'"},
           {"*1\r\n\r\n", "Protocol error: expected '$', got ' '"},
           {"*1\r\n\n\r\n", "Protocol error: expected '$', got ' '"},
           {"*1\r\n\0\r\n"s, "Protocol error: expected '$', got '"},
           {"*1\r\n$1\r\na\r\n*1\r\n$x\r\n", kBulk},
       }) {
    EXPECT_EQ(ErrorOf(c.input), c.error) << c.input;
  }
}

TEST(RespParserTest, ProtocolErrorsAfterAGoodCommandComeNext) {
  Parser parser;
  std::vector<std::string_view> args;
  std::string input = "*1\r\n$4\r\nPING\r\n*x\r\n";
  ASSERT_EQ(parser.Parse(input, &args), ParseStatus::kOk);
  input.erase(0, parser.consumed());
  EXPECT_EQ(parser.Parse(input, &args), ParseStatus::kError);
  EXPECT_EQ(parser.error(), "Protocol error: invalid multibulk length");
}

TEST(RespParserTest, TooLongLinesWithoutTerminator) {
  const std::string k70k(70000, '1');
  EXPECT_EQ(ParseWhole("*" + k70k).error, "Protocol error: too big mbulk count string");
  EXPECT_EQ(ParseWhole("*1\r\n$" + k70k).error, "Protocol error: too big bulk count string");
  EXPECT_EQ(ParseWhole(std::string(70000, 'a')).error, "Protocol error: too big inline request");
  // Exactly the limit still waits for more.
  EXPECT_EQ(ParseWhole(std::string(64 * 1024, 'a')).last, ParseStatus::kNeedMore);
  // As in Redis, a long line is fine when its end is already in the buffer.
  Outcome long_inline = ParseWhole("ECHO " + std::string(100000, 'a') + "\r\n");
  ASSERT_EQ(long_inline.commands.size(), 1u);
  EXPECT_EQ(long_inline.commands[0][1].size(), 100000u);
  // A '\r' that is the last byte waits for one more byte whatever the line length.
  EXPECT_EQ(ParseWhole("*" + k70k + "\r").last, ParseStatus::kNeedMore);
}

TEST(RespParserTest, TrailingBytesOfABulkAreNotChecked) {
  // Redis skips two bytes after the payload, whatever they are.
  EXPECT_THAT(ParseWhole("*1\r\n$4\r\nPINGXY").commands, ElementsAre(Command{"PING"}));
  // Nor does it check the byte after the '\r' of a count line.
  EXPECT_THAT(ParseWhole("*1\rX$4\r\nPING\r\n").commands, ElementsAre(Command{"PING"}));
  // A payload needs its two trailing bytes before the command is complete.
  EXPECT_EQ(ParseWhole("*1\r\n$4\r\nPING\r").last, ParseStatus::kNeedMore);
}

TEST(RespParserTest, InlineCommands) {
  for (const Case& c : std::vector<Case>{
           {"PING\r\n", {"PING"}},
           {"PING\n", {"PING"}},
           {"  SET   a \t b  \r\n", {"SET", "a", "b"}},
           {"SET \"a b\" c\r\n", {"SET", "a b", "c"}},
           {"ECHO \"\\x41\\x6a\\n\\r\\t\\b\\a\\\\\\\"\\q\"\n", {"ECHO", "Aj\n\r\t\b\a\\\"q"}},
           {"ECHO \"\\xZZ\"\n", {"ECHO", "xZZ"}},
           {"ECHO 'it\\'s' 'a\\nb'\n", {"ECHO", "it's", "a\\nb"}},
           {"ECHO a\"b c\"\n", {"ECHO", "ab c"}},
           {"ECHO a'b c'\n", {"ECHO", "ab c"}},
           {"ECHO \"\" ''\n", {"ECHO", "", ""}},
           {"ECHO \"a\"\x0b\n", {"ECHO", "a"}},
           {"ECHO a\x0b"
            "b\n",
            {"ECHO",
             "a\x0b"
             "b"}},
           {"ECHO x\ry\n", {"ECHO", "x", "y"}},
           {"ECHO\r\r\n", {"ECHO"}},
           {"ECHO a\0b c\n"s, {"ECHO", "a"}},  // Redis splits a C string
           {"GET *1\r\n", {"GET", "*1"}},
           {"$3\r\n", {"$3"}},
       }) {
    Outcome outcome = ParseWhole(c.wire);
    EXPECT_THAT(outcome.commands, ElementsAre(c.args)) << c.wire;
    EXPECT_EQ(outcome.rest, "") << c.wire;
  }
}

TEST(RespParserTest, InlineUnbalancedQuotes) {
  for (const std::string& line : std::vector<std::string>{
           "SET \"a\n",
           "SET 'a\n",
           "SET \"a\"b\n",
           "SET 'a'b\n",
           "SET \"a\\\"\n",
           "ECHO it's\n",
           "ECHO \"a\0\"\n"s,
       }) {
    EXPECT_EQ(ErrorOf(line), "Protocol error: unbalanced quotes in request") << line;
  }
}

TEST(RespParserTest, InlineScratchViewsSurviveMoreQuotedArguments) {
  std::string line = "MSET";
  Command expected = {"MSET"};
  for (int i = 0; i < 50; ++i) {
    std::string value = "value with spaces " + std::to_string(i);
    line += " \"" + value + "\"";
    expected.push_back(value);
  }
  line += "\r\n";
  Parser parser;
  std::vector<std::string_view> args;
  ASSERT_EQ(parser.Parse(line, &args), ParseStatus::kOk);
  EXPECT_EQ(ToCommand(args), expected);
  // Views of unquoted arguments point into the input.
  EXPECT_EQ(args[0].data(), line.data());
}

TEST(RespParserTest, ConfigurableLimits) {
  ParserLimits limits;
  limits.max_bulk_len = 10;
  limits.max_multibulk_len = 3;
  limits.max_inline_len = 16;

  EXPECT_THAT(ParseWhole("*3\r\n$10\r\n0123456789\r\n$0\r\n\r\n$1\r\na\r\n", limits).commands,
              ElementsAre(Command{"0123456789", "", "a"}));
  EXPECT_EQ(ErrorOf("*1\r\n$11\r\n", limits), "Protocol error: invalid bulk length");
  EXPECT_EQ(ErrorOf("*4\r\n", limits), "Protocol error: invalid multibulk length");
  EXPECT_EQ(ParseWhole(std::string(16, 'a'), limits).last, ParseStatus::kNeedMore);
  EXPECT_EQ(ParseWhole(std::string(17, 'a'), limits).error,
            "Protocol error: too big inline request");
  EXPECT_EQ(ParseWhole("*" + std::string(16, '1'), limits).error,
            "Protocol error: too big mbulk count string");
  // The bulk count limit counts from the start of the bulk header.
  EXPECT_EQ(ParseWhole("*1\r\n$" + std::string(15, '1'), limits).last, ParseStatus::kNeedMore);
  EXPECT_EQ(ParseWhole("*1\r\n$" + std::string(16, '1'), limits).error,
            "Protocol error: too big bulk count string");

  Parser parser;
  parser.set_limits(limits);
  std::vector<std::string_view> args;
  EXPECT_EQ(parser.Parse("*1\r\n$11\r\n", &args), ParseStatus::kError);
  parser.set_limits({});
  EXPECT_EQ(parser.Parse("*1\r\n$11\r\nhello world\r\n", &args), ParseStatus::kOk);
}

TEST(RespParserTest, BytesHint) {
  Parser parser;
  std::vector<std::string_view> args;
  EXPECT_EQ(parser.Parse("*2\r\n$3\r\nfoo\r\n$1", &args), ParseStatus::kNeedMore);
  EXPECT_EQ(parser.bytes_hint(), 0u);  // the header of the second bulk is not complete
  EXPECT_EQ(parser.Parse("*2\r\n$3\r\nfoo\r\n$10\r\nab", &args), ParseStatus::kNeedMore);
  EXPECT_EQ(parser.bytes_hint(), 13u + 5 + 10 + 2);
  EXPECT_EQ(parser.Parse("*2\r\n$3\r\nfoo\r\n$10\r\n0123456789\r\n", &args), ParseStatus::kOk);
  EXPECT_EQ(parser.bytes_hint(), 0u);

  // The hint counts the skipped empty commands at the front of the input too.
  EXPECT_EQ(parser.Parse("*0\r\n*1\r\n$5\r\nab", &args), ParseStatus::kNeedMore);
  EXPECT_EQ(parser.consumed(), 4u);
  EXPECT_EQ(parser.bytes_hint(), 4u + 4 + 4 + 5 + 2);
}

TEST(RespParserTest, LargeBulkInChunks) {
  const std::string payload(1 << 20, 'p');
  const std::string wire = Encode({"SET", "k", payload});
  Parser parser;
  std::vector<std::string_view> args;
  std::string buffer;
  size_t hint = 0;
  for (size_t fed = 0; fed < wire.size();) {
    size_t chunk = std::min<size_t>(16 * 1024, wire.size() - fed);
    buffer.append(wire, fed, chunk);
    fed += chunk;
    ParseStatus status = parser.Parse(buffer, &args);
    if (fed < wire.size()) {
      ASSERT_EQ(status, ParseStatus::kNeedMore);
      ASSERT_EQ(parser.bytes_hint(), wire.size());
      hint = parser.bytes_hint();
    } else {
      ASSERT_EQ(status, ParseStatus::kOk);
    }
  }
  EXPECT_EQ(hint, wire.size());
  ASSERT_EQ(args.size(), 3u);
  EXPECT_EQ(args[2], payload);
  EXPECT_EQ(parser.consumed(), wire.size());
}

// A count announces nothing to reserve: no hint while the arguments of "*1000000000" arrive, so
// the connection's buffer grows with the bytes alone.
TEST(RespParserTest, AnnouncedCountGivesNoHint) {
  Parser parser;
  std::vector<std::string_view> args;
  std::string wire = "*1000000000\r\n";
  for (int i = 0; i < 100; ++i) wire += "$1\r\nx\r\n";
  EXPECT_EQ(parser.Parse(wire, &args), ParseStatus::kNeedMore);
  EXPECT_EQ(parser.bytes_hint(), 0u);
  EXPECT_EQ(parser.Parse(wire + "$3\r\nab", &args), ParseStatus::kNeedMore);
  EXPECT_EQ(parser.bytes_hint(), wire.size() + 4 + 5);  // only the bulk that is under way
}

// Commands of thousands of arguments resumed across many reads, with small ones between them:
// the offsets kept while a command is partial are given back after it and start over cleanly.
TEST(RespParserTest, HugeCommandsResumedBetweenSmallOnes) {
  Command huge = {"EXISTS"};
  for (int i = 0; i < 5000; ++i) huge.push_back("k" + std::to_string(i));
  const std::string wire = Encode(huge) + Encode({"PING"}) + Encode(huge) + "PING\r\n";
  std::vector<size_t> cuts;
  for (size_t cut = 997; cut < wire.size(); cut += 997) cuts.push_back(cut);
  Parser parser;
  const Outcome outcome = ParseInPieces(parser, wire, cuts);
  EXPECT_THAT(outcome.commands, ElementsAre(huge, Command{"PING"}, huge, Command{"PING"}));
  EXPECT_EQ(outcome.rest, "");
}

TEST(RespParserTest, ResetForgetsProgressAndErrors) {
  Parser parser;
  std::vector<std::string_view> args;
  EXPECT_EQ(parser.Parse("*2\r\n$3\r\nfoo\r\n", &args), ParseStatus::kNeedMore);
  parser.Reset();
  EXPECT_EQ(parser.Parse("PING\r\n", &args), ParseStatus::kOk);
  EXPECT_THAT(args, ElementsAre("PING"));

  EXPECT_EQ(parser.Parse("*x\r\n", &args), ParseStatus::kError);
  // A parser that reported an error starts over on the next call.
  EXPECT_EQ(parser.Parse("*1\r\n$1\r\na\r\n", &args), ParseStatus::kOk);
  EXPECT_THAT(args, ElementsAre("a"));
  EXPECT_EQ(parser.error(), "");
}

}  // namespace
}  // namespace vessel::resp
