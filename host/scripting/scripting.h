// Lua scripting and functions (EVAL, SCRIPT, FUNCTION, FCALL) as Redis 7.0 has them, on a
// multi-threaded server. This is the subsystem's public face: the server installs it, and the
// persistence code saves and restores FUNCTION libraries through it.
#ifndef VESSEL_HOST_SCRIPTING_SCRIPTING_H_
#define VESSEL_HOST_SCRIPTING_SCRIPTING_H_

#include <memory>
#include <string>
#include <string_view>

namespace vessel::engine {
class Engine;
}

namespace vessel::scripting {

// The installed subsystem; destroy it after the workers stopped and before the engine.
class Subsystem {
 public:
  virtual ~Subsystem() = default;
};

// Registers the scripting commands in the engine's table and attaches the busy-script probe.
// Call once, on the main thread, right after the Engine is built and before it serves.
std::unique_ptr<Subsystem> Install(engine::Engine* engine);

// Every FUNCTION library of the engine as a FUNCTION DUMP payload (Redis's format: one
// RDB_OPCODE_FUNCTION2 record per library, RDB version 10, CRC64), for snapshots. Thread safe.
std::string DumpFunctions(engine::Engine* engine);

// How RestoreFunctions treats the libraries already loaded (FUNCTION RESTORE's policies).
enum class RestorePolicy { kAppend, kReplace, kFlush };

// Loads the libraries of a FUNCTION DUMP payload (also accepts Redis's RDB_OPCODE_FUNCTION
// records and LZF-compressed strings). false with Redis's error text in *error (nothing changed)
// on a bad payload, a library that does not compile, or a name collision. Thread safe.
bool RestoreFunctions(engine::Engine* engine, std::string_view payload, RestorePolicy policy,
                      std::string* error);

}  // namespace vessel::scripting

#endif  // VESSEL_HOST_SCRIPTING_SCRIPTING_H_
