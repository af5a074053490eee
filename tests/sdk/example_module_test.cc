// The SDK's example module (sdk/examples/bitset.c), built out of tree by example_out_of_tree.sh,
// loaded into the in-process vessel next to the strings module (when built) and the "good" test
// module, and driven through the real command path.
//
// Environment: VSL_EXAMPLE_MODULE = path of the built bitset.so (required);
// VSL_EXAMPLE_ARGS = its module arguments, space separated (optional, e.g. "max-bits 1000001").
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "host/engine/memory.h"
#include "host/engine/serialize.h"
#include "host/modules/loader.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

const std::string kWrongType = "WRONGTYPE Operation against a key holding the wrong kind of value";
const std::string kBadIndex = "ERR bit index is not an integer or out of range";

std::vector<std::string> ExampleArgs() {
  std::vector<std::string> args;
  std::istringstream in(std::getenv("VSL_EXAMPLE_ARGS") ? std::getenv("VSL_EXAMPLE_ARGS") : "");
  for (std::string a; in >> a;) args.push_back(a);
  return args;
}

int64_t MaxBits() {
  const auto args = ExampleArgs();
  return args.size() == 2 ? std::stoll(args[1]) : int64_t{1} << 24;
}

bool StringsLoaded() {
  for (const auto& m : Servers::Get().vessel().engine().registry().modules())
    if (m->name == "strings") return true;
  return false;
}

class Bitset : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
};

TEST_F(Bitset, SetGetClearCount) {
  const std::vector<Row> rows = {
      {{"BITS.COUNT", "b"}, Int(0)},
      {{"BITS.GET", "b", "5"}, Int(0)},
      {{"BITS.SET", "b", "5"}, Int(0)},
      {{"BITS.SET", "b", "5"}, Int(1)},
      {{"BITS.GET", "b", "5"}, Int(1)},
      {{"BITS.GET", "b", "4"}, Int(0)},
      {{"BITS.GET", "b", "4000"}, Int(0)},  // past the end of the words
      {{"BITS.SET", "b", "4000"}, Int(0)},  // grows
      {{"BITS.SET", "b", "63"}, Int(0)},
      {{"BITS.SET", "b", "64"}, Int(0)},
      {{"bits.get", "b", "4000"}, Int(1)},  // command names are case-insensitive
      {{"BITS.COUNT", "b"}, Int(4)},
      {{"TYPE", "b"}, Simple("bitset")},
      {{"OBJECT", "ENCODING", "b"}, Bulk("dense")},
      {{"BITS.CLEAR", "b", "5"}, Int(1)},
      {{"BITS.CLEAR", "b", "5"}, Int(0)},
      {{"BITS.CLEAR", "b", "100000"}, Int(0)},
      {{"BITS.CLEAR", "nokey", "1"}, Int(0)},
      {{"BITS.COUNT", "b"}, Int(3)},
      {{"BITS.CLEAR", "b", "63"}, Int(1)},
      {{"BITS.CLEAR", "b", "64"}, Int(1)},
      {{"BITS.CLEAR", "b", "4000"}, Int(1)},  // the last bit: the key goes away
      {{"EXISTS", "b"}, Int(0)},
      {{"TYPE", "b"}, Simple("none")},
      {{"BITS.COUNT", "b"}, Int(0)},
      {{"EXISTS", "nokey"}, Int(0)},  // reads and no-op clears create nothing
  };
  RunVesselTable(rows, 2);
  RunVesselTable(rows, 3);
}

TEST_F(Bitset, Errors) {
  const std::string max = std::to_string(MaxBits());
  const std::string last = std::to_string(MaxBits() - 1);
  RunVesselTable({
      {{"BITS.SET", "b", "-1"}, Err(kBadIndex)},
      {{"BITS.SET", "b", "abc"}, Err(kBadIndex)},
      {{"BITS.SET", "b", " 1"}, Err(kBadIndex)},
      {{"BITS.SET", "b", "01"}, Err(kBadIndex)},
      {{"BITS.GET", "b", "1.5"}, Err(kBadIndex)},
      {{"BITS.CLEAR", "b", "99999999999999999999"}, Err(kBadIndex)},
      {{"BITS.SET", "b", max}, Err(kBadIndex)},
      {{"BITS.GET", "b", max}, Err(kBadIndex)},
      {{"EXISTS", "b"}, Int(0)},
      {{"BITS.SET", "b", last}, Int(0)},
      {{"BITS.GET", "b", last}, Int(1)},
      // arity comes from the descriptor; the host checks it before the handler runs
      {{"BITS.SET", "b"}, Err("ERR wrong number of arguments for 'bits.set' command")},
      {{"BITS.SET", "b", "1", "2"}, Err("ERR wrong number of arguments for 'bits.set' command")},
      {{"BITS.COUNT"}, Err("ERR wrong number of arguments for 'bits.count' command")},
      {{"BITS.COUNT", "a", "b"}, Err("ERR wrong number of arguments for 'bits.count' command")},
      {{"BITS.UNION", "d"}, Err("ERR wrong number of arguments for 'bits.union' command")},
  });
}

TEST_F(Bitset, IndexLimitFollowsMaxBitsArgument) {
  if (ExampleArgs().empty()) GTEST_SKIP() << "loaded without arguments (default max-bits 2^24)";
  RunVesselTable({
      {{"BITS.SET", "b", std::to_string(MaxBits() - 1)}, Int(0)},
      {{"BITS.SET", "b", std::to_string(MaxBits())}, Err(kBadIndex)},
  });
}

TEST_F(Bitset, Union) {
  RunVesselTable({
      {{"BITS.SET", "a", "1"}, Int(0)},
      {{"BITS.SET", "a", "200"}, Int(0)},
      {{"BITS.SET", "c", "1"}, Int(0)},
      {{"BITS.SET", "c", "2"}, Int(0)},
      {{"BITS.UNION", "u", "a", "c", "nokey"}, Int(3)},
      {{"BITS.GET", "u", "200"}, Int(1)},
      {{"BITS.GET", "u", "2"}, Int(1)},
      {{"BITS.COUNT", "a"}, Int(2)},            // sources unchanged
      {{"BITS.UNION", "a", "a", "c"}, Int(3)},  // dest may be a source
      {{"BITS.COUNT", "a"}, Int(3)},
      {{"BITS.UNION", "u", "nokey"}, Int(0)},  // an empty union deletes dest
      {{"EXISTS", "u"}, Int(0)},
      {{"COMMAND", "GETKEYS", "BITS.UNION", "u", "a", "c"}, BulkArr({"u", "a", "c"})},
  });
}

// A module that passes NULL handles, or handles kept from an earlier call, opens an undeclared
// key or deletes a read-only one, gets VSL_ERR and the server carries on (GOOD.MISUSE counts the
// refusals; its second call runs inside EXEC, so its context is not where the first one was).
TEST_F(Bitset, NullAndStaleHandlesAreRefused) {
  RunVesselTable({
      {{"GOOD.PUT", "k", "v"}, Ok()},
      {{"GOOD.MISUSE", "k"}, Int(5)},
      {{"MULTI"}, Ok()},
      {{"GOOD.MISUSE", "k"}, Simple("QUEUED")},
      {{"EXEC"}, Arr({Int(7)})},
      {{"GOOD.GET", "k"}, Bulk("v")},
  });
}

// The host decides WRONGTYPE, in both directions, against another module's type.
TEST_F(Bitset, WrongTypeAgainstAnotherModuleType) {
  RunVesselTable({
      {{"GOOD.PUT", "g", "hello"}, Ok()},
      {{"BITS.SET", "g", "1"}, Err(kWrongType)},
      {{"BITS.GET", "g", "1"}, Err(kWrongType)},
      {{"BITS.CLEAR", "g", "1"}, Err(kWrongType)},
      {{"BITS.COUNT", "g"}, Err(kWrongType)},
      {{"BITS.SET", "b", "1"}, Int(0)},
      {{"GOOD.GET", "b"}, Err(kWrongType)},
      {{"BITS.UNION", "u", "b", "g"}, Err(kWrongType)},  // a source of the wrong type
      {{"EXISTS", "u"}, Int(0)},
      {{"GOOD.GET", "g"}, Bulk("hello")},  // nothing was changed
      {{"BITS.UNION", "g", "b"}, Int(1)},  // dest is overwritten whatever it held
      {{"TYPE", "g"}, Simple("bitset")},
  });
}

TEST_F(Bitset, WrongTypeAgainstStrings) {
  // TODO(strings): runs as soon as modules/strings builds bin/modules/strings.so.
  if (!StringsLoaded()) GTEST_SKIP() << "the strings module is not built yet";
  RunVesselTable({
      {{"SET", "k", "v"}, Ok()},
      {{"BITS.SET", "k", "1"}, Err(kWrongType)},
      {{"BITS.COUNT", "k"}, Err(kWrongType)},
      {{"GET", "k"}, Bulk("v")},
      {{"BITS.SET", "b", "1"}, Int(0)},
      {{"GET", "b"}, Err(kWrongType)},
      {{"APPEND", "b", "x"}, Err(kWrongType)},
      {{"TYPE", "b"}, Simple("bitset")},
      {{"TYPE", "k"}, Simple("string")},
      {{"SET", "b", "now a string"}, Ok()},  // SET overwrites any type
      {{"TYPE", "b"}, Simple("string")},
  });
}

TEST_F(Bitset, CopyIsDeep) {
  RunVesselTable({
      {{"BITS.SET", "src", "3"}, Int(0)},
      {{"PEXPIRE", "src", "100000"}, Int(1)},
      {{"COPY", "src", "dst"}, Int(1)},
      {{"BITS.GET", "dst", "3"}, Int(1)},
      {{"TYPE", "dst"}, Simple("bitset")},
      {{"PTTL", "dst"}, IntRange(1, 100000)},  // the expiry is copied too
      {{"BITS.SET", "dst", "4"}, Int(0)},
      {{"BITS.GET", "src", "4"}, Int(0)},  // an independent value
      {{"BITS.CLEAR", "src", "3"}, Int(1)},
      {{"BITS.COUNT", "dst"}, Int(2)},
      {{"COPY", "dst", "src"}, Int(1)},
      {{"COPY", "dst", "src"}, Int(0)},  // exists: not without REPLACE
      {{"BITS.SET", "dst", "5000"}, Int(0)},
      {{"COPY", "dst", "src", "REPLACE"}, Int(1)},
      {{"BITS.COUNT", "src"}, Int(3)},
      {{"GOOD.PUT", "g", "x"}, Ok()},  // a type without copy is refused by the host
      {{"COPY", "g", "g2"}, Err("ERR COPY is not supported for type goodval")},
  });
}

TEST_F(Bitset, MemoryUsageFollowsTheValue) {
  RespClient c = Servers::Get().Vessel();
  ASSERT_EQ(c("BITS.SET", "small", "0").integer, 0);
  ASSERT_EQ(c("BITS.SET", "big", "1000000").integer, 0);
  const Reply small = c("MEMORY", "USAGE", "small");
  const Reply big = c("MEMORY", "USAGE", "big");
  ASSERT_EQ(small.type, Reply::Type::kInt) << small.ToString();
  ASSERT_EQ(big.type, Reply::Type::kInt) << big.ToString();
  EXPECT_GT(small.integer, 24);  // the header and one word, plus the key
  EXPECT_LT(small.integer, 512);
  EXPECT_GE(big.integer - small.integer, 1000000 / 8 - 64);  // the words are counted
  EXPECT_LT(big.integer, 1000000 / 8 + 4096);
  EXPECT_EQ(c("MEMORY", "USAGE", "nokey").type, Reply::Type::kNil);
}

TEST_F(Bitset, AllocationsAreAccountedToTheModule) {
  const vsl_module* mod = nullptr;
  for (const auto& m : Servers::Get().vessel().engine().registry().modules())
    if (m->name == "bitset") mod = m.get();
  ASSERT_NE(mod, nullptr);
  const int64_t before = engine::memory::ModuleBytes(mod->id);
  RespClient c = Servers::Get().Vessel();
  ASSERT_EQ(c("BITS.SET", "big", "800000").integer, 0);
  EXPECT_GE(engine::memory::ModuleBytes(mod->id) - before, 800000 / 8);
  ASSERT_EQ(c("DEL", "big").integer, 1);  // freed through the type's free callback
  EXPECT_LT(engine::memory::ModuleBytes(mod->id) - before, 1024);
}

// An in-place change (key_modified) is a modification for WATCH.
TEST_F(Bitset, InPlaceChangeAbortsWatchers) {
  RespClient a = Servers::Get().Vessel();
  RespClient b = Servers::Get().Vessel();
  ASSERT_EQ(a("BITS.SET", "w", "1").integer, 0);
  ASSERT_EQ(a("WATCH", "w").str, "OK");
  ASSERT_EQ(b("BITS.SET", "w", "2").integer, 0);  // changes the stored value in place
  ASSERT_EQ(a("MULTI").str, "OK");
  ASSERT_EQ(a("BITS.COUNT", "w").str, "QUEUED");
  EXPECT_EQ(a("EXEC").type, Reply::Type::kNilArray);
  // And a transaction of module commands runs atomically.
  RunVesselTable({
      {{"MULTI"}, Ok()},
      {{"BITS.SET", "t", "1"}, Simple("QUEUED")},
      {{"BITS.UNION", "t2", "t", "w"}, Simple("QUEUED")},
      {{"EXEC"}, Arr({Int(0), Int(2)})},  // t = {1}, w = {1, 2}
  });
}

TEST_F(Bitset, ModuleListShowsIt) {
  RespClient c = Servers::Get().Vessel();
  c("HELLO", "3");
  const Reply r = c("MODULE", "LIST");
  ASSERT_EQ(r.type, Reply::Type::kArray) << r.ToString();
  bool found = false;
  for (const Reply& m : r.elems) {
    ASSERT_EQ(m.type, Reply::Type::kMap) << m.ToString();
    ASSERT_EQ(m.elems.size(), 8u) << m.ToString();
    if (m.elems[1].str != "bitset") continue;
    found = true;
    EXPECT_EQ(m.elems[0].str, "name");
    EXPECT_EQ(m.elems[2].str, "ver");
    EXPECT_EQ(m.elems[3].integer, 10000) << m.ToString();  // 1.0.0, as Redis encodes versions
    EXPECT_EQ(m.elems[4].str, "path");
    EXPECT_EQ(m.elems[5].str, std::getenv("VSL_EXAMPLE_MODULE"));
    EXPECT_EQ(m.elems[6].str, "args");
    std::vector<std::string> args;
    for (const Reply& a : m.elems[7].elems) args.push_back(a.str);
    EXPECT_EQ(args, ExampleArgs());
  }
  EXPECT_TRUE(found) << r.ToString();
}

TEST_F(Bitset, CommandInfoAndDocsComeFromTheDescriptor) {
  RespClient c = Servers::Get().Vessel();
  const Reply info = c("COMMAND", "INFO", "BITS.UNION");
  ASSERT_EQ(info.elems.size(), 1u) << info.ToString();
  const Reply& u = info.elems[0];
  ASSERT_GE(u.elems.size(), 6u) << u.ToString();
  EXPECT_EQ(u.elems[0].str, "bits.union");
  EXPECT_EQ(u.elems[1].integer, -3);  // arity
  std::vector<std::string> flags;
  for (const Reply& f : u.elems[2].elems) flags.push_back(f.str);
  // The descriptor's flags (the host may add its own, e.g. "module").
  EXPECT_NE(std::find(flags.begin(), flags.end(), "write"), flags.end()) << u.ToString();
  EXPECT_NE(std::find(flags.begin(), flags.end(), "denyoom"), flags.end()) << u.ToString();
  EXPECT_EQ(std::find(flags.begin(), flags.end(), "readonly"), flags.end()) << u.ToString();
  EXPECT_EQ(std::find(flags.begin(), flags.end(), "fast"), flags.end()) << u.ToString();
  EXPECT_EQ(u.elems[3].integer, 1);   // first key
  EXPECT_EQ(u.elems[4].integer, -1);  // last key
  EXPECT_EQ(u.elems[5].integer, 1);   // step
  const Reply docs = c("COMMAND", "DOCS", "BITS.SET");
  EXPECT_NE(docs.ToString().find("Sets a bit, returning its old value."), std::string::npos)
      << docs.ToString();
  EXPECT_NE(docs.ToString().find("O(1) amortized"), std::string::npos) << docs.ToString();
}

// The type's serialize/deserialize/copy/mem_usage/free, called as the host will for DUMP,
// RESTORE and snapshots.
class BitsetType : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const auto& t : Servers::Get().vessel().engine().registry().types())
      if (t != nullptr && t->name == "bitset") type_ = t.get();
    ASSERT_NE(type_, nullptr);
  }
  static std::string U64(uint64_t v) {
    std::string s(8, '\0');
    for (int i = 0; i < 8; ++i) s[i] = static_cast<char>(v >> (8 * i));
    return s;
  }
  void* Deserialize(const std::string& bytes, uint32_t encver = 1) {
    vsl_reader r{bytes};
    return type_->desc.deserialize(nullptr, &r, encver);
  }
  const vsl_type* type_ = nullptr;
};

TEST_F(BitsetType, RoundTripAndCopy) {
  engine::memory::ModuleScope scope(type_->module->id);
  const std::string bytes = U64(2) + U64(0b101) + U64(uint64_t{1} << 63);
  void* v = Deserialize(bytes);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(type_->encoding_version, 1u);
  EXPECT_GE(type_->desc.mem_usage(nullptr, v), 3 * 8u);
  EXPECT_EQ(type_->desc.free_effort(nullptr, v), 2u);
  void* copy = type_->desc.copy(nullptr, v);
  ASSERT_NE(copy, nullptr);
  ASSERT_NE(copy, v);
  type_->desc.free(nullptr, v);  // the copy must not share anything with it
  vsl_writer w;
  ASSERT_EQ(type_->desc.serialize(nullptr, copy, &w), VSL_OK);
  EXPECT_EQ(w.buf, bytes);
  type_->desc.free(nullptr, copy);
}

TEST_F(BitsetType, DeserializeRefusesBadInput) {
  engine::memory::ModuleScope scope(type_->module->id);
  EXPECT_EQ(Deserialize(U64(1) + U64(1), 2), nullptr);        // unknown encoding version
  EXPECT_EQ(Deserialize(U64(2) + U64(1)), nullptr);           // truncated
  EXPECT_EQ(Deserialize(""), nullptr);                        // empty
  EXPECT_EQ(Deserialize(U64(0)), nullptr);                    // no words: never stored
  EXPECT_EQ(Deserialize(U64(2) + U64(0) + U64(0)), nullptr);  // no bit set: never stored
  EXPECT_EQ(Deserialize(U64(uint64_t{1} << 40)), nullptr);    // absurd size, not allocated
}

}  // namespace
}  // namespace vessel::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const char* example = std::getenv("VSL_EXAMPLE_MODULE");
  if (example == nullptr || access(example, R_OK) != 0) {
    std::fprintf(stderr, "set VSL_EXAMPLE_MODULE to the built example module (bitset.so)\n");
    return 2;
  }
  vessel::test::Servers::Configure([example](vessel::config::Config& cfg) {
    // Only what these tests need: the example, a second module type, and strings once it exists.
    cfg.modules.clear();
    const auto dirs = vessel::modules::DefaultModuleDirs();
    if (access(vessel::modules::ResolvePath("strings", dirs).c_str(), R_OK) == 0)
      cfg.modules.push_back({"strings", {}});
    cfg.modules.push_back({std::string(VSL_TEST_MODULE_DIR) + "/good.so", {}});
    cfg.modules.push_back({example, vessel::test::ExampleArgs()});
  });
  return RUN_ALL_TESTS();
}
