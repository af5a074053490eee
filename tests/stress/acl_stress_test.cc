// ACL users change (SETUSER, DELUSER, requirepass) while clients on every worker authenticate
// and run commands: each reply must be the command's own or Redis's NOPERM/WRONGPASS/NOAUTH, a
// deleted user's connections close, and the last rules apply to every client. Runs under
// ThreadSanitizer in CI (the user snapshots are shared by all workers).
#include <atomic>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

#if defined(__SANITIZE_THREAD__)
constexpr int kRounds = 150;
#else
constexpr int kRounds = 1000;
#endif
constexpr int kClients = 6;
constexpr int kUsers = 3;

bool Allowed(const Reply& r) {
  if (!r.is_error()) return true;
  return r.str.starts_with("NOPERM ") || r.str.starts_with("WRONGPASS ") ||
         r.str.starts_with("NOAUTH ");
}

TEST(AclStress, UsersChangeUnderTraffic) {
  Servers::Configure([](config::Config& c) { c.server.threads = 3; });
  Servers& s = Servers::Get();
  RespClient admin = s.Vessel();
  for (int u = 0; u < kUsers; ++u)
    admin("ACL", "SETUSER", "user" + std::to_string(u), "on", ">pw", "~*", "+@all");
  std::atomic<bool> done{false};
  std::atomic<int> ok_replies{0}, denied{0}, reconnects{0};
  std::thread changer([&] {
    RespClient a = s.Vessel();
    std::mt19937 rng(7);
    for (int i = 0; !done.load(); ++i) {
      const std::string user = "user" + std::to_string(rng() % kUsers);
      switch (rng() % 6) {
        case 0:
          EXPECT_EQ(a("ACL", "SETUSER", user, "-set").str, "OK");
          break;
        case 1:
          EXPECT_EQ(a("ACL", "SETUSER", user, "+set", "resetkeys", "~k:1*", "%R~*").str, "OK");
          break;
        case 2:
          a("ACL", "DELUSER", user);
          a("ACL", "SETUSER", user, "on", ">pw", "~*", "+@all");
          break;
        case 3:
          EXPECT_EQ(a("ACL", "SETUSER", user, "(~sel* +get)", "clearselectors").str, "OK");
          break;
        case 4:
          a("ACL", "SETUSER", user, "~*", "+@all");
          break;
        default:
          a("ACL", "LIST");
          a("ACL", "LOG", "RESET");
          break;
      }
    }
  });
  Parallel(kClients, [&](int t) {
    std::mt19937 rng(t);
    RespClient c = s.Vessel();
    const std::string user = "user" + std::to_string(t % kUsers);
    c("AUTH", user, "pw");
    for (int i = 0; i < kRounds; ++i) {
      const std::string key = "k:" + std::to_string(rng() % 20);
      c.Send({"SET", key, "v"});
      c.Send({"GET", key});
      c.Send({"MULTI"});
      c.Send({"INCR", "n:" + std::to_string(t)});
      c.Send({"EXEC"});
      for (int r = 0; r < 5; ++r) {
        const Reply reply = c.Read();
        if (reply.type == Reply::Type::kClosed) {  // its user was deleted: log in again
          reconnects.fetch_add(1);
          c = s.Vessel();
          c("AUTH", user, "pw");
          break;
        }
        EXPECT_TRUE(Allowed(reply) || reply.str.starts_with("EXECABORT")) << reply.ToString();
        (reply.is_error() ? denied : ok_replies).fetch_add(1);
      }
    }
  });
  done = true;
  changer.join();
  // The last rules apply to every client.
  for (int u = 0; u < kUsers; ++u)
    admin("ACL", "SETUSER", "user" + std::to_string(u), "on", ">pw", "~*", "+@all");
  Parallel(kClients, [&](int t) {
    RespClient c = s.Vessel();
    EXPECT_EQ(c("AUTH", "user" + std::to_string(t % kUsers), "pw").str, "OK");
    EXPECT_EQ(c("SET", "final", "1").str, "OK");
  });
  for (int u = 0; u < kUsers; ++u) admin("ACL", "DELUSER", "user" + std::to_string(u));
  EXPECT_GT(ok_replies.load(), 0);
  std::printf("ok=%d denied=%d reconnects=%d\n", ok_replies.load(), denied.load(),
              reconnects.load());
}

}  // namespace
}  // namespace vessel::test
