// ACL categories of a command: derived from its flags and group, plus the ones a module declares
// through the SDK (vsl_command_desc.acl_categories, ABI 1.4). Pure functions of host/engine/access.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "host/engine/access.h"
#include "host/engine/registry.h"

namespace vessel::engine {
namespace {

// Flags and group give @read/@fast/@hash; a module adds the categories it declares, and an
// unknown one is refused with the name.
TEST(AclCategories, DerivedAndModuleDeclared) {
  CommandSpec c;
  c.flags = VSL_CMD_READONLY | VSL_CMD_FAST;
  c.group = "hash";
  auto names = [&] {
    std::vector<std::string> out;
    const uint64_t bits = AclCategoryBits(c);
    for (int i = 0; i < kAclCategoryCount; ++i)
      if (bits & (uint64_t{1} << i)) out.emplace_back(kAclCategories[i]);
    return out;
  };
  EXPECT_EQ(names(), (std::vector<std::string>{"read", "hash", "fast"}));
  std::string error;
  ASSERT_TRUE(ModuleAclCategories("@string @BITMAP", &c.extra_acl, &error));
  EXPECT_EQ(names(), (std::vector<std::string>{"read", "string", "bitmap", "fast"}));
  ASSERT_TRUE(ModuleAclCategories("", &c.extra_acl, &error));
  EXPECT_EQ(names(), (std::vector<std::string>{"read", "fast"}));
  EXPECT_FALSE(ModuleAclCategories("@read @nosuch", &c.extra_acl, &error));
  EXPECT_EQ(error, "unknown ACL category 'nosuch'");
}

}  // namespace
}  // namespace vessel::engine
