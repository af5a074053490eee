// Whole RDB files: writer, loader, DUMP payload framing (rdb_file.h).
#include "host/persist/rdb_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>

#include "host/engine/version.h"
#include "spdlog/spdlog.h"

namespace vessel::persist {

std::atomic<int64_t> g_fail_writes_after{-1};

namespace {

using engine::Cat;
using engine::Engine;

constexpr size_t kFlushBytes = size_t{1} << 20;

std::atomic<uint64_t> g_temp_seq{0};

void PutLE(std::string* out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

uint64_t LoadLE(const char* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}

std::string Hex(uint64_t v) {
  char buf[20];
  std::snprintf(buf, sizeof(buf), "%llx", static_cast<unsigned long long>(v));
  return buf;
}

void Aux(RdbOut& out, std::string_view key, std::string_view value) {
  out.Byte(rdb::kOpAux);
  out.String(key);
  out.String(value);
}

}  // namespace

// ---- writing ----

RdbFileWriter::~RdbFileWriter() { Abort(); }

bool RdbFileWriter::Open(const std::string& dir, const std::string& name, std::string* error) {
  dir_ = dir;
  path_ = Cat(dir, "/", name);
  tmp_ = Cat(dir, "/temp-", getpid(), "-", g_temp_seq.fetch_add(1), ".rdb");
  fd_ = open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    *error = Cat("Failed opening the temp RDB file ", tmp_, " (in server root dir ", dir,
                 ") for saving: ", std::strerror(errno));
    return false;
  }
  return true;
}

std::vector<std::string> FunctionLibrarySources(engine::Engine& e) {
  engine::FunctionLibraries* f = e.function_libraries();
  return f != nullptr ? f->LibrarySources() : std::vector<std::string>{};
}

void RdbFileWriter::Header(bool aof_base, int64_t used_mem,
                           const std::vector<std::string>& libraries,
                           const std::vector<std::pair<std::string, std::string>>* aux) {
  std::string h = "REDIS0010";
  RdbOut out(&h, false);
  Aux(out, "redis-ver", engine::kRedisVersion);
  Aux(out, "redis-bits", "64");
  Aux(out, "ctime", std::to_string(std::time(nullptr)));
  Aux(out, "used-mem", std::to_string(used_mem));
  if (aux != nullptr)
    for (const auto& [k, v] : *aux) Aux(out, k, v);
  Aux(out, "aof-base", aof_base ? "1" : "0");
  for (const std::string& code : libraries) {
    out.Byte(rdb::kOpFunction2);
    out.String(code);
  }
  Append(h);
}

void RdbFileWriter::BeginDb(int index, uint64_t keys, uint64_t expires) {
  std::string h;
  RdbOut out(&h, false);
  out.Byte(rdb::kOpSelectDb);
  out.Len(static_cast<uint64_t>(index));
  out.Byte(rdb::kOpResizeDb);
  out.Len(keys);
  out.Len(expires);
  Append(h);
}

void RdbFileWriter::Append(std::string_view bytes) {
  crc_ = Crc64(crc_, bytes.data(), bytes.size());
  pending_.append(bytes);
  if (pending_.size() >= kFlushBytes) Flush();
}

bool RdbFileWriter::Flush() {
  if (failed_op_ != nullptr) {
    pending_.clear();
    return false;
  }
  if (sink_ != nullptr) {
    if (!sink_(pending_)) {
      errno_ = EPIPE;
      failed_op_ = "write";
      pending_.clear();
      return false;
    }
    written_ += pending_.size();
    pending_.clear();
    return true;
  }
  size_t off = 0;
  while (off < pending_.size()) {
    size_t n = pending_.size() - off;
    const int64_t budget = g_fail_writes_after.load(std::memory_order_relaxed);
    if (budget >= 0 && static_cast<int64_t>(n) > budget) {
      if (budget == 0) {
        errno_ = ENOSPC;
        failed_op_ = "write";
        pending_.clear();
        return false;
      }
      n = static_cast<size_t>(budget);
    }
    const ssize_t w = write(fd_, pending_.data() + off, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      errno_ = errno;
      failed_op_ = "write";
      pending_.clear();
      return false;
    }
    if (budget >= 0) g_fail_writes_after.fetch_sub(w, std::memory_order_relaxed);
    off += static_cast<size_t>(w);
  }
  written_ += pending_.size();
  pending_.clear();
  return true;
}

bool RdbFileWriter::Finish(std::string* error) {
  std::string tail;
  tail.push_back(static_cast<char>(rdb::kOpEof));
  crc_ = Crc64(crc_, tail.data(), tail.size());
  PutLE(&tail, crc_, 8);
  pending_ += tail;
  auto fail = [&](const char* op, int err) {
    *error = Cat("Write error saving DB on disk(", op, "): ", std::strerror(err));
    Abort();
    return false;
  };
  if (!Flush()) return fail(failed_op_, errno_);
  if (sink_ != nullptr) return true;
  if (fsync(fd_) != 0) return fail("fsync", errno);
  if (close(fd_) != 0) {
    fd_ = -1;
    return fail("fclose", errno);
  }
  fd_ = -1;
  if (rename(tmp_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    *error = Cat("Error moving temp DB file ", tmp_, " on the final destination ", path_, ": ",
                 std::strerror(err));
    Abort();
    return false;
  }
  tmp_.clear();
  const int dfd = open(dir_.c_str(), O_RDONLY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
  return true;
}

void RdbFileWriter::Abort() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  if (!tmp_.empty()) unlink(tmp_.c_str());
  tmp_.clear();
}

void SkippedKeys::Add(const vsl_type* t) {
  ++keys;
  if (std::find(types.begin(), types.end(), t->name) == types.end()) types.push_back(t->name);
}

void SkippedKeys::Merge(const SkippedKeys& other) {
  keys += other.keys;
  for (const auto& t : other.types)
    if (std::find(types.begin(), types.end(), t) == types.end()) types.push_back(t);
}

void SkippedKeys::Warn(std::string_view what) const {
  if (keys == 0) return;
  std::string names;
  for (const auto& t : types) names += (names.empty() ? "" : ",") + t;
  spdlog::warn("{}: left out keys={} of types not persisted: {}", what, keys, names);
}

bool SerializeShard(Engine& e, const engine::Shard& shard, const EncodeOptions& opt, int64_t now_ms,
                    std::string* out, uint64_t* keys, SkippedKeys* skipped, std::string* error,
                    uint64_t chunks) {
  const engine::EvictionPolicy policy = e.eviction_policy();
  const bool lru = policy == engine::EvictionPolicy::kAllKeysLru ||
                   policy == engine::EvictionPolicy::kVolatileLru;
  const bool lfu = engine::IsLfu(policy);
  bool ok = true;
  RdbOut o(out, opt.compress);
  shard.table.ForEachInChunks(chunks, [&](const engine::Entry* en) {
    if (!ok || (en->expire_ms != 0 && en->expire_ms <= now_ms)) return;
    const vsl_type* t = e.registry().TypeById(en->type_id());
    if (t == nullptr) return;
    if (!t->persisted) {
      skipped->Add(t);
      return;
    }
    const size_t mark = out->size();
    if (en->expire_ms != 0) {
      o.Byte(rdb::kOpExpireMs);
      o.Millis(en->expire_ms);
    }
    if (lru) {
      o.Byte(rdb::kOpIdle);
      o.Len(static_cast<uint64_t>(engine::IdleMs(en->access(), now_ms) / 1000));
    } else if (lfu) {
      o.Byte(rdb::kOpFreq);
      o.Byte(static_cast<uint8_t>(engine::LfuFrequency(en->access(), now_ms)));
    }
    const std::string_view key = en->key();
    bool empty = false;
    if (!EncodeValue(t, en->value, &key, opt, now_ms, o, &empty, error)) {
      ok = false;
      return;
    }
    if (empty) {
      out->resize(mark);
      return;
    }
    ++*keys;
  });
  return ok;
}

// ---- DUMP payloads ----

std::string MakeDumpPayload(std::string_view record) {
  std::string p(record);
  PutLE(&p, rdb::kVersion, 2);
  PutLE(&p, Crc64(0, p.data(), p.size()), 8);
  return p;
}

bool VerifyDumpPayload(std::string_view payload, std::string_view* body) {
  if (payload.size() < 10) return false;
  const char* footer = payload.data() + payload.size() - 10;
  if (LoadLE(footer, 2) > static_cast<uint64_t>(rdb::kMaxVersion)) return false;
  if (Crc64(0, payload.data(), payload.size() - 8) != LoadLE(footer + 2, 8)) return false;
  *body = payload.substr(0, payload.size() - 10);
  return true;
}

// ---- loading ----

namespace {

// The keyspace part of a load, on the startup thread: the world is taken in batches of keys so
// that commands allowed while loading (INFO, CONFIG GET) still get through.
class Loader {
 public:
  Loader(Engine& e, bool aof_base) : e_(e), aof_base_(aof_base), w_(&scratch_, 2) {
    ctx_.engine = &e;
    ctx_.db = &e.db(0);
    ctx_.w = &w_;
    ctx_.world = true;
    ctx_.internal = true;
    ctx_.now_ms = e.Now();
  }

  bool Run(std::string_view data, LoadStats* stats, std::string* error);

 private:
  bool Fail(RdbIn& in, std::string* error) {
    *error = Cat("offset ", in.offset(), ": ",
                 in.error().empty() ? "Short read or OOM loading DB" : in.error());
    return false;
  }
  void Hold() {
    if (world_ == nullptr) world_ = std::make_unique<engine::WorldExclusive>(&e_);
    if (++batch_ % 1024 == 0) {
      world_.reset();  // lets INFO and the like run between batches
      world_ = std::make_unique<engine::WorldExclusive>(&e_);
      ctx_.now_ms = e_.Now();
    }
  }

  Engine& e_;
  bool aof_base_;
  std::string scratch_;
  resp::Writer w_;
  engine::CommandCtx ctx_;
  std::unique_ptr<engine::WorldExclusive> world_;
  uint64_t batch_ = 0;
};

bool Loader::Run(std::string_view data, LoadStats* stats, std::string* error) {
  RdbIn in(data);
  std::string_view magic;
  if (!in.Raw(9, &magic) || magic.substr(0, 5) != "REDIS") {
    *error = "Wrong signature trying to load DB from file";
    return false;
  }
  int version = 0;
  for (char c : magic.substr(5)) version = c >= '0' && c <= '9' ? version * 10 + (c - '0') : -1000;
  if (version < 1 || version > rdb::kMaxVersion) {
    *error = Cat("Can't handle RDB format version ", magic.substr(5));
    return false;
  }
  const bool check = e_.settings().params.Int(engine::ParamValues::Find("rdbchecksum")) != 0;
  int64_t expire = -1, idle = -1, freq = -1;
  int skipped_empty = 0;
  while (true) {
    uint8_t type;
    if (!in.Byte(&type)) return Fail(in, error);
    if (type == rdb::kOpExpire) {
      int32_t s;
      if (!in.Seconds32(&s)) return Fail(in, error);
      expire = int64_t{s} * 1000;
      continue;
    }
    if (type == rdb::kOpExpireMs) {
      if (!in.Millis(&expire)) return Fail(in, error);
      continue;
    }
    if (type == rdb::kOpFreq) {
      uint8_t f;
      if (!in.Byte(&f)) return Fail(in, error);
      freq = f;
      continue;
    }
    if (type == rdb::kOpIdle) {
      uint64_t v;
      if (!in.Len(&v)) return Fail(in, error);
      idle = static_cast<int64_t>(std::min<uint64_t>(v, INT64_MAX));
      continue;
    }
    if (type == rdb::kOpEof) break;
    if (type == rdb::kOpSelectDb) {
      uint64_t db;
      if (!in.Len(&db)) return Fail(in, error);
      if (db >= static_cast<uint64_t>(e_.db_count())) {
        *error = Cat("Data file was created with a Redis server configured to handle more than ",
                     e_.db_count(), " databases (db ", db, ")");
        return false;
      }
      ctx_.db = &e_.db(static_cast<int>(db));
      continue;
    }
    if (type == rdb::kOpResizeDb) {
      uint64_t a, b;
      if (!in.Len(&a) || !in.Len(&b)) return Fail(in, error);
      continue;
    }
    if (type == rdb::kOpAux) {
      std::string k, v;
      if (!in.String(&k) || !in.String(&v)) return Fail(in, error);
      if (k == "redis-ver") spdlog::info("loading RDB produced by version {}", v);
      int64_t n = 0;
      if (k == "repl-stream-db" && engine::ParseInt64(v, &n))
        stats->repl_stream_db = static_cast<int>(n);
      if (k == "repl-id" && v.size() == 40) stats->repl_id = v;
      if (k == "repl-offset" && engine::ParseInt64(v, &n) && n >= 0) stats->repl_offset = n;
      continue;
    }
    if (type == rdb::kOpModuleAux) {
      uint64_t id, when_op, when;
      if (!in.Len(&id) || !in.Len(&when_op) || !in.Len(&when)) return Fail(in, error);
      in.Fail("The RDB file contains AUX module data I can't load (no loaded module supports it)");
      return Fail(in, error);
    }
    if (type == rdb::kOpFunction2) {
      std::string code;
      if (!in.String(&code)) return Fail(in, error);
      engine::FunctionLibraries* f = e_.function_libraries();
      if (f == nullptr) {
        spdlog::warn("RDB function library skipped (this server has no scripting)");
        continue;
      }
      std::string why;
      if (!f->AddLibrarySource(code, &why)) {
        in.Fail(Cat("Failed loading library, ", why));
        return Fail(in, error);
      }
      continue;
    }
    if (type == rdb::kOpFunction) {
      in.Fail("function libraries of Redis 7.0 release candidates cannot be loaded");
      return Fail(in, error);
    }
    // A key.
    std::string key;
    if (!in.String(&key)) return Fail(in, error);
    RdbValue value;
    if (!DecodeValue(e_, type, in, &value)) {
      Discard(e_, &value);
      return Fail(in, error);
    }
    const int64_t now = e_.Now();
    const bool expired = !aof_base_ && expire != -1 && expire < now;
    if (value.empty() || expired) {
      if (value.empty() && skipped_empty++ < 10) spdlog::warn("RDB: skipping empty key: {}", key);
      if (expired) ++stats->expired;
      Discard(e_, &value);
      expire = idle = freq = -1;
      continue;
    }
    Hold();
    engine::Database& db = *ctx_.db;
    const uint64_t hash = engine::HashKey(key);
    engine::Shard& shard = db.shard(db.ShardOf(hash));
    if (shard.table.Find(key, hash) != nullptr) {
      Discard(e_, &value);
      *error = Cat("RDB has duplicated key '", key, "' in DB ", db.index());
      return false;
    }
    std::string why;
    if (!BuildValue(e_, &ctx_, key, &value, &why)) {
      Discard(e_, &value);
      *error = Cat("offset ", in.offset(), ": key '", key, "' cannot be built: ", why);
      return false;
    }
    if (engine::Entry* en = shard.table.Find(key, hash)) {
      if (expire != -1) e_.SetExpire(db, shard, en, expire);
      en->set_access(engine::RestoredAccess(e_.eviction_policy(), idle, freq, now, en->access()));
      ++stats->loaded;
    }
    expire = idle = freq = -1;
  }
  world_.reset();
  if (version >= 5) {
    std::string_view sum;
    if (!in.Raw(8, &sum)) return Fail(in, error);
    const uint64_t stored = LoadLE(sum.data(), 8);
    const uint64_t expected = Crc64(0, data.data(), in.offset() - 8);
    if (check && stored != 0 && stored != expected) {
      *error = Cat("Wrong RDB checksum expected: (", Hex(expected), ") but got (", Hex(stored),
                   "). Aborting now.");
      return false;
    }
  }
  stats->bytes = in.offset();
  return true;
}

}  // namespace

bool LoadRdbBytes(Engine& e, std::string_view data, bool aof_base, LoadStats* stats,
                  std::string* error) {
  // Read in order and checked at the end, as Redis does (a check of the last 8 bytes first
  // cannot tell a damaged file from a truncated one that happens to have an EOF byte before
  // them). Loading only happens at startup, which a refused file stops.
  Loader loader(e, aof_base);
  return loader.Run(data, stats, error);
}

bool LoadRdbFile(Engine& e, const std::string& path, bool aof_base, LoadStats* stats,
                 std::string* error) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = Cat(path, ": ", std::strerror(errno));
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    *error = Cat(path, ": ", std::strerror(errno));
    close(fd);
    return false;
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void* map = size == 0 ? nullptr : mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) {
    *error = Cat(path, ": mmap: ", std::strerror(errno));
    return false;
  }
  madvise(map, size, MADV_SEQUENTIAL);
  std::string why;
  const bool ok = LoadRdbBytes(e, {static_cast<const char*>(map), size}, aof_base, stats, &why);
  if (map != nullptr) munmap(map, size);
  if (!ok) *error = Cat(path, ": ", why);
  return ok;
}

}  // namespace vessel::persist
