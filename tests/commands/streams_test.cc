// The streams module (XADD ... XINFO) against vessel and redis-server: every row runs on both,
// must meet its expectation on both, and the two replies must be identical (rows with a
// generated ID or a clock reading are checked on each server alone). Blocking reads are in
// streams_blocking_test.cc.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

constexpr char kInvalidId[] = "ERR Invalid stream ID specified as stream command argument";
constexpr char kTopItem[] =
    "ERR The ID specified in XADD is equal or smaller than the target stream top item";

// [id, [field, value, ...]]
Expect Entry(const std::string& id, std::vector<std::string> pairs) {
  return Arr({Bulk(id), BulkArr(std::move(pairs))});
}

class StreamsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { LoadOnlyBuiltModules(); }
  void SetUp() override { Servers::Get().Reset(); }
};

TEST_F(StreamsTest, AddAndRange) {
  RunTable({
      {{"XADD", "s", "1-1", "a", "1", "b", "2"}, Bulk("1-1")},
      {{"XADD", "s", "1-2", "a", "3", "b", "4"}, Bulk("1-2")},
      {{"XADD", "s", "2-0", "c", "x"}, Bulk("2-0")},
      {{"XADD", "s", "5", "a", "", "b", "-7"}, Bulk("5-0")},
      {{"XLEN", "s"}, Int(4)},
      {{"XRANGE", "s", "-", "+"},
       Arr({Entry("1-1", {"a", "1", "b", "2"}), Entry("1-2", {"a", "3", "b", "4"}),
            Entry("2-0", {"c", "x"}), Entry("5-0", {"a", "", "b", "-7"})})},
      {{"XREVRANGE", "s", "+", "-", "COUNT", "2"},
       Arr({Entry("5-0", {"a", "", "b", "-7"}), Entry("2-0", {"c", "x"})})},
      {{"XRANGE", "s", "1", "1"},
       Arr({Entry("1-1", {"a", "1", "b", "2"}), Entry("1-2", {"a", "3", "b", "4"})})},
      {{"XRANGE", "s", "(1-1", "(5"},  // (5 is before 5-18446744073709551615
       Arr({Entry("1-2", {"a", "3", "b", "4"}), Entry("2-0", {"c", "x"}),
            Entry("5-0", {"a", "", "b", "-7"})})},
      {{"XRANGE", "s", "(1-1", "(5-0"},
       Arr({Entry("1-2", {"a", "3", "b", "4"}), Entry("2-0", {"c", "x"})})},
      {{"XREVRANGE", "s", "(5-0", "(1-2"}, Arr({Entry("2-0", {"c", "x"})})},
      {{"XRANGE", "s", "3", "4"}, Arr({})},
      {{"XRANGE", "s", "5", "1"}, Arr({})},
      {{"XRANGE", "s", "-", "+", "COUNT", "0"}, NilArray()},
      {{"XRANGE", "s", "-", "+", "COUNT", "-5"}, NilArray()},
      {{"XRANGE", "s", "-", "+", "count", "1", "COUNT", "2"},
       Arr({Entry("1-1", {"a", "1", "b", "2"}), Entry("1-2", {"a", "3", "b", "4"})})},
      {{"XRANGE", "s", "-", "+", "COUNT"}, Error(kSyntax)},
      {{"XRANGE", "s", "-", "+", "COUNT", "x"}, Error(kNotInt)},
      {{"XRANGE", "s", "-", "+", "LIMIT", "1"}, Error(kSyntax)},
      {{"XRANGE", "s", "x", "+"}, Error(kInvalidId)},
      {{"XRANGE", "s", "(", "+"}, Error(kInvalidId)},
      {{"XRANGE", "s", "(-", "+"}, Error(kInvalidId)},
      {{"XRANGE", "s", "-", "(+"}, Error(kInvalidId)},
      {{"XRANGE", "s", "(18446744073709551615-18446744073709551615", "+"},
       Error("ERR invalid start ID for the interval")},
      {{"XRANGE", "s", "-", "(0-0"}, Error("ERR invalid end ID for the interval")},
      {{"XRANGE", "s", "1-x", "+"}, Error(kInvalidId)},
      {{"XRANGE", "s", "-1", "+"}, Error(kInvalidId)},
      {{"XRANGE", "s", "00001-0001", "1-1"}, Arr({Entry("1-1", {"a", "1", "b", "2"})})},
      {{"XRANGE", "s", "1- 1", "1-+1"}, Arr({Entry("1-1", {"a", "1", "b", "2"})})},
      {{"XRANGE", "none", "-", "+"}, Arr({})},
      {{"XREVRANGE", "none", "+", "-"}, Arr({})},
      {{"XLEN", "none"}, Int(0)},
      {{"TYPE", "s"}, Simple("stream")},
      {{"OBJECT", "ENCODING", "s"}, Bulk("stream")},
  });
}

TEST_F(StreamsTest, AddIds) {
  RunTable({
      {{"XADD", "s", "0-0", "a", "1"},
       Error("ERR The ID specified in XADD must be greater than 0-0")},
      {{"XADD", "s", "0", "a", "1"},
       Error("ERR The ID specified in XADD must be greater than 0-0")},
      {{"EXISTS", "s"}, Int(0)},
      {{"XADD", "s", "0-*", "a", "1"}, Bulk("0-1")},
      {{"XADD", "s", "0-*", "a", "1"}, Bulk("0-2")},
      {{"XADD", "s", "5-*", "a", "1"}, Bulk("5-0")},
      {{"XADD", "s", "5-*", "a", "1"}, Bulk("5-1")},
      {{"XADD", "s", "4-*", "a", "1"}, Error(kTopItem)},
      {{"XADD", "s", "5-1", "a", "1"}, Error(kTopItem)},
      {{"XADD", "s", "5", "a", "1"}, Error(kTopItem)},
      {{"XADD", "s", "5-x", "a", "1"}, Error(kInvalidId)},
      {{"XADD", "s", "-", "a", "1"}, Error(kInvalidId)},
      {{"XADD", "s", "+", "a", "1"}, Error(kInvalidId)},
      {{"XADD", "s", "*-1", "a", "1"}, Error(kInvalidId)},
      {{"XADD", "s", "18446744073709551616", "a", "1"}, Error(kInvalidId)},
      {{"XADD", "s", "6-*", "a"}, Error("ERR wrong number of arguments for 'xadd' command")},
      {{"XADD", "s", "6-*", "a", "1", "b"},
       Error("ERR wrong number of arguments for 'xadd' command")},
      {{"XADD", "s", "18446744073709551615-18446744073709551614", "a", "1"},
       Bulk("18446744073709551615-18446744073709551614")},
      {{"XADD", "s", "18446744073709551615-*", "a", "1"},
       Bulk("18446744073709551615-18446744073709551615")},
      {{"XADD", "s", "18446744073709551615-*", "a", "1"},
       Error("ERR The stream has exhausted the last possible ID, unable to add more items")},
      {{"XADD", "s", "*", "a", "1"},
       Error("ERR The stream has exhausted the last possible ID, unable to add more items")},
      {{"XADD", "t", "7-18446744073709551615", "a", "1"}, Bulk("7-18446744073709551615")},
      {{"XADD", "t", "7-*", "a", "1"}, Error("ERR Elements are too large to be stored")},
      {{"XADD", "t", "*", "a", "1"}, Any(), Diff::kSkip, "the time decides the ID"},
      {{"XLEN", "t"}, Int(2)},
      {{"XADD", "u", "NOMKSTREAM", "1-1", "a", "1"}, Nil()},
      {{"EXISTS", "u"}, Int(0)},
      {{"XADD", "u", "nomkstream", "*", "a", "1"}, Nil()},
      {{"XADD", "t", "NOMKSTREAM", "99999999999999-1", "a", "1"}, Bulk("99999999999999-1")},
  });
}

TEST_F(StreamsTest, AddTrims) {
  std::vector<Row> rows;
  for (int i = 1; i <= 250; ++i) {
    const std::string id = std::to_string(i) + "-0";
    rows.push_back({{"XADD", "s", id, "f", std::to_string(i)}, Bulk(id)});
  }
  RunTable(rows);
  RunTable({
      {{"XADD", "s", "MAXLEN", "~", "120", "251-0", "f", "v"}, Bulk("251-0")},
      {{"XLEN", "s"}, Int(151)},  // whole nodes of 100 only
      {{"XADD", "s", "MAXLEN", "~", "120", "LIMIT", "0", "252-0", "f", "v"}, Bulk("252-0")},
      {{"XLEN", "s"}, Int(152)},
      {{"XADD", "s", "MAXLEN", "=", "150", "253-0", "f", "v"}, Bulk("253-0")},
      {{"XLEN", "s"}, Int(150)},
      {{"XRANGE", "s", "-", "+", "COUNT", "1"}, Arr({Entry("104-0", {"f", "104"})})},
      {{"XADD", "s", "MINID", "200", "254-0", "f", "v"}, Bulk("254-0")},
      {{"XLEN", "s"}, Int(55)},
      {{"XADD", "s", "MINID", "~", "230", "255-0", "f", "v"}, Bulk("255-0")},
      {{"XLEN", "s"}, Int(55)},  // the node of 200 went, the one of 201..255 holds 230
      {{"XADD", "s", "MAXLEN", "10", "MINID", "1", "256-0", "f", "v"},
       Error("ERR syntax error, MAXLEN and MINID options at the same time are not compatible")},
      {{"XADD", "s", "LIMIT", "10", "256-0", "f", "v"},
       Error("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")},
      {{"XADD", "s", "MAXLEN", "10", "LIMIT", "10", "256-0", "f", "v"},
       Error("ERR syntax error, LIMIT cannot be used without the special ~ option")},
      {{"XADD", "s", "MAXLEN", "-1", "256-0", "f", "v"},
       Error("ERR The MAXLEN argument must be >= 0.")},
      {{"XADD", "s", "MAXLEN", "~", "1", "LIMIT", "-1", "256-0", "f", "v"},
       Error("ERR The LIMIT argument must be >= 0.")},
      {{"XADD", "s", "MAXLEN", "x", "256-0", "f", "v"}, Error(kNotInt)},
      {{"XADD", "s", "MINID", "x", "256-0", "f", "v"}, Error(kInvalidId)},
      {{"XADD", "s", "MINID", "-", "256-0", "f", "v"}, Error(kInvalidId)},
      {{"XLEN", "s"}, Int(55)},
  });
}

TEST_F(StreamsTest, DelAndTrim) {
  std::vector<Row> rows;
  for (int i = 1; i <= 30; ++i) {
    const std::string id = std::to_string(i) + "-0";
    rows.push_back({{"XADD", "s", id, "f", "v"}, Bulk(id)});
  }
  RunTable(rows);
  RunTable({
      {{"XDEL", "s", "1-0", "2-0", "2-0", "99-0"}, Int(2)},
      {{"XDEL", "s", "3-0", "x"}, Error(kInvalidId)},
      {{"XLEN", "s"}, Int(28)},
      {{"XDEL", "none", "x"}, Int(0)},
      {{"XTRIM", "s", "MAXLEN", "25"}, Int(3)},
      {{"XTRIM", "s", "MAXLEN", "~", "1"}, Int(0)},
      {{"XTRIM", "s", "MINID", "10"}, Int(4)},
      {{"XTRIM", "s", "MINID", "=", "12-0"}, Int(2)},
      {{"XTRIM", "s", "maxlen", "~", "0", "LIMIT", "10"}, Int(0)},
      {{"XRANGE", "s", "-", "+", "COUNT", "1"}, Arr({Entry("12-0", {"f", "v"})})},
      {{"XTRIM", "s", "MAXLEN", "0"}, Int(19)},
      {{"XLEN", "s"}, Int(0)},
      {{"EXISTS", "s"}, Int(1)},  // an empty stream stays
      {{"XTRIM", "s"}, Error("ERR wrong number of arguments for 'xtrim' command")},
      {{"XTRIM", "s", "MAXLEN"}, Error("ERR wrong number of arguments for 'xtrim' command")},
      {{"XTRIM", "s", "FOO", "1"}, Error(kSyntax)},
      {{"XTRIM", "s", "LIMIT", "1", "MAXLEN", "1"},
       Error("ERR syntax error, LIMIT cannot be used without the special ~ option")},
      {{"XTRIM", "s", "LIMIT", "1", "x"}, Error(kSyntax)},
      {{"XTRIM", "s", "LIMIT", "1"},
       Error("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")},
      {{"XTRIM", "s", "LIMIT", "0", "LIMIT", "0"},
       Error("ERR syntax error, XTRIM must be called with a trimming strategy")},
      {{"XTRIM", "none", "MAXLEN", "0"}, Int(0)},
      {{"XTRIM", "none", "MAXLEN", "x"}, Error(kNotInt)},
  });
}

TEST_F(StreamsTest, SetIdAndInfo) {
  RunTable({
      {{"XSETID", "s", "5-0"}, Error("ERR no such key")},
      {{"XADD", "s", "1-0", "a", "1"}, Bulk("1-0")},
      {{"XADD", "s", "2-0", "a", "1"}, Bulk("2-0")},
      {{"XSETID", "s", "1-5"},
       Error("ERR The ID specified in XSETID is smaller than the target stream top item")},
      {{"XSETID", "s", "5-0", "ENTRIESADDED", "1"},
       Error("ERR The entries_added specified in XSETID is smaller than the target stream length")},
      {{"XSETID", "s", "5-0", "ENTRIESADDED", "-1"}, Error("ERR entries_added must be positive")},
      {{"XSETID", "s", "5-0", "MAXDELETEDID", "6-0"},
       Error("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")},
      {{"XSETID", "s", "5-0", "FOO"}, Error(kSyntax)},
      {{"XSETID", "s", "+"}, Error(kInvalidId)},
      {{"XSETID", "s", "5-0", "ENTRIESADDED", "10", "MAXDELETEDID", "3-0"}, Ok()},
      {{"XADD", "s", "4-0", "a", "1"}, Error(kTopItem)},
      {{"XADD", "s", "5-*", "a", "1"}, Bulk("5-1")},
      {{"XDEL", "s", "1-0", "2-0", "5-1"}, Int(3)},
      {{"XSETID", "s", "3-0"}, Ok()},  // empty: any ID
      {{"XADD", "s", "3-1", "a", "1"}, Bulk("3-1")},
      {{"SET", "str", "x"}, Ok()},
      {{"XADD", "str", "*", "a", "1"}, Error(kWrongType)},
      {{"XRANGE", "str", "-", "+"}, Error(kWrongType)},
      {{"XREVRANGE", "str", "+", "-"}, Error(kWrongType)},
      {{"XLEN", "str"}, Error(kWrongType)},
      {{"XDEL", "str", "1-1"}, Error(kWrongType)},
      {{"XTRIM", "str", "MAXLEN", "1"}, Error(kWrongType)},
      {{"XSETID", "str", "1-1"}, Error(kWrongType)},
  });
}

TEST_F(StreamsTest, GroupLifecycle) {
  constexpr char kNeedsKey[] =
      "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to "
      "use the MKSTREAM option to create an empty stream automatically.";
  RunTable({
      {{"XGROUP", "CREATE", "s", "g", "$"}, Error(kNeedsKey)},
      {{"XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"}, Ok()},
      {{"TYPE", "s"}, Simple("stream")},
      {{"XLEN", "s"}, Int(0)},
      {{"XGROUP", "CREATE", "s", "g", "$"}, Error("BUSYGROUP Consumer Group name already exists")},
      {{"XADD", "s", "1-0", "a", "1"}, Bulk("1-0")},
      {{"XADD", "s", "2-0", "b", "2"}, Bulk("2-0")},
      {{"XGROUP", "CREATE", "s", "g2", "0", "ENTRIESREAD", "1"}, Ok()},
      {{"XGROUP", "CREATE", "s", "g3", "0", "ENTRIESREAD", "-2"},
       Error("ERR value for ENTRIESREAD must be positive or -1")},
      {{"XGROUP", "CREATE", "s", "g3", "0", "ENTRIESREAD", "x"}, Error(kNotInt)},
      {{"XGROUP", "CREATE", "s", "g3", "0", "FOO"},
       Error("ERR unknown subcommand or wrong number of arguments for 'CREATE'. Try XGROUP HELP.")},
      {{"XGROUP", "CREATE", "s", "g3", "+"}, Error(kInvalidId)},
      {{"XGROUP", "CREATE", "s", "g3", "0", "MKSTREAM", "MKSTREAM", "MKSTREAM", "MKSTREAM"},
       Error("ERR unknown subcommand or wrong number of arguments for 'CREATE'. Try XGROUP HELP.")},
      {{"XGROUP", "CREATE", "s"},
       Error("ERR wrong number of arguments for 'xgroup|create' command")},
      {{"XGROUP", "SETID", "s", "nog", "0"},
       Error("NOGROUP No such consumer group 'nog' for key name 's'")},
      {{"XGROUP", "SETID", "none", "g", "0"}, Error(kNeedsKey)},
      {{"XGROUP", "SETID", "s", "g2", "1", "ENTRIESREAD", "1"}, Ok()},
      {{"XGROUP", "SETID", "s", "g2", "-"}, Ok()},
      {{"XGROUP", "SETID", "s", "g2", "$", "MKSTREAM"},
       Error("ERR unknown subcommand or wrong number of arguments for 'SETID'. Try XGROUP HELP.")},
      {{"XGROUP", "CREATECONSUMER", "s", "g", "alice"}, Int(1)},
      {{"XGROUP", "CREATECONSUMER", "s", "g", "alice"}, Int(0)},
      {{"XGROUP", "CREATECONSUMER", "s", "nog", "alice"},
       Error("NOGROUP No such consumer group 'nog' for key name 's'")},
      {{"XGROUP", "DELCONSUMER", "s", "g", "bob"}, Int(0)},
      {{"XGROUP", "DELCONSUMER", "s", "g", "alice"}, Int(0)},
      {{"XGROUP", "DESTROY", "s", "g2"}, Int(1)},
      {{"XGROUP", "DESTROY", "s", "g2"}, Int(0)},
      {{"XGROUP", "DESTROY", "none", "g2"}, Error(kNeedsKey)},
      {{"XGROUP"}, Error("ERR wrong number of arguments for 'xgroup' command")},
      {{"XGROUP", "FOO"}, Error("ERR unknown subcommand 'FOO'. Try XGROUP HELP.")},
      {{"XGROUP", "HELP", "x"}, Error("ERR wrong number of arguments for 'xgroup|help' command")},
      {{"XGROUP", "HELP"}, Any()},
      {{"XINFO", "HELP"}, Any()},
      {{"XINFO", "GROUPS", "s"},
       Arr({Arr({Bulk("name"), Bulk("g"), Bulk("consumers"), Int(0), Bulk("pending"), Int(0),
                 Bulk("last-delivered-id"), Bulk("0-0"), Bulk("entries-read"), Nil(), Bulk("lag"),
                 Int(2)})})},
      {{"XINFO", "GROUPS", "none"}, Error("ERR no such key")},
      {{"XINFO", "CONSUMERS", "s", "nog"},
       Error("NOGROUP No such consumer group 'nog' for key name 's'")},
      {{"XINFO", "STREAM", "s", "FOO"},
       Error("ERR unknown subcommand or wrong number of arguments for 'STREAM'. Try XINFO HELP.")},
      {{"XINFO", "STREAM", "s", "FULL", "COUNT"},
       Error("ERR unknown subcommand or wrong number of arguments for 'STREAM'. Try XINFO HELP.")},
      {{"XINFO", "STREAM", "s", "FULL", "FOO", "1"},
       Error("ERR unknown subcommand or wrong number of arguments for 'STREAM'. Try XINFO HELP.")},
      {{"XINFO", "STREAM", "s", "FULL", "COUNT", "x"}, Error(kNotInt)},
      {{"XINFO", "FOO", "s"}, Error("ERR unknown subcommand 'FOO'. Try XINFO HELP.")},
      {{"SET", "str", "x"}, Ok()},
      {{"XGROUP", "CREATE", "str", "g", "$", "MKSTREAM"}, Error(kWrongType)},
      {{"XINFO", "STREAM", "str"}, Error(kWrongType)},
      {{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "str", ">"}, Error(kWrongType)},
      {{"XACK", "str", "g", "1-0"}, Error(kWrongType)},
      {{"XPENDING", "str", "g"}, Error(kWrongType)},
      {{"XCLAIM", "str", "g", "c", "0", "1-0"}, Error(kWrongType)},
      {{"XAUTOCLAIM", "str", "g", "c", "0", "0"}, Error(kWrongType)},
  });
}

// Deliveries, acknowledgements, the pending lists, claims; the read counters and lag as Redis 7.0
// computes them. Delivery times are set with XCLAIM TIME where a reply shows them.
TEST_F(StreamsTest, ConsumeAndClaim) {
  RunTable({
      {{"XADD", "s", "1-0", "a", "1"}, Bulk("1-0")},
      {{"XADD", "s", "2-0", "b", "2"}, Bulk("2-0")},
      {{"XADD", "s", "3-0", "c", "3"}, Bulk("3-0")},
      {{"XGROUP", "CREATE", "s", "g", "0"}, Ok()},
      {{"XREADGROUP", "GROUP", "g", "alice", "COUNT", "1", "STREAMS", "s", ">"},
       Arr({Arr({Bulk("s"), Arr({Entry("1-0", {"a", "1"})})})})},
      {{"XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">"},
       Arr({Arr({Bulk("s"), Arr({Entry("2-0", {"b", "2"}), Entry("3-0", {"c", "3"})})})})},
      {{"XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">"}, NilArray()},
      {{"XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0"},
       Arr({Arr({Bulk("s"), Arr({Entry("1-0", {"a", "1"})})})})},
      {{"XREADGROUP", "GROUP", "g", "carol", "STREAMS", "s", "0"},
       Arr({Arr({Bulk("s"), Arr({})})})},
      {{"XINFO", "GROUPS", "s"},
       Arr({Arr({Bulk("name"), Bulk("g"), Bulk("consumers"), Int(3), Bulk("pending"), Int(3),
                 Bulk("last-delivered-id"), Bulk("3-0"), Bulk("entries-read"), Int(3), Bulk("lag"),
                 Int(0)})})},
      {{"XPENDING", "s", "g"},
       Arr({Int(3), Bulk("1-0"), Bulk("3-0"),
            Arr({BulkArr({"alice", "1"}), BulkArr({"bob", "2"})})})},
      {{"XPENDING", "s", "g", "-", "+", "10"},
       Arr({Arr({Bulk("1-0"), Bulk("alice"), IntRange(0, 60000), Int(2)}),
            Arr({Bulk("2-0"), Bulk("bob"), IntRange(0, 60000), Int(1)}),
            Arr({Bulk("3-0"), Bulk("bob"), IntRange(0, 60000), Int(1)})}),
       Diff::kSkip,
       "idle times are clock readings"},
      {{"XPENDING", "s", "g", "(1-0", "+", "1", "bob"},
       Arr({Arr({Bulk("2-0"), Bulk("bob"), IntRange(0, 60000), Int(1)})}),
       Diff::kSkip,
       "idle times are clock readings"},
      {{"XPENDING", "s", "g", "-", "+", "10", "nobody"}, Arr({})},
      {{"XPENDING", "s", "g", "IDLE", "100000", "-", "+", "10"}, Arr({})},
      {{"XPENDING", "s", "g", "IDLE", "0", "-", "+"}, Error(kSyntax)},
      {{"XPENDING", "s", "g", "-", "+"}, Error(kSyntax)},
      {{"XPENDING", "s", "g", "-", "+", "x"}, Error(kNotInt)},
      {{"XPENDING", "s", "nog"}, Error("NOGROUP No such key 's' or consumer group 'nog'")},
      {{"XPENDING", "none", "g", "-", "+", "1"},
       Error("NOGROUP No such key 'none' or consumer group 'g'")},
      {{"XACK", "s", "g", "1-0", "1-0", "9-0"}, Int(1)},
      {{"XACK", "s", "g", "x"}, Error(kInvalidId)},
      {{"XACK", "s", "nog", "x"}, Int(0)},
      {{"XACK", "none", "g", "1-0"}, Int(0)},
      {{"XCLAIM", "s", "g", "carol", "0", "2-0", "TIME", "1000", "RETRYCOUNT", "7", "JUSTID"},
       BulkArr({"2-0"})},
      {{"XCLAIM", "s", "g", "carol", "0", "3-0", "9-0", "TIME", "2000"},
       Arr({Entry("3-0", {"c", "3"})})},
      {{"XCLAIM", "s", "g", "dave", "0", "1-0", "FORCE", "TIME", "3000", "JUSTID"},
       BulkArr({"1-0"})},
      // Delivered at 1000 and 2000 ms after the epoch: idle for decades.
      {{"XCLAIM", "s", "g", "dave", "100000000", "2-0", "3-0"},
       Arr({Entry("2-0", {"b", "2"}), Entry("3-0", {"c", "3"})})},
      {{"XCLAIM", "s", "g", "carol", "100000000", "2-0", "3-0"}, Arr({})},
      {{"XINFO", "STREAM", "s", "FULL"}, Any(), Diff::kSkip, "seen times are clock readings"},
      {{"XPENDING", "s", "g"},
       Arr({Int(3), Bulk("1-0"), Bulk("3-0"), Arr({BulkArr({"dave", "3"})})})},
      {{"XCLAIM", "s", "g", "dave", "0", "3-0", "FOO"},
       Error("ERR Unrecognized XCLAIM option 'FOO'")},
      {{"XCLAIM", "s", "g", "dave", "0", "3-0", "IDLE"},
       Error("ERR Unrecognized XCLAIM option 'IDLE'")},
      {{"XCLAIM", "s", "g", "dave", "x", "3-0"},
       Error("ERR Invalid min-idle-time argument for XCLAIM")},
      {{"XCLAIM", "s", "g", "dave", "0", "3-0", "IDLE", "x"},
       Error("ERR Invalid IDLE option argument for XCLAIM")},
      {{"XCLAIM", "s", "g", "dave", "0", "3-0", "TIME", "x"},
       Error("ERR Invalid TIME option argument for XCLAIM")},
      {{"XCLAIM", "s", "g", "dave", "0", "3-0", "RETRYCOUNT", "x"},
       Error("ERR Invalid RETRYCOUNT option argument for XCLAIM")},
      {{"XCLAIM", "s", "g", "dave", "0", "3-0", "LASTID", "x"}, Error(kInvalidId)},
      {{"XCLAIM", "s", "nog", "dave", "0", "3-0"},
       Error("NOGROUP No such key 's' or consumer group 'nog'")},
      {{"XCLAIM", "s", "g", "dave", "0", "3-0", "LASTID", "5-0", "JUSTID"}, BulkArr({"3-0"})},
      {{"XINFO", "GROUPS", "s"},
       Arr({Arr({Bulk("name"), Bulk("g"), Bulk("consumers"), Int(4), Bulk("pending"), Int(3),
                 Bulk("last-delivered-id"), Bulk("5-0"), Bulk("entries-read"), Int(3), Bulk("lag"),
                 Int(0)})})},
      {{"XDEL", "s", "2-0"}, Int(1)},
      {{"XAUTOCLAIM", "s", "g", "erin", "0", "0", "COUNT", "1"},
       Arr({Bulk("2-0"), Arr({Entry("1-0", {"a", "1"})}), Arr({})})},
      {{"XAUTOCLAIM", "s", "g", "erin", "0", "(1-0", "JUSTID"},
       Arr({Bulk("0-0"), BulkArr({"3-0"}), BulkArr({"2-0"})})},
      {{"XAUTOCLAIM", "s", "g", "erin", "0", "0", "COUNT", "0"}, Error("ERR COUNT must be > 0")},
      {{"XAUTOCLAIM", "s", "g", "erin", "x", "0"},
       Error("ERR Invalid min-idle-time argument for XAUTOCLAIM")},
      {{"XAUTOCLAIM", "s", "g", "erin", "0", "x"}, Error(kInvalidId)},
      {{"XAUTOCLAIM", "s", "g", "erin", "0", "0", "FOO"}, Error(kSyntax)},
      {{"XAUTOCLAIM", "s", "nog", "erin", "0", "0"},
       Error("NOGROUP No such key 's' or consumer group 'nog'")},
      {{"XPENDING", "s", "g"},
       Arr({Int(2), Bulk("1-0"), Bulk("3-0"), Arr({BulkArr({"erin", "2"})})})},
      {{"XGROUP", "DELCONSUMER", "s", "g", "erin"}, Int(2)},
      {{"XPENDING", "s", "g"}, Arr({Int(0), Nil(), Nil(), NilArray()})},
      {{"XGROUP", "SETID", "s", "g", "0"}, Ok()},
      {{"XREADGROUP", "GROUP", "g", "zed", "NOACK", "STREAMS", "s", ">"},
       Arr({Arr({Bulk("s"), Arr({Entry("1-0", {"a", "1"}), Entry("3-0", {"c", "3"})})})})},
      {{"XPENDING", "s", "g"}, Arr({Int(0), Nil(), Nil(), NilArray()})},
      {{"XINFO", "GROUPS", "s"},
       Arr({Arr({Bulk("name"), Bulk("g"), Bulk("consumers"), Int(5), Bulk("pending"), Int(0),
                 Bulk("last-delivered-id"), Bulk("3-0"), Bulk("entries-read"), Int(3), Bulk("lag"),
                 Int(0)})})},
  });
}

// Claims by idle time: XCLAIM's IDLE sets an entry's idle time, which XPENDING's IDLE filter and
// XAUTOCLAIM's min-idle-time then select; XINFO CONSUMERS lists who holds what.
TEST_F(StreamsTest, ClaimsByIdleTimeAndConsumerInfo) {
  auto consumer = [](const char* name, int64_t pending) {
    return Arr({Bulk("name"), Bulk(name), Bulk("pending"), Int(pending), Bulk("idle"),
                IntRange(0, 60000)});
  };
  RunTable({
      {{"XADD", "s", "1-0", "a", "1"}, Bulk("1-0")},
      {{"XADD", "s", "2-0", "b", "2"}, Bulk("2-0")},
      {{"XADD", "s", "3-0", "c", "3"}, Bulk("3-0")},
      {{"XGROUP", "CREATE", "s", "g", "0"}, Ok()},
      {{"XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">"},
       Arr({Arr({Bulk("s"), Arr({Entry("1-0", {"a", "1"}), Entry("2-0", {"b", "2"}),
                                 Entry("3-0", {"c", "3"})})})})},
      // Idle for 500 s from now on; JUSTID leaves the delivery count alone.
      {{"XCLAIM", "s", "g", "bob", "0", "1-0", "IDLE", "500000", "JUSTID"}, BulkArr({"1-0"})},
      {{"XCLAIM", "s", "g", "bob", "0", "2-0", "IDLE", "500000"}, Arr({Entry("2-0", {"b", "2"})})},
      {{"XPENDING", "s", "g", "IDLE", "400000", "-", "+", "10"},
       Arr({Arr({Bulk("1-0"), Bulk("bob"), IntRange(500000, 560000), Int(1)}),
            Arr({Bulk("2-0"), Bulk("bob"), IntRange(500000, 560000), Int(2)})}),
       Diff::kSkip,
       "idle times are clock readings"},
      {{"XPENDING", "s", "g", "IDLE", "400000", "(1-0", "+", "10", "bob"},
       Arr({Arr({Bulk("2-0"), Bulk("bob"), IntRange(500000, 560000), Int(2)})}),
       Diff::kSkip,
       "idle times are clock readings"},
      {{"XPENDING", "s", "g", "IDLE", "400000", "-", "+", "10", "alice"}, Arr({})},
      {{"XAUTOCLAIM", "s", "g", "carol", "400000", "0", "JUSTID"},
       Arr({Bulk("0-0"), BulkArr({"1-0", "2-0"}), Arr({})})},
      {{"XAUTOCLAIM", "s", "g", "carol", "400000", "0", "JUSTID"},
       Arr({Bulk("0-0"), Arr({}), Arr({})})},
      {{"XINFO", "CONSUMERS", "s", "g"},
       Arr({consumer("alice", 1), consumer("bob", 0), consumer("carol", 2)}),
       Diff::kSkip,
       "idle times are clock readings"},
      {{"XGROUP", "DELCONSUMER", "s", "g", "carol"}, Int(2)},
      {{"XINFO", "CONSUMERS", "s", "g"},
       Arr({consumer("alice", 1), consumer("bob", 0)}),
       Diff::kSkip,
       "idle times are clock readings"},
      {{"XINFO", "CONSUMERS", "s", "nog"},
       Error("NOGROUP No such consumer group 'nog' for key name 's'")},
  });
}

// The stream commands from Lua, as Redis runs them there: BLOCK is refused (Redis's special case
// for scripts), errors reach redis.pcall as tables.
TEST_F(StreamsTest, InScripts) {
  RunTable({
      {{"EVAL", "return redis.call('XADD', KEYS[1], '1-0', 'a', '1')", "1", "s"}, Bulk("1-0")},
      {{"EVAL", "return redis.call('XRANGE', KEYS[1], '-', '+')", "1", "s"},
       Arr({Entry("1-0", {"a", "1"})})},
      {{"EVAL",
        "redis.call('XGROUP', 'CREATE', KEYS[1], 'g', '0') "
        "return redis.call('XREADGROUP', 'GROUP', 'g', 'c', 'STREAMS', KEYS[1], '>')",
        "1", "s"},
       Arr({Arr({Bulk("s"), Arr({Entry("1-0", {"a", "1"})})})})},
      {{"EVAL", "return redis.pcall('XREAD', 'BLOCK', '0', 'STREAMS', KEYS[1], '$')", "1", "s"},
       Error("ERR XREAD command is not allowed with BLOCK option from scripts")},
      {{"EVAL",
        "return redis.pcall('xreadgroup', 'GROUP', 'g', 'c', 'BLOCK', 'x', 'STREAMS', KEYS[1], "
        "'>')",
        "1", "s"},
       Error("ERR xreadgroup command is not allowed with BLOCK option from scripts")},
      {{"EVAL", "return redis.call('XREAD', 'COUNT', '1', 'STREAMS', KEYS[1], '$')", "1", "s"},
       Nil()},
      {{"EVAL", "return redis.call('XPENDING', KEYS[1], 'g')", "1", "s"},
       Arr({Int(1), Bulk("1-0"), Bulk("1-0"), Arr({BulkArr({"c", "1"})})})},
      {{"EVAL", "return redis.call('XACK', KEYS[1], 'g', '1-0')", "1", "s"}, Int(1)},
      {{"EVAL", "return redis.pcall('XADD', KEYS[1], '1-0', 'a', '1')", "1", "s"}, Error(kTopItem)},
      {{"EVAL", "return redis.call('XLEN', KEYS[1])", "1", "s"}, Int(1)},
      {{"EVAL", "return redis.call('XTRIM', KEYS[1], 'MAXLEN', '0')", "1", "s"}, Int(1)},
      {{"XINFO", "GROUPS", "s"},
       Arr({Arr({Bulk("name"), Bulk("g"), Bulk("consumers"), Int(1), Bulk("pending"), Int(0),
                 Bulk("last-delivered-id"), Bulk("1-0"), Bulk("entries-read"), Int(1), Bulk("lag"),
                 Int(0)})})},
  });
}

// entries-read and lag through tombstones, XSETID and explicit counters (Redis 7.0's estimates).
TEST_F(StreamsTest, ReadCountersAndLag) {
  auto group = [](const char* last, Expect read, Expect lag) {
    return Arr({Arr({Bulk("name"), Bulk("g"), Bulk("consumers"), Any(), Bulk("pending"), Any(),
                     Bulk("last-delivered-id"), Bulk(last), Bulk("entries-read"), std::move(read),
                     Bulk("lag"), std::move(lag)})});
  };
  RunTable({
      {{"XADD", "s", "1-0", "f", "v"}, Bulk("1-0")},
      {{"XADD", "s", "2-0", "f", "v"}, Bulk("2-0")},
      {{"XADD", "s", "3-0", "f", "v"}, Bulk("3-0")},
      {{"XADD", "s", "4-0", "f", "v"}, Bulk("4-0")},
      {{"XGROUP", "CREATE", "s", "g", "0"}, Ok()},
      {{"XINFO", "GROUPS", "s"}, group("0-0", Nil(), Int(4))},
      {{"XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">"}, Any()},
      {{"XINFO", "GROUPS", "s"}, group("1-0", Int(1), Int(3))},
      {{"XDEL", "s", "3-0"}, Int(1)},
      {{"XINFO", "GROUPS", "s"}, group("1-0", Int(1), Nil())},
      {{"XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">"}, Any()},
      {{"XINFO", "GROUPS", "s"}, group("2-0", Nil(), Nil())},
      {{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"}, Any()},
      {{"XINFO", "GROUPS", "s"}, group("4-0", Int(4), Int(0))},
      {{"XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD", "0"}, Ok()},
      {{"XINFO", "GROUPS", "s"}, group("0-0", Int(0), Nil())},
      {{"XGROUP", "SETID", "s", "g", "$"}, Ok()},
      {{"XINFO", "GROUPS", "s"}, group("4-0", Nil(), Int(0))},
      {{"XTRIM", "s", "MAXLEN", "0"}, Int(3)},
      {{"XGROUP", "SETID", "s", "g", "0"}, Ok()},
      {{"XINFO", "GROUPS", "s"}, group("0-0", Nil(), Int(0))},
      {{"XSETID", "s", "10-0", "ENTRIESADDED", "20", "MAXDELETEDID", "9-0"}, Ok()},
      {{"XINFO", "GROUPS", "s"}, group("0-0", Nil(), Int(0))},
      {{"XADD", "s", "11-0", "f", "v"}, Bulk("11-0")},
      {{"XINFO", "GROUPS", "s"}, group("0-0", Nil(), Int(1))},
      {{"XGROUP", "CREATE", "s", "h", "$", "ENTRIESREAD", "5"}, Ok()},
      {{"XINFO", "STREAM", "s"},
       Arr({Bulk("length"),
            Int(1),
            Bulk("radix-tree-keys"),
            Int(1),
            Bulk("radix-tree-nodes"),
            Any(),
            Bulk("last-generated-id"),
            Bulk("11-0"),
            Bulk("max-deleted-entry-id"),
            Bulk("9-0"),
            Bulk("entries-added"),
            Int(21),
            Bulk("recorded-first-entry-id"),
            Bulk("11-0"),
            Bulk("groups"),
            Int(2),
            Bulk("first-entry"),
            Entry("11-0", {"f", "v"}),
            Bulk("last-entry"),
            Entry("11-0", {"f", "v"})}),
       Diff::kSkip,
       "radix-tree-nodes counts Redis's radix tree nodes"},
  });
}

TEST_F(StreamsTest, ReadArguments) {
  RunTable({
      {{"XADD", "s", "1-0", "a", "1"}, Bulk("1-0")},
      {{"XADD", "t", "1-0", "b", "2"}, Bulk("1-0")},
      {{"XREAD", "STREAMS", "s", "t", "0", "0"},
       Arr({Arr({Bulk("s"), Arr({Entry("1-0", {"a", "1"})})}),
            Arr({Bulk("t"), Arr({Entry("1-0", {"b", "2"})})})})},
      {{"XREAD", "COUNT", "1", "STREAMS", "s", "none", "t", "0", "0", "1"},
       Arr({Arr({Bulk("s"), Arr({Entry("1-0", {"a", "1"})})})})},
      {{"XREAD", "STREAMS", "s", "$"}, NilArray()},
      {{"XREAD", "STREAMS", "s", "1-0"}, NilArray()},
      {{"XREAD", "STREAMS", "s"}, Error("ERR wrong number of arguments for 'xread' command")},
      {{"XREAD", "STREAMS", "s", "t", "0"},
       Error("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be "
             "specified.")},
      {{"XREAD", "GROUP", "g", "c", "STREAMS", "s", "0"},
       Error("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.")},
      {{"XREAD", "NOACK", "STREAMS", "s", "0"},
       Error("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.")},
      {{"XREAD", "STREAMS", "s", ">"},
       Error("ERR The > ID can be specified only when calling XREADGROUP using the GROUP "
             "<group> <consumer> option.")},
      {{"XREAD", "STREAMS", "s", "+"}, Error(kInvalidId)},
      {{"XREAD", "FOO", "STREAMS", "s", "0"}, Error(kSyntax)},
      {{"XREAD", "COUNT", "x", "STREAMS", "s", "0"}, Error(kNotInt)},
      {{"XREAD", "BLOCK", "x", "STREAMS", "s", "0"},
       Error("ERR timeout is not an integer or out of range")},
      {{"XREAD", "BLOCK", "-1", "STREAMS", "s", "0"}, Error("ERR timeout is negative")},
      {{"XREAD", "COUNT", "-3", "STREAMS", "s", "0"},
       Arr({Arr({Bulk("s"), Arr({Entry("1-0", {"a", "1"})})})})},
      {{"XREADGROUP", "STREAMS", "s", ">"},
       Error("ERR wrong number of arguments for 'xreadgroup' command")},
      {{"XREADGROUP", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", ">"},
       Error("ERR Missing GROUP option for XREADGROUP")},
      {{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"},
       Error("NOGROUP No such key 's' or consumer group 'g' in XREADGROUP with GROUP option")},
      {{"XGROUP", "CREATE", "s", "g", "0"}, Ok()},
      {{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "$"},
       Error("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the "
             "history of this consumer by specifying a proper ID, or use the > ID to get new "
             "messages. The $ ID would just return an empty result set.")},
      {{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "none", ">", ">"},
       Error("NOGROUP No such key 'none' or consumer group 'g' in XREADGROUP with GROUP option")},
      {{"MULTI"}, Ok()},
      {{"XREAD", "BLOCK", "0", "STREAMS", "s", "$"}, Simple("QUEUED")},
      {{"XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"}, Simple("QUEUED")},
      {{"XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"}, Simple("QUEUED")},
      {{"EXEC"},
       Arr({NilArray(), Arr({Arr({Bulk("s"), Arr({Entry("1-0", {"a", "1"})})})}), NilArray()})},
  });
  RunTable(
      {
          {{"XREAD", "STREAMS", "s", "t", "0", "0"}, Any()},  // RESP3: a map from stream to entries
          {{"XREAD", "STREAMS", "s", "1-0"}, NilArray()},
      },
      3);
}

// A stream as a value: COPY (groups and pending entries included), RENAME, TTLs, WATCH (which
// group commands do not touch in Redis 7.0), MEMORY USAGE below Redis's.
TEST_F(StreamsTest, AsAValue) {
  RunTable({
      {{"XADD", "s", "1-0", "a", "1"}, Bulk("1-0")},
      {{"XADD", "s", "2-0", "b", "2"}, Bulk("2-0")},
      {{"XGROUP", "CREATE", "s", "g", "0"}, Ok()},
      {{"XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">"}, Any()},
      {{"XCLAIM", "s", "g", "c", "0", "1-0", "TIME", "5000", "JUSTID"}, BulkArr({"1-0"})},
      {{"COPY", "s", "t"}, Int(1)},
      {{"XINFO", "STREAM", "t", "FULL"}, Any(), Diff::kSkip, "seen times are clock readings"},
      {{"XPENDING", "t", "g"}, Arr({Int(1), Bulk("1-0"), Bulk("1-0"), Arr({BulkArr({"c", "1"})})})},
      {{"XACK", "t", "g", "1-0"}, Int(1)},
      {{"XPENDING", "s", "g"}, Arr({Int(1), Bulk("1-0"), Bulk("1-0"), Arr({BulkArr({"c", "1"})})})},
      {{"XADD", "t", "3-0", "c", "3"}, Bulk("3-0")},
      {{"XLEN", "s"}, Int(2)},
      {{"RENAME", "t", "u"}, Ok()},
      {{"XRANGE", "u", "3", "+"}, Arr({Entry("3-0", {"c", "3"})})},
      {{"EXPIRE", "u", "100"}, Int(1)},
      {{"TTL", "u"}, IntRange(99, 100)},
      {{"XADD", "u", "4-0", "d", "4"}, Bulk("4-0")},
      {{"TTL", "u"}, IntRange(99, 100)},
      {{"OBJECT", "ENCODING", "u"}, Bulk("stream")},
      {{"DEL", "u"}, Int(1)},
  });
  // WATCH sees XADD, XDEL, XTRIM and a stream created by XGROUP CREATE ... MKSTREAM; Redis 7.0's
  // other group commands and XSETID do not signal the key.
  auto watched = [](std::vector<std::string> write, Expect exec, Diff diff = Diff::kExact,
                    std::string why = "") {
    return std::vector<Row>{
        {{"WATCH", "s"}, Ok()},
        {write, Any()},
        {{"MULTI"}, Ok()},
        {{"PING"}, Simple("QUEUED")},
        {{"EXEC"}, std::move(exec), diff, std::move(why)},
    };
  };
  std::vector<Row> rows;
  for (const auto& part :
       {watched({"XADD", "s", "9-0", "a", "1"}, NilArray()),
        watched({"XGROUP", "CREATECONSUMER", "s", "g", "d"}, Any()),
        watched({"XACK", "s", "g", "1-0"}, Any()), watched({"XSETID", "s", "10-0"}, Any()),
        watched({"XDEL", "s", "9-0"}, NilArray()),
        watched({"XGROUP", "DESTROY", "s", "g"}, Any(), Diff::kSkip,
                "vessel wakes the group's blocked readers through the key's "
                "change, which WATCH also sees")}) {
    rows.insert(rows.end(), part.begin(), part.end());
  }
  RunTable(rows);
  RespClient v = Servers::Get().Vessel(), r = Servers::Get().Redis();
  for (RespClient* c : {&v, &r}) {
    std::vector<std::string> add = {"XADD", "m", "*", "temperature", "20", "humidity", "40"};
    for (int i = 0; i < 2000; ++i) (*c).Cmd(add);
  }
  EXPECT_LT(v("MEMORY", "USAGE", "m").integer, r("MEMORY", "USAGE", "m").integer);
}

}  // namespace
}  // namespace vessel::test
