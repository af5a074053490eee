// redis-server child processes for tests (processes.h).
#include "tests/support/processes.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "tests/support/resp_client.h"

namespace vessel::test {

bool Ping(int port) {
  try {
    RespClient c("127.0.0.1", port);
    c.SetTimeout(500);
    Reply r = c("PING");
    return r.type == Reply::Type::kStatus && r.str == "PONG";
  } catch (...) {
    return false;
  }
}

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

int StartRedis(int* port, const std::vector<std::string>& extra_args,
               const std::function<int()>& pick_port) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    *port = pick_port();
    std::vector<std::string> args = {"redis-server",
                                     "--port",
                                     std::to_string(*port),
                                     "--bind",
                                     "127.0.0.1",
                                     "--save",
                                     "",
                                     "--appendonly",
                                     "no",
                                     "--daemonize",
                                     "no",
                                     "--loglevel",
                                     "warning",
                                     "--logfile",
                                     "/dev/null",
                                     "--enable-debug-command",
                                     "yes"};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    const pid_t pid = fork();
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGTERM);  // never outlive a test binary that crashed
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execvp("redis-server", argv.data());
      _exit(127);
    }
    for (int i = 0; i < 200; ++i) {
      if (Ping(*port)) return pid;
      int status;
      if (waitpid(pid, &status, WNOHANG) == pid) break;  // exited (port taken?): retry
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    StopProcess(pid);
  }
  throw std::runtime_error("cannot start redis-server (is the redis-server package installed?)");
}

void StopProcess(int pid) {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  int status;
  waitpid(pid, &status, 0);
}

}  // namespace vessel::test
