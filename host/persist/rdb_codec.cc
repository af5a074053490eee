// Redis's RDB building blocks (rdb_codec.h), written from the formats of Redis 7.0's rdb.c,
// listpack.c, intset.c, ziplist.c and zipmap.c.
#include "host/persist/rdb_codec.h"

#include <lzf.h>

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace vessel::persist {
namespace {

// ---- CRC64 (slicing by 8) ----

constexpr uint64_t Reverse64(uint64_t v) {
  uint64_t r = 0;
  for (int i = 0; i < 64; ++i) r |= ((v >> i) & 1) << (63 - i);
  return r;
}

struct Crc64Tables {
  std::array<std::array<uint64_t, 256>, 8> t{};
  Crc64Tables() {
    constexpr uint64_t kPoly = Reverse64(0xad93d23594c935a9ull);
    for (uint64_t i = 0; i < 256; ++i) {
      uint64_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
      t[0][i] = c;
    }
    for (int k = 1; k < 8; ++k)
      for (int i = 0; i < 256; ++i) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xff];
  }
};

const Crc64Tables& Tables() {
  static const Crc64Tables tables;
  return tables;
}

uint64_t LoadLE(const unsigned char* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}

void PutLE(std::string* out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

std::string_view IntText(int64_t v, char (&buf)[24]) {
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return {buf, static_cast<size_t>(end - buf)};
}

// The number of bytes of a listpack backlen for an entry of l bytes (lpEncodeBacklen).
size_t BacklenSize(uint64_t l) {
  if (l <= 127) return 1;
  if (l < 16383) return 2;
  if (l < 2097151) return 3;
  if (l < 268435455) return 4;
  return 5;
}

void PutBacklen(std::string* out, uint64_t l) {
  unsigned char b[5];
  const size_t n = BacklenSize(l);
  // Stored so that it reads backwards from the entry's end: the last byte holds the low 7 bits.
  for (size_t i = 0; i < n; ++i) {
    const size_t shift = 7 * (n - 1 - i);
    b[i] = static_cast<unsigned char>((l >> shift) & 127);
    if (i > 0) b[i] |= 128;
  }
  out->append(reinterpret_cast<const char*>(b), n);
}

}  // namespace

uint64_t Crc64(uint64_t crc, const void* data, size_t len) {
  const auto& t = Tables().t;
  const auto* p = static_cast<const unsigned char*>(data);
  while (len >= 8) {
    crc ^= LoadLE(p, 8);
    crc = t[7][crc & 0xff] ^ t[6][(crc >> 8) & 0xff] ^ t[5][(crc >> 16) & 0xff] ^
          t[4][(crc >> 24) & 0xff] ^ t[3][(crc >> 32) & 0xff] ^ t[2][(crc >> 40) & 0xff] ^
          t[1][(crc >> 48) & 0xff] ^ t[0][crc >> 56];
    p += 8;
    len -= 8;
  }
  while (len-- > 0) crc = t[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return crc;
}

bool StrictInt64(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  if (s.size() == 1 && s[0] == '0') {
    *out = 0;
    return true;
  }
  size_t i = 0;
  const bool neg = s[0] == '-';
  if (neg) ++i;
  if (i >= s.size() || s[i] < '1' || s[i] > '9') return false;
  uint64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    const uint64_t d = static_cast<uint64_t>(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  if (neg) {
    if (v > uint64_t{1} << 63) return false;
    *out = static_cast<int64_t>(0 - v);
  } else {
    if (v > static_cast<uint64_t>(INT64_MAX)) return false;
    *out = static_cast<int64_t>(v);
  }
  return true;
}

std::string FormatScore(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  const int n = std::snprintf(buf, sizeof(buf), "%.17g", v);
  return std::string(buf, n);
}

// ---- RdbOut ----

void RdbOut::Len(uint64_t n) {
  if (n < (1u << 6)) {
    Byte(static_cast<uint8_t>(n));
  } else if (n < (1u << 14)) {
    Byte(static_cast<uint8_t>((n >> 8) | 0x40));
    Byte(static_cast<uint8_t>(n & 0xff));
  } else if (n <= UINT32_MAX) {
    Byte(0x80);
    for (int i = 3; i >= 0; --i) Byte(static_cast<uint8_t>(n >> (8 * i)));  // big endian
  } else {
    Byte(0x81);
    for (int i = 7; i >= 0; --i) Byte(static_cast<uint8_t>(n >> (8 * i)));
  }
}

void RdbOut::String(std::string_view s) {
  int64_t v;
  if (s.size() <= 11 && StrictInt64(s, &v)) {
    if (v >= -128 && v <= 127) {
      Byte(0xC0);
      Byte(static_cast<uint8_t>(v));
      return;
    }
    if (v >= -32768 && v <= 32767) {
      Byte(0xC1);
      PutLE(buf_, static_cast<uint64_t>(v), 2);
      return;
    }
    if (v >= INT32_MIN && v <= INT32_MAX) {
      Byte(0xC2);
      PutLE(buf_, static_cast<uint64_t>(v), 4);
      return;
    }
  }
  if (compress_ && s.size() > 20 && s.size() <= UINT32_MAX) {
    // Worth it only when it saves more than four bytes (rdbSaveLzfStringObject).
    std::string out(s.size() - 4, '\0');
    const unsigned n = lzf_compress(s.data(), static_cast<unsigned>(s.size()), out.data(),
                                    static_cast<unsigned>(out.size()));
    if (n > 0) {
      Byte(0xC3);
      Len(n);
      Len(s.size());
      buf_->append(out.data(), n);
      return;
    }
  }
  Len(s.size());
  buf_->append(s);
}

void RdbOut::Millis(int64_t ms) { PutLE(buf_, static_cast<uint64_t>(ms), 8); }

void RdbOut::BinaryDouble(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  PutLE(buf_, bits, 8);
}

void RdbOut::BinaryFloat(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  PutLE(buf_, bits, 4);
}

// ---- listpack and intset ----

void ListpackBuilder::Entry(const unsigned char* enc, size_t enclen, std::string_view data) {
  body_.append(reinterpret_cast<const char*>(enc), enclen);
  body_.append(data);
  PutBacklen(&body_, enclen + data.size());
  ++count_;
}

void ListpackBuilder::AddInt(int64_t v) {
  unsigned char e[9];
  size_t n;
  if (v >= 0 && v <= 127) {
    e[0] = static_cast<unsigned char>(v);
    n = 1;
  } else if (v >= -4096 && v <= 4095) {
    const uint64_t u = v < 0 ? (uint64_t{1} << 13) + v : v;
    e[0] = static_cast<unsigned char>((u >> 8) | 0xC0);
    e[1] = static_cast<unsigned char>(u & 0xff);
    n = 2;
  } else {
    int bytes;
    if (v >= -32768 && v <= 32767) {
      e[0] = 0xF1;
      bytes = 2;
    } else if (v >= -8388608 && v <= 8388607) {
      e[0] = 0xF2;
      bytes = 3;
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
      e[0] = 0xF3;
      bytes = 4;
    } else {
      e[0] = 0xF4;
      bytes = 8;
    }
    const uint64_t u = static_cast<uint64_t>(v);  // two's complement, truncated below
    for (int i = 0; i < bytes; ++i) e[1 + i] = static_cast<unsigned char>(u >> (8 * i));
    n = 1 + bytes;
  }
  Entry(e, n, {});
}

void ListpackBuilder::Add(std::string_view s) {
  int64_t v;
  if (StrictInt64(s, &v)) return AddInt(v);
  unsigned char e[5];
  size_t n;
  if (s.size() < 64) {
    e[0] = static_cast<unsigned char>(s.size() | 0x80);
    n = 1;
  } else if (s.size() < 4096) {
    e[0] = static_cast<unsigned char>((s.size() >> 8) | 0xE0);
    e[1] = static_cast<unsigned char>(s.size() & 0xff);
    n = 2;
  } else {
    e[0] = 0xF0;
    for (int i = 0; i < 4; ++i) e[1 + i] = static_cast<unsigned char>(s.size() >> (8 * i));
    n = 5;
  }
  Entry(e, n, s);
}

std::string ListpackBuilder::Finish() {
  std::string lp;
  lp.reserve(body_.size() + 7);
  PutLE(&lp, body_.size() + 7, 4);
  PutLE(&lp, count_ < 65535 ? count_ : 65535, 2);
  lp += body_;
  lp.push_back(static_cast<char>(0xFF));
  body_.clear();
  count_ = 0;
  return lp;
}

std::string BuildIntset(const std::vector<int64_t>& sorted) {
  uint32_t width = 2;
  for (int64_t v : sorted) {
    if (v < INT32_MIN || v > INT32_MAX) {
      width = 8;
      break;
    }
    if (v < INT16_MIN || v > INT16_MAX) width = 4;
  }
  std::string out;
  out.reserve(8 + sorted.size() * width);
  PutLE(&out, width, 4);
  PutLE(&out, sorted.size(), 4);
  for (int64_t v : sorted) PutLE(&out, static_cast<uint64_t>(v), static_cast<int>(width));
  return out;
}

// ---- RdbIn ----

bool RdbIn::Fail(std::string why) {
  if (error_.empty()) error_ = std::move(why);
  return false;
}

bool RdbIn::Raw(size_t n, std::string_view* out) {
  if (n > remaining()) return Fail("unexpected end of data");
  *out = data_.substr(pos_, n);
  pos_ += n;
  return true;
}

bool RdbIn::Byte(uint8_t* out) {
  if (pos_ >= data_.size()) return Fail("unexpected end of data");
  *out = static_cast<uint8_t>(data_[pos_++]);
  return true;
}

bool RdbIn::Len(uint64_t* out, bool* encoded) {
  if (encoded != nullptr) *encoded = false;
  uint8_t b;
  if (!Byte(&b)) return false;
  const int type = b >> 6;
  std::string_view raw;
  if (type == 3) {
    if (encoded == nullptr) return Fail("unexpected string encoding where a length belongs");
    *encoded = true;
    *out = b & 0x3F;
  } else if (type == 0) {
    *out = b & 0x3F;
  } else if (type == 1) {
    uint8_t b2;
    if (!Byte(&b2)) return false;
    *out = (uint64_t{b & 0x3Fu} << 8) | b2;
  } else if (b == 0x80 || b == 0x81) {
    const int n = b == 0x80 ? 4 : 8;
    if (!Raw(n, &raw)) return false;
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v = (v << 8) | static_cast<unsigned char>(raw[i]);
    *out = v;
  } else {
    return Fail("unknown length encoding");
  }
  return true;
}

bool RdbIn::String(std::string* out) {
  bool encoded;
  uint64_t n;
  if (!Len(&n, &encoded)) return false;
  std::string_view raw;
  if (!encoded) {
    if (!Raw(n, &raw)) return false;
    out->assign(raw);
    return true;
  }
  if (n <= 2) {  // RDB_ENC_INT8/16/32
    const int bytes = 1 << n;
    if (!Raw(bytes, &raw)) return false;
    const uint64_t u = LoadLE(reinterpret_cast<const unsigned char*>(raw.data()), bytes);
    int64_t v = bytes == 1 ? static_cast<int8_t>(u)
                           : (bytes == 2 ? static_cast<int16_t>(u) : static_cast<int32_t>(u));
    char buf[24];
    out->assign(IntText(v, buf));
    return true;
  }
  if (n != 3) return Fail("unknown string encoding");
  uint64_t clen, len;
  if (!Len(&clen) || !Len(&len) || !Raw(clen, &raw)) return false;
  // LZF expands at most ~100x; a claimed length beyond that is corrupt, not a reason to allocate.
  if (len == 0 || len > clen * 128 + 64 || len > UINT32_MAX) return Fail("invalid LZF lengths");
  out->resize(len);
  const unsigned got = lzf_decompress(raw.data(), static_cast<unsigned>(clen), out->data(),
                                      static_cast<unsigned>(len));
  if (got != len) return Fail("invalid LZF compressed string");
  return true;
}

bool RdbIn::Millis(int64_t* out) {
  std::string_view raw;
  if (!Raw(8, &raw)) return false;
  *out = static_cast<int64_t>(LoadLE(reinterpret_cast<const unsigned char*>(raw.data()), 8));
  return true;
}

bool RdbIn::Seconds32(int32_t* out) {
  std::string_view raw;
  if (!Raw(4, &raw)) return false;
  *out = static_cast<int32_t>(LoadLE(reinterpret_cast<const unsigned char*>(raw.data()), 4));
  return true;
}

bool RdbIn::BinaryDouble(double* out) {
  std::string_view raw;
  if (!Raw(8, &raw)) return false;
  const uint64_t bits = LoadLE(reinterpret_cast<const unsigned char*>(raw.data()), 8);
  std::memcpy(out, &bits, 8);
  return true;
}

bool RdbIn::BinaryFloat(float* out) {
  std::string_view raw;
  if (!Raw(4, &raw)) return false;
  const auto bits =
      static_cast<uint32_t>(LoadLE(reinterpret_cast<const unsigned char*>(raw.data()), 4));
  std::memcpy(out, &bits, 4);
  return true;
}

bool RdbIn::TextDouble(double* out) {
  uint8_t n;
  if (!Byte(&n)) return false;
  if (n == 255) return *out = -HUGE_VAL, true;
  if (n == 254) return *out = HUGE_VAL, true;
  if (n == 253) return *out = NAN, true;
  std::string_view raw;
  if (!Raw(n, &raw)) return false;
  const std::string text(raw);
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  if (end == text.c_str()) return Fail("invalid double");
  return true;
}

// ---- compact encodings ----

bool ForEachListpack(std::string_view lp, ElementFn fn) {
  const auto* p = reinterpret_cast<const unsigned char*>(lp.data());
  const size_t size = lp.size();
  if (size < 7 || LoadLE(p, 4) != size || p[size - 1] != 0xFF) return false;
  const uint64_t declared = LoadLE(p + 4, 2);
  size_t pos = 6, count = 0;
  char num[24];
  while (pos < size - 1) {
    const unsigned char b = p[pos];
    size_t head, len = 0;  // encoding bytes, string bytes
    int64_t v = 0;
    bool is_int = true;
    const size_t avail = size - 1 - pos;
    auto need = [&](size_t n) { return n <= avail; };
    if ((b & 0x80) == 0) {
      head = 1;
      v = b & 0x7F;
    } else if ((b & 0xC0) == 0x80) {
      head = 1;
      len = b & 0x3F;
      is_int = false;
    } else if ((b & 0xE0) == 0xC0) {
      if (!need(2)) return false;
      head = 2;
      const uint64_t u = (uint64_t{b & 0x1Fu} << 8) | p[pos + 1];
      v = u >= (1u << 12) ? static_cast<int64_t>(u) - (1 << 13) : static_cast<int64_t>(u);
    } else if ((b & 0xF0) == 0xE0) {
      if (!need(2)) return false;
      head = 2;
      len = (size_t{b & 0x0Fu} << 8) | p[pos + 1];
      is_int = false;
    } else if (b == 0xF0) {
      if (!need(5)) return false;
      head = 5;
      len = LoadLE(p + pos + 1, 4);
      is_int = false;
    } else if (b >= 0xF1 && b <= 0xF4) {
      const int bytes = b == 0xF1 ? 2 : (b == 0xF2 ? 3 : (b == 0xF3 ? 4 : 8));
      if (!need(1 + bytes)) return false;
      head = 1 + bytes;
      const uint64_t u = LoadLE(p + pos + 1, bytes);
      if (bytes == 8) {
        v = static_cast<int64_t>(u);
      } else {
        const uint64_t sign = uint64_t{1} << (8 * bytes - 1);
        v = (u & sign) ? static_cast<int64_t>(u) - static_cast<int64_t>(sign << 1)
                       : static_cast<int64_t>(u);
      }
    } else {
      return false;  // 0xF5..0xFE are unused; 0xFF only at the end
    }
    const uint64_t entry = head + len;
    if (entry > avail) return false;
    const size_t back = BacklenSize(entry);
    if (entry + back > avail) return false;
    // The backlen must say the entry's length, read backwards.
    uint64_t decoded = 0;
    for (size_t i = 0; i < back; ++i) {
      const unsigned char c = p[pos + entry + back - 1 - i];
      decoded |= uint64_t{c & 127u} << (7 * i);
      if (((c & 128) != 0) != (i + 1 < back)) return false;
    }
    if (decoded != entry) return false;
    const std::string_view elem =
        is_int ? IntText(v, num) : std::string_view(lp.data() + pos + head, len);
    if (!fn(elem)) return false;
    pos += entry + back;
    ++count;
  }
  return pos == size - 1 && (declared == 65535 || declared == count);
}

bool ForEachZiplist(std::string_view zl, ElementFn fn) {
  const auto* p = reinterpret_cast<const unsigned char*>(zl.data());
  const size_t size = zl.size();
  if (size < 11 || LoadLE(p, 4) != size || p[size - 1] != 0xFF) return false;
  const uint64_t tail = LoadLE(p + 4, 4);
  const uint64_t declared = LoadLE(p + 8, 2);
  if (tail >= size) return false;
  size_t pos = 10, count = 0, prev = 0, last = 10;
  char num[24];
  while (pos < size - 1) {
    const size_t avail = size - 1 - pos;
    size_t prevlen_size = p[pos] < 254 ? 1 : 5;
    if (prevlen_size > avail) return false;
    const uint64_t prevlen = prevlen_size == 1 ? p[pos] : LoadLE(p + pos + 1, 4);
    if (prevlen != prev) return false;
    size_t q = pos + prevlen_size;
    if (q >= size - 1) return false;
    const unsigned char enc = p[q];
    size_t head, len = 0;
    int64_t v = 0;
    bool is_int = true;
    const size_t left = size - 1 - q;
    if ((enc & 0xC0) == 0x00) {
      head = 1;
      len = enc & 0x3F;
      is_int = false;
    } else if ((enc & 0xC0) == 0x40) {
      if (left < 2) return false;
      head = 2;
      len = (size_t{enc & 0x3Fu} << 8) | p[q + 1];
      is_int = false;
    } else if ((enc & 0xC0) == 0x80) {
      if (left < 5) return false;
      head = 5;
      len =
          (size_t{p[q + 1]} << 24) | (size_t{p[q + 2]} << 16) | (size_t{p[q + 3]} << 8) | p[q + 4];
      is_int = false;
    } else if (enc == 0xC0 || enc == 0xD0 || enc == 0xE0 || enc == 0xF0 || enc == 0xFE) {
      const int bytes = enc == 0xC0 ? 2 : enc == 0xD0 ? 4 : enc == 0xE0 ? 8 : enc == 0xF0 ? 3 : 1;
      if (left < size_t(1 + bytes)) return false;
      head = 1 + bytes;
      const uint64_t u = LoadLE(p + q + 1, bytes);
      if (bytes == 8) {
        v = static_cast<int64_t>(u);
      } else {
        const uint64_t sign = uint64_t{1} << (8 * bytes - 1);
        v = (u & sign) ? static_cast<int64_t>(u) - static_cast<int64_t>(sign << 1)
                       : static_cast<int64_t>(u);
      }
    } else if (enc >= 0xF1 && enc <= 0xFD) {
      head = 1;
      v = (enc & 0x0F) - 1;
    } else {
      return false;
    }
    if (head + len > left) return false;
    const std::string_view elem =
        is_int ? IntText(v, num) : std::string_view(zl.data() + q + head, len);
    if (!fn(elem)) return false;
    prev = prevlen_size + head + len;
    last = pos;
    pos = q + head + len;
    ++count;
  }
  if (pos != size - 1) return false;
  if (count > 0 && tail != last) return false;
  return declared == 65535 || declared == count;
}

bool ForEachIntset(std::string_view is, ElementFn fn) {
  const auto* p = reinterpret_cast<const unsigned char*>(is.data());
  if (is.size() < 8) return false;
  const uint64_t width = LoadLE(p, 4), n = LoadLE(p + 4, 4);
  if ((width != 2 && width != 4 && width != 8) || 8 + n * width != is.size()) return false;
  char num[24];
  int64_t prev = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t u = LoadLE(p + 8 + i * width, static_cast<int>(width));
    const int64_t v = width == 2 ? static_cast<int16_t>(u)
                                 : (width == 4 ? static_cast<int32_t>(u) : static_cast<int64_t>(u));
    if (i > 0 && v <= prev) return false;  // sorted, no duplicates
    prev = v;
    if (!fn(IntText(v, num))) return false;
  }
  return true;
}

bool ForEachZipmap(std::string_view zm, ElementFn fn) {
  const auto* p = reinterpret_cast<const unsigned char*>(zm.data());
  const size_t size = zm.size();
  if (size < 2) return false;
  size_t pos = 1;  // after zmlen
  auto read_len = [&](uint64_t* len) {
    if (pos >= size) return false;
    if (p[pos] < 254) {
      *len = p[pos++];
      return true;
    }
    if (p[pos] == 255 || pos + 5 > size) return false;
    *len = LoadLE(p + pos + 1, 4);
    pos += 5;
    return true;
  };
  while (true) {
    if (pos >= size) return false;
    if (p[pos] == 255) return pos == size - 1;
    uint64_t klen, vlen;
    if (!read_len(&klen) || klen > size - pos) return false;
    const std::string_view field = zm.substr(pos, klen);
    pos += klen;
    if (!read_len(&vlen) || pos >= size) return false;
    const uint64_t free_bytes = p[pos++];
    if (vlen > size - pos || free_bytes > size - pos - vlen) return false;
    const std::string_view value = zm.substr(pos, vlen);
    pos += vlen + free_bytes;
    if (!fn(field) || !fn(value)) return false;
  }
}

}  // namespace vessel::persist
