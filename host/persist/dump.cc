// DUMP and RESTORE payloads in Redis's format (persist_hooks.h): the value's RDB record without a
// key, the RDB version (2 bytes little endian), a CRC64 of everything before it. Payloads move
// between Vessel and redis-server in both directions.
#include "host/persist/persistence.h"
#include "host/persist/rdb_file.h"

namespace vessel::persist {

bool Persistence::DumpValue(const vsl_type* t, const void* value, int64_t now_ms, std::string* out,
                            std::string* error) {
  std::string record;
  RdbOut o(&record, Int("rdbcompression") != 0);
  bool empty = false;
  const EncodeOptions opt = EncodeOptions::FromEngine(*e_);
  std::string why;
  if (!EncodeValue(t, value, nullptr, opt, now_ms, o, &empty, &why)) {
    *error = engine::Cat("ERR ", why);
    return false;
  }
  if (empty) {
    *error = "ERR the value has no live elements left";
    return false;
  }
  *out = MakeDumpPayload(record);
  return true;
}

void* Persistence::DecodePayload(std::string_view payload, std::string* error) {
  std::string_view body;
  if (!VerifyDumpPayload(payload, &body)) {
    *error = "ERR DUMP payload version or checksum are wrong";
    return nullptr;
  }
  RdbIn in(body);
  uint8_t type;
  auto v = std::make_unique<RdbValue>();
  if (!in.Byte(&type) || !DecodeValue(*e_, type, in, v.get()) || in.remaining() != 0 ||
      v->empty()) {
    Discard(*e_, v.get());
    *error = "ERR Bad data format";
    return nullptr;
  }
  return v.release();
}

bool Persistence::BuildDecoded(engine::CommandCtx* ctx, std::string_view key, void* decoded,
                               std::string* error) {
  std::unique_ptr<RdbValue> v(static_cast<RdbValue*>(decoded));
  const bool ok = BuildValue(*e_, ctx, key, v.get(), error);
  Discard(*e_, v.get());
  return ok;
}

void Persistence::FreeDecoded(void* decoded) {
  std::unique_ptr<RdbValue> v(static_cast<RdbValue*>(decoded));
  Discard(*e_, v.get());
}

}  // namespace vessel::persist
