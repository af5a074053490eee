// Byte sinks and sources handed to type serialize/deserialize callbacks (DUMP, RESTORE, and
// later snapshots). Little-endian fixed-width integers; bytes are length-prefixed.
#ifndef VESSEL_HOST_ENGINE_SERIALIZE_H_
#define VESSEL_HOST_ENGINE_SERIALIZE_H_

#include <string>
#include <string_view>

struct vsl_writer {
  std::string buf;
};

struct vsl_reader {
  std::string_view data;
  bool failed = false;
};

#endif  // VESSEL_HOST_ENGINE_SERIALIZE_H_
