// ACL users, rules, permission checks and the ACL log, against vessel and redis-server: the same
// users are created on both, the same commands run as them, and the replies must match (ACL LOG's
// time and client fields are checked by property on both).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

const Strings kUsers = {"alice", "bob", "carol", "dave", "sel", "ro", "tmp"};

// A third-party module with its own ACL category, @capped (tests/sdk/test_module.c), loaded
// after the in-tree ones.
const bool kCappedModule = [] {
  Servers::Configure([](config::Config& c) {
    c.modules.push_back({std::string(VSL_TEST_MODULE_DIR) + "/capped.so", {}});
  });
  return true;
}();

// Back to a default user with every permission and no password, no other users, an empty log.
void ResetAcl(RespClient& c) {
  // nopass accepts anything; otherwise one of the passwords the tests set.
  for (const char* pw : {"x", "pw", "secret", "pw1"}) {
    if (!c("AUTH", "default", pw).is_error()) break;
  }
  c("CONFIG", "SET", "requirepass", "");
  c("ACL", "SETUSER", "default", "on", "nopass", "allkeys", "allchannels", "allcommands",
    "clearselectors");
  Strings del = {"ACL", "DELUSER"};
  del.insert(del.end(), kUsers.begin(), kUsers.end());
  c.Cmd(del);
  c("ACL", "LOG", "RESET");
  c("CONFIG", "SET", "protected-mode", "yes");
}

class AclTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Servers::Get().Reset();
    for (bool vessel : {true, false}) {
      RespClient c = vessel ? Servers::Get().Vessel() : Servers::Get().Redis();
      ResetAcl(c);
    }
  }
  void TearDown() override { SetUp(); }
};

RespClient Connect(bool vessel) {
  return vessel ? Servers::Get().Vessel() : Servers::Get().Redis();
}

// Runs fn on both servers (vessel first, each after a reset); what it logs must be identical.
void SameOnBoth(const std::function<void(bool vessel, std::vector<Reply>&)>& fn) {
  std::vector<Reply> got[2];
  for (int i = 0; i < 2; ++i) {
    RespClient admin = Connect(i == 0);
    ResetAcl(admin);
    SCOPED_TRACE(i == 0 ? "on vessel" : "on redis-server");
    fn(i == 0, got[i]);
  }
  ASSERT_EQ(got[0].size(), got[1].size());
  for (size_t i = 0; i < got[0].size(); ++i)
    EXPECT_EQ(got[0][i], got[1][i]) << "step " << i << "\n  vessel: " << got[0][i].ToString()
                                    << "\n  redis:  " << got[1][i].ToString();
}

// ---- rules and their canonical description ----

TEST_F(AclTest, SetUserAndDescribe) {
  const std::string h1 = "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8";
  RunTable({
      {{"ACL", "SETUSER", "alice"}, Ok()},
      {{"ACL", "LIST"},
       BulkArr({"user alice off resetchannels -@all", "user default on nopass ~* &* +@all"})},
      {{"ACL", "SETUSER", "alice", "on", ">password", "~cached:*", "+get"}, Ok()},
      {{"ACL", "GETUSER", "alice"}, Any()},
      {{"ACL", "SETUSER", "alice", "#" + h1}, Ok()},  // the same password, once
      {{"ACL", "GETUSER", "alice"}, Any()},
      {{"ACL", "SETUSER", "alice", ">other", "<password"}, Ok()},
      {{"ACL", "LIST"}, Any()},
      {{"ACL", "SETUSER", "alice", "!" + h1}, Err("ERR Error in ACL SETUSER modifier*")},
      {{"ACL", "SETUSER", "alice", "nopass"}, Ok()},
      {{"ACL", "LIST"}, Any()},
      {{"ACL", "SETUSER", "alice", "resetpass", "off"}, Ok()},
      {{"ACL", "LIST"}, Any()},
      {{"ACL", "SETUSER", "bob", "on", "%R~read:*", "%W~write:*", "%RW~both:*", "~all:*"}, Ok()},
      {{"ACL", "SETUSER", "bob", "%W~read:*"}, Ok()},  // merges into ~read:*
      {{"ACL", "GETUSER", "bob"}, Any()},
      {{"ACL", "SETUSER", "bob", "allkeys", "&chan:*", "&news"}, Ok()},
      {{"ACL", "LIST"}, Any()},
      {{"ACL", "SETUSER", "bob", "resetkeys", "allchannels", "~x"}, Ok()},
      {{"ACL", "GETUSER", "bob"}, Any()},
      {{"ACL", "SETUSER", "bob", "resetchannels", "+@all", "-@dangerous"}, Ok()},
      {{"ACL", "LIST"}, Any()},
      {{"ACL", "SETUSER", "bob", "nocommands", "+@hash"}, Ok()},
      {{"ACL", "GETUSER", "bob"}, Any()},
      {{"ACL", "SETUSER", "bob", "-@all", "+@read"}, Ok()},
      {{"ACL", "LIST"}, Any()},
      {{"ACL", "SETUSER", "bob", "allcommands", "-@write"}, Ok()},
      {{"ACL", "GETUSER", "bob"}, Any()},
      {{"ACL", "SETUSER", "bob", "-@all", "+config|get"}, Ok()},
      {{"ACL", "LIST"}, Any()},
      {{"ACL", "SETUSER", "bob", "-@all", "+config", "-config|set"}, Ok()},
      {{"ACL", "GETUSER", "bob"}, Any()},
      {{"ACL", "SETUSER", "bob", "-@all", "+select|0", "+select|1"}, Ok()},
      {{"ACL", "LIST"}, Any()},
      {{"ACL", "SETUSER", "bob", "+select"}, Ok()},  // the command itself: first args dropped
      {{"ACL", "GETUSER", "bob"}, Any()},
      {{"ACL", "SETUSER", "bob", "reset"}, Ok()},
      {{"ACL", "LIST"}, Any()},
      {{"ACL", "SETUSER", "sel", "on", "nopass", "~a", "+get", "(~b +set)", "(%R~c", "+@read)"},
       Ok()},
      {{"ACL", "LIST"}, Any()},
      {{"ACL", "GETUSER", "sel"}, Any()},
      {{"ACL", "SETUSER", "sel", "clearselectors"}, Ok()},
      {{"ACL", "GETUSER", "sel"}, Any()},
      {{"ACL", "SETUSER", "sel", "(~x \"+get\" &ch)"}, Ok()},  // quotes inside a selector
      {{"ACL", "LIST"}, Any()},
      {{"ACL", "SETUSER", "sel", "(\"unbalanced)"}, Ok()},  // an empty selector, as in Redis
      {{"ACL", "GETUSER", "sel"}, Any()},
      {{"ACL", "SETUSER", "carol", "on", "ALLKEYS", "+GET", "+@Read", "-@ALL", "+@all"}, Ok()},
      {{"ACL", "LIST"}, Any()},
      {{"ACL", "USERS"}, BulkArr({"alice", "bob", "carol", "default", "sel"})},
      {{"ACL", "DELUSER", "alice", "nosuch", "bob"}, Int(2)},
      {{"ACL", "USERS"}, BulkArr({"carol", "default", "sel"})},
      {{"ACL", "GETUSER", "nosuch"}, Nil()},
      {{"ACL", "WHOAMI"}, Bulk("default")},
  });
}

TEST_F(AclTest, SetUserDescribeResp3) {
  RunTable(
      {
          {{"ACL", "SETUSER", "alice", "on", ">p", "~k", "%R~r", "&c", "-@all", "+get",
            "(~s +set)"},
           Ok()},
          {{"ACL", "GETUSER", "alice"}, Any()},
          {{"ACL", "GETUSER", "default"}, Any()},
      },
      3);
}

TEST_F(AclTest, RuleErrors) {
  RunTable({
      {{"ACL", "SETUSER", "alice", "+nosuchcommand"},
       Error("ERR Error in ACL SETUSER modifier '+nosuchcommand': Unknown command or category "
             "name in ACL")},
      {{"ACL", "SETUSER", "alice", "-@nosuch"}, Err("*Unknown command or category name in ACL")},
      {{"ACL", "SETUSER", "alice", "+@"}, Err("*Unknown command or category name in ACL")},
      {{"ACL", "SETUSER", "alice", "#abc"},
       Error("ERR Error in ACL SETUSER modifier '#abc': The password hash must be exactly 64 "
             "characters and contain only lowercase hexadecimal characters")},
      {{"ACL", "SETUSER", "alice", "#" + std::string(64, 'A')}, Err("*lowercase hexadecimal*")},
      {{"ACL", "SETUSER", "alice", "<nopassword"},
       Error("ERR Error in ACL SETUSER modifier '<nopassword': The password you are trying to "
             "remove from the user does not exist")},
      {{"ACL", "SETUSER", "alice", "allkeys", "~foo"},
       Error("ERR Error in ACL SETUSER modifier '~foo': Adding a pattern after the * pattern "
             "(or the 'allkeys' flag) is not valid and does not have any effect. Try "
             "'resetkeys' to start with an empty list of patterns")},
      {{"ACL", "SETUSER", "alice", "&*", "&foo"}, Err("*'allchannels' flag*")},
      {{"ACL", "SETUSER", "alice", "+config|get|x"},
       Error("ERR Error in ACL SETUSER modifier '+config|get|x': Allowing first-arg of a "
             "subcommand is not supported")},
      {{"ACL", "SETUSER", "alice", "+config|nosuch"}, Err("*Unknown command or category*")},
      {{"ACL", "SETUSER", "alice", "+select|"},
       Error("ERR Error in ACL SETUSER modifier '+select|': Syntax error")},
      {{"ACL", "SETUSER", "alice", "-select|0"}, Err("*Unknown command or category*")},
      {{"ACL", "SETUSER", "alice", "%X~foo"}, Err("*Syntax error")},
      {{"ACL", "SETUSER", "alice", "%RR~foo"}, Err("*Syntax error")},
      {{"ACL", "SETUSER", "alice", "~a b"}, Err("*Syntax error")},
      {{"ACL", "SETUSER", "alice", "bogus"}, Err("*Syntax error")},
      {{"ACL", "SETUSER", "alice", "(~a", "+get"},
       Error("ERR Unmatched parenthesis in acl selector starting at '(~a'.")},
      {{"ACL", "SETUSER", "alice", "(+nosuch)"}, Err("*'(+nosuch)': Unknown command*")},
      {{"ACL", "SETUSER", "a b"}, Error("ERR Usernames can't contain spaces or null characters")},
      {{"ACL", "SETUSER", "alice", "on", "bogus"}, Err("*Syntax error")},
      {{"ACL", "USERS"}, BulkArr({"default"})},  // a failed SETUSER creates nothing
      {{"ACL", "SETUSER", "alice", "on", "+get"}, Ok()},
      {{"ACL", "SETUSER", "alice", "off", "+nosuch"}, Err("*Unknown command*")},
      {{"ACL", "LIST"}, Any()},  // all or nothing: still on
      {{"ACL", "DELUSER", "alice", "default"}, Error("ERR The 'default' user cannot be removed")},
      {{"ACL", "DELUSER"}, Error("ERR wrong number of arguments for 'acl|deluser' command")},
      {{"ACL", "GETUSER"}, Error("ERR wrong number of arguments for 'acl|getuser' command")},
      {{"ACL", "LIST", "x"}, Error("ERR wrong number of arguments for 'acl|list' command")},
      {{"ACL", "NOSUCH"}, Error("ERR unknown subcommand 'NOSUCH'. Try ACL HELP.")},
      {{"ACL", "CAT", "nosuch"}, Error("ERR Unknown category 'nosuch'")},
      {{"ACL", "CAT", "a", "b"},
       Error("ERR unknown subcommand or wrong number of arguments for 'CAT'. Try ACL HELP.")},
      {{"ACL", "LOG", "1", "2"}, Err("ERR unknown subcommand or wrong number of arguments*")},
      {{"ACL", "LOG", "x"}, Error(kNotInt)},
      {{"ACL", "GENPASS", "0"},
       Error("ERR ACL GENPASS argument must be the number of bits for the output password, a "
             "positive number up to 4096")},
      {{"ACL", "GENPASS", "4097"}, Err("ERR ACL GENPASS argument must be*")},
      {{"ACL", "GENPASS", "x"}, Error(kNotInt)},
      {{"ACL", "LOAD"}, Err("ERR This Redis instance is not configured to use an ACL file.*")},
      {{"ACL", "SAVE"}, Err("ERR This Redis instance is not configured to use an ACL file.*")},
      {{"ACL", "HELP"}, Any()},
  });
}

TEST_F(AclTest, PubsubDefaultAndCommandInfo) {
  RunTable({
      {{"CONFIG", "SET", "acl-pubsub-default", "allchannels"}, Ok()},
      {{"ACL", "SETUSER", "alice", "on", "(~x +get)"}, Ok()},
      {{"ACL", "LIST"}, Any()},
      {{"ACL", "SETUSER", "alice", "reset"}, Ok()},
      {{"ACL", "GETUSER", "alice"}, Any()},
      {{"CONFIG", "SET", "acl-pubsub-default", "resetchannels"}, Ok()},
      {{"ACL", "SETUSER", "bob", "on"}, Ok()},
      {{"ACL", "LIST"}, Any()},
      {{"CONFIG", "GET", "acl*"}, Any(), Diff::kUnordered},
      {{"COMMAND", "INFO", "acl|setuser", "acl|getuser", "acl|deluser", "acl|list", "acl|users",
        "acl|cat", "acl|whoami", "acl|log", "acl|dryrun", "acl|genpass", "acl|load", "acl|save",
        "acl|help", "auth", "hello"},
       Any()},
  });
}

TEST_F(AclTest, CatAndGenPass) {
  RunTable({
      {{"ACL", "CAT"}, Any(), Diff::kSkip, "vessel adds its modules' categories: see below"},
      {{"ACL", "CAT", "hash"}, Any(), Diff::kSkip, "vessel has Redis 7.4's field expiry"},
      {{"ACL", "CAT", "set"}, Any(), Diff::kSkip, "Redis lists SORT and SORT_RO"},
      {{"ACL", "CAT", "LIST"}, Any(), Diff::kSkip, "Redis lists SORT and SORT_RO"},
      {{"ACL", "CAT", "transaction"}, Any(), Diff::kUnordered},
      {{"ACL", "CAT", "connection"}, Any(), Diff::kSkip, "subset: see below"},
  });
  // Redis's categories in Redis's order, then those of the modules, in loading order.
  RespClient v = Servers::Get().Vessel(), r = Servers::Get().Redis();
  const Strings redis_categories = {
      "keyspace", "read",   "write",       "set",       "sortedset",  "list",        "hash",
      "string",   "bitmap", "hyperloglog", "geo",       "stream",     "pubsub",      "admin",
      "fast",     "slow",   "blocking",    "dangerous", "connection", "transaction", "scripting"};
  auto names = [](const Reply& reply) {
    Strings out;
    for (const Reply& c : reply.elems) out.push_back(c.str);
    return out;
  };
  EXPECT_EQ(names(v("ACL", "CAT")), Cat(redis_categories, {"vectors", "multi_index", "deque",
                                                           "omap", "bag", "multimap", "capped"}));
  EXPECT_EQ(names(r("ACL", "CAT")), redis_categories);
  // Every command Vessel lists in a category is in Redis's list too (Vessel lacks a few
  // commands, and has hash field expiry from Redis 7.4).
  for (const char* cat :
       {"set", "list", "string", "bitmap", "hyperloglog", "keyspace", "read", "write", "admin",
        "dangerous", "fast", "slow", "blocking", "connection", "transaction"}) {
    SCOPED_TRACE(cat);
    const Reply mine = v("ACL", "CAT", cat), theirs = r("ACL", "CAT", cat);
    for (const Reply& name : mine.elems) {
      // Vessel's own families (VEC.*, MI.*) and Redis 7.4's hash field expiry are not Redis 7.0's.
      if (name.str.find('.') != std::string::npos || name.str.starts_with("hexpire") ||
          name.str.starts_with("hpexpire") || name.str.starts_with("httl") ||
          name.str.starts_with("hpttl") || name.str.starts_with("hpersist") ||
          name.str.starts_with("hgetdel") || name.str.starts_with("hgetex") ||
          name.str.starts_with("hsetex") || name.str == "client|no-touch" ||
          name.str == "client|setinfo")
        continue;
      bool found = false;
      for (const Reply& other : theirs.elems) found |= other.str == name.str;
      EXPECT_TRUE(found) << name.str << " is not in Redis's @" << cat;
    }
  }
  for (bool vessel : {true, false}) {
    RespClient c = Connect(vessel);
    EXPECT_EQ(c("ACL", "GENPASS").str.size(), 64u);
    EXPECT_EQ(c("ACL", "GENPASS", "1").str.size(), 1u);
    EXPECT_EQ(c("ACL", "GENPASS", "5").str.size(), 2u);
    EXPECT_EQ(c("ACL", "GENPASS", "4096").str.size(), 1024u);
    EXPECT_NE(c("ACL", "GENPASS").str, c("ACL", "GENPASS").str);
    const std::string hex = c("ACL", "GENPASS", "128").str;
    EXPECT_EQ(hex.find_first_not_of("0123456789abcdef"), std::string::npos) << hex;
    // Every command listed in @hash is one Vessel has and Redis 7.0 puts in @hash.
    const Reply mine = c("ACL", "CAT", "hash");
    EXPECT_GT(mine.elems.size(), 10u);
  }
}

// A module's commands outside Redis's categories belong to the module's own category (@vectors;
// @capped of a third-party module, which CAPPED.PUSH also declares beside @list): ACL CAT lists
// it, rules grant and revoke it, and users are described with it. Redis 7.0 has no module
// categories (7.2's modules add theirs), so this runs on vessel only.
TEST_F(AclTest, ModuleCategories) {
  RespClient c = Servers::Get().Vessel();
  Strings vec_commands;
  for (const Reply& n : c("ACL", "CAT", "vectors").elems) {
    EXPECT_TRUE(n.str.starts_with("vec.")) << n.str;
    vec_commands.push_back(n.str);
  }
  EXPECT_GT(vec_commands.size(), 10u);
  Strings mi_commands;
  for (const Reply& n : c("ACL", "CAT", "MULTI_INDEX").elems) mi_commands.push_back(n.str);
  EXPECT_FALSE(mi_commands.empty());
  RunVesselTable({
      {{"ACL", "CAT", "capped"}, UnorderedBulkArr({"capped.len", "capped.push"})},
      {{"COMMAND", "INFO", "capped.push"}, Any()},
      {{"COMMAND", "LIST", "FILTERBY", "ACLCAT", "capped"},
       UnorderedBulkArr({"capped.len", "capped.push"})},
      {{"ACL", "SETUSER", "tmp", "on", "nopass", "~*", "-@all", "+@vectors", "+@capped"}, Ok()},
      {{"ACL", "SETUSER", "carol", "on", "nopass", "~*", "+@all", "-@VECTORS", "-@multi_index"},
       Ok()},
      {{"ACL", "SETUSER", "dave", "on", "nopass", "~*", "-@all", "+@list"}, Ok()},
      {{"ACL", "SETUSER", "bob", "+@nosuch"},
       Error("ERR Error in ACL SETUSER modifier '+@nosuch': Unknown command or category name in "
             "ACL")},
      {{"ACL", "DRYRUN", "tmp", "VEC.PUSH", "v", "1"}, Ok()},
      {{"ACL", "DRYRUN", "tmp", "CAPPED.LEN"}, Ok()},
      {{"ACL", "DRYRUN", "tmp", "GET", "x"},
       Bulk("This user has no permissions to run the 'get' command")},
      {{"ACL", "DRYRUN", "carol", "VEC.LEN", "v"},
       Bulk("This user has no permissions to run the 'vec.len' command")},
      {{"ACL", "DRYRUN", "carol", "CAPPED.LEN"}, Ok()},
      {{"ACL", "DRYRUN", "dave", "CAPPED.PUSH", "k", "v"}, Ok()},
      {{"ACL", "DRYRUN", "dave", "CAPPED.LEN"},
       Bulk("This user has no permissions to run the 'capped.len' command")},
  });
  // COMMAND INFO shows the categories the rules use, in the table's order.
  const Reply info = c("COMMAND", "INFO", "capped.push");
  ASSERT_EQ(info.elems.size(), 1u);
  Strings cats;
  for (const Reply& cat : info.elems[0].elems[6].elems) cats.push_back(cat.str);
  EXPECT_EQ(cats, (Strings{"@write", "@list", "@slow", "@capped"}));
  // Users are described with the module categories, and work as described.
  auto commands_of = [&](const char* user) {
    const Reply u = c("ACL", "GETUSER", user);
    for (size_t i = 0; i + 1 < u.elems.size(); i += 2)
      if (u.elems[i].str == "commands") return u.elems[i + 1].str;
    return std::string("?");
  };
  EXPECT_EQ(commands_of("tmp"), "-@all +@vectors +@capped");
  EXPECT_EQ(commands_of("carol"), "+@all -@vectors -@multi_index");
  bool listed = false;
  for (const Reply& line : c("ACL", "LIST").elems)
    listed |= line.str == "user tmp on nopass ~* resetchannels -@all +@vectors +@capped";
  EXPECT_TRUE(listed) << c("ACL", "LIST").ToString();
  RespClient t = Servers::Get().Vessel();
  ASSERT_EQ(t("AUTH", "tmp", "x").str, "OK");
  EXPECT_EQ(t("VEC.PUSH", "v", "1").type, Reply::Type::kInt);
  EXPECT_EQ(t("CAPPED.LEN").str, "OK");
  EXPECT_EQ(t("GET", "x").str, "NOPERM this user has no permissions to run the 'get' command");
  ASSERT_EQ(t("AUTH", "carol", "x").str, "OK");
  EXPECT_EQ(t("VEC.LEN", "v").str,
            "NOPERM this user has no permissions to run the 'vec.len' command");
  EXPECT_EQ(t("CAPPED.PUSH", "k", "v").str, "OK");
}

// ---- permissions ----

// Creates the same users on a server (as default).
void CreateUsers(RespClient& c) {
  c("ACL", "SETUSER", "alice", "on", ">alicepw", "~app:*", "+@read", "+@write", "-del",
    "+client|id", "+select|0");
  c("ACL", "SETUSER", "ro", "on", ">ropw", "%R~*", "%W~scratch:*", "+@all");
  c("ACL", "SETUSER", "sel", "on", "nopass", "~a:*", "+get", "(~b:* +set +get)", "(%R~c:* +@read)");
  c("ACL", "SETUSER", "bob", "on", ">bobpw", "allkeys", "-@all", "+config|get", "+acl|whoami",
    "+ping");
}

// Key patterns reach the container modules' keys through their key specs: every key of a
// command is checked, reads against read patterns and writes against write patterns.
TEST_F(AclTest, ContainerKeysFollowKeyPatterns) {
  auto denied = [](const char* key) {
    return Bulk(std::string("This user has no permissions to access the '") + key + "' key");
  };
  RunVesselTable({
      {{"ACL", "SETUSER", "kim", "on", "nopass", "~app:*", "%R~ro:*", "+@all"}, Ok()},
      {{"ACL", "DRYRUN", "kim", "DEQ.PUSHBACK", "app:1", "x"}, Ok()},
      {{"ACL", "DRYRUN", "kim", "DEQ.PUSHBACK", "other", "x"}, denied("other")},
      {{"ACL", "DRYRUN", "kim", "DEQ.BPOPFRONT", "app:1", "other", "0"}, denied("other")},
      {{"ACL", "DRYRUN", "kim", "DEQ.INDEX", "ro:1", "0"}, Ok()},
      {{"ACL", "DRYRUN", "kim", "DEQ.POPFRONT", "ro:1"}, denied("ro:1")},
      {{"ACL", "DRYRUN", "kim", "OMAP.SET", "app:1", "f", "v"}, Ok()},
      {{"ACL", "DRYRUN", "kim", "OMAP.GET", "ro:1", "f"}, Ok()},
      {{"ACL", "DRYRUN", "kim", "OMAP.SET", "ro:1", "f", "v"}, denied("ro:1")},
      {{"ACL", "DRYRUN", "kim", "BAG.TOP", "ro:1", "3"}, Ok()},
      {{"ACL", "DRYRUN", "kim", "BAG.INCRBY", "ro:1", "m", "1"}, denied("ro:1")},
      {{"ACL", "DRYRUN", "kim", "MMAP.RANGE", "ro:1", "-", "+"}, Ok()},
      {{"ACL", "DRYRUN", "kim", "MMAP.ADD", "other", "f", "v"}, denied("other")},
      {{"ACL", "DELUSER", "kim"}, Int(1)},
  });
}

TEST_F(AclTest, PermissionMatrix) {
  SameOnBoth([](bool vessel, std::vector<Reply>& log) {
    RespClient admin = Connect(vessel);
    CreateUsers(admin);
    admin("SET", "app:1", "v");
    admin("SET", "other", "v");
    admin("SET", "c:1", "v");
    RespClient c = Connect(vessel);
    auto run = [&](const Strings& cmd) { log.push_back(c.Cmd(cmd)); };
    run({"AUTH", "alice", "alicepw"});
    run({"ACL", "WHOAMI"});  // not allowed: @slow admin-less but not in @read/@write
    run({"GET", "app:1"});
    run({"GET", "other"});
    run({"SET", "app:2", "x"});
    run({"SET", "other", "x"});
    run({"MSET", "app:3", "1", "other", "2"});
    run({"DEL", "app:1"});
    run({"UNLINK", "app:1"});
    log.push_back(Reply{Reply::Type::kStatus, c("CLIENT", "ID").is_error() ? "denied" : "ok"});
    run({"CLIENT", "LIST"});
    run({"SELECT", "0"});
    run({"SELECT", "1"});
    Reply keys = c("KEYS", "*");
    std::sort(keys.elems.begin(), keys.elems.end(),
              [](const Reply& a, const Reply& b) { return a.str < b.str; });
    log.push_back(keys);
    run({"FLUSHALL"});
    run({"EXISTS", "other"});  // RO without ACCESS still needs a matching pattern
    run({"COPY", "app:1", "other"});
    run({"NOSUCHCMD"});
    run({"GET"});
    run({"AUTH", "ro", "ropw"});
    run({"GET", "other"});
    run({"SET", "other", "y"});
    run({"SET", "scratch:1", "y"});     // %W~scratch:* only: SET needs write (OW + UPDATE)
    run({"GET", "scratch:1"});          // readable through %R~*
    run({"APPEND", "scratch:1", "z"});  // RW: read and write on one pattern? no: R from *, W here
    run({"GETDEL", "other"});
    run({"LPUSH", "scratch:l", "a"});
    run({"RPOPLPUSH", "other", "scratch:l"});
    run({"EXISTS", "nosuch"});
    run({"DEL", "scratch:1"});
    run({"AUTH", "sel", "any"});
    run({"GET", "a:1"});
    run({"SET", "a:1", "x"});  // only through a selector for b:*
    run({"SET", "b:1", "x"});
    run({"GET", "b:1"});
    run({"GET", "c:1"});
    run({"STRLEN", "c:1"});
    run({"SET", "c:1", "x"});
    run({"MGET", "a:1", "b:1"});  // no single selector has both keys
    run({"DEL", "a:1"});
    run({"AUTH", "bob", "bobpw"});
    run({"CONFIG", "GET", "maxmemory"});
    run({"CONFIG", "SET", "maxmemory", "0"});
    run({"CONFIG", "RESETSTAT"});
    run({"ACL", "WHOAMI"});
    run({"ACL", "LIST"});
    run({"PING"});
    run({"GET", "x"});
    run({"AUTH", "bob", "wrong"});
    run({"ACL", "WHOAMI"});  // still bob
  });
}

// SORT's BY and GET patterns read keys no key spec names: Redis 7.0 refuses them (BY only when it
// names keys, GET always, even "#") unless one selector allows SORT and reaches every key with
// read access, and reports the refusal in argument order with the other option errors.
TEST_F(AclTest, SortPatternsNeedEveryKey) {
  SameOnBoth([](bool vessel, std::vector<Reply>& log) {
    RespClient admin = Connect(vessel);
    admin("RPUSH", "app:list", "2", "1");
    admin("SET", "secret:1", "s1");
    admin("SET", "app:w_1", "5");
    admin("SET", "app:w_2", "4");
    admin("ACL", "SETUSER", "alice", "on", "nopass", "~app:*", "+@all");
    admin("ACL", "SETUSER", "ro", "on", "nopass", "%R~*", "~app:*", "+@all");
    admin("ACL", "SETUSER", "bob", "on", "nopass", "%W~*", "~app:*", "+@all");
    admin("ACL", "SETUSER", "carol", "on", "nopass", "~app:*", "+@all", "(~* -sort -sort_ro)");
    admin("ACL", "SETUSER", "dave", "on", "nopass", "~app:*", "+@all", "(~* +sort)");
    admin("ACL", "SETUSER", "sel", "on", "nopass", "~app:*", "~s*", "+@all");
    RespClient c = Connect(vessel);
    auto run = [&](const Strings& cmd) { log.push_back(c.Cmd(cmd)); };
    for (const char* user : {"alice", "ro", "bob", "carol", "dave", "sel"}) {
      run({"AUTH", user, "x"});
      run({"SORT", "app:list"});
      run({"SORT", "app:list", "BY", "nosort"});
      run({"SORT", "app:list", "BY", "x->y"});
      run({"SORT", "app:list", "BY", "app:w_*"});
      run({"SORT", "app:list", "BY", "nosort", "GET", "secret:*"});
      run({"SORT", "app:list", "GET", "#"});
      run({"SORT_RO", "app:list", "GET", "#"});
      run({"SORT_RO", "app:list", "BY", "app:w_*"});
      run({"SORT", "app:list", "LIMIT", "x", "y", "GET", "#"});
      run({"SORT", "app:list", "GET", "#", "LIMIT", "x", "y"});
      run({"SORT", "app:list", "BY", "nosort", "STORE", "secret:x"});
      run({"SORT", "app:list", "ALPHA", "BY", "app:w_*", "GET", "#", "STORE", "app:out"});
      run({"LRANGE", "app:out", "0", "-1"});
      // A script's SORT runs with the caller's user (whether vessel then runs a script that
      // reads undeclared keys is another matter: see host/scripting).
      const Reply script =
          c("EVAL", "return redis.call('SORT', KEYS[1], 'GET', 'secret:*')", "1", "app:list");
      log.push_back(Reply{Reply::Type::kStatus,
                          script.str.find("GET option of SORT denied") != std::string::npos
                              ? "denied"
                              : "not denied"});
    }
    c("AUTH", "default", "x");
    // The option refusals are errors, not ACL denials: the log holds the STORE key denials only.
    for (const Reply& entry : c("ACL", "LOG").elems) {
      Reply fields{Reply::Type::kArray};
      for (size_t i = 0; i + 1 < entry.elems.size(); i += 2) {
        const std::string& k = entry.elems[i].str;
        if (k == "reason" || k == "object" || k == "username" || k == "count")
          fields.elems.push_back(entry.elems[i + 1]);
      }
      log.push_back(fields);
    }
    run({"EXISTS", "secret:x"});
  });
}

TEST_F(AclTest, DryRun) {
  for (bool vessel : {true, false}) {
    RespClient c = Connect(vessel);
    CreateUsers(c);
  }
  RunTable({
      {{"ACL", "DRYRUN", "alice", "GET", "app:1"}, Ok()},
      {{"ACL", "DRYRUN", "alice", "GET", "other"},
       Bulk("This user has no permissions to access the 'other' key")},
      {{"ACL", "DRYRUN", "alice", "MSET", "app:1", "1", "x", "2"},
       Bulk("This user has no permissions to access the 'x' key")},
      {{"ACL", "DRYRUN", "alice", "DEL", "app:1"},
       Bulk("This user has no permissions to run the 'del' command")},
      {{"ACL", "DRYRUN", "alice", "CLIENT", "KILL", "1.2.3.4:5"},
       Bulk("This user has no permissions to run the 'client|kill' command")},
      {{"ACL", "DRYRUN", "alice", "CLIENT", "ID"}, Ok()},
      {{"ACL", "DRYRUN", "alice", "SELECT", "0"}, Ok()},
      {{"ACL", "DRYRUN", "alice", "select", "5"},
       Bulk("This user has no permissions to run the 'select' command")},
      {{"ACL", "DRYRUN", "ro", "SET", "k", "v"},
       Bulk("This user has no permissions to access the 'k' key")},
      {{"ACL", "DRYRUN", "ro", "SET", "scratch:k", "v"}, Ok()},
      {{"ACL", "DRYRUN", "sel", "SET", "b:1", "v"}, Ok()},
      {{"ACL", "DRYRUN", "sel", "SET", "a:1", "v"},
       Bulk("This user has no permissions to access the 'a:1' key")},
      {{"ACL", "DRYRUN", "sel", "LLEN", "c:1"}, Ok()},
      {{"ACL", "DRYRUN", "sel", "LPUSH", "c:1", "x"},
       Bulk("This user has no permissions to run the 'lpush' command")},
      {{"ACL", "DRYRUN", "nosuch", "GET", "x"}, Error("ERR User 'nosuch' not found")},
      {{"ACL", "DRYRUN", "alice", "NOSUCH", "x"}, Error("ERR Command 'NOSUCH' not found")},
      {{"ACL", "DRYRUN", "alice", "GET"}, Error("ERR wrong number of arguments for 'get' command")},
      {{"ACL", "DRYRUN", "alice", "CONFIG"},
       Error("ERR wrong number of arguments for 'config' command")},
      {{"ACL", "DRYRUN", "alice", "CONFIG", "NOSUCH"}, Error("ERR Command 'CONFIG' not found")},
      {{"ACL", "DRYRUN", "bob", "CONFIG", "GET", "x"}, Ok()},
      {{"ACL", "DRYRUN", "bob", "AUTH", "x"}, Ok()},  // no-auth commands are always allowed
  });
}

// ACL LOG: the same entries on both; times and client details checked by property.
TEST_F(AclTest, LogEntries) {
  auto normalized = [](const Reply& log) {
    Reply out = log;
    for (Reply& entry : out.elems) {
      for (size_t i = 0; i + 1 < entry.elems.size(); i += 2) {
        Reply& v = entry.elems[i + 1];
        if (entry.elems[i].str == "age-seconds") {
          EXPECT_GE(std::stod(v.str), 0.0);
          EXPECT_LT(std::stod(v.str), 60.0);
          v.str = "age";
        } else if (entry.elems[i].str == "client-info") {
          EXPECT_NE(v.str.find(" user="), std::string::npos) << v.str;
          EXPECT_NE(v.str.find("id="), std::string::npos) << v.str;
          v.str = v.str.substr(v.str.find(" cmd="));
          v.str = v.str.substr(0, v.str.find(" redir="));  // "cmd=get user=alice"
        }
      }
    }
    return out;
  };
  SameOnBoth([&](bool vessel, std::vector<Reply>& log) {
    RespClient admin = Connect(vessel);
    CreateUsers(admin);
    RespClient c = Connect(vessel);
    log.push_back(c("AUTH", "alice", "alicepw"));
    log.push_back(c("GET", "other"));
    log.push_back(c("GET", "other"));  // grouped with the one before: count 2
    log.push_back(c("DEL", "app:1"));
    log.push_back(c("CLIENT", "KILL", "ID", "1"));
    log.push_back(c("AUTH", "alice", "wrong"));
    log.push_back(c("auth", "nosuchuser", "x"));
    log.push_back(c("HELLO", "2", "AUTH", "alice", "bad"));
    log.push_back(c("MULTI"));
    log.push_back(c("SET", "zzz", "1"));
    log.push_back(c("DISCARD"));
    log.push_back(normalized(admin("ACL", "LOG")));
    log.push_back(normalized(admin("ACL", "LOG", "2")));
    log.push_back(admin("ACL", "LOG", "-1"));
    log.push_back(admin("ACL", "LOG", "RESET"));
    log.push_back(admin("ACL", "LOG"));
    admin("HELLO", "3");
    log.push_back(c("GET", "x"));
    log.push_back(normalized(admin("ACL", "LOG")));
  });
}

TEST_F(AclTest, LogMaxLen) {
  SameOnBoth([&](bool vessel, std::vector<Reply>& log) {
    RespClient admin = Connect(vessel);
    admin("CONFIG", "SET", "acllog-max-len", "3");
    admin("ACL", "SETUSER", "alice", "on", "nopass", "~k", "+get");
    RespClient c = Connect(vessel);
    c("AUTH", "alice", "x");
    for (int i = 0; i < 6; ++i) c("GET", "key" + std::to_string(i));
    const Reply entries = admin("ACL", "LOG");
    log.push_back(Reply{Reply::Type::kInt, "", static_cast<int64_t>(entries.elems.size()), {}});
    for (const Reply& e : entries.elems) log.push_back(e.elems[7]);  // the object
    admin("CONFIG", "SET", "acllog-max-len", "128");
  });
}

// Permissions that change apply to connected clients at once; DELUSER closes their connections.
// Revoking a channel or pattern a client of the user is subscribed to closes that client (Redis's
// ACLKillPubsubClientsIfNeeded); subscribers whose subscriptions stay allowed keep listening.
TEST_F(AclTest, RevokedChannelsCloseSubscribers) {
  SameOnBoth([](bool vessel, std::vector<Reply>& log) {
    RespClient admin = Connect(vessel);
    admin("ACL", "SETUSER", "bob", "reset", "on", ">pw", "+@all", "~*", "&chan*");
    RespClient sub = Connect(vessel), psub = Connect(vessel), other = Connect(vessel);
    for (RespClient* c : {&sub, &psub, &other}) log.push_back((*c)("AUTH", "bob", "pw"));
    log.push_back(sub("SUBSCRIBE", "chan1"));
    log.push_back(psub("PSUBSCRIBE", "chan*"));
    log.push_back(other("SSUBSCRIBE", "chan2"));
    // chan* is narrowed to chan1 and chan2: the pattern subscriber loses its pattern.
    log.push_back(admin("ACL", "SETUSER", "bob", "resetchannels", "&chan1", "&chan2"));
    EXPECT_TRUE(psub.ReadEof());
    log.push_back(admin("PUBLISH", "chan1", "hello"));
    log.push_back(sub.Read());
    log.push_back(sub("PING"));
    log.push_back(other("PING"));
    log.push_back(admin("ACL", "SETUSER", "bob", "resetchannels", "&chan2"));
    EXPECT_TRUE(sub.ReadEof());
    log.push_back(other("PING"));
    admin("ACL", "DELUSER", "bob");
  });
}

TEST_F(AclTest, ChangesApplyToConnectedClients) {
  SameOnBoth([](bool vessel, std::vector<Reply>& log) {
    RespClient admin = Connect(vessel);
    admin("ACL", "SETUSER", "alice", "on", ">pw", "~*", "+get", "+set");
    RespClient c = Connect(vessel);
    RespClient other = Connect(vessel);
    log.push_back(c("AUTH", "alice", "pw"));
    log.push_back(other("AUTH", "alice", "pw"));
    log.push_back(c("SET", "k", "v"));
    log.push_back(admin("ACL", "SETUSER", "alice", "-set"));
    log.push_back(c("SET", "k", "v"));
    log.push_back(c("GET", "k"));
    log.push_back(admin("ACL", "SETUSER", "alice", "resetkeys", "~j*"));
    log.push_back(c("GET", "k"));
    // MULTI: queued while allowed, refused at EXEC once revoked.
    log.push_back(admin("ACL", "SETUSER", "alice", "~*", "+set", "+multi", "+exec"));
    log.push_back(c("MULTI"));
    log.push_back(c("SET", "k", "1"));
    log.push_back(c("GET", "k"));
    log.push_back(c("SET", "other", "1"));
    log.push_back(admin("ACL", "SETUSER", "alice", "-set", "resetkeys", "~k"));
    log.push_back(c("EXEC"));
    // A refusal at queue time aborts the transaction.
    log.push_back(c("MULTI"));
    log.push_back(c("SET", "k", "1"));
    log.push_back(c("EXEC"));
    // Deleting the user closes its connections; the admin stays.
    log.push_back(admin("ACL", "DELUSER", "alice"));
    EXPECT_TRUE(c.ReadEof());
    EXPECT_TRUE(other.ReadEof());
    log.push_back(admin("PING"));
    // Re-created under the same name, a new login works.
    admin("ACL", "SETUSER", "alice", "on", ">pw", "~*", "+get");
    RespClient again = Connect(vessel);
    log.push_back(again("AUTH", "alice", "pw"));
    log.push_back(again("GET", "k"));
    // A user deleting itself gets its reply, then the connection closes.
    admin("ACL", "SETUSER", "alice", "+acl");
    log.push_back(again("ACL", "DELUSER", "alice"));
    EXPECT_TRUE(again.ReadEof());
  });
}

// ---- authentication ----

// HELLO's reply names the server and its modules: keep the error, or the protocol it selected.
Reply HelloResult(const Reply& r) {
  if (r.is_error()) return r;
  for (size_t i = 0; i + 1 < r.elems.size(); i += 2)
    if (r.elems[i].str == "proto") return r.elems[i + 1];
  return r;
}

TEST_F(AclTest, AuthFlowsResp2AndResp3) {
  SameOnBoth([](bool vessel, std::vector<Reply>& log) {
    RespClient admin = Connect(vessel);
    RespClient c = Connect(vessel);
    log.push_back(c("AUTH", "x"));  // no password configured
    log.push_back(c("AUTH", "default", "anything"));
    log.push_back(c("AUTH", "a", "b", "c"));
    log.push_back(admin("CONFIG", "SET", "requirepass", "secret"));
    log.push_back(admin("CONFIG", "GET", "requirepass"));
    log.push_back(c("PING"));  // already authenticated connections stay so
    RespClient n = Connect(vessel);
    log.push_back(n("PING"));
    log.push_back(n("GET", "x"));
    log.push_back(n("NOSUCH"));  // unknown commands are reported before NOAUTH
    log.push_back(n("GET"));     // and so are arity errors
    log.push_back(n("AUTH", "wrong"));
    log.push_back(n("AUTH", "default", "wrong"));
    log.push_back(HelloResult(n("HELLO", "3")));
    log.push_back(HelloResult(n("HELLO", "3", "AUTH", "default", "wrong")));
    log.push_back(n("AUTH", "secret"));
    log.push_back(n("PING"));
    log.push_back(n("AUTH", "wrong"));  // a failed re-authentication keeps the user
    log.push_back(n("PING"));
    log.push_back(n("RESET"));  // back to unauthenticated
    log.push_back(n("PING"));
    log.push_back(HelloResult(n("HELLO", "3", "AUTH", "default", "secret", "SETNAME", "me")));
    log.push_back(n("PING"));
    log.push_back(n("CLIENT", "GETNAME"));
    log.push_back(n("ACL", "WHOAMI"));
    log.push_back(admin("ACL", "SETUSER", "alice", "on", ">apw", "+@all", "~*"));
    log.push_back(n("AUTH", "alice", "apw"));
    log.push_back(n("ACL", "WHOAMI"));
    log.push_back(HelloResult(n("HELLO", "2", "AUTH", "default", "secret")));
    log.push_back(n("ACL", "WHOAMI"));
    log.push_back(admin("ACL", "SETUSER", "alice", "off"));
    log.push_back(n("AUTH", "alice", "apw"));  // disabled users cannot log in
    log.push_back(admin("ACL", "SETUSER", "alice", "on", "nopass"));
    log.push_back(n("AUTH", "alice", "whatever"));
    log.push_back(admin("CONFIG", "SET", "requirepass", ""));
    RespClient m = Connect(vessel);
    log.push_back(m("GET", "x"));
    log.push_back(m("AUTH", "x"));
  });
}

TEST_F(AclTest, DefaultUserPasswordThroughAcl) {
  SameOnBoth([](bool vessel, std::vector<Reply>& log) {
    RespClient admin = Connect(vessel);
    log.push_back(admin("ACL", "SETUSER", "default", ">pw1", ">pw2"));
    RespClient n = Connect(vessel);
    log.push_back(n("GET", "x"));
    log.push_back(n("AUTH", "pw2"));
    log.push_back(n("GET", "x"));
    log.push_back(admin("ACL", "SETUSER", "default", "off", "nopass"));
    RespClient m = Connect(vessel);
    log.push_back(m("GET", "x"));  // off: even nopass needs an AUTH, which fails
    log.push_back(m("AUTH", "x"));
    log.push_back(m("AUTH", "default", "x"));
    log.push_back(admin("ACL", "SETUSER", "default", "on"));
    log.push_back(m("GET", "x"));
  });
}

TEST_F(AclTest, UnauthenticatedLimits) {
  SameOnBoth([](bool vessel, std::vector<Reply>& log) {
    RespClient admin = Connect(vessel);
    admin("CONFIG", "SET", "requirepass", "pw");
    RespClient n = Connect(vessel);
    log.push_back(n.Cmd(Strings(11, "x")));
    EXPECT_TRUE(n.ReadEof());
    RespClient m = Connect(vessel);
    log.push_back(m.Cmd({"ECHO", std::string(16385, 'a')}));
    EXPECT_TRUE(m.ReadEof());
    RespClient ok = Connect(vessel);
    log.push_back(ok.Cmd({"AUTH", "pw"}));
    log.push_back(ok.Cmd(Strings(11, "x")));
    log.push_back(ok.Cmd({"STRLEN", std::string(16385, 'a')}));
  });
}

TEST_F(AclTest, ClientListUserAndKillUser) {
  SameOnBoth([](bool vessel, std::vector<Reply>& log) {
    RespClient admin = Connect(vessel);
    admin("ACL", "SETUSER", "alice", "on", "nopass", "+@all", "~*");
    RespClient a1 = Connect(vessel), a2 = Connect(vessel);
    a1("AUTH", "alice", "x");
    a2("AUTH", "alice", "x");
    const Reply info = a1("CLIENT", "INFO");
    EXPECT_NE(info.str.find(" user=alice "), std::string::npos) << info.str;
    const Reply list = admin("CLIENT", "LIST");
    size_t alices = 0;
    for (size_t p = 0; (p = list.str.find(" user=alice ", p)) != std::string::npos; ++p) ++alices;
    EXPECT_EQ(alices, 2u);
    log.push_back(admin("CLIENT", "KILL", "USER", "nosuch"));
    log.push_back(admin("CLIENT", "KILL", "USER", "alice"));
    EXPECT_TRUE(a1.ReadEof());
    EXPECT_TRUE(a2.ReadEof());
    log.push_back(admin("CLIENT", "KILL", "USER", "alice"));
    log.push_back(admin("CLIENT", "KILL", "USER", "default", "SKIPME", "yes"));
  });
}

// Secrets never reach SLOWLOG or MONITOR.
TEST_F(AclTest, SecretsAreRedacted) {
  SameOnBoth([](bool vessel, std::vector<Reply>& log) {
    RespClient admin = Connect(vessel);
    RespClient monitor = Connect(vessel);
    monitor("MONITOR");
    admin("CONFIG", "SET", "slowlog-log-slower-than", "0");
    admin("SLOWLOG", "RESET");
    admin("AUTH", "default", "secret1");
    admin("HELLO", "2", "AUTH", "default", "secret2", "SETNAME", "n");
    admin("ACL", "SETUSER", "alice", "on", ">secret3");
    admin("CONFIG", "SET", "acllog-max-len", "100", "requirepass", "");
    const Reply slow = admin("SLOWLOG", "GET", "10");
    admin("CONFIG", "SET", "slowlog-log-slower-than", "10000");
    admin("CONFIG", "SET", "acllog-max-len", "128");
    for (const Reply& e : slow.elems) log.push_back(e.elems[3]);  // the arguments
    monitor.SetTimeout(300);
    int lines = 0;
    for (Reply line = monitor.Read(); line.type == Reply::Type::kStatus; line = monitor.Read()) {
      log.push_back(Reply{Reply::Type::kStatus, line.str.substr(line.str.find(']') + 1)});
      ++lines;
    }
    EXPECT_GE(lines, 2);  // AUTH and HELLO (admin commands are not shown)
  });
}

// ---- protected mode ----

// A connection from 127.0.0.2: on the loopback interface, but not the address Redis counts as
// local, so protected mode applies to it.
int ConnectFrom(const char* source, int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in src{};
  src.sin_family = AF_INET;
  inet_pton(AF_INET, source, &src.sin_addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof(src)) != 0) return -1;
  sockaddr_in dst{};
  dst.sin_family = AF_INET;
  dst.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &dst.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&dst), sizeof(dst)) != 0) return -1;
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  return fd;
}

// Sends PING and returns everything read until the server closes (or stops answering).
std::string PingFrom(int port) {
  const int fd = ConnectFrom("127.0.0.2", port);
  if (fd < 0) return "connect failed";
  const std::string ping = "*1\r\n$4\r\nPING\r\n";
  (void)!write(fd, ping.data(), ping.size());
  std::string got;
  char buf[4096];
  timeval tv{0, 300000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;) got.append(buf, n);
  close(fd);
  return got;
}

TEST_F(AclTest, ProtectedMode) {
  Servers& s = Servers::Get();
  for (int port : {s.vessel_port(), s.redis_port()}) {
    SCOPED_TRACE(port == s.vessel_port() ? "vessel" : "redis");
    const std::string denied = PingFrom(port);
    EXPECT_EQ(denied.rfind("-DENIED Redis is running in protected mode because protected mode is "
                           "enabled and no password is set for the default user.",
                           0),
              0u)
        << denied;
    EXPECT_EQ(denied.size(), 1067u) << denied;  // the whole text, then the connection closes
    RespClient admin("127.0.0.1", port);
    admin("CONFIG", "SET", "requirepass", "pw");
    admin("AUTH", "pw");
    EXPECT_EQ(PingFrom(port), "-NOAUTH Authentication required.\r\n");
    admin("CONFIG", "SET", "requirepass", "");
    admin("CONFIG", "SET", "protected-mode", "no");
    EXPECT_EQ(PingFrom(port), "+PONG\r\n");
    admin("CONFIG", "SET", "protected-mode", "yes");
  }
}

}  // namespace
}  // namespace vessel::test
