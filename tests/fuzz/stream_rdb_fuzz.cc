// Fuzzes the streams module's decoder of Redis's stream RDB encodings (the value of an RDB file
// record or a DUMP payload: modules/streams/streams_type_rdb.cc), compiled in with its data structures
// over a host stand-in that implements the SDK's allocator and RDB slots on a byte buffer. The
// input is one type byte (15, 19 or 21 by its value modulo 3) and the value. A decoded stream is
// walked both ways, saved, loaded again and saved again: the two saves must be identical.
// Anything but a clean refusal or a consistent stream is a bug.
#include <malloc.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <string_view>

#include "streams_type.h"

struct vsl_writer {
  std::string buf;
};

struct vsl_reader {
  std::string_view data;
  bool failed = false;
  std::deque<std::string> strings;
};

namespace {

// Redis's rdbSaveLen / rdbLoadLen.
void PutLen(std::string* out, uint64_t v) {
  if (v < 64) {
    out->push_back(static_cast<char>(v));
  } else if (v < 16384) {
    out->push_back(static_cast<char>(0x40 | (v >> 8)));
    out->push_back(static_cast<char>(v));
  } else if (v <= UINT32_MAX) {
    out->push_back(static_cast<char>(0x80));
    for (int i = 3; i >= 0; --i) out->push_back(static_cast<char>(v >> (8 * i)));
  } else {
    out->push_back(static_cast<char>(0x81));
    for (int i = 7; i >= 0; --i) out->push_back(static_cast<char>(v >> (8 * i)));
  }
}

bool Take(vsl_reader* r, size_t n, std::string_view* out) {
  if (r->failed || r->data.size() < n) return r->failed = true, false;
  *out = r->data.substr(0, n);
  r->data.remove_prefix(n);
  return true;
}

uint64_t BigEndian(std::string_view b) {
  uint64_t v = 0;
  for (char c : b) v = v << 8 | static_cast<unsigned char>(c);
  return v;
}

// A length, or (encoded) a special string encoding's kind.
bool GetLen(vsl_reader* r, uint64_t* v, bool* encoded) {
  std::string_view b;
  if (!Take(r, 1, &b)) return false;
  const auto first = static_cast<unsigned char>(b[0]);
  *encoded = false;
  switch (first >> 6) {
    case 0:
      *v = first & 0x3F;
      return true;
    case 1:
      if (!Take(r, 1, &b)) return false;
      *v = uint64_t{first & 0x3Fu} << 8 | static_cast<unsigned char>(b[0]);
      return true;
    case 3:
      *encoded = true;
      *v = first & 0x3F;
      return true;
    default:
      if (first == 0x80 && Take(r, 4, &b)) return *v = BigEndian(b), true;
      if (first == 0x81 && Take(r, 8, &b)) return *v = BigEndian(b), true;
      return r->failed = true, false;
  }
}

int ReadLen(vsl_reader* r, uint64_t* v) {
  bool encoded;
  if (!GetLen(r, v, &encoded) || encoded) return r->failed = true, VSL_ERR;
  return VSL_OK;
}

int ReadString(vsl_reader* r, vsl_slice* out) {
  uint64_t len;
  bool encoded;
  if (!GetLen(r, &len, &encoded)) return VSL_ERR;
  std::string_view b;
  if (encoded) {  // an integer of 1, 2 or 4 bytes, little-endian (LZF is not decoded here)
    if (len > 2 || !Take(r, size_t{1} << len, &b)) return r->failed = true, VSL_ERR;
    uint64_t u = 0;
    for (size_t i = b.size(); i-- > 0;) u = u << 8 | static_cast<unsigned char>(b[i]);
    const int bits = static_cast<int>(8 * b.size());
    int64_t v = static_cast<int64_t>(u << (64 - bits)) >> (64 - bits);
    r->strings.push_back(std::to_string(v));
  } else {
    if (len > r->data.size() || !Take(r, static_cast<size_t>(len), &b)) return VSL_ERR;
    r->strings.emplace_back(b);
  }
  *out = {r->strings.back().data(), r->strings.back().size()};
  return VSL_OK;
}

int ReadRaw(vsl_reader* r, size_t n, vsl_slice* out) {
  std::string_view b;
  if (!Take(r, n, &b)) return VSL_ERR;
  *out = {b.data(), b.size()};
  return VSL_OK;
}

const vsl_api* Host() {
  static vsl_api api = [] {
    vsl_api a{};
    a.struct_size = sizeof(a);
    a.abi_major = VSL_ABI_MAJOR;
    a.abi_minor = VSL_ABI_MINOR;
    a.alloc = [](size_t n) { return std::malloc(n); };
    a.realloc = [](void* p, size_t n) { return std::realloc(p, n); };
    a.free = [](void* p) { std::free(p); };
    a.usable_size = [](const void* p) { return malloc_usable_size(const_cast<void*>(p)); };
    a.write_rdb_len = [](vsl_writer* w, uint64_t v) { PutLen(&w->buf, v); };
    a.write_rdb_string = [](vsl_writer* w, const char* p, size_t n) {
      PutLen(&w->buf, n);
      w->buf.append(p, n);
    };
    a.write_raw = [](vsl_writer* w, const char* p, size_t n) { w->buf.append(p, n); };
    a.read_rdb_len = ReadLen;
    a.read_rdb_string = ReadString;
    a.read_raw = ReadRaw;
    return a;
  }();
  return &api;
}

std::string Save(const vessel::streams::Stream& s) {
  vsl_writer w;
  vsl::Writer writer(&w);
  s.Serialize(writer);
  return w.buf;
}

vessel::streams::Stream* Load(std::string_view bytes, uint32_t type) {
  vsl_reader r;
  r.data = bytes;
  vsl::Reader reader(&r);
  vessel::streams::Stream* s = vessel::streams::Stream::Deserialize(reader, type);
  if (s != nullptr && r.failed) std::abort();  // a failed read must not give a value
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using vessel::streams::EntryLog;
  using vessel::streams::StreamId;
  vsl::g_api = Host();
  if (size == 0) return 0;
  static constexpr uint32_t kTypes[] = {15, 19, 21};
  const uint32_t type = kTypes[data[0] % 3];
  const std::string_view value(reinterpret_cast<const char*>(data) + 1, size - 1);
  vessel::streams::Stream* s = Load(value, type);
  if (s == nullptr) return 0;
  uint64_t forward = 0, backward = 0;
  for (bool rev : {false, true}) {
    EntryLog::Cursor c(s->log, StreamId{}, StreamId::Max(), rev);
    StreamId prev = rev ? StreamId::Max() : StreamId{};
    while (c.Next()) {
      if (rev ? c.id() > prev : c.id() < prev) std::abort();
      prev = c.id();
      for (uint32_t i = 0; i < c.pairs(); ++i) {
        std::string_view f, v;
        c.NextPair(&f, &v);
      }
      ++(rev ? backward : forward);
    }
  }
  if (forward != s->length() || backward != s->length()) std::abort();
  for (auto& [name, g] : s->groups) {
    int64_t lag;
    s->Lag(g, &lag);
  }
  const std::string first = Save(*s);
  vessel::streams::Stream* again = Load(first, 19);
  if (again == nullptr || Save(*again) != first) std::abort();
  vsl::Delete(again);
  vsl::Delete(s);
  return 0;
}
