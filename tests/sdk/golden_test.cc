// Golden modules: built against frozen SDK headers (tests/sdk/golden/sdk-<version>/), loaded into
// the current in-process host next to the strings module (when built), and driven through the
// real command path. A module built for SDK 1.0 must keep loading and replying the same whatever
// the host and the SDK grew since: shorter descriptors, fewer vsl_api slots, min_abi_minor 0.
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "host/modules/loader.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

const std::string kGolden10 = std::string(VSL_TEST_MODULE_DIR) + "/golden_v1_0.so";

bool ModuleLoaded(const std::string& name) {
  for (const auto& m : Servers::Get().vessel().engine().registry().modules())
    if (m->name == name) return true;
  return false;
}

class GoldenV10 : public ::testing::Test {
 protected:
  void SetUp() override { Servers::Get().Reset(); }
};

TEST_F(GoldenV10, LoadsWithItsTypeAndCommands) {
  for (const auto& m : Servers::Get().vessel().engine().registry().modules()) {
    if (m->name != "golden_v1_0") continue;
    EXPECT_EQ(m->version, "1.0.0");
    EXPECT_EQ(m->types, std::vector<std::string>{"tally"});
    std::vector<std::string> commands = m->commands;
    std::sort(commands.begin(), commands.end());
    for (std::string& c : commands) std::transform(c.begin(), c.end(), c.begin(), ::tolower);
    EXPECT_EQ(commands, (std::vector<std::string>{"gold.add", "gold.get", "gold.reset"}));
    return;
  }
  FAIL() << "golden_v1_0 is not loaded";
}

TEST_F(GoldenV10, CommandsReply) {
  const std::vector<Row> rows = {
      {{"GOLD.GET", "g"}, NilArray()},
      {{"EXISTS", "g"}, Int(0)},  // reading creates nothing
      {{"GOLD.ADD", "g", "5"}, Int(5)},
      {{"GOLD.ADD", "g", "10", "-3"}, Int(12)},
      {{"gold.get", "g"}, Arr({Int(12), Int(3)})},
      {{"TYPE", "g"}, Simple("tally")},
      {{"OBJECT", "ENCODING", "g"}, Bulk("tally")},
      // a bad delta changes nothing, even after good ones
      {{"GOLD.ADD", "g", "1", "x"}, Error(kNotInt)},
      {{"GOLD.ADD", "g", "01"}, Error(kNotInt)},
      {{"GOLD.ADD", "g", "9223372036854775807"},
       Error("ERR increment or decrement would overflow")},
      {{"GOLD.GET", "g"}, Arr({Int(12), Int(3)})},
      // the 1.0 type's copy and serialize callbacks
      {{"COPY", "g", "h"}, Int(1)},
      {{"GOLD.ADD", "h", "1"}, Int(13)},
      {{"GOLD.GET", "g"}, Arr({Int(12), Int(3)})},
      {{"GOLD.GET", "h"}, Arr({Int(13), Int(4)})},
      {{"GOLD.RESET", "g"}, Int(1)},
      {{"GOLD.RESET", "g"}, Int(0)},
      {{"EXISTS", "g"}, Int(0)},
      {{"TYPE", "g"}, Simple("none")},
      {{"GOLD.GET", "g"}, NilArray()},
      // arity from the 1.0 descriptor
      {{"GOLD.ADD", "g"}, Error("ERR wrong number of arguments for 'gold.add' command")},
      {{"GOLD.GET", "g", "h"}, Error("ERR wrong number of arguments for 'gold.get' command")},
      {{"GOLD.RESET"}, Error("ERR wrong number of arguments for 'gold.reset' command")},
      {{"GOLD.RESET", "h"}, Int(1)},  // the table runs again over RESP3
  };
  RunVesselTable(rows, 2);
  RunVesselTable(rows, 3);
}

// The 1.0 type's serialize and deserialize callbacks.
TEST_F(GoldenV10, DumpAndRestore) {
  RespClient c = Servers::Get().Vessel();
  ASSERT_EQ(c("GOLD.ADD", "g", "7", "-2").integer, 5);
  const Reply payload = c("DUMP", "g");
  ASSERT_EQ(payload.type, Reply::Type::kBulk) << payload.ToString();
  EXPECT_EQ(c("RESTORE", "r", "0", payload.str).str, "OK");
  RunVesselTable({
      {{"GOLD.GET", "r"}, Arr({Int(5), Int(2)})},
      {{"TYPE", "r"}, Simple("tally")},
      {{"OBJECT", "ENCODING", "r"}, Bulk("tally")},
  });
}

TEST_F(GoldenV10, ExpiryAndDeletionWork) {
  RunVesselTable({
      {{"GOLD.ADD", "g", "1"}, Int(1)},
      {{"PEXPIRE", "g", "100000"}, Int(1)},
      {{"GOLD.ADD", "g", "1"}, Int(2)},  // an in-place update keeps the expiry
      {{"TTL", "g"}, IntRange(1, 100)},
      {{"DEL", "g"}, Int(1)},
      {{"GOLD.GET", "g"}, NilArray()},
  });
}

TEST_F(GoldenV10, WrongTypeBothWays) {
  if (!ModuleLoaded("strings")) GTEST_SKIP() << "the strings module is not built";
  RunVesselTable({
      {{"SET", "s", "x"}, Ok()},
      {{"GOLD.ADD", "s", "1"}, WrongType()},
      {{"GOLD.GET", "s"}, WrongType()},
      {{"GOLD.RESET", "s"}, WrongType()},
      {{"GET", "s"}, Bulk("x")},
      {{"GOLD.ADD", "g", "1"}, Int(1)},
      {{"GET", "g"}, WrongType()},
      {{"APPEND", "g", "x"}, WrongType()},
      {{"GOLD.GET", "g"}, Arr({Int(1), Int(1)})},
  });
}

// COMMAND INFO, COMMAND DOCS and COMMAND GETKEYS come from the 1.0 descriptor and key specs.
TEST_F(GoldenV10, CommandIntrospection) {
  RunVesselTable({
      {{"COMMAND", "GETKEYS", "GOLD.ADD", "k", "1", "2"}, BulkArr({"k"})},
      {{"COMMAND", "GETKEYS", "GOLD.GET", "k"}, BulkArr({"k"})},
      {{"COMMAND", "COUNT"}, Any()},
  });
  RespClient c = Servers::Get().Vessel();
  const Reply info = c("COMMAND", "INFO", "gold.add");
  ASSERT_EQ(info.type, Reply::Type::kArray) << info.ToString();
  ASSERT_EQ(info.elems.size(), 1u) << info.ToString();
  const Reply& add = info.elems[0];
  ASSERT_GE(add.elems.size(), 9u) << add.ToString();
  EXPECT_EQ(add.elems[0].str, "gold.add");
  EXPECT_EQ(add.elems[1].integer, -3);
  std::vector<std::string> flags;
  for (const Reply& f : add.elems[2].elems) flags.push_back(f.str);
  EXPECT_EQ(flags, (std::vector<std::string>{"write", "denyoom", "fast"})) << add.ToString();
  EXPECT_EQ(add.elems[3].integer, 1);  // first key
  EXPECT_EQ(add.elems[4].integer, 1);  // last key
  EXPECT_EQ(add.elems[5].integer, 1);  // step
  const std::string text = add.ToString();
  EXPECT_NE(text.find("RW"), std::string::npos) << text;
  EXPECT_NE(text.find("update"), std::string::npos) << text;

  const Reply docs = c("COMMAND", "DOCS", "gold.get");
  const std::string d = docs.ToString();
  EXPECT_NE(d.find("Returns a tally's sum and count."), std::string::npos) << d;
  EXPECT_NE(d.find("golden_v1_0"), std::string::npos) << d;  // the module that provides it
  EXPECT_NE(d.find("module"), std::string::npos) << d;
}

}  // namespace
}  // namespace vessel::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  vessel::test::Servers::Configure([](vessel::config::Config& cfg) {
    // The golden modules, and strings (when built) for a type of another module.
    cfg.modules.clear();
    const auto dirs = vessel::modules::DefaultModuleDirs();
    if (access(vessel::modules::ResolvePath("strings", dirs).c_str(), R_OK) == 0)
      cfg.modules.push_back({"strings", {}});
    cfg.modules.push_back({vessel::test::kGolden10, {}});
  });
  return RUN_ALL_TESTS();
}
