// The two Lua libraries Redis bundles that Debian does not package: `struct` (binary packing,
// as Roberto Ierusalimschy's struct 0.2: pack, unpack, size) and `cmsgpack` (MessagePack: pack,
// unpack, unpack_one, unpack_limit), written for Vessel from the formats' descriptions.
#include <cctype>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "host/scripting/state.h"

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

namespace vessel::scripting {
namespace {

// ---- struct ----
// As Redis 7.0's bundled struct library, including its answers to hostile formats: sizes that
// overflow an int, offsets and 'c0' lengths past the data, out-of-range numbers (converted the
// way x86 converts them, without the undefined behaviour of the C casts).

constexpr size_t kMaxIntSize = 32;
constexpr int kMaxAlign = 8;  // the alignment of a double

struct Header {
  bool little = true;
  int align = 1;
};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

int ReadNum(lua_State* L, const char** fmt, int def) {
  if (!IsDigit(**fmt)) return def;
  int a = 0;
  do {
    const int digit = **fmt - '0';
    if (a > INT_MAX / 10 || a * 10 > INT_MAX - digit) luaL_error(L, "integral size overflow");
    a = a * 10 + digit;
    ++*fmt;
  } while (IsDigit(**fmt));
  return a;
}

size_t OptSize(lua_State* L, char opt, const char** fmt) {
  switch (opt) {
    case 'B':
    case 'b':
    case 'x':
      return 1;
    case 'H':
    case 'h':
      return 2;
    case 'L':
    case 'l':
    case 'T':
      return 8;
    case 'f':
      return sizeof(float);
    case 'd':
      return sizeof(double);
    case 'c':
      return static_cast<size_t>(ReadNum(L, fmt, 1));
    case 'i':
    case 'I': {
      const int sz = ReadNum(L, fmt, sizeof(int));
      if (static_cast<size_t>(sz) > kMaxIntSize)
        luaL_error(L, "integral size %d is larger than limit of %d", sz, int(kMaxIntSize));
      return static_cast<size_t>(sz);
    }
    default:
      return 0;  // other options
  }
}

// Padding before an item of `size` at offset len.
size_t Gap(const Header& h, size_t len, char opt, size_t size) {
  if (size == 0 || opt == 'c') return 0;
  if (size > static_cast<size_t>(h.align)) size = h.align;
  return (size - (len & (size - 1))) & (size - 1);
}

void ControlOption(lua_State* L, char opt, const char** fmt, Header* h) {
  switch (opt) {
    case ' ':
      return;
    case '>':
      h->little = false;
      return;
    case '<':
      h->little = true;
      return;
    case '!': {
      const int a = ReadNum(L, fmt, kMaxAlign);
      if (a <= 0 || (a & (a - 1)) != 0) luaL_error(L, "alignment %d is not a power of 2", a);
      h->align = a;
      return;
    }
    default:
      luaL_argerror(L, 1, lua_pushfstring(L, "invalid format option '%c'", opt));
  }
}

// A number as the library's integer (two's complement in 64 bits), as x86 converts: negatives
// through a signed cast, the rest through an unsigned one (NaN and 2^64 and beyond as GCC's
// sequence gives them).
uint64_t IntegerBits(lua_Number n) {
  constexpr lua_Number kTwo63 = 9223372036854775808.0;
  if (n < 0)
    return n >= -kTwo63 ? static_cast<uint64_t>(static_cast<int64_t>(n)) : uint64_t{1} << 63;
  if (n < kTwo63) return static_cast<uint64_t>(static_cast<int64_t>(n));
  if (std::isnan(n)) return uint64_t{1} << 63;
  return n < 2 * kTwo63 ? static_cast<uint64_t>(n) : 0;
}

void PutInteger(luaL_Buffer* b, lua_Number n, bool little, size_t size) {
  uint64_t value = IntegerBits(n);
  char buf[kMaxIntSize];
  for (size_t i = 0; i < size; ++i) {
    buf[little ? i : size - 1 - i] = static_cast<char>(value & 0xff);
    value >>= 8;
  }
  luaL_addlstring(b, buf, size);
}

void Correct(char* p, size_t size, bool little) {  // native (little-endian) <-> wanted order
  if (little) return;
  for (size_t i = 0; i < size / 2; ++i) std::swap(p[i], p[size - 1 - i]);
}

int StructPack(lua_State* L) {
  luaL_Buffer b;
  const char* fmt = luaL_checkstring(L, 1);
  Header h;
  int arg = 2;
  size_t total = 0;
  lua_pushnil(L);  // mark to separate arguments from the buffer
  luaL_buffinit(L, &b);
  while (*fmt != '\0') {
    const char opt = *fmt++;
    size_t size = OptSize(L, opt, &fmt);
    const size_t gap = Gap(h, total, opt, size);
    total += gap;
    for (size_t g = 0; g < gap; ++g) luaL_addchar(&b, '\0');
    switch (opt) {
      case 'b':
      case 'B':
      case 'h':
      case 'H':
      case 'l':
      case 'L':
      case 'T':
      case 'i':
      case 'I':
        PutInteger(&b, luaL_checknumber(L, arg++), h.little, size);
        break;
      case 'x':
        luaL_addchar(&b, '\0');
        break;
      case 'f': {
        float f = static_cast<float>(luaL_checknumber(L, arg++));
        char buf[sizeof f];
        std::memcpy(buf, &f, sizeof f);
        Correct(buf, sizeof f, h.little);
        luaL_addlstring(&b, buf, sizeof f);
        break;
      }
      case 'd': {
        double d = luaL_checknumber(L, arg++);
        char buf[sizeof d];
        std::memcpy(buf, &d, sizeof d);
        Correct(buf, sizeof d, h.little);
        luaL_addlstring(&b, buf, sizeof d);
        break;
      }
      case 'c':
      case 's': {
        size_t l;
        const char* s = luaL_checklstring(L, arg++, &l);
        if (size == 0) size = l;
        luaL_argcheck(L, l >= size, arg, "string too short");  // Redis names the next argument
        luaL_addlstring(&b, s, size);
        if (opt == 's') {
          luaL_addchar(&b, '\0');
          ++size;
        }
        break;
      }
      default:
        ControlOption(L, opt, &fmt, &h);
    }
    total += size;
  }
  luaL_pushresult(&b);
  return 1;
}

lua_Number GetInteger(const char* buf, bool little, bool is_signed, size_t size) {
  uint64_t v = 0;
  for (size_t i = 0; i < size; ++i) {
    const auto byte = static_cast<uint8_t>(buf[little ? size - 1 - i : i]);
    v = (v << 8) | byte;
  }
  if (!is_signed) return static_cast<lua_Number>(v);
  if (size == 0) return 0;
  // The sign mask as x86 shifts (the count taken modulo 64).
  const uint64_t mask = ~uint64_t{0} << ((size * 8 - 1) & 63);
  if (v & mask) v |= mask;
  return static_cast<lua_Number>(static_cast<int64_t>(v));
}

// A 'c0' length read from a number: what converting it to size_t gives on x86, or SIZE_MAX when
// that would not fit the data anyway.
size_t LengthFrom(lua_Number n) {
  return n >= 0 && n < 18446744073709551616.0 ? static_cast<size_t>(n) : SIZE_MAX;
}

int StructUnpack(lua_State* L) {
  Header h;
  const char* fmt = luaL_checkstring(L, 1);
  size_t ld;
  const char* data = luaL_checklstring(L, 2, &ld);
  // Redis refuses offset 0 by name; any other out-of-range offset (negative ones wrap) fails
  // the data length check below.
  const lua_Integer offset = luaL_optinteger(L, 3, 1);
  luaL_argcheck(L, offset != 0, 3, "offset must be 1 or greater");
  size_t pos = static_cast<size_t>(offset) - 1;
  lua_settop(L, 2);
  while (*fmt) {
    const char opt = *fmt++;
    size_t size = OptSize(L, opt, &fmt);
    pos += Gap(h, pos, opt, size);
    luaL_argcheck(L, pos <= ld && size <= ld - pos, 2, "data string too short");
    luaL_checkstack(L, 2, "too many results");
    switch (opt) {
      case 'b':
      case 'B':
      case 'h':
      case 'H':
      case 'l':
      case 'L':
      case 'T':
      case 'i':
      case 'I':
        lua_pushnumber(L, GetInteger(data + pos, h.little, opt >= 'a', size));
        break;
      case 'x':
        break;
      case 'f': {
        char buf[sizeof(float)];
        std::memcpy(buf, data + pos, size);
        Correct(buf, size, h.little);
        float f;
        std::memcpy(&f, buf, size);
        lua_pushnumber(L, f);
        break;
      }
      case 'd': {
        char buf[sizeof(double)];
        std::memcpy(buf, data + pos, size);
        Correct(buf, size, h.little);
        double d;
        std::memcpy(&d, buf, size);
        lua_pushnumber(L, d);
        break;
      }
      case 'c':
        if (size == 0) {
          if (lua_gettop(L) == 2 || !lua_isnumber(L, -1))
            luaL_error(L, "format 'c0' needs a previous size");
          size = LengthFrom(lua_tonumber(L, -1));
          lua_pop(L, 1);
          luaL_argcheck(L, size <= ld - pos, 2, "data string too short");
        }
        lua_pushlstring(L, data + pos, size);
        break;
      case 's': {
        const char* e = static_cast<const char*>(memchr(data + pos, '\0', ld - pos));
        if (e == nullptr) luaL_error(L, "unfinished string in data");
        size = static_cast<size_t>(e - (data + pos)) + 1;
        lua_pushlstring(L, data + pos, size - 1);
        break;
      }
      default:
        ControlOption(L, opt, &fmt, &h);
    }
    pos += size;
  }
  lua_pushinteger(L, static_cast<lua_Integer>(pos) + 1);
  return lua_gettop(L) - 2;
}

int StructSize(lua_State* L) {
  Header h;
  const char* fmt = luaL_checkstring(L, 1);
  size_t pos = 0;
  while (*fmt) {
    const char opt = *fmt++;
    const size_t size = OptSize(L, opt, &fmt);
    pos += Gap(h, pos, opt, size);
    if (opt == 's') {
      luaL_argerror(L, 1, "option 's' has no fixed size");
    } else if (opt == 'c' && size == 0) {
      luaL_argerror(L, 1, "option 'c0' has no fixed size");
    }
    if (!std::isalnum(static_cast<unsigned char>(opt))) ControlOption(L, opt, &fmt, &h);
    pos += size;
  }
  lua_pushinteger(L, static_cast<lua_Integer>(pos));
  return 1;
}

// ---- cmsgpack ----

constexpr int kMaxNesting = 16;

void PutBE(std::string* out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

bool IsArray(lua_State* L, int idx, size_t* count) {
  size_t n = 0;
  lua_Number max = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TNUMBER) {
      lua_pop(L, 1);
      return false;
    }
    const lua_Number k = lua_tonumber(L, -1);
    if (k <= 0 || k != std::floor(k)) {
      lua_pop(L, 1);
      return false;
    }
    if (k > max) max = k;
    ++n;
  }
  *count = n;
  return max == static_cast<lua_Number>(n);
}

void Encode(lua_State* L, std::string* out, int level);

void EncodeNumber(std::string* out, lua_Number n) {
  const bool integral = std::isfinite(n) && n == std::floor(n) && n >= -9223372036854775808.0 &&
                        n < 18446744073709551616.0;
  if (integral) {
    if (n >= 0) {
      const uint64_t v = static_cast<uint64_t>(n);
      if (v <= 127) {
        out->push_back(static_cast<char>(v));
      } else if (v <= 0xff) {
        out->push_back(static_cast<char>(0xcc));
        PutBE(out, v, 1);
      } else if (v <= 0xffff) {
        out->push_back(static_cast<char>(0xcd));
        PutBE(out, v, 2);
      } else if (v <= 0xffffffffull) {
        out->push_back(static_cast<char>(0xce));
        PutBE(out, v, 4);
      } else {
        out->push_back(static_cast<char>(0xcf));
        PutBE(out, v, 8);
      }
    } else {
      const int64_t v = static_cast<int64_t>(n);
      if (v >= -32) {
        out->push_back(static_cast<char>(v));
      } else if (v >= -128) {
        out->push_back(static_cast<char>(0xd0));
        PutBE(out, static_cast<uint64_t>(v), 1);
      } else if (v >= -32768) {
        out->push_back(static_cast<char>(0xd1));
        PutBE(out, static_cast<uint64_t>(v), 2);
      } else if (v >= -2147483648LL) {
        out->push_back(static_cast<char>(0xd2));
        PutBE(out, static_cast<uint64_t>(v), 4);
      } else {
        out->push_back(static_cast<char>(0xd3));
        PutBE(out, static_cast<uint64_t>(v), 8);
      }
    }
    return;
  }
  const float f = static_cast<float>(n);
  if (static_cast<lua_Number>(f) == n) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    out->push_back(static_cast<char>(0xca));
    PutBE(out, bits, 4);
  } else {
    uint64_t bits;
    std::memcpy(&bits, &n, 8);
    out->push_back(static_cast<char>(0xcb));
    PutBE(out, bits, 8);
  }
}

void EncodeString(std::string* out, const char* s, size_t len) {
  if (len < 32) {
    out->push_back(static_cast<char>(0xa0 | len));
  } else if (len <= 0xff) {
    out->push_back(static_cast<char>(0xd9));
    PutBE(out, len, 1);
  } else if (len <= 0xffff) {
    out->push_back(static_cast<char>(0xda));
    PutBE(out, len, 2);
  } else {
    out->push_back(static_cast<char>(0xdb));
    PutBE(out, len, 4);
  }
  out->append(s, len);
}

void EncodeTable(lua_State* L, std::string* out, int level) {
  PushProxyTarget(L, -1);  // a library table encodes as the table behind its read-only proxy
  lua_replace(L, -2);
  const int idx = lua_gettop(L);
  size_t n = 0;
  if (IsArray(L, idx, &n)) {
    if (n <= 15) {
      out->push_back(static_cast<char>(0x90 | n));
    } else if (n <= 0xffff) {
      out->push_back(static_cast<char>(0xdc));
      PutBE(out, n, 2);
    } else {
      out->push_back(static_cast<char>(0xdd));
      PutBE(out, n, 4);
    }
    for (size_t j = 1; j <= n; ++j) {
      lua_rawgeti(L, idx, static_cast<int>(j));
      Encode(L, out, level + 1);
    }
    return;
  }
  n = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    ++n;
  }
  if (n <= 15) {
    out->push_back(static_cast<char>(0x80 | n));
  } else if (n <= 0xffff) {
    out->push_back(static_cast<char>(0xde));
    PutBE(out, n, 2);
  } else {
    out->push_back(static_cast<char>(0xdf));
    PutBE(out, n, 4);
  }
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pushvalue(L, -2);
    Encode(L, out, level + 1);  // key
    Encode(L, out, level + 1);  // value
  }
}

// Every 4096 values: SCRIPT KILL (a table holding itself several times makes an output that
// doubles at every level, and no Lua instruction runs meanwhile), and the memory cap.
thread_local uint32_t t_encoded = 0;
void EncodeCheckpoint(lua_State* L, const std::string& out) {
  if ((++t_encoded & 4095) != 0) return;
  CheckKilled(L);
  const size_t limit = LuaMemoryLimit();
  if (limit != 0 && out.size() > limit) luaL_error(L, "not enough memory");
}

// Encodes the value on top of the stack and pops it.
void Encode(lua_State* L, std::string* out, int level) {
  luaL_checkstack(L, 4, "cmsgpack: too deep");
  EncodeCheckpoint(L, *out);
  switch (lua_type(L, -1)) {
    case LUA_TSTRING: {
      size_t len;
      const char* s = lua_tolstring(L, -1, &len);
      EncodeString(out, s, len);
      break;
    }
    case LUA_TBOOLEAN:
      out->push_back(static_cast<char>(lua_toboolean(L, -1) ? 0xc3 : 0xc2));
      break;
    case LUA_TNUMBER:
      EncodeNumber(out, lua_tonumber(L, -1));
      break;
    case LUA_TTABLE:
      if (level == kMaxNesting) {
        out->push_back(static_cast<char>(0xc0));
      } else {
        EncodeTable(L, out, level);
      }
      break;
    default:
      out->push_back(static_cast<char>(0xc0));
  }
  lua_pop(L, 1);
}

// The encoding buffer: thread-local, not a local, since the encoder may raise (SCRIPT KILL,
// memory) and Lua's longjmp would skip a local's destructor. Nothing re-enters it: no Lua code
// runs while a value is encoded.
thread_local std::string t_packed;

int MsgpackPack(lua_State* L) {
  const int n = lua_gettop(L);
  if (n == 0) return luaL_argerror(L, 0, "MessagePack pack needs input.");
  std::string& out = t_packed;
  out.clear();
  for (int i = 1; i <= n; ++i) {
    lua_pushvalue(L, i);
    Encode(L, &out, 0);
  }
  lua_pushlstring(L, out.data(), out.size());
  if (out.capacity() > (size_t{1} << 20)) std::string().swap(out);
  return 1;
}

struct Cursor {
  const unsigned char* p;
  size_t left;
  int err = 0;  // 1: missing bytes, 2: bad format
  bool Need(size_t n) {
    if (left < n) err = 1;
    return left >= n;
  }
  uint64_t BE(int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v = (v << 8) | p[i];
    p += n;
    left -= n;
    return v;
  }
};

void Decode(lua_State* L, Cursor* c);

void DecodeString(lua_State* L, Cursor* c, size_t len) {
  if (!c->Need(len)) return;
  lua_pushlstring(L, reinterpret_cast<const char*>(c->p), len);
  c->p += len;
  c->left -= len;
}

void DecodeArray(lua_State* L, Cursor* c, size_t n) {
  lua_newtable(L);
  for (size_t j = 1; j <= n && c->err == 0; ++j) {
    lua_pushnumber(L, static_cast<lua_Number>(j));
    Decode(L, c);
    if (c->err == 0) {
      lua_settable(L, -3);
    } else {
      lua_pop(L, 1);
    }
  }
}

void DecodeMap(lua_State* L, Cursor* c, size_t n) {
  lua_newtable(L);
  for (size_t j = 0; j < n && c->err == 0; ++j) {
    Decode(L, c);
    if (c->err != 0) break;
    Decode(L, c);
    if (c->err != 0) {
      lua_pop(L, 1);
      break;
    }
    lua_settable(L, -3);
  }
}

void Decode(lua_State* L, Cursor* c) {
  luaL_checkstack(L, 4, "cmsgpack: too deep");
  if (!c->Need(1)) return;
  const unsigned char t = *c->p++;
  c->left--;
  auto need = [&](size_t n) { return c->Need(n); };
  if (t <= 0x7f) return lua_pushnumber(L, t);
  if (t >= 0xe0) return lua_pushnumber(L, static_cast<int8_t>(t));
  if ((t & 0xe0) == 0xa0) return DecodeString(L, c, t & 0x1f);
  if ((t & 0xf0) == 0x90) return DecodeArray(L, c, t & 0x0f);
  if ((t & 0xf0) == 0x80) return DecodeMap(L, c, t & 0x0f);
  switch (t) {
    case 0xc0:
      return lua_pushnil(L);
    case 0xc2:
      return lua_pushboolean(L, 0);
    case 0xc3:
      return lua_pushboolean(L, 1);
    case 0xcc:
    case 0xcd:
    case 0xce:
    case 0xcf: {
      const int n = 1 << (t - 0xcc);
      if (!need(n)) return;
      return lua_pushnumber(L, static_cast<lua_Number>(c->BE(n)));
    }
    case 0xd0:
    case 0xd1:
    case 0xd2:
    case 0xd3: {
      const int n = 1 << (t - 0xd0);
      if (!need(n)) return;
      const uint64_t v = c->BE(n);
      const int shift = 64 - 8 * n;
      return lua_pushnumber(L, static_cast<lua_Number>(static_cast<int64_t>(v << shift) >> shift));
    }
    case 0xca: {
      if (!need(4)) return;
      const uint32_t bits = static_cast<uint32_t>(c->BE(4));
      float f;
      std::memcpy(&f, &bits, 4);
      return lua_pushnumber(L, f);
    }
    case 0xcb: {
      if (!need(8)) return;
      const uint64_t bits = c->BE(8);
      double d;
      std::memcpy(&d, &bits, 8);
      return lua_pushnumber(L, d);
    }
    case 0xd9:
      if (!need(1)) return;
      return DecodeString(L, c, c->BE(1));
    case 0xda:
      if (!need(2)) return;
      return DecodeString(L, c, c->BE(2));
    case 0xdb:
      if (!need(4)) return;
      return DecodeString(L, c, c->BE(4));
    case 0xdc:
      if (!need(2)) return;
      return DecodeArray(L, c, c->BE(2));
    case 0xdd:
      if (!need(4)) return;
      return DecodeArray(L, c, c->BE(4));
    case 0xde:
      if (!need(2)) return;
      return DecodeMap(L, c, c->BE(2));
    case 0xdf:
      if (!need(4)) return;
      return DecodeMap(L, c, c->BE(4));
    default:
      c->err = 2;
  }
}

// Decodes up to `limit` objects (0 = all) from `offset`; returns them, preceded by the next
// offset (-1 at the end) when `with_offset`.
int UnpackFull(lua_State* L, int limit, int offset, bool with_offset) {
  size_t len;
  const char* s = luaL_checklstring(L, 1, &len);
  if (offset < 0 || limit < 0)
    return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.", offset,
                      static_cast<int>(len));
  if (static_cast<size_t>(offset) > len)
    return luaL_error(L, "Start offset %d greater than input length %d.", offset,
                      static_cast<int>(len));
  if (len == 0 && !with_offset) return luaL_error(L, "MessagePack unpack needs input.");
  Cursor c{reinterpret_cast<const unsigned char*>(s) + offset, len - offset};
  const int base = lua_gettop(L);
  if (with_offset) lua_pushnil(L);  // placeholder for the offset
  int count = 0;
  while (c.left > 0 && (limit == 0 || count < limit)) {
    Decode(L, &c);
    if (c.err != 0) {
      lua_settop(L, base);
      return luaL_error(L, c.err == 1 ? "Missing bytes in input." : "Bad data format in input.");
    }
    ++count;
  }
  if (with_offset) {
    const lua_Number next = c.left == 0 ? -1 : static_cast<lua_Number>(len - c.left);
    lua_pushnumber(L, next);
    lua_replace(L, base + 1);
  }
  return lua_gettop(L) - base;
}

int MsgpackUnpack(lua_State* L) { return UnpackFull(L, 0, 0, false); }
int MsgpackUnpackOne(lua_State* L) {
  return UnpackFull(L, 1, static_cast<int>(luaL_optinteger(L, 2, 0)), true);
}
int MsgpackUnpackLimit(lua_State* L) {
  return UnpackFull(L, static_cast<int>(luaL_checkinteger(L, 2)),
                    static_cast<int>(luaL_optinteger(L, 3, 0)), true);
}

}  // namespace

int OpenStruct(lua_State* L) {
  static const luaL_Reg kFns[] = {
      {"pack", StructPack}, {"unpack", StructUnpack}, {"size", StructSize}, {nullptr, nullptr}};
  lua_newtable(L);
  luaL_register(L, nullptr, kFns);
  return 1;
}

int OpenCmsgpack(lua_State* L) {
  static const luaL_Reg kFns[] = {{"pack", MsgpackPack},
                                  {"unpack", MsgpackUnpack},
                                  {"unpack_one", MsgpackUnpackOne},
                                  {"unpack_limit", MsgpackUnpackLimit},
                                  {nullptr, nullptr}};
  lua_newtable(L);
  luaL_register(L, nullptr, kFns);
  lua_pushliteral(L, "lua-cmsgpack");
  lua_setfield(L, -2, "_NAME");
  lua_pushliteral(L, "0.4.0");
  lua_setfield(L, -2, "_VERSION");
  lua_pushliteral(L, "Copyright (C) 2012, Salvatore Sanfilippo");
  lua_setfield(L, -2, "_COPYRIGHT");
  lua_pushliteral(L, "MessagePack C implementation.");
  lua_setfield(L, -2, "_DESCRIPTION");
  return 1;
}

}  // namespace vessel::scripting
