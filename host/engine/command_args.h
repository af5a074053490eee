// The argument trees of COMMAND DOCS (Redis 7's "arguments"): converted from a module's
// vsl_command_arg descriptors, or derived from a command's syntax string when it declares none.
//
// The syntax notation is Redis's: words in lowercase are arguments ("key", "num-matches"), words
// in uppercase are tokens ("COUNT", "WITHSCORES"), "[...]" is optional, "x [x ...]" repeats,
// "a | b" chooses one (inside brackets whole alternatives, "[EX seconds | PX milliseconds]";
// outside them the two neighbouring words, "key BEFORE | AFTER pivot"), "<...>" groups. A token
// before one argument is that argument's token ("[COUNT count]"); a token before several makes a
// block ("[LIMIT offset count]"); a lone token is a pure token. What the notation does not carry
// is guessed the way Redis names things: an argument's type from its name (count -> integer,
// timeout -> double, pattern -> pattern, unix-time-seconds -> unix-time, key/destination/...Key
// -> key, anything else string), the key spec of the k-th key argument is the k-th key spec, a
// choice between known tokens has Redis's name for it (NX | XX is "condition"), a repeated group
// is "data", any other group "options". Pure functions, no state.
#ifndef VESSEL_HOST_ENGINE_COMMAND_ARGS_H_
#define VESSEL_HOST_ENGINE_COMMAND_ARGS_H_

#include <string>
#include <string_view>
#include <vector>

#include "host/engine/registry.h"
#include "vessel/module.h"

namespace vessel::engine {

// Parses `syntax` (the arguments after the command name) into *out. false with *error when the
// text is not in the notation (unbalanced brackets, a stray "..." or "|").
bool ParseSyntax(std::string_view syntax, size_t n_keyspecs, std::vector<CommandArg>* out,
                 std::string* error);

// Copies and checks a module's argument descriptors (n entries at `args`, nested at most 8
// deep). false with *error naming the offending argument.
bool ConvertArgs(const vsl_command_arg* args, uint32_t n, size_t n_keyspecs,
                 std::vector<CommandArg>* out, std::string* error);

// The name COMMAND DOCS gives a VSL_ARG_* type ("key", "pure-token", ...).
std::string_view ArgTypeName(uint32_t type);

}  // namespace vessel::engine

#endif  // VESSEL_HOST_ENGINE_COMMAND_ARGS_H_
