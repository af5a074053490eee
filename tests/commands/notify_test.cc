// Keyspace notifications against redis-server: notify-keyspace-events parsed and printed as
// Redis's, and the event stream of every built-in command (generic class, new, expired by the
// active cycle and on access, keymiss) compared with Redis's for the same command sequence.
// Module commands (SET, LPUSH, ...) fire their own events through an SDK call still to come, so
// the streams here leave the module classes ($ l s h z) out.
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/commands/messaging_util.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

class NotifyTest : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
  void TearDown() override {
    for (int server = 0; server < 2; ++server) {
      RespClient c = server == 0 ? Servers::Get().Vessel() : Servers::Get().Redis();
      c("CONFIG", "SET", "notify-keyspace-events", "");
      c("DEBUG", "SET-ACTIVE-EXPIRE", "1");
    }
  }
};

TEST_F(NotifyTest, ClassesParsedAndPrintedAsRedis) {
  std::vector<Row> rows;
  for (const char* in : {"",    "K",   "E",   "KE",    "g",    "$",    "l",           "s",
                         "h",   "z",   "x",   "e",     "t",    "m",    "d",           "n",
                         "A",   "AKE", "KEA", "EA",    "Ag",   "gA",   "Elshzxetdg$", "g$lshzxetd",
                         "EKm", "mKE", "Kn",  "gxn$E", "zzzz", "AKEm", "$K"}) {
    rows.push_back({{"CONFIG", "SET", "notify-keyspace-events", in}, Ok()});
    rows.push_back({{"CONFIG", "GET", "notify-keyspace-events"}, Any()});
  }
  for (const char* bad : {"Kq", "a", "k", "1", " ", "KE ", "B"}) {
    rows.push_back({{"CONFIG", "SET", "notify-keyspace-events", bad},
                    Error(std::string("ERR CONFIG SET failed (possibly related to argument "
                                      "'notify-keyspace-events') - Invalid event class character. "
                                      "Use 'Ag$lshzxeKEtmdn'."))});
  }
  rows.push_back({{"CONFIG", "GET", "notify-keyspace-events"}, Any()});
  // Redis prints A and drops n (so a CONFIG REWRITE would lose it): Vessel keeps the n.
  rows.push_back({{"CONFIG", "SET", "notify-keyspace-events", "AnKE"}, Ok()});
  rows.push_back({{"CONFIG", "GET", "notify-keyspace-events"},
                  Any(),
                  Diff::kSkip,
                  "vessel shows AnKE where redis shows AKE (and fires new events all the same)"});
  RunTable(rows);
  RunVesselTable(
      {{{"CONFIG", "GET", "notify-keyspace-events"}, BulkArr({"notify-keyspace-events", "AnKE"})}});
}

std::vector<std::vector<std::string>> Classes(const std::string& flags) {
  return {{"CONFIG", "SET", "notify-keyspace-events", flags}};
}

// Connection 0 listens to every event; connection 1 works.
const Step kListen = {0, {"PSUBSCRIBE", "__key*__:*"}};

TEST_F(NotifyTest, GenericCommands) {
  for (const char* flags : {"gnxKE", "gK", "nE"}) {
    SCOPED_TRACE(flags);
    Scenario(2, 2, Classes(flags))
        .Run({
            kListen,
            {1, {"SET", "a", "1"}},
            {1, {"MSET", "b", "2", "c", "3", "d", "4"}},
            {1, {"DEL", "a", "b", "nope", "a"}},
            {1, {"UNLINK", "c", "zz"}},
            {1, {"SET", "a", "1"}},
            {1, {"EXPIRE", "a", "100"}},
            {1, {"EXPIRE", "a", "200", "NX"}},  // not applied: no event
            {1, {"PEXPIRE", "a", "200000", "GT"}},
            {1, {"EXPIREAT", "a", "4000000000"}},
            {1, {"PEXPIREAT", "a", "4000000000000"}},
            {1, {"PERSIST", "a"}},
            {1, {"PERSIST", "a"}},       // nothing to remove: no event
            {1, {"EXPIRE", "a", "-1"}},  // in the past: the key is deleted ("del")
            {1, {"EXPIRE", "nope", "10"}},
            {1, {"SET", "a", "1"}},
            {1, {"RENAME", "a", "b"}},  // to a new name
            {1, {"RENAME", "b", "d"}},  // over an existing key
            {1, {"RENAME", "d", "d"}},  // same key: no event
            {1, {"RENAMENX", "d", "e"}},
            {1, {"SET", "f", "1"}},
            {1, {"RENAMENX", "e", "f"}},  // not done
            {1, {"COPY", "e", "g"}},
            {1, {"COPY", "e", "g"}},  // exists: not done
            {1, {"COPY", "e", "g", "REPLACE"}},
            {1, {"COPY", "e", "g", "DB", "3"}},
            {1, {"MOVE", "g", "2"}},
            {1, {"MOVE", "f", "3"}},
            {1, {"SET", "f", "1"}},
            {1, {"MOVE", "f", "3"}},  // exists there: not done
            {1, {"SELECT", "3"}},
            {1, {"DEL", "f", "g"}},
            {1, {"SELECT", "0"}},
            {1, {"SWAPDB", "0", "2"}},  // no events
            {1, {"SWAPDB", "0", "2"}},
            {1, {"FLUSHDB"}},  // no events
            {1, {"MULTI"}},
            {1, {"SET", "m", "1"}},
            {1, {"EXPIRE", "m", "50"}},
            {1, {"DEL", "m"}},
            {1, {"EXEC"}},
        });
  }
}

TEST_F(NotifyTest, Restore) {
  Scenario(2, 2, {{"CONFIG", "SET", "notify-keyspace-events", "KEA"}, {"RPUSH", "src", "a", "b"}})
      .Run({
          kListen,
          {1, {"RESTORE", "k", "0", "$DUMP:src"}},
          {1, {"RESTORE", "k", "0", "$DUMP:src"}},  // BUSYKEY: no event
          {1, {"RESTORE", "k", "0", "$DUMP:src", "REPLACE"}},
          {1, {"RESTORE", "t", "100000", "$DUMP:src"}},
          {1, {"RESTORE", "t", "1", "$DUMP:src", "REPLACE", "ABSTTL"}},  // expired: "del"
          {1, {"RESTORE", "u", "1", "$DUMP:src", "ABSTTL"}},  // expired, nothing to delete
          {1, {"DUMP", "nope"}},
      });
}

TEST_F(NotifyTest, KeyMiss) {
  Scenario(2, 2, Classes("KEm"))
      .Run({
          kListen,
          {1, {"GET", "a"}},
          {1, {"EXISTS", "a", "b"}},
          {1, {"TYPE", "a"}},
          {1, {"TTL", "a"}},
          {1, {"PTTL", "a"}},
          {1, {"EXPIRETIME", "a"}},
          {1, {"TOUCH", "a"}},
          {1, {"DUMP", "a"}},
          {1, {"COPY", "a", "b"}},
          {1, {"OBJECT", "ENCODING", "a"}},  // OBJECT looks without notifying
          {1, {"MEMORY", "USAGE", "a"}},
          {1, {"DEL", "a"}},  // writes do not miss
          {1, {"RENAME", "a", "b"}},
          {1, {"EXPIRE", "a", "10"}},
          {1, {"SET", "a", "1"}},
          {1, {"GET", "a"}},
          {1, {"EXISTS", "a"}},
      });
}

TEST_F(NotifyTest, ExpiredByTheActiveCycle) {
  Scenario(2, 2, Classes("xKE"))
      .Run({
          kListen,
          {1, {"MSET", "a", "1", "b", "2"}},
          // Far enough ahead that no step's quiet window sees them expire on a loaded machine.
          {1, {"PEXPIRE", "a", "400"}},
          {1, {"PEXPIRE", "b", "500"}},
          {1, {}, 1500, Step::kUnordered},  // both expire, in whatever order the cycle finds them
          {1, {"DBSIZE"}},
      });
}

TEST_F(NotifyTest, ExpiredOnAccess) {
  Scenario(
      2, 2,
      {{"CONFIG", "SET", "notify-keyspace-events", "gxKE"}, {"DEBUG", "SET-ACTIVE-EXPIRE", "0"}})
      .Run({
          kListen,
          {1, {"MSET", "a", "1", "b", "2", "c", "3", "d", "4"}},
          {1, {"PEXPIRE", "a", "10"}},
          {1, {"PEXPIRE", "b", "10"}},
          {1, {"PEXPIRE", "c", "10"}},
          {1, {"PEXPIRE", "d", "10"}},
          {1, {}, 50},
          {1, {"GET", "a"}, 100},     // a read deletes it (in vessel just after the read)
          {1, {"EXISTS", "b"}, 100},  // so does a built-in read
          {1, {"DEL", "c"}},          // a write: expired, then nothing to delete
          {1, {"RENAME", "d", "x"}},
          {1, {"DBSIZE"}},
      });
}

// Events of writes on either worker reach listeners on either worker.
TEST_F(NotifyTest, AcrossWorkers) {
  RespClient admin = Servers::Get().Vessel();
  admin("CONFIG", "SET", "notify-keyspace-events", "Eg");
  std::vector<RespClient> listeners = SpreadConnections(2);
  for (auto& l : listeners) {
    l.Send({"SUBSCRIBE", "__keyevent@0__:del"});
    l.Read();
  }
  std::vector<RespClient> writers = SpreadConnections(2);
  for (int i = 0; i < 200; ++i) {
    const std::string key = "k" + std::to_string(i);
    writers[i % 2]("SET", key, "v");
    writers[(i + 1) % 2]("DEL", key);
  }
  for (auto& l : listeners) {
    l.SetTimeout(5000);
    for (int i = 0; i < 200; ++i) {
      const Reply r = l.Read();
      ASSERT_EQ(r.elems.size(), 3u);
      EXPECT_EQ(r.elems[2].str, "k" + std::to_string(i));
    }
    EXPECT_TRUE(ReadQuiet(l, 50).empty());
  }
}

}  // namespace
}  // namespace vessel::test
