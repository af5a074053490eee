// The multi_index module (MI.*) against vessel alone (Redis has no such family): table rows for
// every command and error path in RESP2 and RESP3, the keyspace features on multi_index keys
// (TYPE, COPY, MEMORY USAGE, DUMP/RESTORE, MULTI/EXEC, EXPIRE), the type callbacks, and a
// randomized model-based test comparing every reply with a brute-force reference.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

using namespace std::string_literals;
constexpr char kNotFloat[] = "ERR value is not a valid float";
constexpr char kMinMax[] = "ERR min or max is not a float";
constexpr char kNoSuchKey[] = "ERR no such key";
constexpr char kBusyKey[] = "BUSYKEY Target key name already exists.";

std::string Arity(const std::string& cmd) {
  return "ERR wrong number of arguments for '" + cmd + "' command";
}

// An aggregate of exactly this wire type.
Expect Typed(Reply::Type type, std::vector<Expect> elems, std::string what) {
  Expect inner = Arr(std::move(elems));
  return {what + inner.description,
          [type, inner](const Reply& r) { return r.type == type && inner.match(r); }};
}
// A record's fields: a map in RESP3, a flat array in RESP2.
Expect Fields(int proto, const Strings& kv) {
  std::vector<Expect> e;
  for (const std::string& s : kv) e.push_back(Bulk(s));
  return proto == 3 ? Typed(Reply::Type::kMap, e, "map") : Typed(Reply::Type::kArray, e, "");
}
// One record: [id, fields].
Expect Rec(int proto, int64_t id, const Strings& kv) {
  return Typed(Reply::Type::kArray, {Int(id), Fields(proto, kv)}, "");
}
Expect Recs(std::vector<Expect> records) {
  return Typed(Reply::Type::kArray, std::move(records), "");
}
Expect Empty() { return Typed(Reply::Type::kArray, {}, ""); }
Expect Bool(int proto, bool v) {
  if (proto == 2) return Int(v ? 1 : 0);
  return {v ? "(true)" : "(false)",
          [v](const Reply& r) { return r.type == Reply::Type::kBool && r.integer == (v ? 1 : 0); }};
}
// One MI.SCHEMA entry.
Expect IndexInfo(int proto, const std::string& name, const std::string& field,
                 const std::string& kind, bool unique, bool numeric) {
  std::vector<Expect> e = {
      Bulk("name"), Bulk(name),     Bulk("field"),       Bulk(field),     Bulk("kind"),
      Bulk(kind),   Bulk("unique"), Bool(proto, unique), Bulk("numeric"), Bool(proto, numeric)};
  return proto == 3 ? Typed(Reply::Type::kMap, e, "map") : Typed(Reply::Type::kArray, e, "");
}

const Strings kUsers = {"MI.CREATE", "u",       "INDEX", "email",   "email",   "HASH",  "UNIQUE",
                        "INDEX",     "age",     "age",   "ORDERED", "NUMERIC", "INDEX", "name",
                        "name",      "ORDERED", "INDEX", "city",    "city",    "HASH"};

class MultiIndexTest : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
};

// ---- MI.CREATE and MI.SCHEMA ----

std::vector<Row> CreateRows(int proto) {
  return {
      {kUsers, Ok()},
      {{"TYPE", "u"}, Simple("multi_index")},
      {{"OBJECT", "ENCODING", "u"}, Bulk("hashtable+btree")},
      {{"MI.CARD", "u"}, Int(0)},
      {{"MI.SCHEMA", "u"},
       Recs({IndexInfo(proto, "email", "email", "hash", true, false),
             IndexInfo(proto, "age", "age", "ordered", false, true),
             IndexInfo(proto, "name", "name", "ordered", false, false),
             IndexInfo(proto, "city", "city", "hash", false, false)})},
      {kUsers, Error(kBusyKey)},
      // keywords in any case, options in any order, two indexes on one field
      {{"mi.create", "v", "index", "a", "f", "ordered", "numeric", "unique", "INDEX", "b", "f",
        "Hash"},
       Ok()},
      {{"MI.SCHEMA", "v"},
       Recs({IndexInfo(proto, "a", "f", "ordered", true, true),
             IndexInfo(proto, "b", "f", "hash", false, false)})},
      {{"MI.SCHEMA", "nokey"}, NilArray()},
      {{"EXISTS", "nokey"}, Int(0)},
      // schema errors: nothing is created
      {{"MI.CREATE", "e", "INDEX", "a", "f", "HASH", "NUMERIC"},
       Error("ERR NUMERIC needs an ORDERED index (index 'a')")},
      {{"MI.CREATE", "e", "INDEX", "a", "f", "HASH", "INDEX", "a", "g", "ORDERED"},
       Error("ERR duplicate index name 'a'")},
      {{"MI.CREATE", "e", "INDEX", "a", "f", "TREE"},
       Error("ERR index kind must be HASH or ORDERED")},
      {{"MI.CREATE", "e", "INDEX", "a", "f", "HASH", "UNIQUE", "UNIQUE"}, Error(kSyntax)},
      {{"MI.CREATE", "e", "INDEX", "a", "f", "ORDERED", "NUMERIC", "NUMERIC"}, Error(kSyntax)},
      {{"MI.CREATE", "e", "INDEX", "a", "f", "HASH", "BOGUS"}, Error(kSyntax)},
      {{"MI.CREATE", "e", "INDEX", "a", "f", "HASH", "INDEX", "b", "g"}, Error(kSyntax)},
      {{"MI.CREATE", "e", "INDEX", "a", "f", "HASH", "INDEX"}, Error(kSyntax)},
      {{"MI.CREATE", "e", "IDX", "a", "f", "HASH"}, Error(kSyntax)},
      {{"MI.CREATE", "e", "INDEX", "a", "f"}, Error(Arity("mi.create"))},
      {{"MI.CREATE", "e"}, Error(Arity("mi.create"))},
      {{"EXISTS", "e"}, Int(0)},
      // MI.CREATE refuses any existing key, whatever its type
      {{"SET", "s", "x"}, Ok()},
      {{"MI.CREATE", "s", "INDEX", "a", "f", "HASH"}, Error(kBusyKey)},
      {{"GET", "s"}, Bulk("x")},
      {{"MI.SCHEMA", "s"}, Error(kWrongType)},
  };
}

TEST_F(MultiIndexTest, CreateAndSchemaResp2) { RunVesselTable(CreateRows(2), 2); }
TEST_F(MultiIndexTest, CreateAndSchemaResp3) { RunVesselTable(CreateRows(3), 3); }

TEST_F(MultiIndexTest, AtMost64Indexes) {
  Strings cmd = {"MI.CREATE", "k"};
  for (int i = 0; i < 64; ++i) cmd = Cat(cmd, {"INDEX", "i" + std::to_string(i), "f", "HASH"});
  Strings too_many = cmd;
  too_many[1] = "k2";
  too_many = Cat(too_many, {"INDEX", "last", "f", "HASH"});
  RunVesselTable({
      {too_many, Error("ERR too many indexes (64 at most)")},
      {cmd, Ok()},
      {{"MI.INSERT", "k", "f", "v"}, Int(1)},
      {{"MI.GET", "k", "i63", "v"}, Recs({Rec(2, 1, {"f", "v"})})},
  });
}

// ---- MI.INSERT, MI.GET, MI.GETBYID, MI.CARD ----

std::vector<Row> InsertRows(int proto) {
  const Strings ann = {"email", "ann@x", "age", "30", "name", "ann", "city", "paris"};
  const Strings bob = {"email", "bob@x", "age", "41.5", "name", "bob", "city", "rome"};
  const Strings cid = {"email", "cid@x", "age", "30.0", "name", "cid", "city", "paris"};
  return {
      {kUsers, Ok()},
      {Cat({"MI.INSERT", "u"}, ann), Int(1)},
      {Cat({"MI.INSERT", "u"}, bob), Int(2)},
      {Cat({"MI.INSERT", "u"}, cid), Int(3)},
      {{"MI.CARD", "u"}, Int(3)},
      // UNIQUE and NUMERIC refusals change nothing and use no id
      {{"MI.INSERT", "u", "email", "bob@x", "age", "1"},
       Error("UNIQUE value already in unique index 'email' (record 2)")},
      {{"MI.INSERT", "u", "email", "new@x", "age", "old"},
       Error("ERR value of field 'age' is not a valid float (NUMERIC index 'age')")},
      {{"MI.INSERT", "u", "email", "new@x", "age", ""},
       Error("ERR value of field 'age' is not a valid float (NUMERIC index 'age')")},
      {{"MI.INSERT", "u", "email", "new@x", "age", "nan"},
       Error("ERR value of field 'age' is not a valid float (NUMERIC index 'age')")},
      {{"MI.CARD", "u"}, Int(3)},
      {{"MI.GET", "u", "email", "new@x"}, Empty()},
      {{"MI.INSERT", "u", "email", "new@x", "age", "inf"}, Int(4)},
      // a record without an indexed field is not in that index
      {{"MI.INSERT", "u", "note", "no indexed field"}, Int(5)},
      {{"MI.INSERT", "u", "note", "another"}, Int(6)},
      {{"MI.INSERT", "u", "name", "ann"}, Int(7)},
      // the last value of a repeated field wins, at its first position
      {{"MI.INSERT", "u", "city", "oslo", "email", "dup@x", "city", "bern"}, Int(8)},
      {{"MI.GETBYID", "u", "8"}, Fields(proto, {"city", "bern", "email", "dup@x"})},
      {{"MI.GET", "u", "city", "oslo"}, Empty()},
      {{"MI.GET", "u", "city", "bern"}, Recs({Rec(proto, 8, {"city", "bern", "email", "dup@x"})})},
      // MI.GET through every kind of index, matches by ascending id
      {{"MI.GET", "u", "email", "bob@x"}, Recs({Rec(proto, 2, bob)})},
      {{"MI.GET", "u", "city", "paris"}, Recs({Rec(proto, 1, ann), Rec(proto, 3, cid)})},
      {{"MI.GET", "u", "age", "30"}, Recs({Rec(proto, 1, ann), Rec(proto, 3, cid)})},
      {{"MI.GET", "u", "age", "3e1"}, Recs({Rec(proto, 1, ann), Rec(proto, 3, cid)})},
      {{"MI.GET", "u", "age", "+inf"}, Recs({Rec(proto, 4, {"email", "new@x", "age", "inf"})})},
      {{"MI.GET", "u", "name", "ann"}, Recs({Rec(proto, 1, ann), Rec(proto, 7, {"name", "ann"})})},
      {{"MI.GET", "u", "name", "an"}, Empty()},
      {{"MI.GET", "u", "email", "nobody"}, Empty()},
      {{"MI.GET", "u", "age", "abc"}, Error(kNotFloat)},
      {{"MI.GET", "u", "nosuch", "x"}, Error("ERR no such index 'nosuch'")},
      {{"MI.GET", "u", "EMAIL", "bob@x"}, Error("ERR no such index 'EMAIL'")},
      {{"MI.GET", "nokey", "email", "x"}, Empty()},
      {{"MI.GET", "u", "email"}, Error(Arity("mi.get"))},
      {{"MI.GET", "u", "email", "x", "y"}, Error(Arity("mi.get"))},
      // MI.GETBYID
      {{"MI.GETBYID", "u", "2"}, Fields(proto, bob)},
      {{"MI.GETBYID", "u", "5"}, Fields(proto, {"note", "no indexed field"})},
      {{"MI.GETBYID", "u", "99"}, Nil()},
      {{"MI.GETBYID", "u", "0"}, Nil()},
      {{"MI.GETBYID", "u", "-1"}, Nil()},
      {{"MI.GETBYID", "u", "x"}, Error(kNotInt)},
      {{"MI.GETBYID", "nokey", "1"}, Nil()},
      {{"MI.GETBYID", "u"}, Error(Arity("mi.getbyid"))},
      // MI.INSERT errors
      {{"MI.INSERT", "u", "email"}, Error(Arity("mi.insert"))},
      {{"MI.INSERT", "u", "a", "1", "b"}, Error(Arity("mi.insert"))},
      {{"MI.INSERT", "nokey", "a", "1"}, Error(kNoSuchKey)},
      {{"EXISTS", "nokey"}, Int(0)},
      {{"MI.CARD", "u"}, Int(8)},
      {{"MI.CARD", "nokey"}, Int(0)},
      {{"MI.CARD"}, Error(Arity("mi.card"))},
  };
}

TEST_F(MultiIndexTest, InsertAndGetResp2) { RunVesselTable(InsertRows(2), 2); }
TEST_F(MultiIndexTest, InsertAndGetResp3) { RunVesselTable(InsertRows(3), 3); }

TEST_F(MultiIndexTest, BinarySafeFieldsAndValues) {
  const std::string bin = "a\0b\r\nc"s, empty;
  RunVesselTable(
      {
          {{"MI.CREATE", "b", "INDEX", "h", bin, "HASH", "UNIQUE", "INDEX", "o", bin, "ORDERED"},
           Ok()},
          {{"MI.INSERT", "b", bin, bin, "", ""}, Int(1)},
          {{"MI.INSERT", "b", bin, empty}, Int(2)},
          {{"MI.INSERT", "b", bin, "\xff"}, Int(3)},
          {{"MI.INSERT", "b", bin, bin},
           Error("UNIQUE value already in unique index 'h' (record 1)")},
          {{"MI.GET", "b", "h", bin}, Recs({Rec(3, 1, {bin, bin, "", ""})})},
          {{"MI.GET", "b", "h", empty}, Recs({Rec(3, 2, {bin, empty})})},
          // bytes compare unsigned: "" < "a\0..." < "\xff"
          {{"MI.RANGE", "b", "o", "-", "+"},
           Recs(
               {Rec(3, 2, {bin, empty}), Rec(3, 1, {bin, bin, "", ""}), Rec(3, 3, {bin, "\xff"})})},
          {{"MI.COUNT", "b", "o", "[a", "(a\x01"}, Int(1)},
      },
      3);
}

TEST_F(MultiIndexTest, IdsAreNeverReused) {
  RunVesselTable({
      {{"MI.CREATE", "k", "INDEX", "f", "f", "HASH"}, Ok()},
      {{"MI.INSERT", "k", "f", "a"}, Int(1)},
      {{"MI.INSERT", "k", "f", "b"}, Int(2)},
      {{"MI.DELBYID", "k", "2"}, Int(1)},
      {{"MI.INSERT", "k", "f", "c"}, Int(3)},
      {{"MI.DEL", "k", "f", "a"}, Int(1)},
      {{"MI.DEL", "k", "f", "c"}, Int(1)},
      {{"MI.CARD", "k"}, Int(0)},
      {{"MI.INSERT", "k", "f", "d"}, Int(4)},
  });
}

// ---- MI.RANGE and MI.COUNT ----

std::vector<Row> RangeRows(int proto) {
  std::vector<Row> rows = {
      {{"MI.CREATE", "r", "INDEX", "n", "n", "ORDERED", "NUMERIC", "INDEX", "s", "s", "ORDERED",
        "INDEX", "h", "h", "HASH"},
       Ok()},
  };
  // n: 1 2 2 3 5 -inf; s: "a" "b" "b" "c" "(x" "-"
  const std::vector<Strings> recs = {{"n", "1", "s", "a", "h", "x"}, {"n", "2", "s", "b"},
                                     {"n", "2.0", "s", "b"},         {"n", "3", "s", "c"},
                                     {"n", "5", "s", "(x"},          {"n", "-inf", "s", "-"},
                                     {"other", "not in the indexes"}};
  for (size_t i = 0; i < recs.size(); ++i) {
    rows.push_back({Cat({"MI.INSERT", "r"}, recs[i]), Int(static_cast<int64_t>(i + 1))});
  }
  auto r = [&](int id) { return Rec(proto, id, recs[id - 1]); };
  const std::vector<Row> body = {
      {{"MI.RANGE", "r", "n", "2", "3"}, Recs({r(2), r(3), r(4)})},
      {{"MI.RANGE", "r", "n", "(2", "3"}, Recs({r(4)})},
      {{"MI.RANGE", "r", "n", "2", "(3"}, Recs({r(2), r(3)})},
      {{"MI.RANGE", "r", "n", "(2", "(3"}, Empty()},
      {{"MI.RANGE", "r", "n", "-inf", "+inf"}, Recs({r(6), r(1), r(2), r(3), r(4), r(5)})},
      {{"MI.RANGE", "r", "n", "(-inf", "inf"}, Recs({r(1), r(2), r(3), r(4), r(5)})},
      {{"MI.RANGE", "r", "n", "3", "2"}, Empty()},
      {{"MI.RANGE", "r", "n", "2", "2"}, Recs({r(2), r(3)})},
      {{"MI.RANGE", "r", "n", "2.5", "4.5"}, Recs({r(4)})},
      {{"MI.RANGE", "r", "n", "-inf", "+inf", "REV"}, Recs({r(5), r(4), r(3), r(2), r(1), r(6)})},
      {{"MI.RANGE", "r", "n", "1", "3", "REV"}, Recs({r(4), r(3), r(2), r(1)})},
      {{"MI.RANGE", "r", "n", "(1", "(3", "rev"}, Recs({r(3), r(2)})},
      {{"MI.RANGE", "r", "n", "-inf", "+inf", "LIMIT", "1", "2"}, Recs({r(1), r(2)})},
      {{"MI.RANGE", "r", "n", "-inf", "+inf", "LIMIT", "1", "2", "REV"}, Recs({r(4), r(3)})},
      {{"MI.RANGE", "r", "n", "-inf", "+inf", "REV", "LIMIT", "4", "-1"}, Recs({r(1), r(6)})},
      {{"MI.RANGE", "r", "n", "-inf", "+inf", "LIMIT", "5", "100"}, Recs({r(5)})},
      {{"MI.RANGE", "r", "n", "-inf", "+inf", "LIMIT", "6", "100"}, Empty()},
      {{"MI.RANGE", "r", "n", "-inf", "+inf", "LIMIT", "0", "0"}, Empty()},
      {{"MI.RANGE", "r", "n", "-inf", "+inf", "LIMIT", "-1", "5"}, Empty()},
      {{"MI.RANGE", "r", "n", "-inf", "+inf", "LIMIT", "0", "1", "LIMIT", "2", "1"}, Recs({r(2)})},
      {{"MI.RANGE", "r", "n", "x", "3"}, Error(kMinMax)},
      {{"MI.RANGE", "r", "n", "1", "(x"}, Error(kMinMax)},
      {{"MI.RANGE", "r", "n", "(", "3"}, Error(kMinMax)},
      {{"MI.RANGE", "r", "n", "-", "+"}, Error(kMinMax)},
      {{"MI.RANGE", "r", "n", "1", "3", "LIMIT", "1"}, Error(kSyntax)},
      {{"MI.RANGE", "r", "n", "1", "3", "LIMIT", "a", "1"}, Error(kNotInt)},
      {{"MI.RANGE", "r", "n", "1", "3", "BOGUS"}, Error(kSyntax)},
      {{"MI.RANGE", "r", "n", "1"}, Error(Arity("mi.range"))},
      {{"MI.RANGE", "r", "h", "1", "3"}, Error("ERR index 'h' is not ORDERED")},
      {{"MI.RANGE", "r", "zz", "1", "3"}, Error("ERR no such index 'zz'")},
      {{"MI.RANGE", "nokey", "zz", "x", "y"}, Empty()},
      {{"MI.RANGE", "nokey", "zz", "x", "y", "LIMIT"}, Error(kSyntax)},
      // lexicographic: [ inclusive, ( exclusive, - and + open, bare values inclusive
      {{"MI.RANGE", "r", "s", "-", "+"}, Recs({r(5), r(6), r(1), r(2), r(3), r(4)})},
      {{"MI.RANGE", "r", "s", "[b", "[c"}, Recs({r(2), r(3), r(4)})},
      {{"MI.RANGE", "r", "s", "b", "c"}, Recs({r(2), r(3), r(4)})},
      {{"MI.RANGE", "r", "s", "(b", "+"}, Recs({r(4)})},
      {{"MI.RANGE", "r", "s", "-", "(b"}, Recs({r(5), r(6), r(1)})},
      {{"MI.RANGE", "r", "s", "[-", "[-"}, Recs({r(6)})},
      {{"MI.RANGE", "r", "s", "[(x", "[(x"}, Recs({r(5)})},
      {{"MI.RANGE", "r", "s", "+", "-"}, Empty()},
      {{"MI.RANGE", "r", "s", "-", "-"}, Empty()},
      {{"MI.RANGE", "r", "s", "+", "+"}, Empty()},
      {{"MI.RANGE", "r", "s", "c", "b"}, Empty()},
      {{"MI.RANGE", "r", "s", "[", "+"}, Recs({r(5), r(6), r(1), r(2), r(3), r(4)})},
      {{"MI.RANGE", "r", "s", "b", "+", "REV", "LIMIT", "0", "2"}, Recs({r(4), r(3)})},
      // MI.COUNT
      {{"MI.COUNT", "r", "n", "-inf", "+inf"}, Int(6)},
      {{"MI.COUNT", "r", "n", "2", "2"}, Int(2)},
      {{"MI.COUNT", "r", "n", "(2", "+inf"}, Int(2)},
      {{"MI.COUNT", "r", "n", "5", "1"}, Int(0)},
      {{"MI.COUNT", "r", "s", "-", "+"}, Int(6)},
      {{"MI.COUNT", "r", "s", "(a", "[c"}, Int(3)},
      {{"MI.COUNT", "r", "n", "a", "1"}, Error(kMinMax)},
      {{"MI.COUNT", "r", "h", "-", "+"}, Error("ERR index 'h' is not ORDERED")},
      {{"MI.COUNT", "r", "zz", "-", "+"}, Error("ERR no such index 'zz'")},
      {{"MI.COUNT", "nokey", "n", "-", "+"}, Int(0)},
      {{"MI.COUNT", "r", "n", "1"}, Error(Arity("mi.count"))},
      {{"MI.COUNT", "r", "n", "1", "2", "3"}, Error(Arity("mi.count"))},
  };
  rows.insert(rows.end(), body.begin(), body.end());
  return rows;
}

TEST_F(MultiIndexTest, RangeAndCountResp2) { RunVesselTable(RangeRows(2), 2); }
TEST_F(MultiIndexTest, RangeAndCountResp3) { RunVesselTable(RangeRows(3), 3); }

// ---- MI.UPDATE and MI.UPDATEBYID ----

std::vector<Row> UpdateRows(int proto) {
  return {
      {kUsers, Ok()},
      {{"MI.INSERT", "u", "email", "a@x", "age", "30", "city", "paris"}, Int(1)},
      {{"MI.INSERT", "u", "email", "b@x", "age", "30", "city", "rome"}, Int(2)},
      {{"MI.INSERT", "u", "email", "c@x", "age", "40", "city", "paris"}, Int(3)},
      // every match is updated and re-indexed; new fields are appended
      {{"MI.UPDATE", "u", "city", "paris", "age", "31", "name", "p"}, Int(2)},
      {{"MI.GETBYID", "u", "1"},
       Fields(proto, {"email", "a@x", "age", "31", "city", "paris", "name", "p"})},
      {{"MI.GET", "u", "age", "30"},
       Recs({Rec(proto, 2, {"email", "b@x", "age", "30", "city", "rome"})})},
      {{"MI.COUNT", "u", "age", "31", "31"}, Int(2)},
      {{"MI.COUNT", "u", "age", "40", "40"}, Int(0)},
      {{"MI.COUNT", "u", "name", "p", "p"}, Int(2)},
      // updating the matched field itself
      {{"MI.UPDATE", "u", "age", "31", "age", "32"}, Int(2)},
      {{"MI.COUNT", "u", "age", "31", "31"}, Int(0)},
      {{"MI.COUNT", "u", "age", "32", "32"}, Int(2)},
      // numerically equal values are one key: re-setting "32" as "32.0" keeps the entries
      {{"MI.UPDATE", "u", "age", "32", "age", "32.0"}, Int(2)},
      {{"MI.COUNT", "u", "age", "32", "32"}, Int(2)},
      {{"MI.GETBYID", "u", "3"},
       Fields(proto, {"email", "c@x", "age", "32.0", "city", "paris", "name", "p"})},
      // UNIQUE: two records would share a value -> nothing changes
      {{"MI.UPDATE", "u", "city", "paris", "email", "z@x", "age", "1"},
       Error("UNIQUE 2 records would share one value of unique index 'email'")},
      // UNIQUE: another record holds the value -> nothing changes
      {{"MI.UPDATE", "u", "email", "a@x", "age", "1", "email", "b@x"},
       Error("UNIQUE value already in unique index 'email' (record 2)")},
      {{"MI.COUNT", "u", "age", "1", "1"}, Int(0)},
      {{"MI.GET", "u", "email", "z@x"}, Empty()},
      // a record keeping its own unique value is fine
      {{"MI.UPDATE", "u", "email", "a@x", "email", "a@x", "age", "7"}, Int(1)},
      {{"MI.UPDATE", "u", "email", "a@x", "email", "q@x"}, Int(1)},
      {{"MI.GET", "u", "email", "a@x"}, Empty()},
      {{"MI.GET", "u", "email", "q@x"},
       Recs({Rec(proto, 1, {"email", "q@x", "age", "7", "city", "paris", "name", "p"})})},
      // NUMERIC refusal, even when nothing matches
      {{"MI.UPDATE", "u", "city", "paris", "age", "old"},
       Error("ERR value of field 'age' is not a valid float (NUMERIC index 'age')")},
      {{"MI.UPDATE", "u", "city", "nowhere", "age", "old"},
       Error("ERR value of field 'age' is not a valid float (NUMERIC index 'age')")},
      {{"MI.COUNT", "u", "age", "-inf", "+inf"}, Int(3)},
      {{"MI.UPDATE", "u", "city", "nowhere", "age", "1"}, Int(0)},
      {{"MI.UPDATE", "u", "age", "x", "age", "1"}, Error(kNotFloat)},
      {{"MI.UPDATE", "u", "nosuch", "x", "age", "1"}, Error("ERR no such index 'nosuch'")},
      {{"MI.UPDATE", "nokey", "nosuch", "x", "age", "1"}, Int(0)},
      {{"MI.UPDATE", "u", "city", "paris", "age"}, Error(Arity("mi.update"))},
      {{"MI.UPDATE", "u", "city", "paris", "age", "1", "x"}, Error(Arity("mi.update"))},
      // MI.UPDATEBYID
      {{"MI.UPDATEBYID", "u", "2", "city", "oslo", "city", "bern"}, Int(1)},
      {{"MI.GET", "u", "city", "bern"},
       Recs({Rec(proto, 2, {"email", "b@x", "age", "30", "city", "bern"})})},
      {{"MI.GET", "u", "city", "rome"}, Empty()},
      {{"MI.GET", "u", "city", "oslo"}, Empty()},
      {{"MI.UPDATEBYID", "u", "2", "email", "c@x"},
       Error("UNIQUE value already in unique index 'email' (record 3)")},
      {{"MI.UPDATEBYID", "u", "2", "age", "x"},
       Error("ERR value of field 'age' is not a valid float (NUMERIC index 'age')")},
      {{"MI.UPDATEBYID", "u", "99", "age", "1"}, Int(0)},
      {{"MI.UPDATEBYID", "u", "-5", "age", "1"}, Int(0)},
      {{"MI.UPDATEBYID", "u", "x", "age", "1"}, Error(kNotInt)},
      {{"MI.UPDATEBYID", "nokey", "1", "age", "1"}, Int(0)},
      {{"MI.UPDATEBYID", "u", "1", "age"}, Error(Arity("mi.updatebyid"))},
      {{"MI.UPDATEBYID", "u", "1", "age", "1", "x"}, Error(Arity("mi.updatebyid"))},
      {{"MI.CARD", "u"}, Int(3)},
  };
}

TEST_F(MultiIndexTest, UpdateResp2) { RunVesselTable(UpdateRows(2), 2); }
TEST_F(MultiIndexTest, UpdateResp3) { RunVesselTable(UpdateRows(3), 3); }

// The views a HASH bucket keeps into its records must follow the records through updates and
// deletes of other members: many records sharing values, churned.
TEST_F(MultiIndexTest, SharedValuesSurviveChurn) {
  RespClient c = Servers::Get().Vessel();
  ASSERT_EQ(c("MI.CREATE", "k", "INDEX", "g", "g", "HASH", "INDEX", "o", "g", "ORDERED", "INDEX",
              "x", "x", "HASH")
                .str,
            "OK");
  for (int i = 0; i < 300; ++i) {
    c("MI.INSERT", "k", "g", "group-" + std::to_string(i % 3), "x", std::to_string(i % 7));
  }
  // Rewrite x for a group (g unchanged: its views move to the new blocks), then delete others.
  EXPECT_EQ(c("MI.UPDATE", "k", "g", "group-0", "x", "new").integer, 100);
  EXPECT_EQ(c("MI.UPDATE", "k", "x", "new", "g", "group-1").integer, 100);
  EXPECT_EQ(c("MI.DEL", "k", "x", "3").integer, 28);  // i % 7 == 3 and i % 3 != 0
  EXPECT_EQ(c("MI.UPDATE", "k", "g", "group-1", "pad", std::string(100, 'p')).integer, 186);
  const Reply g1 = c("MI.GET", "k", "g", "group-1");
  EXPECT_EQ(g1.elems.size(), 186u);
  EXPECT_EQ(c("MI.COUNT", "k", "o", "group-1", "group-1").integer, 186);
  EXPECT_EQ(c("MI.GET", "k", "g", "group-0").elems.size(), 0u);
  EXPECT_EQ(c("MI.GET", "k", "g", "group-2").elems.size(), 86u);
  EXPECT_EQ(c("MI.CARD", "k").integer, 272);
  for (const Reply& rec : g1.elems) {
    ASSERT_EQ(rec.elems.size(), 2u);
    EXPECT_EQ(rec.elems[1].elems[1].str, "group-1");
  }
}

// ---- MI.DEL and MI.DELBYID ----

TEST_F(MultiIndexTest, DeleteKeepsTheEmptyCollection) {
  RunVesselTable({
      {kUsers, Ok()},
      {{"MI.INSERT", "u", "email", "a@x", "city", "paris"}, Int(1)},
      {{"MI.INSERT", "u", "email", "b@x", "city", "paris"}, Int(2)},
      {{"MI.INSERT", "u", "email", "c@x", "city", "rome"}, Int(3)},
      {{"MI.DEL", "u", "city", "paris"}, Int(2)},
      {{"MI.DEL", "u", "city", "paris"}, Int(0)},
      {{"MI.GET", "u", "email", "a@x"}, Empty()},
      {{"MI.DEL", "u", "age", "x"}, Error(kNotFloat)},
      {{"MI.DEL", "u", "nosuch", "x"}, Error("ERR no such index 'nosuch'")},
      {{"MI.DEL", "nokey", "nosuch", "x"}, Int(0)},
      {{"MI.DEL", "u", "city"}, Error(Arity("mi.del"))},
      {{"MI.DELBYID", "u", "3", "3", "1", "99", "-4"}, Int(1)},
      {{"MI.DELBYID", "u", "x"}, Error(kNotInt)},
      {{"MI.DELBYID", "u"}, Error(Arity("mi.delbyid"))},
      {{"MI.DELBYID", "nokey", "1"}, Int(0)},
      // no records left: the key and its schema stay
      {{"MI.CARD", "u"}, Int(0)},
      {{"EXISTS", "u"}, Int(1)},
      {{"TYPE", "u"}, Simple("multi_index")},
      {{"MI.SCHEMA", "u"}, Any()},
      {{"MI.INSERT", "u", "email", "a@x"}, Int(4)},
      {{"MI.COUNT", "u", "name", "-", "+"}, Int(0)},
      {{"DEL", "u"}, Int(1)},
      {{"MI.INSERT", "u", "email", "a@x"}, Error(kNoSuchKey)},
  });
}

// ---- keyspace features on multi_index keys ----

TEST_F(MultiIndexTest, WrongTypeBothWays) {
  RunVesselTable({
      {{"SET", "str", "v"}, Ok()},
      {{"SADD", "set", "m"}, Int(1)},
      {{"MI.CREATE", "mi", "INDEX", "f", "f", "HASH"}, Ok()},
      {{"MI.INSERT", "str", "f", "v"}, Error(kWrongType)},
      {{"MI.INSERT", "set", "f", "v"}, Error(kWrongType)},
      {{"MI.GET", "str", "f", "v"}, Error(kWrongType)},
      {{"MI.GETBYID", "set", "1"}, Error(kWrongType)},
      {{"MI.RANGE", "str", "f", "-", "+"}, Error(kWrongType)},
      {{"MI.COUNT", "set", "f", "-", "+"}, Error(kWrongType)},
      {{"MI.UPDATE", "str", "f", "v", "f", "w"}, Error(kWrongType)},
      {{"MI.UPDATEBYID", "set", "1", "f", "w"}, Error(kWrongType)},
      {{"MI.DEL", "str", "f", "v"}, Error(kWrongType)},
      {{"MI.DELBYID", "set", "1"}, Error(kWrongType)},
      {{"MI.CARD", "str"}, Error(kWrongType)},
      {{"MI.SCHEMA", "set"}, Error(kWrongType)},
      {{"MI.CREATE", "set", "INDEX", "f", "f", "HASH"}, Error(kBusyKey)},
      {{"GET", "mi"}, Error(kWrongType)},
      {{"APPEND", "mi", "x"}, Error(kWrongType)},
      {{"SADD", "mi", "x"}, Error(kWrongType)},
      {{"SCARD", "mi"}, Error(kWrongType)},
      {{"SINTER", "set", "mi"}, Error(kWrongType)},
      {{"TYPE", "str"}, Simple("string")},
      {{"TYPE", "set"}, Simple("set")},
      {{"TYPE", "mi"}, Simple("multi_index")},
      {{"SET", "mi", "overwritten"}, Ok()},
      {{"TYPE", "mi"}, Simple("string")},
  });
}

TEST_F(MultiIndexTest, CopyIsDeepAndIndependent) {
  RunVesselTable(
      {
          {kUsers, Ok()},
          {{"MI.INSERT", "u", "email", "a@x", "age", "30", "name", "ann", "city", "paris"}, Int(1)},
          {{"MI.INSERT", "u", "email", "b@x", "age", "40", "name", "bob", "city", "paris"}, Int(2)},
          {{"MI.DELBYID", "u", "2"}, Int(1)},
          {{"MI.INSERT", "u", "email", "c@x", "age", "50", "name", "cid", "city", "rome"}, Int(3)},
          {{"COPY", "u", "v"}, Int(1)},
          {{"COPY", "u", "v"}, Int(0)},
          {{"TYPE", "v"}, Simple("multi_index")},
          // the copy continues the ids, and its changes do not reach the original
          {{"MI.INSERT", "v", "email", "d@x", "age", "60"}, Int(4)},
          {{"MI.UPDATE", "v", "email", "a@x", "email", "z@x", "age", "31", "city", "oslo"}, Int(1)},
          {{"MI.DEL", "v", "city", "rome"}, Int(1)},
          {{"MI.CARD", "v"}, Int(2)},
          {{"MI.CARD", "u"}, Int(2)},
          {{"MI.GET", "u", "email", "a@x"},
           Recs({Rec(3, 1, {"email", "a@x", "age", "30", "name", "ann", "city", "paris"})})},
          {{"MI.GET", "u", "email", "z@x"}, Empty()},
          {{"MI.GET", "u", "city", "rome"},
           Recs({Rec(3, 3, {"email", "c@x", "age", "50", "name", "cid", "city", "rome"})})},
          {{"MI.COUNT", "u", "age", "-inf", "+inf"}, Int(2)},
          {{"MI.GET", "v", "email", "z@x"},
           Recs({Rec(3, 1, {"email", "z@x", "age", "31", "name", "ann", "city", "oslo"})})},
          {{"MI.RANGE", "v", "age", "-inf", "+inf"},
           Recs({Rec(3, 1, {"email", "z@x", "age", "31", "name", "ann", "city", "oslo"}),
                 Rec(3, 4, {"email", "d@x", "age", "60"})})},
          // the original is untouched by changes to the copy, and the other way round
          {{"MI.INSERT", "u", "email", "d@x"}, Int(4)},
          {{"MI.GET", "v", "email", "d@x"}, Recs({Rec(3, 4, {"email", "d@x", "age", "60"})})},
          {{"DEL", "u"}, Int(1)},
          {{"MI.CARD", "v"}, Int(2)},
          {{"MI.SCHEMA", "v"}, Any()},
      },
      3);
}

// MEMORY USAGE is the value's exact allocation plus the host's entry: the difference with the
// module's allocation growth is one constant, and deleting everything gives every byte back.
TEST_F(MultiIndexTest, MemoryUsageMatchesTheAllocator) {
  RespClient c = Servers::Get().Vessel();
  const int64_t base = ModuleAllocated(c, "multi_index");
  std::vector<int64_t> overheads;
  for (int n : {0, 1, 10, 1000, 20000}) {
    char key[16];  // names of one length: the host's entry overhead includes the name
    std::snprintf(key, sizeof(key), "key%05d", n);
    const int64_t before = ModuleAllocated(c, "multi_index");
    c.Cmd(Cat({"MI.CREATE", key}, Strings(kUsers.begin() + 2, kUsers.end())));
    for (int i = 0; i < n; ++i) {
      c.Send({"MI.INSERT", key, "email", "user" + std::to_string(i) + "@example.com", "age",
              std::to_string(i % 90), "name", "name" + std::to_string(i), "city",
              "city" + std::to_string(i % 10)});
    }
    for (int i = 0; i < n; ++i) ASSERT_EQ(c.Read().type, Reply::Type::kInt);
    const int64_t grown = ModuleAllocated(c, "multi_index") - before;
    const int64_t usage = c("MEMORY", "USAGE", key).integer;
    overheads.push_back(usage - grown);
    EXPECT_GT(grown, 0);
    if (n == 20000) {
      EXPECT_GT(usage, 20000 * 60);  // the records' bytes alone
      EXPECT_LT(usage, 20000 * 400);
    }
  }
  ExpectEntryOverheads(overheads);
  // Deleting records gives their memory back to the value.
  const int64_t full = c("MEMORY", "USAGE", "key20000").integer;
  c("MI.DEL", "key20000", "city", "city3");
  c("MI.UPDATE", "key20000", "city", "city4", "age", "1", "pad", std::string(200, 'p'));
  const int64_t after = c("MEMORY", "USAGE", "key20000").integer;
  EXPECT_LT(after, full + 2000 * 210);
  // A copy is rebuilt (its tables sized for what it holds): about the original's size.
  c("COPY", "key01000", "key99999");
  const int64_t original = c("MEMORY", "USAGE", "key01000").integer;
  EXPECT_GT(c("MEMORY", "USAGE", "key99999").integer, original / 2);
  EXPECT_LT(c("MEMORY", "USAGE", "key99999").integer, original * 3 / 2);
  c("FLUSHALL");
  for (int i = 0; i < 200 && ModuleAllocated(c, "multi_index") != base; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // lazy frees finish
  }
  EXPECT_EQ(ModuleAllocated(c, "multi_index"), base) << "leaked bytes";
}

TEST_F(MultiIndexTest, ExpireAndPersist) {
  RunVesselTable({
      {{"MI.CREATE", "k", "INDEX", "f", "f", "HASH"}, Ok()},
      {{"MI.INSERT", "k", "f", "a"}, Int(1)},
      {{"EXPIRE", "k", "100"}, Int(1)},
      {{"TTL", "k"}, Int(100)},
      // changes in place keep the TTL, even when the last record goes
      {{"MI.INSERT", "k", "f", "b"}, Int(2)},
      {{"MI.UPDATE", "k", "f", "a", "f", "c"}, Int(1)},
      {{"MI.DELBYID", "k", "1", "2"}, Int(2)},
      {{"TTL", "k"}, Int(100)},
      {{"PERSIST", "k"}, Int(1)},
      {{"TTL", "k"}, Int(-1)},
      {{"PEXPIREAT", "k", "1"}, Int(1)},
      {{"EXISTS", "k"}, Int(0)},
      {{"MI.CARD", "k"}, Int(0)},
      {{"MI.INSERT", "k", "f", "a"}, Error(kNoSuchKey)},
      {{"MI.CREATE", "k", "INDEX", "f", "f", "HASH"}, Ok()},
      {{"MI.INSERT", "k", "f", "a"}, Int(1)},
      {{"PEXPIRE", "k", "30"}, Int(1)},
  });
  RespClient c = Servers::Get().Vessel();
  for (int i = 0; i < 200 && c("EXISTS", "k").integer == 1; ++i) usleep(10000);
  EXPECT_EQ(c("MI.GET", "k", "f", "a").elems.size(), 0u);
  EXPECT_EQ(c("EXISTS", "k").integer, 0);
}

TEST_F(MultiIndexTest, MultiExec) {
  RunVesselTable({
      {{"MI.CREATE", "k", "INDEX", "e", "e", "HASH", "UNIQUE"}, Ok()},
      {{"MULTI"}, Ok()},
      {{"MI.INSERT", "k", "e", "a"}, Simple("QUEUED")},
      {{"MI.INSERT", "k", "e", "a"}, Simple("QUEUED")},
      {{"MI.INSERT", "k", "e", "b"}, Simple("QUEUED")},
      {{"MI.CARD", "k"}, Simple("QUEUED")},
      {{"MI.GET", "k", "e", "b"}, Simple("QUEUED")},
      {{"EXEC"},
       Arr({Int(1), Error("UNIQUE value already in unique index 'e' (record 1)"), Int(2), Int(2),
            Recs({Rec(2, 2, {"e", "b"})})})},
      {{"MULTI"}, Ok()},
      {{"MI.INSERT", "k"}, Error(Arity("mi.insert"))},
      {{"EXEC"}, Error("EXECABORT Transaction discarded because of previous errors.")},
      {{"MI.CARD", "k"}, Int(2)},
  });
  // WATCH sees in-place changes of a multi_index key.
  RespClient a = Servers::Get().Vessel(), b = Servers::Get().Vessel();
  EXPECT_EQ(a("WATCH", "k").str, "OK");
  EXPECT_EQ(b("MI.UPDATE", "k", "e", "a", "x", "1").integer, 1);
  EXPECT_EQ(a("MULTI").str, "OK");
  EXPECT_EQ(a("MI.INSERT", "k", "e", "c").str, "QUEUED");
  EXPECT_EQ(a("EXEC").type, Reply::Type::kNilArray);
  EXPECT_EQ(a("WATCH", "k").str, "OK");
  EXPECT_EQ(b("MI.GET", "k", "e", "a").elems.size(), 1u);              // reads do not touch it
  EXPECT_EQ(b("MI.UPDATE", "k", "e", "nobody", "x", "1").integer, 0);  // neither do no-ops
  EXPECT_EQ(a("MULTI").str, "OK");
  EXPECT_EQ(a("MI.INSERT", "k", "e", "c").str, "QUEUED");
  const Reply done = a("EXEC");
  ASSERT_EQ(done.elems.size(), 1u) << done.ToString();
  EXPECT_EQ(done.elems[0].integer, 3);
}

TEST_F(MultiIndexTest, DumpRestoreRoundTrip) {
  RespClient c = Servers::Get().Vessel();
  ASSERT_EQ(c.Cmd(kUsers).str, "OK");
  for (int i = 0; i < 500; ++i) {
    c("MI.INSERT", "u", "email", "e" + std::to_string(i), "age", std::to_string(i % 50), "name",
      "n" + std::to_string(i % 37), "city", "c" + std::to_string(i % 5), "bin", "x\0y"s);
  }
  c("MI.DELBYID", "u", "3", "500");  // ids with holes, next id 501
  c("MI.UPDATE", "u", "city", "c1", "age", "7.5");
  const Reply dump = c("DUMP", "u");
  ASSERT_EQ(dump.type, Reply::Type::kBulk) << dump.ToString();
  ASSERT_EQ(c("RESTORE", "v", "0", dump.str).str, "OK");
  EXPECT_EQ(c("DUMP", "v"), dump);  // the same schema, records, field order and next id
  EXPECT_EQ(c("TYPE", "v").str, "multi_index");
  EXPECT_EQ(c("MI.SCHEMA", "v"), c("MI.SCHEMA", "u"));
  EXPECT_EQ(c("MI.CARD", "v").integer, 498);
  EXPECT_EQ(c("MI.RANGE", "v", "age", "-inf", "+inf"), c("MI.RANGE", "u", "age", "-inf", "+inf"));
  EXPECT_EQ(c("MI.RANGE", "v", "name", "-", "+"), c("MI.RANGE", "u", "name", "-", "+"));
  for (int i = 0; i < 5; ++i) {
    const std::string city = "c" + std::to_string(i);
    EXPECT_EQ(c("MI.GET", "v", "city", city), c("MI.GET", "u", "city", city));
  }
  EXPECT_EQ(c("MI.GET", "v", "email", "e42"), c("MI.GET", "u", "email", "e42"));
  EXPECT_GT(c("MEMORY", "USAGE", "v").integer, c("MEMORY", "USAGE", "u").integer / 2);
  EXPECT_EQ(c("MI.INSERT", "v", "email", "new").integer, 501);
  EXPECT_EQ(c("MI.INSERT", "v", "email", "e1").str,
            "UNIQUE value already in unique index 'email' (record 2)");
  // A restored empty collection keeps its schema.
  c("MI.CREATE", "empty", "INDEX", "f", "f", "ORDERED", "NUMERIC", "UNIQUE");
  const Reply empty = c("DUMP", "empty");
  ASSERT_EQ(c("RESTORE", "empty2", "0", empty.str).str, "OK");
  EXPECT_EQ(c("MI.SCHEMA", "empty2"), c("MI.SCHEMA", "empty"));
  EXPECT_EQ(c("MI.INSERT", "empty2", "f", "1").integer, 1);
  EXPECT_EQ(c("MI.INSERT", "empty2", "f", "1.0").type, Reply::Type::kError);
}

// The type's callbacks, called directly: serialize/deserialize round trips and refusals of
// malformed input, copy.
std::string Bytes(const std::string& b) { return U64(b.size()) + b; }
struct Def {
  std::string name, field;
  uint64_t flags;  // 1 ordered, 2 unique, 4 numeric
};
struct Record {
  uint64_t id;
  Strings kv;
};
std::string Encoded(const std::vector<Def>& defs, uint64_t next_id,
                    const std::vector<Record>& records) {
  std::string s = U64(defs.size());
  for (const Def& d : defs) s += Bytes(d.name) + Bytes(d.field) + U64(d.flags);
  s += U64(next_id) + U64(records.size());
  for (const Record& r : records) {
    s += U64(r.id) + U64(r.kv.size() / 2);
    for (const std::string& x : r.kv) s += Bytes(x);
  }
  return s;
}

TEST_F(MultiIndexTest, SerializeRoundTripsAndRefusesBadInput) {
  const TypeCallbacks type("multi_index");
  ASSERT_TRUE(type.found());
  ASSERT_NE(type.desc().copy, nullptr);
  const std::vector<Def> schema = {{"e", "email", 2}, {"a", "age", 5}, {"n", "name", 1}};
  const std::string good = Encoded(schema, 10,
                                   {{1, {"email", "a", "age", "3"}},
                                    {4, {"email", "b", "name", "x", "age", "3.0"}},
                                    {9, {"name", "x"}}});
  void* v = type.Load(good);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(type.Save(v), good);
  EXPECT_EQ(type.desc().free_effort(nullptr, v), 3u);
  void* copy = type.desc().copy(nullptr, v);
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(type.Save(copy), good);
  // Usable sizes come from glibc here (the fake host API), which may hand out a chunk up to
  // 16 bytes larger than asked depending on the heap's history: compare with that slack.
  const size_t used = type.desc().mem_usage(nullptr, v);
  const size_t copied = type.desc().mem_usage(nullptr, copy);
  EXPECT_LE(copied, used + 16 * 8);
  EXPECT_LE(used, copied + 16 * 8);
  type.Free(copy);
  type.Free(v);
  EXPECT_EQ(type.Load(good, 2), nullptr) << "unknown encoding version";

  const std::vector<std::pair<std::string, std::string>> bad = {
      {"empty input", ""},
      {"no index", Encoded({}, 1, {})},
      {"unknown flag", Encoded({{"e", "f", 8}}, 1, {})},
      {"numeric hash", Encoded({{"e", "f", 4}}, 1, {})},
      {"duplicate index name", Encoded({{"e", "f", 0}, {"e", "g", 1}}, 1, {})},
      {"next id 0", Encoded(schema, 0, {})},
      {"id 0", Encoded(schema, 5, {{0, {"email", "a"}}})},
      {"id not below next id", Encoded(schema, 5, {{5, {"email", "a"}}})},
      {"duplicate id", Encoded(schema, 5, {{1, {"email", "a"}}, {1, {"email", "b"}}})},
      {"no fields", Encoded(schema, 5, {{1, {}}})},
      {"duplicate field", Encoded(schema, 5, {{1, {"email", "a", "email", "b"}}})},
      {"unique violated", Encoded(schema, 5, {{1, {"email", "a"}}, {2, {"email", "a"}}})},
      {"numeric violated", Encoded(schema, 5, {{1, {"age", "x"}}})},
      {"numeric unique violated",
       Encoded({{"a", "age", 7}}, 5, {{1, {"age", "1"}}, {2, {"age", "1e0"}}})},
      {"truncated", good.substr(0, good.size() - 1)},
      {"count beyond the input",
       Encoded(schema, 5, {}).substr(0, Encoded(schema, 5, {}).size() - 8) + U64(1000000)},
  };
  for (const auto& [why, bytes] : bad) {
    void* b = type.Load(bytes);
    EXPECT_EQ(b, nullptr) << why;
    if (b != nullptr) type.Free(b);
  }
}

// A key whose next id is the last one (reachable only through a restored value): MI.INSERT
// refuses, ids stay below INT64_MAX, and everything else works.
TEST_F(MultiIndexTest, IdsExhausted) {
  const TypeCallbacks type("multi_index");
  ASSERT_TRUE(type.found());
  constexpr uint64_t kMax = 9223372036854775807ull;
  void* value = type.Load(Encoded({{"f", "f", 1}}, kMax, {{kMax - 1, {"f", "last"}}}));
  ASSERT_NE(value, nullptr);
  EXPECT_EQ(type.Load(Encoded({{"f", "f", 1}}, kMax + 1, {})), nullptr) << "next id > INT64_MAX";
  type.StoreKey("full", value);
  RunVesselTable({
      {{"MI.INSERT", "full", "f", "x"}, Error("ERR record ids exhausted")},
      {{"MI.GET", "full", "f", "last"},
       Recs({Rec(2, static_cast<int64_t>(kMax - 1), {"f", "last"})})},
      {{"MI.GETBYID", "full", "9223372036854775806"}, Fields(2, {"f", "last"})},
      {{"MI.UPDATEBYID", "full", "9223372036854775806", "f", "z"}, Int(1)},
      {{"MI.RANGE", "full", "f", "-", "+"},
       Recs({Rec(2, static_cast<int64_t>(kMax - 1), {"f", "z"})})},
      {{"MI.DELBYID", "full", "9223372036854775806", "9223372036854775807"}, Int(1)},
      {{"MI.INSERT", "full", "f", "x"}, Error("ERR record ids exhausted")},
      {{"MI.CARD", "full"}, Int(0)},
  });
}

// ---- generated checks ----

const Strings kCommandNames = {"mi.create", "mi.insert",  "mi.get",    "mi.getbyid",
                               "mi.range",  "mi.count",   "mi.update", "mi.updatebyid",
                               "mi.del",    "mi.delbyid", "mi.card",   "mi.schema"};

TEST_F(MultiIndexTest, ArityErrorsFromTheTable) {
  RespClient c = Servers::Get().Vessel();
  for (const std::string& name : kCommandNames) {
    const Reply info = c("COMMAND", "INFO", name);
    ASSERT_EQ(info.elems.size(), 1u) << name;
    ASSERT_GE(info.elems[0].elems.size(), 2u) << name << ": " << info.ToString();
    const int64_t arity = info.elems[0].elems[1].integer;
    const int64_t too_few = (arity < 0 ? -arity : arity) - 1;
    Strings cmd = {name};
    for (int64_t i = 1; i < too_few; ++i) cmd.push_back("k");
    EXPECT_EQ(c.Cmd(cmd).str, Arity(name)) << Show(cmd);
    if (arity > 0) {
      cmd.resize(static_cast<size_t>(arity) + 1, "k");
      EXPECT_EQ(c.Cmd(cmd).str, Arity(name)) << Show(cmd);
    }
  }
}

TEST_F(MultiIndexTest, GetKeys) {
  RunVesselTable({
      {{"COMMAND", "GETKEYS", "MI.CREATE", "k", "INDEX", "a", "f", "HASH"}, BulkArr({"k"})},
      {{"COMMAND", "GETKEYS", "MI.INSERT", "k", "f", "v"}, BulkArr({"k"})},
      {{"COMMAND", "GETKEYS", "MI.RANGE", "k", "i", "-", "+", "REV"}, BulkArr({"k"})},
      {{"COMMAND", "GETKEYS", "MI.DELBYID", "k", "1", "2"}, BulkArr({"k"})},
      {{"COMMAND", "GETKEYS", "MI.SCHEMA", "k"}, BulkArr({"k"})},
  });
}

// ---- the randomized model-based test ----

// A brute-force reference: records in a map, every index recomputed by scanning them.
class Model {
 public:
  struct Index {
    std::string name, field;
    bool ordered, unique, numeric;
  };
  using Fields = std::vector<std::pair<std::string, std::string>>;

  explicit Model(std::vector<Index> schema) : schema_(std::move(schema)) {}
  const std::vector<Index>& schema() const { return schema_; }
  const std::map<int64_t, Fields>& records() const { return records_; }

  static bool ParseNum(const std::string& s, double* d) {
    if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return false;
    char* end = nullptr;
    *d = std::strtod(s.c_str(), &end);
    return end == s.c_str() + s.size() && !std::isnan(*d);
  }
  static std::optional<std::string> Get(const Fields& f, const std::string& field) {
    for (const auto& [k, v] : f) {
      if (k == field) return v;
    }
    return std::nullopt;
  }
  // DistinctFields: the last value wins at the first position.
  static Fields Distinct(const Fields& in) {
    Fields out;
    for (const auto& [k, v] : in) {
      auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == k; });
      if (it == out.end()) {
        out.push_back({k, v});
      } else {
        it->second = v;
      }
    }
    return out;
  }
  const Index* Find(const std::string& name) const {
    for (const Index& ix : schema_) {
      if (ix.name == name) return &ix;
    }
    return nullptr;
  }
  static bool SameKey(const Index& ix, const std::string& a, const std::string& b) {
    if (!ix.numeric) return a == b;
    double x = 0, y = 0;
    return ParseNum(a, &x) && ParseNum(b, &y) && x == y;
  }
  // Ids whose index field equals value (value already validated), ascending.
  std::vector<int64_t> Matches(const Index& ix, const std::string& value) const {
    std::vector<int64_t> ids;
    for (const auto& [id, f] : records_) {
      const auto v = Get(f, ix.field);
      if (v && SameKey(ix, *v, value)) ids.push_back(id);
    }
    return ids;
  }
  static std::string NotNumber(const Index& ix) {
    return "ERR value of field '" + ix.field + "' is not a valid float (NUMERIC index '" + ix.name +
           "')";
  }

  // Each operation returns the expected reply as a Reply tree.
  Reply Insert(const Fields& raw) {
    const Fields f = Distinct(raw);
    for (const Index& ix : schema_) {
      const auto v = Get(f, ix.field);
      if (!v) continue;
      double d = 0;
      if (ix.numeric && !ParseNum(*v, &d)) return Err(NotNumber(ix));
      if (ix.unique) {
        const auto holders = Matches(ix, *v);
        if (!holders.empty()) return Duplicate(ix, holders[0]);
      }
    }
    records_[next_id_] = f;
    return IntReply(next_id_++);
  }
  Reply Update(const std::vector<int64_t>& ids, const Fields& raw) {
    const Fields changes = Distinct(raw);
    for (const Index& ix : schema_) {
      const auto v = Get(changes, ix.field);
      double d = 0;
      if (v && ix.numeric && !ParseNum(*v, &d)) return Err(NotNumber(ix));
    }
    if (ids.empty()) return IntReply(0);
    for (const Index& ix : schema_) {
      const auto v = Get(changes, ix.field);
      if (!v || !ix.unique) continue;
      if (ids.size() > 1) {
        return Err("UNIQUE " + std::to_string(ids.size()) +
                   " records would share one value of unique index '" + ix.name + "'");
      }
      for (int64_t h : Matches(ix, *v)) {
        if (h != ids[0]) return Duplicate(ix, h);
      }
    }
    for (int64_t id : ids) {
      Fields& f = records_[id];
      for (const auto& [k, v] : changes) {
        auto it = std::find_if(f.begin(), f.end(), [&](const auto& p) { return p.first == k; });
        if (it == f.end()) {
          f.push_back({k, v});
        } else {
          it->second = v;
        }
      }
    }
    return IntReply(static_cast<int64_t>(ids.size()));
  }
  Reply Delete(const std::vector<int64_t>& ids) {
    int64_t n = 0;
    for (int64_t id : ids) n += records_.erase(id);
    return IntReply(n);
  }
  // MI.RANGE / MI.COUNT: the ids in range, in order; error text in *error.
  std::vector<int64_t> Range(const Index& ix, const std::string& min, const std::string& max,
                             bool rev, std::string* error) const {
    struct B {
      int open = 0;  // -1 "-", +1 "+"
      bool excl = false;
      std::string s;
      double d = 0;
    };
    auto parse = [&](std::string s, B* b) {
      if (ix.numeric) {
        if (!s.empty() && s[0] == '(') b->excl = true, s = s.substr(1);
        return ParseNum(s, &b->d);
      }
      if (s == "-") {
        b->open = -1;
      } else if (s == "+") {
        b->open = 1;
      } else if (!s.empty() && (s[0] == '(' || s[0] == '[')) {
        b->excl = s[0] == '(';
        b->s = s.substr(1);
      } else {
        b->s = s;
      }
      return true;
    };
    B lo, hi;
    if (!parse(min, &lo) || !parse(max, &hi)) {
      *error = "ERR min or max is not a float";
      return {};
    }
    // Compare a value with a bound: <0, 0, >0.
    auto cmp = [&](const std::string& v, const B& b) {
      if (b.open != 0) return -b.open;
      if (ix.numeric) {
        double d = 0;
        ParseNum(v, &d);
        return d < b.d ? -1 : (d > b.d ? 1 : 0);
      }
      const int c = v.compare(b.s);
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    };
    std::vector<std::pair<std::string, int64_t>> entries;
    for (const auto& [id, f] : records_) {
      const auto v = Get(f, ix.field);
      if (!v) continue;
      const int a = cmp(*v, lo), z = cmp(*v, hi);
      const bool above = lo.open == -1 || (lo.open == 0 && (a > 0 || (a == 0 && !lo.excl)));
      const bool below = hi.open == 1 || (hi.open == 0 && (z < 0 || (z == 0 && !hi.excl)));
      if (above && below) entries.push_back({*v, id});
    }
    std::sort(entries.begin(), entries.end(), [&](const auto& x, const auto& y) {
      if (ix.numeric) {
        double a = 0, b = 0;
        ParseNum(x.first, &a);
        ParseNum(y.first, &b);
        if (a != b) return a < b;
        return x.second < y.second;
      }
      return x < y;
    });
    std::vector<int64_t> ids;
    for (const auto& e : entries) ids.push_back(e.second);
    if (rev) std::reverse(ids.begin(), ids.end());
    return ids;
  }

  Reply Record(int64_t id, int proto) const { return RecordOf(id, records_.at(id), proto); }
  Reply FieldsOf(const Fields& f, int proto) const {
    Reply m;
    m.type = proto == 3 ? Reply::Type::kMap : Reply::Type::kArray;
    for (const auto& [k, v] : f) {
      m.elems.push_back(BulkReply(k));
      m.elems.push_back(BulkReply(v));
    }
    return m;
  }
  Reply RecordOf(int64_t id, const Fields& f, int proto) const {
    Reply r;
    r.type = Reply::Type::kArray;
    r.elems = {IntReply(id), FieldsOf(f, proto)};
    return r;
  }
  Reply Records(const std::vector<int64_t>& ids, int proto) const {
    Reply r;
    r.type = Reply::Type::kArray;
    for (int64_t id : ids) r.elems.push_back(Record(id, proto));
    return r;
  }

  static Reply IntReply(int64_t v) {
    Reply r;
    r.type = Reply::Type::kInt;
    r.integer = v;
    return r;
  }
  static Reply BulkReply(const std::string& s) {
    Reply r;
    r.type = Reply::Type::kBulk;
    r.str = s;
    return r;
  }
  static Reply Err(const std::string& s) {
    Reply r;
    r.type = Reply::Type::kError;
    r.str = s;
    return r;
  }
  static Reply Duplicate(const Index& ix, int64_t holder) {
    return Err("UNIQUE value already in unique index '" + ix.name + "' (record " +
               std::to_string(holder) + ")");
  }

 private:
  std::vector<Index> schema_;
  std::map<int64_t, Fields> records_;
  int64_t next_id_ = 1;
};

// The random test's world: a schema with every kind of index, small value pools so that
// values collide (unique violations, shared buckets), and invalid numbers.
struct World {
  std::vector<Model::Index> schema = {
      {"email", "email", false, true, false}, {"grp", "grp", false, false, false},
      {"age", "age", true, false, true},      {"name", "name", true, false, false},
      {"score", "score", true, true, true},   {"name_h", "name", false, false, false},
      {"tag", "tag", true, true, false},
  };
  std::map<std::string, Strings> pools = {
      {"email", {"e0", "e1", "e2", "e3", "e4", "e5", "e6", "e7", "e8", "e9", "e10", "e11"}},
      {"grp", {"g0", "g1", "g2", "g3", ""}},
      {"age", {"1", "2", "2.0", "3", "10", "-1", "1e1", "inf", "-inf", "0", "-0", "x"}},
      {"name", {"a", "ab", "b", "B", "", "a b", "(a", "[b", "-", "+", "\xff", "zz"}},
      {"score", {"1", "2", "3", "4", "5", "6", "7", "8", "1.0", "0x1p1", "y"}},
      {"tag", {"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"}},
      {"extra", {"p", "q", std::string(40, 'r')}},
  };
  Strings fields = {"email", "grp", "age", "name", "score", "tag", "extra"};
};

void RunModelTest(uint32_t seed, int steps, int proto) {
  SCOPED_TRACE("seed " + std::to_string(seed) + " (set MI_SEED to replay), RESP" +
               std::to_string(proto));
  std::mt19937 rng(seed);
  auto pick = [&](const Strings& v) -> const std::string& { return v[rng() % v.size()]; };
  const World w;
  Model model(w.schema);
  RespClient c = Servers::Get().Vessel();
  if (proto == 3) c("HELLO", "3");
  c("DEL", "m");
  Strings create = {"MI.CREATE", "m"};
  for (const auto& ix : w.schema) {
    create = Cat(create, {"INDEX", ix.name, ix.field, ix.ordered ? "ORDERED" : "HASH"});
    if (ix.unique) create.push_back("UNIQUE");
    if (ix.numeric) create.push_back("NUMERIC");
  }
  ASSERT_EQ(c.Cmd(create).str, "OK");

  auto random_fields = [&](int min_fields) {
    Model::Fields f;
    const int n = min_fields + static_cast<int>(rng() % 4);
    for (int i = 0; i < n; ++i) {
      const std::string& field = pick(w.fields);
      f.push_back({field, pick(w.pools.at(field))});
    }
    return f;
  };
  auto flat = [](Strings head, const Model::Fields& f) {
    for (const auto& [k, v] : f) head = Cat(head, {k, v});
    return head;
  };
  auto random_id = [&]() -> int64_t {
    const auto& recs = model.records();
    if (!recs.empty() && rng() % 4 != 0) {
      auto it = recs.begin();
      std::advance(it, rng() % recs.size());
      return it->first;
    }
    return static_cast<int64_t>(rng() % 40);  // often a deleted or unused id
  };
  auto bound = [&](const Model::Index& ix) -> std::string {
    const int r = static_cast<int>(rng() % 10);
    if (ix.numeric) {
      if (r == 0) return "-inf";
      if (r == 1) return "+inf";
      if (r == 2) return "(" + pick(w.pools.at(ix.field));
      return pick(w.pools.at(ix.field));  // "x"/"y" give the not-a-float error
    }
    if (r == 0) return "-";
    if (r == 1) return "+";
    if (r <= 4) return "(" + pick(w.pools.at(ix.field));
    if (r <= 7) return "[" + pick(w.pools.at(ix.field));
    return pick(w.pools.at(ix.field));
  };

  for (int step = 0; step < steps; ++step) {
    Strings cmd;
    Reply want;
    const Model::Index& ix = w.schema[rng() % w.schema.size()];
    const std::string& value = pick(w.pools.at(ix.field));
    double unused = 0;
    const bool value_ok = !ix.numeric || Model::ParseNum(value, &unused);
    const int op = static_cast<int>(rng() % 100);
    if (op < 30) {
      const Model::Fields f = random_fields(1);
      cmd = flat({"MI.INSERT", "m"}, f);
      want = model.Insert(f);
    } else if (op < 45) {
      const Model::Fields f = random_fields(1);
      cmd = flat({"MI.UPDATE", "m", ix.name, value}, f);
      want = value_ok ? model.Update(model.Matches(ix, value), f) : Model::Err(kNotFloat);
    } else if (op < 50) {
      const Model::Fields f = random_fields(1);
      const int64_t id = random_id();
      cmd = flat({"MI.UPDATEBYID", "m", std::to_string(id)}, f);
      std::vector<int64_t> ids;
      if (model.records().count(id)) ids.push_back(id);
      want = model.Update(ids, f);
    } else if (op < 58) {
      cmd = {"MI.DEL", "m", ix.name, value};
      want = value_ok ? model.Delete(model.Matches(ix, value)) : Model::Err(kNotFloat);
    } else if (op < 62) {
      cmd = {"MI.DELBYID", "m"};
      std::set<int64_t> ids;
      for (int i = 0, n = 1 + static_cast<int>(rng() % 3); i < n; ++i) {
        const int64_t id = random_id();
        cmd.push_back(std::to_string(id));
        ids.insert(id);
      }
      want = model.Delete({ids.begin(), ids.end()});
    } else if (op < 72) {
      cmd = {"MI.GET", "m", ix.name, value};
      want = value_ok ? model.Records(model.Matches(ix, value), proto) : Model::Err(kNotFloat);
    } else if (op < 76) {
      const int64_t id = random_id();
      cmd = {"MI.GETBYID", "m", std::to_string(id)};
      if (model.records().count(id)) {
        want = model.FieldsOf(model.records().at(id), proto);
      } else {
        want.type = Reply::Type::kNil;
      }
    } else if (op < 96) {
      constexpr size_t kOrdered[] = {2, 3, 4, 6};
      const Model::Index& rx = w.schema[kOrdered[rng() % 4]];
      const std::string lo = bound(rx), hi = bound(rx);
      const bool count = op >= 92;
      const bool rev = !count && rng() % 3 == 0;
      const bool limit = !count && rng() % 2 == 0;
      const int64_t offset = static_cast<int64_t>(rng() % 6) - 1;
      const int64_t n = static_cast<int64_t>(rng() % 6) - 1;
      cmd = {count ? "MI.COUNT" : "MI.RANGE", "m", rx.name, lo, hi};
      if (limit) cmd = Cat(cmd, {"LIMIT", std::to_string(offset), std::to_string(n)});
      if (rev) cmd.push_back("REV");
      std::string error;
      std::vector<int64_t> ids = model.Range(rx, lo, hi, rev, &error);
      if (!error.empty()) {
        want = Model::Err(error);
      } else if (count) {
        want = Model::IntReply(static_cast<int64_t>(ids.size()));
      } else {
        if (limit) {
          std::vector<int64_t> sel;
          for (int64_t i = offset; offset >= 0 && i < static_cast<int64_t>(ids.size()) &&
                                   (n < 0 || static_cast<int64_t>(sel.size()) < n);
               ++i) {
            sel.push_back(ids[i]);
          }
          ids = sel;
        }
        want = model.Records(ids, proto);
      }
    } else {
      cmd = {"MI.CARD", "m"};
      want = Model::IntReply(static_cast<int64_t>(model.records().size()));
    }
    const Reply got = c.Cmd(cmd);
    ASSERT_EQ(got, want) << "step " << step << ": " << Show(cmd) << "\n  vessel: " << got.ToString()
                         << "\n  model:  " << want.ToString();

    // Every index agrees with the records: pipelined MI.GET for every pool value, and a full
    // MI.RANGE and MI.COUNT of every ORDERED index.
    std::vector<std::pair<Strings, Reply>> checks;
    checks.push_back({{"MI.CARD", "m"}, Model::IntReply(model.records().size())});
    for (const Model::Index& x : w.schema) {
      for (const std::string& v : w.pools.at(x.field)) {
        double d = 0;
        if (x.numeric && !Model::ParseNum(v, &d)) continue;
        checks.push_back({{"MI.GET", "m", x.name, v}, model.Records(model.Matches(x, v), proto)});
      }
      if (!x.ordered) continue;
      const std::string lo = x.numeric ? "-inf" : "-", hi = x.numeric ? "+inf" : "+";
      std::string error;
      const std::vector<int64_t> all = model.Range(x, lo, hi, false, &error);
      checks.push_back({{"MI.RANGE", "m", x.name, lo, hi}, model.Records(all, proto)});
      checks.push_back({{"MI.COUNT", "m", x.name, lo, hi}, Model::IntReply(all.size())});
    }
    for (const auto& [check, expected] : checks) c.Send(check);
    for (const auto& [check, expected] : checks) {
      const Reply r = c.Read();
      ASSERT_EQ(r, expected) << "after step " << step << " (" << Show(cmd) << "), check "
                             << Show(check) << "\n  vessel: " << r.ToString()
                             << "\n  model:  " << expected.ToString();
    }
  }
}

uint32_t SeedOr(uint32_t fallback) {
  const char* s = std::getenv("MI_SEED");
  return s != nullptr ? static_cast<uint32_t>(std::strtoul(s, nullptr, 10)) : fallback;
}

TEST_F(MultiIndexTest, RandomOperationsAgreeWithTheModelResp2) {
  RunModelTest(SeedOr(20240611), 3000, 2);
}
TEST_F(MultiIndexTest, RandomOperationsAgreeWithTheModelResp3) { RunModelTest(SeedOr(7), 3000, 3); }

}  // namespace
}  // namespace vessel::test
