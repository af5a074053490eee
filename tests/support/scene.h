// Scenarios with several clients that must unfold the same on vessel and on redis-server
// (blocking commands, pub/sub, pauses): numbered clients connected on first use, an admin
// connection, and the log of what the clients received, compared between the two servers.
#ifndef VESSEL_TESTS_SUPPORT_SCENE_H_
#define VESSEL_TESTS_SUPPORT_SCENE_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tests/support/servers.h"

namespace vessel::test {

using Clock = std::chrono::steady_clock;
int64_t MsSince(Clock::time_point t);

// One server's run of a scenario.
class Scene {
 public:
  explicit Scene(bool vessel);

  bool vessel() const { return vessel_; }
  RespClient& C(int i);
  RespClient& admin() { return admin_; }
  RespClient Connect() const { return vessel_ ? Servers::Get().Vessel() : Servers::Get().Redis(); }

  // Records a reply; steps logged with compare = false are a documented difference.
  void Log(std::string label, Reply r, bool compare = true) {
    log_.push_back({std::move(label), std::move(r), compare});
  }
  // Reads a reply that must not come within ms: kClosed (timed out) when the client is still
  // blocked, as it should be.
  Reply Quiet(RespClient& c, int ms = 200);
  int64_t Blocked();
  // Polls until exactly n clients are blocked (5 s at most).
  void WaitBlocked(int64_t n);

  struct Step {
    std::string label;
    Reply reply;
    bool compare;
  };
  const std::vector<Step>& log() const { return log_; }

 private:
  bool vessel_;
  RespClient admin_;
  std::map<int, RespClient> clients_;
  std::vector<Step> log_;
};

// Runs a scenario on both servers (each after FLUSHALL); the logs must be identical, and no client
// may be left blocked.
void SameOnBoth(const std::function<void(Scene&)>& fn);

// An array of bulk strings, as a reply compares.
Reply BulkArray(std::vector<std::string> v);

}  // namespace vessel::test

#endif  // VESSEL_TESTS_SUPPORT_SCENE_H_
