// Scenarios run the same on vessel and redis-server (scene.h).
#include "tests/support/scene.h"

#include <thread>

#include "gtest/gtest.h"

namespace vessel::test {

int64_t MsSince(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

Scene::Scene(bool vessel) : vessel_(vessel), admin_(Connect()) {}

RespClient& Scene::C(int i) {
  auto it = clients_.find(i);
  if (it == clients_.end()) it = clients_.emplace(i, Connect()).first;
  return it->second;
}

Reply Scene::Quiet(RespClient& c, int ms) {
  c.SetTimeout(ms);
  Reply r = c.Read();
  c.SetTimeout(10000);
  return r;
}

int64_t Scene::Blocked() {
  const Reply info = admin_("INFO", "clients");
  const std::string key = "blocked_clients:";
  const size_t at = info.str.find(key);
  return at == std::string::npos ? -1 : std::stoll(info.str.substr(at + key.size()));
}

void Scene::WaitBlocked(int64_t n) {
  const auto start = Clock::now();
  int64_t now = Blocked();
  while (now != n && MsSince(start) < 5000) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    now = Blocked();
  }
  if (now != n) {
    ADD_FAILURE() << (vessel_ ? "vessel" : "redis") << ": " << now << " blocked clients, want "
                  << n;
  }
}

void SameOnBoth(const std::function<void(Scene&)>& fn) {
  std::vector<Scene::Step> logs[2];
  for (int i = 0; i < 2; ++i) {
    Servers::Get().Reset();
    Scene run(i == 0);
    fn(run);
    logs[i] = run.log();
    run.WaitBlocked(0);  // no client left blocked behind
  }
  ASSERT_EQ(logs[0].size(), logs[1].size());
  for (size_t i = 0; i < logs[0].size(); ++i) {
    const Scene::Step& v = logs[0][i];
    const Scene::Step& r = logs[1][i];
    ASSERT_EQ(v.label, r.label);
    if (!v.compare) continue;
    EXPECT_EQ(v.reply, r.reply) << "step " << i << " (" << v.label
                                << ")\n  vessel: " << v.reply.ToString()
                                << "\n  redis:  " << r.reply.ToString();
  }
}

Reply BulkArray(std::vector<std::string> v) {
  Reply r;
  r.type = Reply::Type::kArray;
  for (auto& s : v) {
    Reply e;
    e.type = Reply::Type::kBulk;
    e.str = std::move(s);
    r.elems.push_back(std::move(e));
  }
  return r;
}

}  // namespace vessel::test
