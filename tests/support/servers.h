// The servers command tests talk to, started once per test binary: vessel in-process (the real
// host with the in-tree modules, on port 0) and a real redis-server (Debian's) on a free port.
// Tables of commands run on both; every reply must match its expectation and the two servers
// must reply the same, unless a row documents a deliberate difference.
#ifndef VESSEL_TESTS_SUPPORT_SERVERS_H_
#define VESSEL_TESTS_SUPPORT_SERVERS_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "host/config/config.h"
#include "host/server.h"
#include "tests/support/processes.h"
#include "tests/support/resp_client.h"
#include "vessel/module.h"

namespace vessel::test {

class Servers {
 public:
  // Called before the first Get() to adjust vessel's configuration (extra modules, threads).
  static void Configure(std::function<void(config::Config&)> fn);
  static Servers& Get();

  int vessel_port() const { return vessel_->port(); }
  int redis_port() const { return redis_port_; }
  RespClient Vessel() const { return RespClient("127.0.0.1", vessel_port()); }
  RespClient Redis() const { return RespClient("127.0.0.1", redis_port_); }
  vessel::Server& vessel() { return *vessel_; }
  // FLUSHALL on both, and back to defaults any setting a test changed.
  void Reset();
  // From now on vessel's used_memory is the bytes its modules allocated through the host
  // (sanitizer builds have no allocator statistics); returns that figure now.
  int64_t UseModuleBytesAsUsedMemory();
  static int64_t ModuleBytes();
  ~Servers();

 private:
  Servers();
  std::unique_ptr<vessel::Server> vessel_;
  int redis_pid_ = -1;
  int redis_port_ = 0;
};

// Caps what each Lua state of the in-process vessel may allocate (0: no cap); tests of scripts
// that run out of memory.
void SetLuaMemoryLimit(size_t bytes);

// ---- expectations ----

struct Expect {
  std::string description;
  std::function<bool(const Reply&)> match;
  bool clock = false;  // holds a clock reading: checked on both servers, never compared between
};
Expect Any();
Expect Ok();
Expect Simple(std::string s);
Expect Int(int64_t v);
Expect IntRange(int64_t lo, int64_t hi);
// A clock reading (PTTL, HPTTL, OBJECT IDLETIME) in [lo, hi] on each server; the two servers'
// readings are taken at different moments, so the row is not compared between them.
Expect ClockReading(int64_t lo, int64_t hi);
Expect Bulk(std::string s);
Expect Nil();                  // RESP2 $-1 or RESP3 _
Expect NilArray();             // RESP2 *-1 or RESP3 _
Expect Err(std::string glob);  // glob over the error text, e.g. "WRONGTYPE*"
Expect Arr(std::vector<Expect> elems);
Expect UnorderedArr(std::vector<Expect> elems);
Expect BulkArr(std::vector<std::string> elems);
Expect UnorderedBulkArr(std::vector<std::string> elems);
Expect Dbl(std::string text);  // RESP3 double or RESP2 bulk with this text
// An error with exactly this text (no glob: '[' and '*' in error texts are literal).
Expect Error(std::string text);
Expect WrongType();

// Error texts every family shares, as Redis writes them.
inline constexpr char kWrongType[] =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
inline constexpr char kSyntax[] = "ERR syntax error";
inline constexpr char kNotInt[] = "ERR value is not an integer or out of range";
inline constexpr char kNotPositive[] = "ERR value is out of range, must be positive";

using Strings = std::vector<std::string>;
// Runs body(0) ... body(threads - 1) on their own threads and joins them.
void Parallel(int threads, const std::function<void(int)>& body);

// A value type's callbacks in the in-process vessel, called directly through the SDK's
// descriptor (serialize/deserialize round trips, malformed input, copy): the command tests see the
// module ABI, never the engine's structures. Load, Free and the key helpers run with the module's
// allocation accounting, as the host calls them.
class TypeCallbacks {
 public:
  explicit TypeCallbacks(const std::string& name);
  bool found() const { return type_ != nullptr; }
  const vsl_type_desc& desc() const;
  uint32_t encoding_version() const;
  void* Load(const std::string& bytes, uint32_t encver = 1) const;
  std::string Save(const void* v) const;
  void Free(void* v) const;
  // The serialization of the value at `key` in database 0 ("" and a test failure when the key is
  // missing or of another type).
  std::string SaveKey(const std::string& key) const;
  // Stores `value` (from Load; the keyspace owns it from now on) at `key` in database 0.
  void StoreKey(const std::string& key, void* value) const;

 private:
  const vsl_type* type_ = nullptr;
};
// The worker (0-based) that serves the in-process vessel's client with this CLIENT ID; -1 if none.
int WorkerOfClient(int64_t client_id);
// Drops the in-tree modules that are not built from the in-process vessel's configuration, so a
// family's test binary runs with whatever modules exist (call from SetUpTestSuite).
void LoadOnlyBuiltModules();
// v as 8 little-endian bytes (the SDK's serialization of integers).
std::string U64(uint64_t v);

// Bytes a module has allocated through the host ("module.<name>.allocated" of MEMORY STATS).
int64_t ModuleAllocated(RespClient& c, const std::string& module);
// MEMORY USAGE minus a module's allocation growth is the host's entry, the same for keys of equal
// length up to kEntryJitter: this test binary's system allocator may hand an entry an unsplit
// free chunk a little larger than asked for, depending on the heap's state.
constexpr int64_t kEntryJitter = 32;
// Checks such differences, one per key of equal length: all agree and are plausible entry sizes.
void ExpectEntryOverheads(const std::vector<int64_t>& overheads);
// prefix + i for i in [from, to).
Strings Seq(const std::string& prefix, int from, int to);
Strings Cat(Strings head, const Strings& tail);

enum class Diff {
  kExact,      // identical replies
  kUnordered,  // identical up to the order of array elements (sets, KEYS)
  kSkip,       // a deliberate difference, explained in `why`
};

struct Row {
  std::vector<std::string> cmd;
  Expect expect = Any();
  Diff diff = Diff::kExact;
  std::string why;
};

// The same property check against vessel and against redis-server (random replies, scans).
void OnBoth(const std::function<void(RespClient&)>& check);

// Runs rows in order on vessel and on redis, each over one connection speaking `protocol`.
// Reports every mismatch with the row, the command and both replies (gtest failures).
void RunTable(const std::vector<Row>& rows, int protocol = 2);
// Runs rows on vessel only (for vessel-specific commands); expectations must hold.
void RunVesselTable(const std::vector<Row>& rows, int protocol = 2);

std::string Show(const std::vector<std::string>& cmd);

}  // namespace vessel::test

#endif  // VESSEL_TESTS_SUPPORT_SERVERS_H_
