// Command coverage: exactly which commands and subcommands of redis-server 7.0's COMMAND LIST
// vessel does not have yet, by the area of work that owns them. The list below is compared, at
// run time, with what both servers answer to COMMAND LIST: a command vessel gains must leave the
// list and one it lacks must be in it, so the test fails, naming the command, whenever either
// changes without the list. What is missing is printed on every run.
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

// The Redis 7.0 commands vessel lacks (COMMAND LIST names: lowercase, "parent|sub"), by area:
// none today.
const std::map<std::string, std::vector<std::string>> kMissing = {};

std::set<std::string> CommandList(RespClient& c) {
  std::set<std::string> out;
  for (const Reply& r : c("COMMAND", "LIST").elems) out.insert(r.str);
  return out;
}

TEST(CoverageTest, MissingCommandsAreExactlyTheListedOnes) {
  RespClient v = Servers::Get().Vessel(), r = Servers::Get().Redis();
  const std::set<std::string> ours = CommandList(v), theirs = CommandList(r);
  ASSERT_GT(theirs.size(), 200u) << "redis-server's COMMAND LIST looks wrong";
  std::map<std::string, std::string> listed;  // command -> area
  for (const auto& [area, cmds] : kMissing) {
    for (const std::string& cmd : cmds) {
      EXPECT_TRUE(listed.emplace(cmd, area).second) << cmd << " is listed twice";
    }
  }
  for (const std::string& cmd : theirs) {
    if (!ours.contains(cmd) && !listed.contains(cmd)) {
      ADD_FAILURE() << cmd << ": redis-server has it, vessel does not, and kMissing does not say "
                    << "so: implement it or list it under the area that owns it";
    }
  }
  for (const auto& [cmd, area] : listed) {
    if (ours.contains(cmd)) {
      ADD_FAILURE() << cmd << " (" << area << "): vessel has it now; remove it from kMissing";
    } else if (!theirs.contains(cmd)) {
      ADD_FAILURE() << cmd << " (" << area << "): not a command of redis-server 7.0";
    }
  }
  std::printf("vessel has %zu of redis-server 7.0's %zu commands and subcommands; missing %zu:\n",
              theirs.size() - listed.size(), theirs.size(), listed.size());
  for (const auto& [area, cmds] : kMissing) {
    std::string line;
    for (const std::string& c : cmds) line += " " + c;
    std::printf("  %s (%zu):%s\n", area.c_str(), cmds.size(), line.c_str());
  }
}

}  // namespace
}  // namespace vessel::test
