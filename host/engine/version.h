// Version strings the server reports.
#ifndef VESSEL_HOST_ENGINE_VERSION_H_
#define VESSEL_HOST_ENGINE_VERSION_H_

#include <cstdint>
#include <string_view>

namespace vessel::engine {

inline constexpr std::string_view kVesselVersion = "0.1.0";
// The Redis release whose behaviour Vessel implements; clients read it from INFO and HELLO.
inline constexpr std::string_view kRedisVersion = "7.0.15";

// "1.2.3" -> 10203, as Redis encodes module versions.
inline int64_t VersionNumber(std::string_view v) {
  int64_t parts[3] = {0, 0, 0};
  int i = 0;
  for (char c : v) {
    if (c == '.') {
      if (++i == 3) break;
    } else if (c >= '0' && c <= '9') {
      parts[i] = parts[i] * 10 + (c - '0');
    } else {
      break;
    }
  }
  return parts[0] * 10000 + parts[1] * 100 + parts[2];
}

}  // namespace vessel::engine

#endif  // VESSEL_HOST_ENGINE_VERSION_H_
