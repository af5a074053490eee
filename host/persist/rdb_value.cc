// One key's value in RDB form (rdb_value.h).
#include "host/persist/rdb_value.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <map>

#include "host/config/params.h"
#include "host/engine/memory.h"
#include "host/engine/serialize.h"

namespace vessel::persist {
namespace {

using engine::Engine;

// The elements of a value as its visit callback hands them over, copied into one arena.
struct Collected {
  std::string arena;
  std::vector<std::pair<size_t, size_t>> spans;
  std::vector<double> scores;
  size_t max_len = 0;
  size_t size() const { return spans.size(); }
  std::string_view at(size_t i) const { return {arena.data() + spans[i].first, spans[i].second}; }
  static int Add(void* ud, const char* p, size_t n, double score) {
    auto* c = static_cast<Collected*>(ud);
    c->spans.emplace_back(c->arena.size(), n);
    c->arena.append(p, n);
    c->scores.push_back(score);
    c->max_len = std::max(c->max_len, n);
    return 0;
  }
};

bool Visit(const vsl_type* t, const void* value, Collected* c, std::string* error) {
  if (t->desc.visit == nullptr) {
    *error = engine::Cat("type '", t->name, "' has no visit callback: cannot write it to RDB");
    return false;
  }
  engine::memory::ModuleScope scope(t->module->id);
  if (t->desc.visit(nullptr, value, Collected::Add, c) != VSL_OK) {
    *error = engine::Cat("visiting a value of type '", t->name, "' failed");
    return false;
  }
  return true;
}

// The key of a record (null for a DUMP payload, which has none).
using Key = const std::string_view*;

// A record starts with its type, then its key.
void Head(RdbOut& out, uint8_t type, const Key& key) {
  out.Byte(type);
  if (key != nullptr) out.String(*key);
}

// Quicklist node size limit (list-max-listpack-size): negative = bytes (4 KB << -n-1), positive
// = entries (and at most 8 KB, Redis's SIZE_SAFETY_LIMIT).
bool NodeFull(const ListpackBuilder& lp, size_t next, int64_t fill) {
  if (lp.empty()) return false;
  const size_t grown = lp.bytes() + next + 11;
  if (fill < 0) {
    const int64_t level = std::min<int64_t>(-fill, 5);
    return grown > (size_t{4096} << (level - 1));
  }
  return lp.count() >= static_cast<size_t>(fill == 0 ? 1 : fill) || grown > 8192;
}

void EncodeList(const Collected& c, const EncodeOptions& opt, const Key& key, RdbOut& out) {
  constexpr size_t kPlainThreshold = size_t{1} << 30;  // Redis's packed_threshold
  std::string nodes;
  RdbOut body(&nodes, opt.compress);
  uint64_t count = 0;
  ListpackBuilder lp;
  auto flush = [&] {
    if (lp.empty()) return;
    body.Len(rdb::kContainerPacked);
    body.String(lp.Finish());
    ++count;
  };
  for (size_t i = 0; i < c.size(); ++i) {
    const std::string_view e = c.at(i);
    if (e.size() >= kPlainThreshold) {
      flush();
      body.Len(rdb::kContainerPlain);
      body.String(e);
      ++count;
      continue;
    }
    if (NodeFull(lp, e.size(), opt.list_max_size)) flush();
    lp.Add(e);
  }
  flush();
  Head(out, rdb::kListQuicklist2, key);
  out.Len(count);
  out.Raw(nodes);
}

void EncodeSet(const Collected& c, const EncodeOptions& opt, const Key& key, RdbOut& out) {
  if (c.size() <= static_cast<size_t>(opt.set_max_intset)) {
    std::vector<int64_t> ints;
    ints.reserve(c.size());
    int64_t v;
    for (size_t i = 0; i < c.size() && StrictInt64(c.at(i), &v); ++i) ints.push_back(v);
    if (ints.size() == c.size()) {
      std::sort(ints.begin(), ints.end());
      Head(out, rdb::kSetIntset, key);
      out.String(BuildIntset(ints));
      return;
    }
  }
  Head(out, rdb::kSet, key);
  out.Len(c.size());
  for (size_t i = 0; i < c.size(); ++i) out.String(c.at(i));
}

void EncodeZset(const Collected& c, const EncodeOptions& opt, const Key& key, RdbOut& out) {
  if (c.size() <= static_cast<size_t>(opt.zset_max_entries) &&
      c.max_len <= static_cast<size_t>(opt.zset_max_value)) {
    ListpackBuilder lp;
    for (size_t i = 0; i < c.size(); ++i) {
      lp.Add(c.at(i));
      lp.Add(FormatScore(c.scores[i]));
    }
    Head(out, rdb::kZsetListpack, key);
    out.String(lp.Finish());
    return;
  }
  Head(out, rdb::kZset2, key);
  out.Len(c.size());
  for (size_t i = c.size(); i-- > 0;) {  // greatest first, as Redis writes a skiplist
    out.String(c.at(i));
    out.BinaryDouble(c.scores[i]);
  }
}

// Hash elements come in pairs; the value's score is the field's expiry (0 = none).
bool EncodeHash(const Collected& c, const EncodeOptions& opt, int64_t now, const Key& key,
                RdbOut& out) {
  struct Field {
    size_t i;  // index of the field element
    int64_t ttl;
  };
  std::vector<Field> live;
  live.reserve(c.size() / 2);
  int64_t min_ttl = 0;
  size_t max_len = 0;
  for (size_t i = 0; i + 1 < c.size(); i += 2) {
    const auto ttl = static_cast<int64_t>(c.scores[i + 1]);
    if (ttl != 0 && ttl <= now) continue;  // expired, not yet purged
    live.push_back({i, ttl});
    if (ttl != 0 && (min_ttl == 0 || ttl < min_ttl)) min_ttl = ttl;
    max_len = std::max({max_len, c.at(i).size(), c.at(i + 1).size()});
  }
  if (live.empty()) return false;
  const bool small = live.size() <= static_cast<size_t>(opt.hash_max_entries) &&
                     max_len <= static_cast<size_t>(opt.hash_max_value);
  if (small) {
    ListpackBuilder lp;
    if (min_ttl == 0) {
      for (const Field& f : live) {
        lp.Add(c.at(f.i));
        lp.Add(c.at(f.i + 1));
      }
      Head(out, rdb::kHashListpack, key);
    } else {
      // Redis 7.4's listpackex: (field, value, ttl) ordered by TTL, fields without one last.
      std::stable_sort(live.begin(), live.end(), [](const Field& a, const Field& b) {
        return (a.ttl == 0 ? INT64_MAX : a.ttl) < (b.ttl == 0 ? INT64_MAX : b.ttl);
      });
      for (const Field& f : live) {
        lp.Add(c.at(f.i));
        lp.Add(c.at(f.i + 1));
        lp.AddInt(f.ttl);
      }
      Head(out, rdb::kHashListpackEx, key);
      out.Millis(min_ttl);
    }
    out.String(lp.Finish());
    return true;
  }
  if (min_ttl == 0) {
    Head(out, rdb::kHash, key);
    out.Len(live.size());
    for (const Field& f : live) {
      out.String(c.at(f.i));
      out.String(c.at(f.i + 1));
    }
    return true;
  }
  Head(out, rdb::kHashMetadata, key);
  out.Millis(min_ttl);
  out.Len(live.size());
  for (const Field& f : live) {
    out.Len(f.ttl == 0 ? 0 : static_cast<uint64_t>(f.ttl - min_ttl + 1));
    out.String(c.at(f.i));
    out.String(c.at(f.i + 1));
  }
  return true;
}

// ---- module records ----

struct ModuleWriter : vsl_writer {
  RdbOut* out;
};
RdbOut& OutOf(vsl_writer* w) { return *static_cast<ModuleWriter*>(w)->out; }
const engine::WriteFormat kModuleWrite = {
    .u64 =
        [](vsl_writer* w, uint64_t v) {
          OutOf(w).Len(rdb::kModUint);
          OutOf(w).Len(v);
        },
    .i64 =
        [](vsl_writer* w, int64_t v) {
          OutOf(w).Len(rdb::kModSint);
          OutOf(w).Len(static_cast<uint64_t>(v));
        },
    .dbl =
        [](vsl_writer* w, double v) {
          OutOf(w).Len(rdb::kModDouble);
          OutOf(w).BinaryDouble(v);
        },
    .bytes =
        [](vsl_writer* w, const char* p, size_t n) {
          OutOf(w).Len(rdb::kModString);
          OutOf(w).String({p, n});
        },
};

struct ModuleReader : vsl_reader {
  RdbIn* in;
  std::deque<std::string> strings;  // borrowed by the type until deserialize returns
};
ModuleReader& ReaderOf(vsl_reader* r) { return *static_cast<ModuleReader*>(r); }
bool Opcode(vsl_reader* r, uint64_t want, uint64_t alt = UINT64_MAX) {
  uint64_t op;
  return ReaderOf(r).in->Len(&op) && (op == want || op == alt);
}
const engine::ReadFormat kModuleRead = {
    .u64 = [](vsl_reader* r, uint64_t* v) -> int {
      return Opcode(r, rdb::kModUint) && ReaderOf(r).in->Len(v) ? VSL_OK : VSL_ERR;
    },
    .i64 = [](vsl_reader* r, int64_t* v) -> int {
      uint64_t u;
      if (!Opcode(r, rdb::kModSint, rdb::kModUint) || !ReaderOf(r).in->Len(&u)) return VSL_ERR;
      *v = static_cast<int64_t>(u);
      return VSL_OK;
    },
    .dbl = [](vsl_reader* r, double* v) -> int {
      return Opcode(r, rdb::kModDouble) && ReaderOf(r).in->BinaryDouble(v) ? VSL_OK : VSL_ERR;
    },
    .bytes = [](vsl_reader* r, vsl_slice* out) -> int {
      ModuleReader& m = ReaderOf(r);
      std::string s;
      if (!Opcode(r, rdb::kModString) || !m.in->String(&s)) return VSL_ERR;
      m.strings.push_back(std::move(s));
      *out = {m.strings.back().data(), m.strings.back().size()};
      return VSL_OK;
    },
};

bool EncodeModule(const vsl_type* t, const void* value, const Key& key, RdbOut& out,
                  std::string* error) {
  if (t->desc.serialize == nullptr) {
    *error = engine::Cat("type '", t->name, "' cannot be saved (no serialize callback)");
    return false;
  }
  if (t->rdb_id == 0) {
    *error = t->rdb_error;
    return false;
  }
  Head(out, rdb::kModule2, key);
  out.Len(t->rdb_id);
  ModuleWriter w;
  w.format = &kModuleWrite;
  w.out = &out;
  int rc;
  {
    engine::memory::ModuleScope scope(t->module->id);
    rc = t->desc.serialize(nullptr, value, &w);
  }
  if (rc != VSL_OK) {
    *error = engine::Cat("serializing a value of type '", t->name, "' failed");
    return false;
  }
  out.Len(rdb::kModEof);
  return true;
}

// ---- types saved in one of Redis's own encodings (ABI 1.7: vsl_type_desc.rdb_type) ----

const engine::WriteFormat kNativeWrite = {
    .u64 = [](vsl_writer* w, uint64_t v) { OutOf(w).Len(v); },
    .i64 = [](vsl_writer* w, int64_t v) { OutOf(w).Len(static_cast<uint64_t>(v)); },
    .dbl = [](vsl_writer* w, double v) { OutOf(w).BinaryDouble(v); },
    .bytes =
        [](vsl_writer* w, const char* p, size_t n) {
          OutOf(w).String({p, n});
        },
    .rdb_len = [](vsl_writer* w, uint64_t v) { OutOf(w).Len(v); },
    .rdb_string =
        [](vsl_writer* w, const char* p, size_t n) {
          OutOf(w).String({p, n});
        },
    .raw =
        [](vsl_writer* w, const char* p, size_t n) {
          OutOf(w).Raw({p, n});
        },
};

const engine::ReadFormat kNativeRead = {
    .u64 = [](vsl_reader* r, uint64_t* v) -> int {
      return ReaderOf(r).in->Len(v) ? VSL_OK : VSL_ERR;
    },
    .i64 = [](vsl_reader* r, int64_t* v) -> int {
      uint64_t u;
      if (!ReaderOf(r).in->Len(&u)) return VSL_ERR;
      *v = static_cast<int64_t>(u);
      return VSL_OK;
    },
    .dbl = [](vsl_reader* r, double* v) -> int {
      return ReaderOf(r).in->BinaryDouble(v) ? VSL_OK : VSL_ERR;
    },
    .bytes = kModuleRead.bytes,
    .rdb_len = [](vsl_reader* r, uint64_t* v) -> int {
      return ReaderOf(r).in->Len(v) ? VSL_OK : VSL_ERR;
    },
    .rdb_string = [](vsl_reader* r, vsl_slice* out) -> int {
      ModuleReader& m = ReaderOf(r);
      std::string s;
      if (!m.in->String(&s)) return VSL_ERR;
      m.strings.push_back(std::move(s));
      *out = {m.strings.back().data(), m.strings.back().size()};
      return VSL_OK;
    },
    .raw = [](vsl_reader* r, size_t n, vsl_slice* out) -> int {
      std::string_view v;
      if (!ReaderOf(r).in->Raw(n, &v)) return VSL_ERR;
      *out = {v.data(), v.size()};
      return VSL_OK;
    },
};

bool EncodeNative(const vsl_type* t, const void* value, const Key& key, RdbOut& out,
                  std::string* error) {
  Head(out, static_cast<uint8_t>(t->desc.rdb_type), key);
  ModuleWriter w;
  w.format = &kNativeWrite;
  w.out = &out;
  int rc;
  {
    engine::memory::ModuleScope scope(t->module->id);
    rc = t->desc.serialize(nullptr, value, &w);
  }
  if (rc != VSL_OK) {
    *error = engine::Cat("serializing a value of type '", t->name, "' failed");
    return false;
  }
  return true;
}

bool DecodeNative(Engine& e, const vsl_type* t, uint8_t type, RdbIn& in, RdbValue* out) {
  ModuleReader r;
  r.format = &kNativeRead;
  r.in = &in;
  void* value;
  {
    engine::memory::ModuleScope scope(t->module->id);
    value = t->desc.deserialize(nullptr, &r, type);
  }
  if (value != nullptr && r.failed) {
    e.FreeValue(t->id, value, false);
    value = nullptr;
  }
  if (value == nullptr) {
    if (in.error().empty())
      in.Fail(engine::Cat("the ", t->name, " value (RDB type ", int{type}, ") is malformed"));
    return false;
  }
  out->kind = RdbValue::Kind::kModule;
  out->module_type = t;
  out->module_value = value;
  return true;
}

std::string RdbTypeName(uint64_t id) {
  static constexpr char kChars[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string name(9, ' ');
  id >>= 10;
  for (int i = 8; i >= 0; --i, id >>= 6) name[i] = kChars[id & 63];
  return name;
}

bool DecodeModule(Engine& e, RdbIn& in, RdbValue* out) {
  uint64_t id;
  if (!in.Len(&id)) return false;
  const vsl_type* t = e.registry().TypeByRdbId(id);
  if (t == nullptr) {
    return in.Fail(
        engine::Cat("The RDB file contains module data I can't load: no matching module type '",
                    RdbTypeName(id), "'"));
  }
  const auto encver = static_cast<uint32_t>(id & 1023);
  if (t->desc.deserialize == nullptr || encver > t->encoding_version) {
    return in.Fail(engine::Cat("module type '", t->rdb_name, "' (", t->name,
                               ") cannot load encoding version ", encver));
  }
  ModuleReader r;
  r.format = &kModuleRead;
  r.in = &in;
  void* value;
  {
    engine::memory::ModuleScope scope(t->module->id);
    value = t->desc.deserialize(nullptr, &r, encver);
  }
  uint64_t eof = 1;
  if (value != nullptr && (r.failed || !in.Len(&eof) || eof != rdb::kModEof)) {
    e.FreeValue(t->id, value, false);
    value = nullptr;
  }
  if (value == nullptr) {
    return in.Fail(engine::Cat("The RDB file contains module data for the module type '",
                               t->rdb_name, "' (", t->name,
                               "), that the responsible module is not able to load"));
  }
  out->kind = RdbValue::Kind::kModule;
  out->module_type = t;
  out->module_value = value;
  return true;
}

// ---- decoding helpers ----

bool ReadStrings(RdbIn& in, uint64_t n, std::vector<std::string>* out) {
  out->reserve(std::min<uint64_t>(n, in.remaining()));
  for (uint64_t i = 0; i < n; ++i) {
    out->emplace_back();
    if (!in.String(&out->back())) return false;
  }
  return true;
}

bool ParseScore(std::string_view s, double* out) {
  const std::string text(s);
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && !text.empty() && !std::isnan(*out);
}

// A blob holding a compact encoding, walked by `walk` into elems.
template <typename Walk>
bool Blob(RdbIn& in, RdbValue* out, Walk walk, const char* what) {
  std::string blob;
  if (!in.String(&blob)) return false;
  if (!walk(std::string_view(blob), [&](std::string_view s) {
        out->elems.emplace_back(s);
        return true;
      }))
    return in.Fail(engine::Cat(what, " integrity check failed"));
  return true;
}

// Pairs (member, score text) of a zset blob into elems/scores.
bool SplitScores(RdbIn& in, RdbValue* out) {
  if (out->elems.size() % 2 != 0) return in.Fail("zset blob with an odd number of elements");
  std::vector<std::string> members;
  members.reserve(out->elems.size() / 2);
  for (size_t i = 0; i < out->elems.size(); i += 2) {
    double score;
    if (!ParseScore(out->elems[i + 1], &score)) return in.Fail("zset blob with a bad score");
    members.push_back(std::move(out->elems[i]));
    out->scores.push_back(score);
  }
  out->elems = std::move(members);
  return true;
}

bool DecodeHashListpackEx(RdbIn& in, RdbValue* out, bool with_min) {
  int64_t min_expire;
  if (with_min && !in.Millis(&min_expire)) return false;
  if (!Blob(in, out, ForEachListpack, "Hash listpack")) return false;
  if (out->elems.size() % 3 != 0) return in.Fail("hash listpack with TTLs: bad element count");
  std::vector<std::string> pairs;
  pairs.reserve(out->elems.size() / 3 * 2);
  for (size_t i = 0; i < out->elems.size(); i += 3) {
    int64_t ttl;
    if (!StrictInt64(out->elems[i + 2], &ttl) || ttl < 0) return in.Fail("bad hash field TTL");
    pairs.push_back(std::move(out->elems[i]));
    pairs.push_back(std::move(out->elems[i + 1]));
    out->ttls.push_back(ttl);
  }
  out->elems = std::move(pairs);
  return true;
}

bool DecodeHashMetadata(RdbIn& in, RdbValue* out, bool relative) {
  int64_t min_expire = 0;
  uint64_t n;
  if (relative && !in.Millis(&min_expire)) return false;
  if (!in.Len(&n)) return false;
  out->elems.reserve(std::min<uint64_t>(n, in.remaining()) * 2);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t ttl;
    std::string f, v;
    if (!in.Len(&ttl) || !in.String(&f) || !in.String(&v)) return false;
    // Field TTLs are unix ms well below 2^48 (Redis's EB_EXPIRE_TIME_MAX); anything larger is
    // damage, and refusing it first keeps the sum below from overflowing.
    constexpr uint64_t kMaxTtl = uint64_t{1} << 48;
    if (ttl > kMaxTtl || min_expire < 0 || min_expire > static_cast<int64_t>(kMaxTtl))
      return in.Fail("bad hash field TTL");
    const int64_t at = ttl == 0 ? 0
                                : (relative ? static_cast<int64_t>(ttl) + min_expire - 1
                                            : static_cast<int64_t>(ttl));
    if (at < 0) return in.Fail("bad hash field TTL");
    out->elems.push_back(std::move(f));
    out->elems.push_back(std::move(v));
    out->ttls.push_back(at);
  }
  return true;
}

bool DecodeQuicklist(RdbIn& in, RdbValue* out, bool v2) {
  uint64_t nodes;
  if (!in.Len(&nodes)) return false;
  for (uint64_t i = 0; i < nodes; ++i) {
    uint64_t container = rdb::kContainerPacked;
    if (v2 && !in.Len(&container)) return false;
    if (container != rdb::kContainerPacked && container != rdb::kContainerPlain)
      return in.Fail("Quicklist integrity check failed.");
    std::string blob;
    if (!in.String(&blob)) return false;
    if (blob.empty()) return in.Fail("empty quicklist node");
    if (container == rdb::kContainerPlain) {
      out->elems.push_back(std::move(blob));
      continue;
    }
    auto add = [&](std::string_view s) {
      out->elems.emplace_back(s);
      return true;
    };
    if (!(v2 ? ForEachListpack(blob, add) : ForEachZiplist(blob, add)))
      return in.Fail(v2 ? "Listpack integrity check failed." : "Ziplist integrity check failed.");
  }
  return true;
}

// ---- building ----

class Caller {
 public:
  Caller(Engine& e, engine::CommandCtx* parent, std::string_view key)
      : e_(e), parent_(parent), key_(key) {}
  // Runs cmd key <args...> in batches: `head` arguments after the key, then `per` arguments per
  // item for items [0, n), `item(i, argv)` appending them.
  template <typename F>
  bool Batched(std::initializer_list<std::string_view> head, size_t n, size_t per, F&& item,
               std::string* error) {
    constexpr size_t kMaxArgs = 1024;
    std::vector<std::string_view> argv;
    for (size_t i = 0; i < n;) {
      argv.clear();
      argv.push_back(*head.begin());
      argv.push_back(key_);
      argv.insert(argv.end(), head.begin() + 1, head.end());
      for (; i < n && argv.size() + per <= kMaxArgs; ++i) item(i, argv);
      if (!Run(argv, error)) return false;
    }
    return true;
  }
  bool Run(const std::vector<std::string_view>& argv, std::string* error) {
    out_.clear();
    if (!e_.Call(parent_, argv, 2, &out_) || (!out_.empty() && out_[0] == '-')) {
      *error = engine::Cat(argv[0], ": ", out_.substr(1, out_.find('\r') - 1));
      return false;
    }
    return true;
  }

 private:
  Engine& e_;
  engine::CommandCtx* parent_;
  std::string_view key_;
  std::string out_;
};

}  // namespace

EncodeOptions EncodeOptions::FromEngine(Engine& e) {
  auto get = [&](const char* name) {
    return e.settings().params.Int(engine::ParamValues::Find(name));
  };
  EncodeOptions o;
  o.compress = get("rdbcompression") != 0;
  o.hash_max_entries = get("hash-max-listpack-entries");
  o.hash_max_value = get("hash-max-listpack-value");
  o.zset_max_entries = get("zset-max-listpack-entries");
  o.zset_max_value = get("zset-max-listpack-value");
  o.set_max_intset = get("set-max-intset-entries");
  o.list_max_size = get("list-max-listpack-size");
  return o;
}

bool EncodeValue(const vsl_type* t, const void* value, const std::string_view* key,
                 const EncodeOptions& opt, int64_t now_ms, RdbOut& out, bool* empty,
                 std::string* error) {
  *empty = false;
  const std::string& name = t->name;
  if (t->rdb_native()) return EncodeNative(t, value, key, out, error);
  if (name != "string" && name != "list" && name != "set" && name != "hash" && name != "zset")
    return EncodeModule(t, value, key, out, error);
  Collected c;
  if (!Visit(t, value, &c, error)) return false;
  if (name == "string") {
    if (c.size() != 1) {
      *error = "a string value visited as other than one element";
      return false;
    }
    Head(out, rdb::kString, key);
    out.String(c.at(0));
  } else if (c.size() == 0) {
    *empty = true;
  } else if (name == "list") {
    EncodeList(c, opt, key, out);
  } else if (name == "set") {
    EncodeSet(c, opt, key, out);
  } else if (name == "zset") {
    EncodeZset(c, opt, key, out);
  } else {
    *empty = !EncodeHash(c, opt, now_ms, key, out);
  }
  return true;
}

bool DecodeValue(Engine& e, uint8_t type, RdbIn& in, RdbValue* out) {
  using K = RdbValue::Kind;
  uint64_t n;
  if (const vsl_type* t = e.registry().TypeByRdbType(type); t != nullptr)
    return DecodeNative(e, t, type, in, out);
  switch (type) {
    case rdb::kString:
      out->kind = K::kString;
      out->elems.emplace_back();
      return in.String(&out->elems.back());
    case rdb::kList:
    case rdb::kSet:
      out->kind = type == rdb::kList ? K::kList : K::kSet;
      return in.Len(&n) && ReadStrings(in, n, &out->elems);
    case rdb::kZset:
    case rdb::kZset2: {
      out->kind = K::kZset;
      if (!in.Len(&n)) return false;
      for (uint64_t i = 0; i < n; ++i) {
        std::string m;
        double score;
        if (!in.String(&m)) return false;
        if (!(type == rdb::kZset2 ? in.BinaryDouble(&score) : in.TextDouble(&score))) return false;
        if (std::isnan(score)) return in.Fail("Zset with NAN score detected");
        out->elems.push_back(std::move(m));
        out->scores.push_back(score);
      }
      return true;
    }
    case rdb::kHash:
      out->kind = K::kHash;
      return in.Len(&n) && n <= UINT64_MAX / 2 && ReadStrings(in, n * 2, &out->elems);
    case rdb::kListQuicklist:
    case rdb::kListQuicklist2:
      out->kind = K::kList;
      return DecodeQuicklist(in, out, type == rdb::kListQuicklist2);
    case rdb::kListZiplist:
      out->kind = K::kList;
      return Blob(in, out, ForEachZiplist, "List ziplist");
    case rdb::kSetIntset:
      out->kind = K::kSet;
      return Blob(in, out, ForEachIntset, "Intset");
    case rdb::kSetListpack:
      out->kind = K::kSet;
      return Blob(in, out, ForEachListpack, "Set listpack");
    case rdb::kZsetZiplist:
    case rdb::kZsetListpack:
      out->kind = K::kZset;
      return Blob(in, out, type == rdb::kZsetZiplist ? ForEachZiplist : ForEachListpack,
                  "Zset listpack") &&
             SplitScores(in, out);
    case rdb::kHashZipmap:
    case rdb::kHashZiplist:
    case rdb::kHashListpack:
      out->kind = K::kHash;
      if (!Blob(in, out,
                type == rdb::kHashZipmap
                    ? ForEachZipmap
                    : (type == rdb::kHashZiplist ? ForEachZiplist : ForEachListpack),
                "Hash listpack"))
        return false;
      return out->elems.size() % 2 == 0 || in.Fail("hash blob with an odd number of elements");
    case rdb::kHashListpackEx:
    case rdb::kHashListpackExPreGa:
      out->kind = K::kHash;
      return DecodeHashListpackEx(in, out, type == rdb::kHashListpackEx);
    case rdb::kHashMetadata:
    case rdb::kHashMetadataPreGa:
      out->kind = K::kHash;
      return DecodeHashMetadata(in, out, type == rdb::kHashMetadata);
    case rdb::kModule2:
      return DecodeModule(e, in, out);
    case rdb::kModulePreGa:
      return in.Fail("module values of Redis 4.0 release candidates (RDB type 6) cannot be loaded");
    case rdb::kStreamListpacks:
    case rdb::kStreamListpacks2:
    case rdb::kStreamListpacks3:
      return in.Fail(engine::Cat("streams (RDB type ", int{type},
                                 ") are not supported: no loaded module reads them"));
    default:
      return in.Fail(engine::Cat("Unknown RDB encoding type ", int{type}));
  }
}

void Discard(Engine& e, RdbValue* v) {
  if (v->module_value != nullptr) e.FreeValue(v->module_type->id, v->module_value, false);
  v->module_value = nullptr;
}

bool BuildValue(Engine& e, engine::CommandCtx* parent, std::string_view key, RdbValue* v,
                std::string* error) {
  using K = RdbValue::Kind;
  Caller call(e, parent, key);
  const auto& el = v->elems;
  auto one = [&](size_t i, std::vector<std::string_view>& a) { a.push_back(el[i]); };
  switch (v->kind) {
    case K::kModule: {
      engine::Database& db = *parent->db;
      const uint64_t hash = engine::HashKey(key);
      engine::Shard& shard = db.shard(db.ShardOf(hash));
      e.Store(db, shard, key, hash, v->module_type->id, v->module_value, false);
      v->module_value = nullptr;
      return true;
    }
    case K::kString:
      return call.Run({"SET", key, el[0]}, error);
    case K::kList:
      return call.Batched({"RPUSH"}, el.size(), 1, one, error);
    case K::kSet:
      return call.Batched({"SADD"}, el.size(), 1, one, error);
    case K::kZset: {
      std::vector<std::string> scores;
      scores.reserve(v->scores.size());
      for (double s : v->scores) scores.push_back(FormatScore(s));
      return call.Batched(
          {"ZADD"}, el.size(), 2,
          [&](size_t i, std::vector<std::string_view>& a) {
            a.push_back(scores[i]);
            a.push_back(el[i]);
          },
          error);
    }
    case K::kHash: {
      if (!call.Batched(
              {"HSET"}, el.size() / 2, 2,
              [&](size_t i, std::vector<std::string_view>& a) {
                a.push_back(el[2 * i]);
                a.push_back(el[2 * i + 1]);
              },
              error))
        return false;
      // Field TTLs: one HPEXPIREAT per distinct time.
      std::map<int64_t, std::vector<size_t>> by_time;
      for (size_t i = 0; i < v->ttls.size(); ++i)
        if (v->ttls[i] != 0) by_time[v->ttls[i]].push_back(i);
      for (const auto& [at, fields] : by_time) {
        const std::string when = std::to_string(at);
        const std::string count = std::to_string(fields.size());
        std::vector<std::string_view> argv = {"HPEXPIREAT", key, when, "FIELDS", count};
        for (size_t i : fields) argv.push_back(el[2 * i]);
        if (!call.Run(argv, error)) return false;
      }
      return true;
    }
  }
  return false;
}

}  // namespace vessel::persist
