// The crash report: when the process receives SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT, it
// writes what was running (the command, and the module that owns it) and a backtrace to stderr
// and to the log file, as Redis's bug report does, then dies of the same signal.
//
// Only async-signal-safe calls run in the handler (write, backtrace_symbols_fd); backtrace() is
// called once at install time so that its lazy loading of libgcc happens outside a signal.
#include "host/engine/crash.h"

#include <execinfo.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "host/engine/context.h"
#include "host/engine/registry.h"

namespace vessel::engine {
namespace {

int g_log_fd = -1;

void Put(int fd, const char* s) {
  if (fd < 0 || s == nullptr) return;
  ssize_t ignored = write(fd, s, strlen(s));
  (void)ignored;
}

void PutAll(const char* s) {
  Put(STDERR_FILENO, s);
  Put(g_log_fd, s);
}

const char* SignalName(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGABRT:
      return "SIGABRT";
    default:
      return "signal";
  }
}

void OnFatalSignal(int sig, siginfo_t*, void*) {
  PutAll("\n=== VESSEL BUG REPORT START: crashed by ");
  PutAll(SignalName(sig));
  PutAll(" ===\n");
  const CommandCtx* ctx = RunningCtx();
  if (ctx != nullptr && ctx->cmd != nullptr) {
    PutAll("command=");
    PutAll(ctx->cmd->name.c_str());
    PutAll(" module=");
    PutAll(ctx->cmd->module != nullptr ? ctx->cmd->module->name.c_str() : "(host built-in)");
    PutAll("\n");
  } else {
    PutAll("command=(none running on this thread)\n");
  }
  PutAll("backtrace:\n");
  void* frames[64];
  const int n = backtrace(frames, 64);
  backtrace_symbols_fd(frames, n, STDERR_FILENO);
  if (g_log_fd >= 0) backtrace_symbols_fd(frames, n, g_log_fd);
  PutAll("=== VESSEL BUG REPORT END ===\n");
  // Die of the same signal, with its default action (a core dump where enabled).
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

void InstallCrashHandler(int log_fd) {
  g_log_fd = log_fd;
  void* warm[1];
  backtrace(warm, 1);
  struct sigaction sa {};
  sa.sa_sigaction = OnFatalSignal;
  sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) sigaction(sig, &sa, nullptr);
}

}  // namespace vessel::engine
