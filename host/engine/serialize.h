// Byte sinks and sources handed to type serialize/deserialize callbacks (DUMP, RESTORE, DEBUG
// DIGEST, RDB module records). Two formats: Vessel's own framing (little-endian fixed-width
// integers, length-prefixed bytes), used when `format` is null; or another one supplied by the
// caller through `format` (persist/ writes RDB module opcodes that way).
#ifndef VESSEL_HOST_ENGINE_SERIALIZE_H_
#define VESSEL_HOST_ENGINE_SERIALIZE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "vessel/module.h"

namespace vessel::engine {
// The functions of a serialization format other than the default framing. Each returns VSL_OK or
// VSL_ERR like the SDK slots it implements.
// The RDB slots (ABI 1.7: rdb_len, rdb_string, raw) are set by the format of a type saved in
// Redis's own encoding; where they are null the SDK slots fall back to u64 and bytes.
struct WriteFormat {
  void (*u64)(vsl_writer* w, uint64_t v);
  void (*i64)(vsl_writer* w, int64_t v);
  void (*dbl)(vsl_writer* w, double v);
  void (*bytes)(vsl_writer* w, const char* p, size_t len);
  void (*rdb_len)(vsl_writer* w, uint64_t v) = nullptr;
  void (*rdb_string)(vsl_writer* w, const char* p, size_t len) = nullptr;
  void (*raw)(vsl_writer* w, const char* p, size_t len) = nullptr;
};
struct ReadFormat {
  int (*u64)(vsl_reader* r, uint64_t* v);
  int (*i64)(vsl_reader* r, int64_t* v);
  int (*dbl)(vsl_reader* r, double* v);
  int (*bytes)(vsl_reader* r, vsl_slice* out);
  int (*rdb_len)(vsl_reader* r, uint64_t* v) = nullptr;
  int (*rdb_string)(vsl_reader* r, vsl_slice* out) = nullptr;
  int (*raw)(vsl_reader* r, size_t len, vsl_slice* out) = nullptr;
};
}  // namespace vessel::engine

struct vsl_writer {
  std::string buf;
  const vessel::engine::WriteFormat* format = nullptr;  // null: Vessel's framing into buf
  void* format_ctx = nullptr;                           // the format's own state
};

struct vsl_reader {
  std::string_view data;
  bool failed = false;
  const vessel::engine::ReadFormat* format = nullptr;  // null: Vessel's framing from data
  void* format_ctx = nullptr;
};

#endif  // VESSEL_HOST_ENGINE_SERIALIZE_H_
