// What the replication sources share: parameters read by name, a command in the protocol's form,
// and a new replication id.
#ifndef VESSEL_HOST_REPL_REPL_UTIL_H_
#define VESSEL_HOST_REPL_REPL_UTIL_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "host/engine/engine.h"
#include "host/persist/aof.h"

namespace vessel::repl {

inline int64_t Param(engine::Engine& e, const char* name) {
  return e.ParamInt(engine::ParamValues::Find(name));
}
inline std::string ParamText(engine::Engine& e, const char* name) {
  return e.settings().params.Text(engine::ParamValues::Find(name));
}
// argv as one RESP command, as the stream and the handshake carry commands.
inline std::string Command(std::initializer_list<std::string_view> argv) {
  std::string out;
  persist::AppendResp(&out, argv.begin(), argv.size());
  return out;
}
// 40 random hex characters: a replication id, or a diskless payload's end mark.
std::string RandomReplId();

}  // namespace vessel::repl

#endif  // VESSEL_HOST_REPL_REPL_UTIL_H_
