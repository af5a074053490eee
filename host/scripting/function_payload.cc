// FUNCTION DUMP / RESTORE payloads in Redis's format, so libraries move between Redis and
// Vessel: one RDB_OPCODE_FUNCTION2 record (an RDB string with the library's code) per library,
// then the RDB version (2 bytes, little-endian) and a CRC64 (Jones polynomial, reflected, as
// Redis's crc64.c) of everything before it (8 bytes, little-endian). Strings are written plain;
// reading also accepts RDB's integer and LZF encodings and the pre-GA RDB_OPCODE_FUNCTION
// record (name, engine, optional description, code).
#include <array>
#include <cstring>

#include "host/engine/strutil.h"
#include "host/scripting/state.h"

namespace vessel::scripting {
namespace {

constexpr uint8_t kOpFunction2 = 245;
constexpr uint8_t kOpFunction = 246;
constexpr uint16_t kRdbVersion = 10;

const std::array<uint64_t, 256>& CrcTable() {
  static const std::array<uint64_t, 256> table = [] {
    std::array<uint64_t, 256> t{};
    constexpr uint64_t kPoly = 0x95AC9329AC4BC9B5ull;  // 0xad93d23594c935a9 bit-reversed
    for (uint64_t i = 0; i < 256; ++i) {
      uint64_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  return table;
}

void PutLen(std::string* out, uint64_t len) {
  if (len < (1 << 6)) {
    out->push_back(static_cast<char>(len));
  } else if (len < (1 << 14)) {
    out->push_back(static_cast<char>(0x40 | (len >> 8)));
    out->push_back(static_cast<char>(len & 0xff));
  } else if (len <= UINT32_MAX) {
    out->push_back(static_cast<char>(0x80));
    for (int s = 24; s >= 0; s -= 8) out->push_back(static_cast<char>((len >> s) & 0xff));
  } else {
    out->push_back(static_cast<char>(0x81));
    for (int s = 56; s >= 0; s -= 8) out->push_back(static_cast<char>((len >> s) & 0xff));
  }
}

struct Reader {
  std::string_view in;
  size_t pos = 0;
  bool Byte(uint8_t* b) {
    if (pos >= in.size()) return false;
    *b = static_cast<uint8_t>(in[pos++]);
    return true;
  }
  // A length; *special set (with the encoding in *len) for 11xxxxxx.
  bool Len(uint64_t* len, bool* special) {
    uint8_t b;
    if (!Byte(&b)) return false;
    *special = false;
    switch (b >> 6) {
      case 0:
        *len = b & 0x3f;
        return true;
      case 1: {
        uint8_t b2;
        if (!Byte(&b2)) return false;
        *len = (uint64_t{b & 0x3fu} << 8) | b2;
        return true;
      }
      case 2: {
        const int n = b == 0x80 ? 4 : b == 0x81 ? 8 : 0;
        if (n == 0 || pos + n > in.size()) return false;
        uint64_t v = 0;
        for (int i = 0; i < n; ++i) v = (v << 8) | static_cast<uint8_t>(in[pos++]);
        *len = v;
        return true;
      }
      default:
        *special = true;
        *len = b & 0x3f;
        return true;
    }
  }
  bool String(std::string* out) {
    uint64_t len;
    bool special;
    if (!Len(&len, &special)) return false;
    if (!special) {
      if (len > in.size() - pos) return false;
      out->assign(in.substr(pos, len));
      pos += len;
      return true;
    }
    if (len <= 2) {  // integers: 1, 2 or 4 bytes little-endian, signed
      const int n = 1 << len;
      if (pos + n > in.size()) return false;
      uint64_t v = 0;
      for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(in[pos + i]);
      pos += n;
      const int shift = 64 - 8 * n;
      *out = std::to_string(static_cast<int64_t>(v << shift) >> shift);
      return true;
    }
    if (len != 3) return false;
    uint64_t clen, ulen;
    if (!Len(&clen, &special) || special || !Len(&ulen, &special) || special) return false;
    if (clen > in.size() - pos) return false;
    const bool ok = Lzf(in.substr(pos, clen), ulen, out);
    pos += clen;
    return ok;
  }
  // LZF decompression (liblzf's format: literal runs and back references).
  static bool Lzf(std::string_view c, uint64_t ulen, std::string* out) {
    out->clear();
    out->reserve(ulen);
    size_t i = 0;
    while (i < c.size()) {
      const uint32_t ctrl = static_cast<uint8_t>(c[i++]);
      if (ctrl < 32) {
        const size_t n = ctrl + 1;
        if (i + n > c.size()) return false;
        out->append(c.substr(i, n));
        i += n;
        continue;
      }
      size_t len = ctrl >> 5;
      if (len == 7) {
        if (i >= c.size()) return false;
        len += static_cast<uint8_t>(c[i++]);
      }
      if (i >= c.size()) return false;
      const size_t back = ((ctrl & 0x1f) << 8) + static_cast<uint8_t>(c[i++]) + 1;
      if (back > out->size()) return false;
      size_t from = out->size() - back;
      for (size_t k = 0; k < len + 2; ++k) out->push_back((*out)[from++]);
    }
    return out->size() == ulen;
  }
};

}  // namespace

uint64_t Crc64(std::string_view data) {
  const auto& t = CrcTable();
  uint64_t crc = 0;
  for (unsigned char b : data) crc = t[(crc ^ b) & 0xff] ^ (crc >> 8);
  return crc;
}

std::string EncodeFunctionPayload(const FunctionSet& set) {
  std::string out;
  for (const auto& [name, lib] : set.libs) {
    out.push_back(static_cast<char>(kOpFunction2));
    PutLen(&out, lib->code.size());
    out.append(lib->code);
  }
  out.push_back(static_cast<char>(kRdbVersion & 0xff));
  out.push_back(static_cast<char>(kRdbVersion >> 8));
  const uint64_t crc = Crc64(out);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  return out;
}

bool DecodeFunctionPayload(std::string_view payload, std::vector<std::string>* codes,
                           std::string* error) {
  // Redis's verifyDumpPayload.
  if (payload.size() < 10) {
    *error = "DUMP payload version or checksum are wrong";
    return false;
  }
  const size_t footer = payload.size() - 10;
  const uint16_t ver = static_cast<uint8_t>(payload[footer]) |
                       (static_cast<uint16_t>(static_cast<uint8_t>(payload[footer + 1])) << 8);
  uint64_t crc = 0;
  for (int i = 7; i >= 0; --i) crc = (crc << 8) | static_cast<uint8_t>(payload[footer + 2 + i]);
  if (ver > kRdbVersion || crc != Crc64(payload.substr(0, payload.size() - 8))) {
    *error = "DUMP payload version or checksum are wrong";
    return false;
  }
  Reader r{payload.substr(0, footer)};
  while (r.pos < r.in.size()) {
    uint8_t type;
    r.Byte(&type);
    if (type != kOpFunction2 && type != kOpFunction) {
      *error = "given type is not a function";
      return false;
    }
    std::string code;
    if (type == kOpFunction2) {
      if (!r.String(&code)) {
        *error = "Failed loading library payload";
        return false;
      }
    } else {
      std::string name, engine_name, desc, blob;
      uint64_t has_desc;
      bool special;
      if (!r.String(&name)) {
        *error = "Failed loading library name";
        return false;
      }
      if (!r.String(&engine_name)) {
        *error = "Failed loading engine name";
        return false;
      }
      if (!r.Len(&has_desc, &special) || special) {
        *error = "Failed loading library description indicator";
        return false;
      }
      if (has_desc && !r.String(&desc)) {
        *error = "Failed loading library description";
        return false;
      }
      if (!r.String(&blob)) {
        *error = "Failed loading library blob";
        return false;
      }
      code = engine::Cat("#!", engine_name, " name=", name, "\n", blob);
    }
    codes->push_back(std::move(code));
  }
  return true;
}

}  // namespace vessel::scripting
