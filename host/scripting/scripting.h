// Lua scripting and functions (EVAL, SCRIPT, FUNCTION, FCALL) as Redis 7.0 has them, on a
// multi-threaded server. This is the subsystem's public face: the server installs it; the
// persistence code reaches its FUNCTION libraries through engine::FunctionLibraries.
#ifndef VESSEL_HOST_SCRIPTING_SCRIPTING_H_
#define VESSEL_HOST_SCRIPTING_SCRIPTING_H_

#include <cstddef>
#include <memory>

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

// Caps the memory each Lua state may allocate (0, the default: no cap, as Redis). Applies at
// once to every state of every worker; an allocation past it fails as a Lua memory error, which
// the script gets as an error. For tests and the fuzzer, whose scripts may allocate without end.
void SetLuaMemoryLimit(size_t bytes);
size_t LuaMemoryLimit();

// How FUNCTION RESTORE treats the libraries already loaded.
enum class RestorePolicy { kAppend, kReplace, kFlush };

}  // namespace vessel::scripting

#endif  // VESSEL_HOST_SCRIPTING_SCRIPTING_H_
