// A stand-in for the host's vsl_api in fuzz targets and unit tests that compile a module's value
// type on its own: the system allocator for memory, and Vessel's default serialization framing
// (little-endian u64, length-prefixed bytes) over a byte string, so a target feeds its input to a
// type's Deserialize and reads back what Serialize writes. Only the slots a value type's code calls
// are filled; the others stay null.
#ifndef VESSEL_TESTS_SUPPORT_FAKE_VSL_API_H_
#define VESSEL_TESTS_SUPPORT_FAKE_VSL_API_H_

#include <malloc.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "vessel/module.hpp"

struct vsl_writer {
  std::string buf;
};

struct vsl_reader {
  std::string_view data;
};

namespace vessel::fuzz {

inline void PutU64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

inline int TakeU64(vsl_reader* r, uint64_t* v) {
  if (r->data.size() < 8) return VSL_ERR;
  uint64_t x = 0;
  for (int i = 0; i < 8; ++i) x |= uint64_t{static_cast<unsigned char>(r->data[i])} << (8 * i);
  r->data.remove_prefix(8);
  *v = x;
  return VSL_OK;
}

// Installs the table as the module code's vsl::Api(). Call once, before any value code runs.
inline void InstallFakeApi() {
  static vsl_api api = [] {
    vsl_api a{};
    a.struct_size = sizeof(vsl_api);
    a.abi_major = VSL_ABI_MAJOR;
    a.abi_minor = VSL_ABI_MINOR;
    a.alloc = [](size_t n) { return std::malloc(n == 0 ? 1 : n); };
    a.realloc = [](void* p, size_t n) { return std::realloc(p, n == 0 ? 1 : n); };
    a.free = [](void* p) { std::free(p); };
    a.usable_size = [](const void* p) { return malloc_usable_size(const_cast<void*>(p)); };
    a.write_u64 = [](vsl_writer* w, uint64_t v) { PutU64(&w->buf, v); };
    a.write_i64 = [](vsl_writer* w, int64_t v) { PutU64(&w->buf, static_cast<uint64_t>(v)); };
    a.write_double = [](vsl_writer* w, double v) {
      uint64_t u;
      std::memcpy(&u, &v, sizeof(u));
      PutU64(&w->buf, u);
    };
    a.write_bytes = [](vsl_writer* w, const char* p, size_t n) {
      PutU64(&w->buf, n);
      w->buf.append(p, n);
    };
    a.read_u64 = [](vsl_reader* r, uint64_t* v) { return TakeU64(r, v); };
    a.read_i64 = [](vsl_reader* r, int64_t* v) {
      uint64_t u;
      if (TakeU64(r, &u) != VSL_OK) return VSL_ERR;
      *v = static_cast<int64_t>(u);
      return VSL_OK;
    };
    a.read_double = [](vsl_reader* r, double* v) {
      uint64_t u;
      if (TakeU64(r, &u) != VSL_OK) return VSL_ERR;
      std::memcpy(v, &u, sizeof(u));
      return VSL_OK;
    };
    a.read_bytes = [](vsl_reader* r, vsl_slice* out) {
      uint64_t n;
      if (TakeU64(r, &n) != VSL_OK || n > r->data.size()) return VSL_ERR;
      *out = {r->data.data(), static_cast<size_t>(n)};
      r->data.remove_prefix(static_cast<size_t>(n));
      return VSL_OK;
    };
    return a;
  }();
  vsl::g_api = &api;
}

// Decodes `bytes` with T::Deserialize (encoding version `encver`); nullptr when refused.
template <class T>
T* Decode(std::string_view bytes, uint32_t encver) {
  vsl_reader r{bytes};
  vsl::Reader reader(&r);
  return T::Deserialize(reader, encver);
}

template <class T>
std::string Encode(const T& value) {
  vsl_writer w;
  vsl::Writer writer(&w);
  value.Serialize(writer);
  return w.buf;
}

}  // namespace vessel::fuzz

#endif  // VESSEL_TESTS_SUPPORT_FAKE_VSL_API_H_
