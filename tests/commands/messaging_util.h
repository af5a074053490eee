// Multi-connection scenarios for the messaging tests (pub/sub, keyspace events, tracking): the
// same steps run on redis-server and on vessel, and every connection must receive the same frames
// (replies and pushes) after every step. Redis runs first: after a step, each of its connections
// is read until it stays quiet; vessel's are then read for exactly as many frames (delivery to
// other workers is asynchronous), and must have nothing more at the end.
#ifndef VESSEL_TESTS_COMMANDS_MESSAGING_UTIL_H_
#define VESSEL_TESTS_COMMANDS_MESSAGING_UTIL_H_

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/servers.h"

namespace vessel::test {

struct Step {
  int conn;                      // the connection that sends cmd
  std::vector<std::string> cmd;  // "$ID<n>": connection n's client id; "$DUMP:k": DUMP k
  int sleep_ms = 0;              // waits before reading (expiry, delivery of events)
  // kUnordered: frames, and the elements of each, in any order; kSkip: not compared (ids),
  // vessel's frames read until quiet; kSkipReply: the sender's frames not compared (a random
  // reply), every other connection's exactly.
  enum Compare { kExact, kUnordered, kSkip, kSkipReply } compare = kExact;
  // The command blocks (BLPOP ...): its reply is not awaited; it arrives in a later step's frames
  // of that connection.
  bool blocks = false;
};

// What each connection received after each step: frames[step][conn].
using Frames = std::vector<std::vector<std::vector<Reply>>>;

inline std::string ShowFrames(const std::vector<Reply>& f) {
  std::string s;
  for (const Reply& r : f) s += "\n      " + r.ToString();
  return s.empty() ? " (nothing)" : s;
}

class Scenario {
 public:
  // conns connections, each switched to protocol (2 or 3) first; setup commands run on an
  // admin connection of each server before (e.g. CONFIG SET notify-keyspace-events).
  Scenario(int conns, int protocol = 2, std::vector<std::vector<std::string>> setup = {})
      : conns_(conns), protocol_(protocol), setup_(std::move(setup)) {}

  // Runs steps on both servers and compares; returns vessel's frames.
  Frames Run(const std::vector<Step>& steps) {
    const Frames redis = RunOn(false, steps, nullptr);
    const Frames vessel = RunOn(true, steps, &redis);
    for (size_t i = 0; i < steps.size(); ++i) {
      if (steps[i].compare == Step::kSkip) continue;
      for (int c = 0; c < conns_; ++c) {
        if (steps[i].compare == Step::kSkipReply && c == steps[i].conn) continue;
        const auto& v = vessel[i][c];
        const auto& r = redis[i][c];
        bool same = v.size() == r.size();
        if (same && steps[i].compare == Step::kUnordered) {
          // Frames in any order, the elements of each in any order.
          std::vector<bool> used(r.size());
          for (const Reply& x : v) {
            bool found = false;
            for (size_t k = 0; k < r.size() && !found; ++k)
              if (!used[k] && x.EqualsUnordered(r[k])) used[k] = found = true;
            same = same && found;
          }
        } else {
          for (size_t k = 0; same && k < v.size(); ++k) same = v[k] == r[k];
        }
        EXPECT_TRUE(same) << "step " << i << " (conn " << steps[i].conn << ": "
                          << Show(steps[i].cmd) << "), connection " << c
                          << "\n  vessel:" << ShowFrames(v) << "\n  redis:" << ShowFrames(r);
      }
    }
    return vessel;
  }

 private:
  Frames RunOn(bool vessel, const std::vector<Step>& steps, const Frames* counts) {
    Servers::Get().Reset();
    auto connect = [&] { return vessel ? Servers::Get().Vessel() : Servers::Get().Redis(); };
    {
      RespClient admin = connect();
      for (const auto& cmd : setup_) admin.Cmd(cmd);
    }
    std::vector<RespClient> c;
    std::vector<std::string> ids;
    for (int i = 0; i < conns_; ++i) {
      c.push_back(connect());
      if (protocol_ == 3) c.back()("HELLO", "3");
      ids.push_back(std::to_string(c.back()("CLIENT", "ID").integer));
    }
    Frames out(steps.size(), std::vector<std::vector<Reply>>(conns_));
    for (size_t i = 0; i < steps.size(); ++i) {
      std::vector<std::string> cmd = steps[i].cmd;
      for (std::string& a : cmd) {
        if (a.rfind("$ID", 0) == 0) a = ids[std::stoi(a.substr(3))];
        // "$DUMP:key": that server's DUMP of key (payloads are each server's own format).
        if (a.rfind("$DUMP:", 0) == 0) {
          RespClient admin = connect();
          a = admin("DUMP", a.substr(6)).str;
        }
      }
      if (!cmd.empty()) c[steps[i].conn].Send(cmd);
      if (steps[i].sleep_ms > 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(steps[i].sleep_ms));
      for (int k = 0; k < conns_; ++k) {
        // The sender first: its reply means redis has written this step's pushes too.
        const int conn = (steps[i].conn + k) % conns_;
        if (counts == nullptr) {
          if (k == 0 && !cmd.empty() && !steps[i].blocks) {
            c[conn].SetTimeout(5000);  // the reply itself, however slow
            out[i][conn].push_back(c[conn].Read());
            for (Reply& r : ReadQuiet(c[conn], 20)) out[i][conn].push_back(std::move(r));
          } else {
            out[i][conn] = ReadQuiet(c[conn], cmd.empty() ? 30 : 15);
          }
          continue;
        }
        if (steps[i].compare == Step::kSkip) {  // counts may differ too: read until quiet
          out[i][conn] = ReadQuiet(c[conn], 150);
          continue;
        }
        c[conn].SetTimeout(5000);
        for (size_t n = 0; n < (*counts)[i][conn].size(); ++n)
          out[i][conn].push_back(c[conn].Read());
        c[conn].SetTimeout(10000);
      }
    }
    if (counts != nullptr) {
      for (int k = 0; k < conns_; ++k) {
        const auto extra = ReadQuiet(c[k], 100);
        EXPECT_TRUE(extra.empty())
            << "connection " << k << " got more than redis:" << ShowFrames(extra);
      }
    }
    return out;
  }

  int conns_;
  int protocol_;
  std::vector<std::vector<std::string>> setup_;
};

// The worker of a vessel connection (tests run vessel in-process with 2 workers).
inline int WorkerOf(RespClient& c) {
  const uint64_t id = static_cast<uint64_t>(c("CLIENT", "ID").integer);
  int worker = -1;
  Servers::Get().vessel().engine().ForEachSession([&](engine::Session* s) {
    if (s->id() == id) worker = s->worker();
  });
  return worker;
}

// n vessel connections, half of them on each of the two workers (connections are spread by the
// kernel: extra ones are opened until both halves are full).
inline std::vector<RespClient> SpreadConnections(int n) {
  std::vector<RespClient> out, spare;
  int on[2] = {0, 0};
  for (int attempts = 0; static_cast<int>(out.size()) < n && attempts < 50 * n; ++attempts) {
    RespClient c = Servers::Get().Vessel();
    const int w = WorkerOf(c);
    if (w >= 0 && w < 2 && on[w] < (n + 1 - w) / 2) {
      ++on[w];
      out.push_back(std::move(c));
    } else {
      spare.push_back(std::move(c));
    }
  }
  EXPECT_EQ(static_cast<int>(out.size()), n) << "could not spread connections over both workers";
  return out;
}

// The value of "field:" in an INFO reply, or -1.
inline int64_t InfoField(RespClient& c, const std::string& section, const std::string& field) {
  const Reply r = c("INFO", section);
  const size_t at = r.str.find("\r\n" + field + ":");
  if (at == std::string::npos) return -1;
  return std::stoll(r.str.substr(at + field.size() + 3));
}

}  // namespace vessel::test

#endif  // VESSEL_TESTS_COMMANDS_MESSAGING_UTIL_H_
