// redis-server child processes for tests: a free port, a PING probe, start and stop. Needs only
// the RESP client, so tests that run no Vessel server (tests/cluster) use it too.
#ifndef VESSEL_TESTS_SUPPORT_PROCESSES_H_
#define VESSEL_TESTS_SUPPORT_PROCESSES_H_

#include <functional>
#include <string>
#include <vector>

namespace vessel::test {

// A port free on 127.0.0.1 right now.
int FreePort();
// Whether a server on 127.0.0.1:port answers PING within half a second.
bool Ping(int port);
// Starts a redis-server child on a port from pick_port (retrying when that port is taken) with
// the test defaults (no persistence, DEBUG enabled, log to /dev/null), then extra_args (a later
// option overrides an earlier one); returns its pid once it answers PING (port in *port).
// Throws when redis-server does not start.
int StartRedis(int* port, const std::vector<std::string>& extra_args = {},
               const std::function<int()>& pick_port = FreePort);
// SIGTERM, then waits for the process (pid <= 0: nothing).
void StopProcess(int pid);

}  // namespace vessel::test

#endif  // VESSEL_TESTS_SUPPORT_PROCESSES_H_
