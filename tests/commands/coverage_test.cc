// Command coverage: every command and subcommand of redis-server 7.0's COMMAND LIST is either
// implemented by vessel or belongs to an area that a later piece of work owns (printed here, so
// what is missing is always visible). A missing command outside those areas fails the test.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

// The area that owns a Redis command vessel does not have yet, or "" when none does.
std::string AreaOf(const std::string& cmd) {
  const std::string top = cmd.substr(0, cmd.find('|'));
  static const std::map<std::string, std::string> kAreas = {
      {"acl", "security (ACL)"},   {"eval", "scripting"},        {"eval_ro", "scripting"},
      {"evalsha", "scripting"},    {"evalsha_ro", "scripting"},  {"fcall", "scripting"},
      {"fcall_ro", "scripting"},   {"function", "scripting"},    {"script", "scripting"},
      {"subscribe", "pub/sub"},    {"unsubscribe", "pub/sub"},   {"psubscribe", "pub/sub"},
      {"punsubscribe", "pub/sub"}, {"ssubscribe", "pub/sub"},    {"sunsubscribe", "pub/sub"},
      {"publish", "pub/sub"},      {"spublish", "pub/sub"},      {"pubsub", "pub/sub"},
      {"save", "persistence"},     {"bgsave", "persistence"},    {"bgrewriteaof", "persistence"},
      {"cluster", "cluster"},      {"asking", "cluster"},        {"readonly", "cluster"},
      {"readwrite", "cluster"},    {"migrate", "cluster"},       {"restore-asking", "cluster"},
      {"failover", "replication"}, {"psync", "replication"},     {"sync", "replication"},
      {"replconf", "replication"}, {"replicaof", "replication"}, {"slaveof", "replication"},
  };
  if (top == "client" && (cmd == "client|caching" || cmd == "client|getredir" ||
                          cmd == "client|tracking" || cmd == "client|trackinginfo"))
    return "client-side caching";
  auto it = kAreas.find(top);
  return it == kAreas.end() ? "" : it->second;
}

std::set<std::string> CommandList(RespClient& c) {
  std::set<std::string> out;
  for (const Reply& r : c("COMMAND", "LIST").elems) out.insert(r.str);
  return out;
}

TEST(CoverageTest, EveryRedisCommandIsImplementedOrOwned) {
  RespClient v = Servers::Get().Vessel(), r = Servers::Get().Redis();
  const std::set<std::string> ours = CommandList(v), theirs = CommandList(r);
  ASSERT_GT(theirs.size(), 200u);
  std::map<std::string, std::vector<std::string>> missing;
  for (const std::string& cmd : theirs) {
    if (ours.contains(cmd)) continue;
    const std::string area = AreaOf(cmd);
    EXPECT_FALSE(area.empty()) << "missing and owned by no area: " << cmd;
    missing[area.empty() ? "(none)" : area].push_back(cmd);
  }
  size_t n = 0;
  for (const auto& [area, cmds] : missing) n += cmds.size();
  std::printf("vessel has %zu of redis-server 7.0's %zu commands and subcommands; missing %zu:\n",
              theirs.size() - n, theirs.size(), n);
  for (const auto& [area, cmds] : missing) {
    std::string line;
    for (const std::string& c : cmds) line += " " + c;
    std::printf("  %s (%zu):%s\n", area.c_str(), cmds.size(), line.c_str());
  }
}

}  // namespace
}  // namespace vessel::test
