// Redis's configuration parameters that Vessel has no struct field for: their names, kinds,
// bounds, defaults (Redis 7.0's) and where they live in the TOML file. Every parameter of Redis
// 7.0's `CONFIG GET *` is either a field of Config (config.h, with its Redis name there) or a row
// here, so harnesses and tools that set Redis's knobs work unchanged. Rows marked kNoEffect are
// accepted and reported back but change nothing in Vessel (tuning knobs of Redis internals,
// replication and cluster settings of a server without either).
#ifndef VESSEL_HOST_CONFIG_PARAMS_H_
#define VESSEL_HOST_CONFIG_PARAMS_H_

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>

namespace vessel::config {

enum class ParamKind {
  kBool,            // yes / no (TOML: also true / false)
  kInteger,         // within [min, max]
  kMemory,          // bytes, or a string with Redis's units ("64mb"); within [min, max]
  kEnum,            // one of choices (case-insensitive; stored lowercase)
  kString,          // any text
  kWords,           // several words from choices, space separated (shutdown-on-sigterm)
  kPercentiles,     // numbers between 0 and 100, space separated
  kKeyspaceEvents,  // notify-keyspace-events class letters; the integer is Redis's NOTIFY_* bits
};

// Parameter flags.
inline constexpr uint32_t kImmutable = 1u << 0;  // set at startup only (CONFIG SET refuses)
inline constexpr uint32_t kProtected = 1u
                                       << 1;  // CONFIG SET refuses unless enable-protected-configs
inline constexpr uint32_t kNoEffect = 1u << 2;   // accepted and reported, no meaning in Vessel
inline constexpr uint32_t kSensitive = 1u << 3;  // never logged (passwords)
// Redis's HIDDEN_CONFIG (settings for its own tests): CONFIG GET shows it only by its exact name,
// never for a pattern.
inline constexpr uint32_t kHidden = 1u << 4;

struct ParamDef {
  std::string_view name;     // Redis's name: "hash-max-listpack-entries"
  std::string_view alias;    // Redis's older name ("hash-max-ziplist-entries"), or empty
  std::string_view section;  // TOML section; the key is the name with '-' -> '_'
  ParamKind kind;
  std::string_view def;  // the default, as CONFIG GET shows it
  int64_t min = 0;
  int64_t max = std::numeric_limits<int64_t>::max();
  std::span<const std::string_view> choices = {};
  uint32_t flags = 0;

  std::string toml_key() const;
};

// Every generic parameter, in a fixed order (the index is the parameter's id).
std::span<const ParamDef> GenericParams();
// By Redis name or alias, case-insensitive; nullptr when there is none.
const ParamDef* FindGenericParam(std::string_view name);
// By TOML section and key.
const ParamDef* FindGenericParamToml(std::string_view section, std::string_view key);

// Checks `text` for p and writes the value as CONFIG GET shows it to *normalized ("64mb" ->
// "67108864", "YES" -> "yes"). On failure *why is Redis's CONFIG SET reason ("argument must be
// 'yes' or 'no'").
bool NormalizeParam(const ParamDef& p, std::string_view text, std::string* normalized,
                    std::string* why);
// The integer value of a normalized value: booleans 0/1, enums their index, numbers themselves;
// 0 for strings.
int64_t ParamInteger(const ParamDef& p, std::string_view normalized);

}  // namespace vessel::config

#endif  // VESSEL_HOST_CONFIG_PARAMS_H_
