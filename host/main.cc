// vessel-server: reads the configuration, loads the modules and serves until SIGTERM, SIGINT or
// SHUTDOWN.
#include <fcntl.h>
#include <signal.h>

#include <cstdio>
#include <mutex>
#include <thread>

#include "host/config/config.h"
#include "host/engine/crash.h"
#include "host/server.h"
#include "spdlog/sinks/basic_file_sink.h"
#include "spdlog/spdlog.h"

int main(int argc, char** argv) {
  vessel::config::Config config = vessel::config::Defaults();
  std::string error;
  bool exit_now = false;
  if (!vessel::config::ApplyCommandLine(argc, argv, &config, &error, &exit_now)) {
    std::fprintf(stderr, "vessel-server: %s\n", error.c_str());
    return 1;
  }
  if (exit_now) {
    std::printf("%s\n", error.c_str());
    return 0;
  }
  std::string config_file;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string_view(argv[i]) == "--config") config_file = argv[i + 1];
  }

  int crash_fd = -1;
  if (!config.log.file.empty()) {
    spdlog::set_default_logger(spdlog::basic_logger_mt("vessel", config.log.file));
    crash_fd = open(config.log.file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  }
  vessel::engine::InstallCrashHandler(crash_fd);
  spdlog::set_level(
      spdlog::level::from_str(std::string(vessel::config::LogLevelForSpdlog(config.log.level))));
  spdlog::flush_on(spdlog::level::info);

  // Signals are taken by one thread with sigwait, so no worker is ever interrupted.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  vessel::Server server(config, config_file);
  if (!server.Start(&error)) {
    spdlog::critical("{}", error);
    return 1;
  }
  // As Redis on SIGTERM/SIGINT: the final snapshot when save rules exist; a failed one keeps the
  // server running (every key would be lost otherwise) until a later signal or SHUTDOWN succeeds.
  // The signal thread handles a signal under `signal_mu`; once the server stops (`stopping`,
  // set under the same lock) it touches the server no more, which is then torn down.
  static std::mutex signal_mu;
  static bool stopping = false;
  std::thread([&server, signals] {
    for (;;) {
      int sig = 0;
      sigwait(&signals, &sig);
      std::lock_guard l(signal_mu);
      if (stopping) return;
      spdlog::warn("Received {} scheduling shutdown...", sig == SIGINT ? "SIGINT" : "SIGTERM");
      if (server.ShutdownOnSignal(sig)) return;  // server.Wait() is woken
    }
  }).detach();
  server.Wait();
  {
    std::lock_guard l(signal_mu);
    stopping = true;
  }
  server.Stop();
  spdlog::info("bye");
  return 0;
}
