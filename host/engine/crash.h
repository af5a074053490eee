// The crash report written when a fault (SIGSEGV, SIGBUS, SIGFPE, SIGILL) or an abort kills the
// process: the command that was running, the module that owns it, and a backtrace.
#ifndef VESSEL_HOST_ENGINE_CRASH_H_
#define VESSEL_HOST_ENGINE_CRASH_H_

namespace vessel::engine {

// Installs the handlers (once, at startup). The report goes to stderr and, when log_fd >= 0, to
// that file descriptor too.
void InstallCrashHandler(int log_fd);

}  // namespace vessel::engine

#endif  // VESSEL_HOST_ENGINE_CRASH_H_
