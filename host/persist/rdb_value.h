// One key's value in RDB form: written from a stored value (without knowing its module: the
// Redis families by their TYPE name through the type's visit callback, other types as module
// records through serialize), read back into a plain description, and built into the keyspace by
// running the family's own commands.
//
// The Redis families and the encodings Redis 7.0 would choose for them:
//   string -> STRING (integer-encoded or LZF-compressed as rdb.c does)
//   list   -> LIST_QUICKLIST_2 (listpack nodes of list-max-listpack-size)
//   set    -> SET_INTSET (integers only, at most set-max-intset-entries) or SET
//   hash   -> HASH_LISTPACK / HASH (hash-max-listpack-entries/-value); with field TTLs, Redis
//             7.4's HASH_LISTPACK_EX / HASH_METADATA
//   zset   -> ZSET_LISTPACK / ZSET_2 (zset-max-listpack-entries/-value)
// Anything else -> MODULE_2 (the type's rdb_name and encoding version, then its serialize output
// as module opcodes). Reading accepts every encoding of Redis 7.0 and the older ziplist, zipmap
// and quicklist v1 ones, plus the 7.4 hash types. A type that declares one of Redis's own RDB
// types (ABI 1.7: vsl_type_desc.rdb_type, e.g. the streams module) writes and reads its values
// itself through its serialize/deserialize callbacks and the RDB slots of the SDK.
#ifndef VESSEL_HOST_PERSIST_RDB_VALUE_H_
#define VESSEL_HOST_PERSIST_RDB_VALUE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "host/engine/engine.h"
#include "host/persist/rdb_codec.h"

namespace vessel::persist {

// The settings the writer reads once per save.
struct EncodeOptions {
  bool compress = true;
  int64_t hash_max_entries = 512, hash_max_value = 64;
  int64_t zset_max_entries = 128, zset_max_value = 64;
  int64_t set_max_intset = 512;
  int64_t list_max_size = -2;
  static EncodeOptions FromEngine(engine::Engine& e);
};

// Appends the type byte, the key (when given: a file record; none in a DUMP payload) and the value
// of `value` (of type t) to out, as of now_ms (hash fields
// expired by then are left out). false with *error when the value cannot be written (a type
// without visit or serialize, or without an RDB id); *empty when nothing is left to write (every
// field of a hash expired). Runs under the key's lock (shared is enough).
bool EncodeValue(const vsl_type* t, const void* value, const std::string_view* key,
                 const EncodeOptions& opt, int64_t now_ms, RdbOut& out, bool* empty,
                 std::string* error);

// A value read from RDB bytes.
struct RdbValue {
  enum class Kind { kString, kList, kSet, kHash, kZset, kModule };
  Kind kind = Kind::kString;
  std::vector<std::string> elems;  // string: 1; list, set, zset: members; hash: field, value...
  std::vector<double> scores;      // zset
  std::vector<int64_t> ttls;       // hash with field TTLs: one per field (0 = none)
  const vsl_type* module_type = nullptr;
  void* module_value = nullptr;  // kModule: owned until built (or freed by Discard)
  bool empty() const { return kind != Kind::kModule && elems.empty(); }
};

// Reads a value of RDB type `type` into *out; false with in.error() set on malformed input or a
// type it cannot load (a stream without the streams module, a module type no loaded module
// declares).
bool DecodeValue(engine::Engine& e, uint8_t type, RdbIn& in, RdbValue* out);
// Frees a decoded value that will not be built.
void Discard(engine::Engine& e, RdbValue* v);

// Creates `key` (absent) in the database of `parent` with the value, through the family's own
// commands run with Engine::Call under parent's locks (the world, or the key's shard held
// exclusively); a module value is stored as is. false with *error when a command refused it.
bool BuildValue(engine::Engine& e, engine::CommandCtx* parent, std::string_view key, RdbValue* v,
                std::string* error);

}  // namespace vessel::persist

#endif  // VESSEL_HOST_PERSIST_RDB_VALUE_H_
