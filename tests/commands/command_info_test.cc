// COMMAND's description of every command and subcommand vessel and redis-server 7.0 both have,
// compared field by field: the ACL categories (what rules such as "+@all -@dangerous" grant),
// flags, arity, the legacy key range, key specs and tips. Any difference fails but the deliberate
// ones listed in kDeliberate with their reasons. Also checks that the
// categories COMMAND shows are the ones the ACL rules use (ACL CAT), module categories included.
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

// Every command and subcommand of COMMAND's reply, by name.
std::map<std::string, Reply> AllCommands(RespClient& c) {
  std::map<std::string, Reply> out;
  std::function<void(const Reply&)> add = [&](const Reply& e) {
    out[e.elems[0].str] = e;
    if (e.elems.size() > 9)
      for (const Reply& sub : e.elems[9].elems) add(sub);
  };
  for (const Reply& e : c("COMMAND").elems) add(e);
  return out;
}

// The fields of a COMMAND entry (Redis 7.0's order), subcommands left out.
struct Field {
  const char* name;
  size_t index;
};
constexpr Field kFields[] = {{"arity", 1},    {"flags", 2},    {"first key", 3},
                             {"last key", 4}, {"key step", 5}, {"acl categories", 6},
                             {"tips", 7},     {"key specs", 8}};

// Differences kept on purpose: {command, field} -> why.
const std::map<std::pair<std::string, std::string>, std::string> kDeliberate = {
    {{"xgroup|help", "flags"}, "module commands have no LOADING/STALE flags in the SDK"},
    {{"xinfo|help", "flags"}, "module commands have no LOADING/STALE flags in the SDK"},
    {{"xreadgroup", "key specs"},
     "RW where Redis says RO: the group's state changes, and the host locks RO keys shared"},
};

TEST(CommandInfoTest, EveryCommandDescribedAsRedis) {
  RespClient v = Servers::Get().Vessel(), r = Servers::Get().Redis();
  const std::map<std::string, Reply> ours = AllCommands(v), theirs = AllCommands(r);
  ASSERT_GT(theirs.size(), 200u);
  size_t common = 0;
  for (const auto& [name, mine] : ours) {
    auto it = theirs.find(name);
    if (it == theirs.end()) continue;  // vessel's own (VEC.*) or newer than Redis 7.0
    ++common;
    for (const Field& f : kFields) {
      ASSERT_GT(mine.elems.size(), f.index) << name;
      const Reply& a = mine.elems[f.index];
      const Reply& b = it->second.elems[f.index];
      if (a == b) continue;
      auto known = kDeliberate.find({name, f.name});
      if (known != kDeliberate.end()) continue;
      ADD_FAILURE() << name << " " << f.name << "\n  vessel: " << a.ToString()
                    << "\n  redis:  " << b.ToString();
    }
  }
  EXPECT_GT(common, 250u);
}

// The commands COMMAND lists in a category are exactly those ACL CAT lists, for every category
// ACL CAT names (Redis's and the modules', such as @vectors).
TEST(CommandInfoTest, CategoriesAreTheAclCategories) {
  RespClient v = Servers::Get().Vessel();
  std::map<std::string, std::set<std::string>> by_category;
  for (const auto& [name, info] : AllCommands(v))
    for (const Reply& cat : info.elems[6].elems) by_category[cat.str.substr(1)].insert(name);
  std::set<std::string> categories;
  for (const Reply& c : v("ACL", "CAT").elems) categories.insert(c.str);
  EXPECT_TRUE(categories.contains("vectors"));
  EXPECT_TRUE(categories.contains("multi_index"));
  for (const auto& [cat, names] : by_category) {
    EXPECT_TRUE(categories.contains(cat)) << "@" << cat << " shown by COMMAND, unknown to ACL CAT";
  }
  for (const std::string& cat : categories) {
    std::set<std::string> listed;
    for (const Reply& n : v("ACL", "CAT", cat).elems) listed.insert(n.str);
    EXPECT_EQ(listed, by_category[cat]) << "@" << cat;
  }
}

}  // namespace
}  // namespace vessel::test
