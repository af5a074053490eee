// Redis's listpack format (listpack.h).
#include "listpack.h"

#include "stream_id.h"

namespace vessel::streams {
namespace {

constexpr size_t kHeader = 6;
constexpr unsigned char kEnd = 0xFF;

// The back length of an element whose encoding takes l bytes, written from its last byte
// backwards (lpEncodeBacklen).
size_t EncodeBacklen(unsigned char* buf, uint64_t l) {
  if (l <= 127) {
    buf[0] = static_cast<unsigned char>(l);
    return 1;
  }
  size_t n = l < 16383 ? 2 : (l < 2097151 ? 3 : (l < 268435455 ? 4 : 5));
  for (size_t i = 0; i < n; ++i) {
    const unsigned shift = static_cast<unsigned>(7 * (n - 1 - i));
    buf[i] = static_cast<unsigned char>(((l >> shift) & 127) | (i == 0 ? 0 : 128));
  }
  return n;
}

uint64_t DecodeBacklen(const unsigned char* last, const unsigned char* floor, bool* ok) {
  uint64_t v = 0;
  unsigned shift = 0;
  const unsigned char* p = last;
  for (;;) {
    v |= uint64_t{*p & 127u} << shift;
    if (!(*p & 128)) break;
    shift += 7;
    if (shift > 28 || p == floor) {
      *ok = false;
      return 0;
    }
    --p;
  }
  *ok = true;
  return v;
}

}  // namespace

void ListpackWriter::Element(const unsigned char* enc, size_t n, std::string_view data) {
  buf_.append(reinterpret_cast<const char*>(enc), n);
  buf_.append(data);
  unsigned char back[5];
  buf_.append(reinterpret_cast<const char*>(back), EncodeBacklen(back, n + data.size()));
  ++count_;
}

void ListpackWriter::AddInt(int64_t v) {
  unsigned char e[9];
  size_t n;
  uint64_t u = static_cast<uint64_t>(v);
  if (v >= 0 && v <= 127) {
    e[0] = static_cast<unsigned char>(v);
    n = 1;
  } else if (v >= -4096 && v <= 4095) {
    u &= (uint64_t{1} << 13) - 1;
    e[0] = static_cast<unsigned char>((u >> 8) | 0xC0);
    e[1] = static_cast<unsigned char>(u);
    n = 2;
  } else {
    int bytes;
    if (v >= -32768 && v <= 32767) {
      e[0] = 0xF1, bytes = 2;
    } else if (v >= -8388608 && v <= 8388607) {
      e[0] = 0xF2, bytes = 3;
    } else if (v >= -2147483648LL && v <= 2147483647LL) {
      e[0] = 0xF3, bytes = 4;
    } else {
      e[0] = 0xF4, bytes = 8;
    }
    for (int i = 0; i < bytes; ++i) e[1 + i] = static_cast<unsigned char>(u >> (8 * i));
    n = static_cast<size_t>(1 + bytes);
  }
  Element(e, n, {});
}

void ListpackWriter::Add(std::string_view s) {
  int64_t v;
  if (StrictInt64(s, &v)) return AddInt(v);
  unsigned char e[5];
  const uint64_t len = s.size();
  size_t n;
  if (len < 64) {
    e[0] = static_cast<unsigned char>(0x80 | len);
    n = 1;
  } else if (len < 4096) {
    e[0] = static_cast<unsigned char>(0xE0 | (len >> 8));
    e[1] = static_cast<unsigned char>(len);
    n = 2;
  } else {
    e[0] = 0xF0;
    for (int i = 0; i < 4; ++i) e[1 + i] = static_cast<unsigned char>(len >> (8 * i));
    n = 5;
  }
  Element(e, n, s);
}

std::string ListpackWriter::Finish() {
  buf_.push_back(static_cast<char>(kEnd));
  const uint64_t total = buf_.size();
  for (int i = 0; i < 4; ++i) buf_[i] = static_cast<char>(total >> (8 * i));
  const uint64_t count = count_ < 65535 ? count_ : 65535;
  buf_[4] = static_cast<char>(count);
  buf_[5] = static_cast<char>(count >> 8);
  return std::move(buf_);
}

bool ReadListpack(std::string_view blob, std::vector<LpElem>* out) {
  out->clear();
  const auto* lp = reinterpret_cast<const unsigned char*>(blob.data());
  const size_t size = blob.size();
  if (size < kHeader + 1) return false;
  const uint64_t total =
      uint64_t{lp[0]} | uint64_t{lp[1]} << 8 | uint64_t{lp[2]} << 16 | uint64_t{lp[3]} << 24;
  const uint64_t count = uint64_t{lp[4]} | uint64_t{lp[5]} << 8;
  if (total != size || lp[size - 1] != kEnd) return false;
  size_t pos = kHeader;
  const size_t end = size - 1;  // the end byte
  while (pos < end) {
    const unsigned char b = lp[pos];
    LpElem e;
    size_t enc;        // bytes of the encoding, header and data
    size_t head = 1;   // bytes of the encoding's header
    uint64_t len = 0;  // string length
    if (b < 0x80) {
      e.is_int = true;
      e.v = b;
      enc = 1;
    } else if ((b & 0xC0) == 0x80) {
      len = b & 0x3F;
      enc = 1 + len;
    } else if ((b & 0xE0) == 0xC0) {
      if (end - pos < 2) return false;
      uint64_t u = (uint64_t{b & 0x1Fu} << 8) | lp[pos + 1];
      e.is_int = true;
      e.v = u >= 4096 ? static_cast<int64_t>(u) - 8192 : static_cast<int64_t>(u);
      enc = 2;
    } else if ((b & 0xF0) == 0xE0) {
      if (end - pos < 2) return false;
      len = (uint64_t{b & 0x0Fu} << 8) | lp[pos + 1];
      head = 2;
      enc = 2 + len;
    } else if (b == 0xF0) {
      if (end - pos < 5) return false;
      len = uint64_t{lp[pos + 1]} | uint64_t{lp[pos + 2]} << 8 | uint64_t{lp[pos + 3]} << 16 |
            uint64_t{lp[pos + 4]} << 24;
      head = 5;
      enc = 5 + len;
    } else if (b >= 0xF1 && b <= 0xF4) {
      const int bytes = b == 0xF1 ? 2 : (b == 0xF2 ? 3 : (b == 0xF3 ? 4 : 8));
      if (end - pos < static_cast<size_t>(1 + bytes)) return false;
      uint64_t u = 0;
      for (int i = 0; i < bytes; ++i) u |= uint64_t{lp[pos + 1 + i]} << (8 * i);
      if (bytes < 8 && (u >> (8 * bytes - 1)) & 1) u |= ~uint64_t{0} << (8 * bytes);
      e.is_int = true;
      e.v = static_cast<int64_t>(u);
      enc = static_cast<size_t>(1 + bytes);
    } else {
      return false;  // 0xF5..0xFE are no encoding; 0xFF before the end
    }
    if (enc > end - pos) return false;
    unsigned char back[5];
    const size_t backlen = EncodeBacklen(back, enc);
    if (backlen > end - pos - enc) return false;
    bool ok;
    if (DecodeBacklen(lp + pos + enc + backlen - 1, lp + pos + enc, &ok) != enc || !ok)
      return false;
    if (!e.is_int) e.s = blob.substr(pos + head, static_cast<size_t>(len));
    out->push_back(e);
    pos += enc + backlen;
  }
  if (pos != end) return false;
  return count == 65535 || count == out->size();
}

}  // namespace vessel::streams
