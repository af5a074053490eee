// The pattern functions of Lua's string library (string.find, match, gmatch, gsub): Lua 5.1's
// matcher with the bounds it lacks (a recursion limit, a poll of SCRIPT KILL); and string.rep.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "host/scripting/state.h"

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

namespace vessel::scripting {
namespace {

// ---- string.find, string.match, string.gmatch, string.gsub ----
// Lua 5.1's pattern matcher, with two bounds it lacks: it recurses once per pattern item with no
// limit, so a long pattern overflows the C stack (the process ends; Redis's too), and it
// backtracks without bound where the count hook cannot interrupt it. This is the same matcher
// (same results and errors) with a recursion limit ("pattern too complex", Lua 5.2's text) and a
// poll of SCRIPT KILL every 64K steps. Patterns end at their first NUL, as in 5.1.

constexpr int kMaxCaptures = 32;  // LUA_MAXCAPTURES
constexpr ptrdiff_t kCapUnfinished = -1;
constexpr ptrdiff_t kCapPosition = -2;
constexpr int kMaxMatchDepth = 10000;
constexpr char kEsc = '%';
constexpr char kSpecials[] = "^$*+?.([%-";

struct MatchState {
  const char* src_init;
  const char* src_end;
  lua_State* L;
  int level;
  int depth;
  uint32_t steps;
  struct {
    const char* init;
    ptrdiff_t len;
  } capture[kMaxCaptures];
};

int ToUChar(char c) { return static_cast<unsigned char>(c); }

void Step(MatchState* ms) {
  if ((++ms->steps & 0xFFFF) == 0) CheckKilled(ms->L);
}

int CheckCapture(MatchState* ms, int l) {
  l -= '1';
  if (l < 0 || l >= ms->level || ms->capture[l].len == kCapUnfinished)
    return luaL_error(ms->L, "invalid capture index");
  return l;
}

int CaptureToClose(MatchState* ms) {
  for (int level = ms->level - 1; level >= 0; --level)
    if (ms->capture[level].len == kCapUnfinished) return level;
  return luaL_error(ms->L, "invalid pattern capture");
}

const char* ClassEnd(MatchState* ms, const char* p) {
  switch (*p++) {
    case kEsc:
      if (*p == '\0') luaL_error(ms->L, "malformed pattern (ends with '%%')");
      return p + 1;
    case '[':
      if (*p == '^') p++;
      do {  // look for a ']'
        if (*p == '\0') luaL_error(ms->L, "malformed pattern (missing ']')");
        if (*(p++) == kEsc && *p != '\0') p++;  // skip escapes (e.g. '%]')
      } while (*p != ']');
      return p + 1;
    default:
      return p;
  }
}

bool MatchClass(int c, int cl) {
  bool res;
  switch (std::tolower(cl)) {
    case 'a':
      res = std::isalpha(c);
      break;
    case 'c':
      res = std::iscntrl(c);
      break;
    case 'd':
      res = std::isdigit(c);
      break;
    case 'l':
      res = std::islower(c);
      break;
    case 'p':
      res = std::ispunct(c);
      break;
    case 's':
      res = std::isspace(c);
      break;
    case 'u':
      res = std::isupper(c);
      break;
    case 'w':
      res = std::isalnum(c);
      break;
    case 'x':
      res = std::isxdigit(c);
      break;
    case 'z':
      res = c == 0;
      break;
    default:
      return cl == c;
  }
  return std::islower(cl) ? res : !res;
}

bool MatchBracketClass(int c, const char* p, const char* ec) {
  bool sig = true;
  if (*(p + 1) == '^') {
    sig = false;
    p++;
  }
  while (++p < ec) {
    if (*p == kEsc) {
      p++;
      if (MatchClass(c, ToUChar(*p))) return sig;
    } else if (*(p + 1) == '-' && p + 2 < ec) {
      p += 2;
      if (ToUChar(*(p - 2)) <= c && c <= ToUChar(*p)) return sig;
    } else if (ToUChar(*p) == c) {
      return sig;
    }
  }
  return !sig;
}

bool SingleMatch(int c, const char* p, const char* ep) {
  switch (*p) {
    case '.':
      return true;
    case kEsc:
      return MatchClass(c, ToUChar(*(p + 1)));
    case '[':
      return MatchBracketClass(c, p, ep - 1);
    default:
      return ToUChar(*p) == c;
  }
}

const char* Match(MatchState* ms, const char* s, const char* p);

const char* MatchBalance(MatchState* ms, const char* s, const char* p) {
  if (*p == 0 || *(p + 1) == 0) luaL_error(ms->L, "unbalanced pattern");
  if (*s != *p) return nullptr;  // *src_end is the string's terminating NUL
  const int b = *p, e = *(p + 1);
  int cont = 1;
  while (++s < ms->src_end) {
    Step(ms);
    if (*s == e) {
      if (--cont == 0) return s + 1;
    } else if (*s == b) {
      cont++;
    }
  }
  return nullptr;
}

const char* MaxExpand(MatchState* ms, const char* s, const char* p, const char* ep) {
  ptrdiff_t i = 0;
  while (s + i < ms->src_end && SingleMatch(ToUChar(*(s + i)), p, ep)) {
    Step(ms);
    i++;
  }
  while (i >= 0) {  // the longest repetition that lets the rest match
    if (const char* res = Match(ms, s + i, ep + 1)) return res;
    i--;
  }
  return nullptr;
}

const char* MinExpand(MatchState* ms, const char* s, const char* p, const char* ep) {
  for (;;) {
    if (const char* res = Match(ms, s, ep + 1)) return res;
    if (s < ms->src_end && SingleMatch(ToUChar(*s), p, ep)) {
      s++;
    } else {
      return nullptr;
    }
  }
}

const char* StartCapture(MatchState* ms, const char* s, const char* p, ptrdiff_t what) {
  const int level = ms->level;
  if (level >= kMaxCaptures) luaL_error(ms->L, "too many captures");
  ms->capture[level].init = s;
  ms->capture[level].len = what;
  ms->level = level + 1;
  const char* res = Match(ms, s, p);
  if (res == nullptr) ms->level--;
  return res;
}

const char* EndCapture(MatchState* ms, const char* s, const char* p) {
  const int l = CaptureToClose(ms);
  ms->capture[l].len = s - ms->capture[l].init;
  const char* res = Match(ms, s, p);
  if (res == nullptr) ms->capture[l].len = kCapUnfinished;
  return res;
}

const char* MatchCapture(MatchState* ms, const char* s, int l) {
  l = CheckCapture(ms, l);
  const auto len = static_cast<size_t>(ms->capture[l].len);
  if (static_cast<size_t>(ms->src_end - s) >= len && std::memcmp(ms->capture[l].init, s, len) == 0)
    return s + len;
  return nullptr;
}

const char* DoMatch(MatchState* ms, const char* s, const char* p) {
init:  // tail calls become jumps
  Step(ms);
  switch (*p) {
    case '(':
      if (*(p + 1) == ')') return StartCapture(ms, s, p + 2, kCapPosition);
      return StartCapture(ms, s, p + 1, kCapUnfinished);
    case ')':
      return EndCapture(ms, s, p + 1);
    case kEsc:
      switch (*(p + 1)) {
        case 'b':
          s = MatchBalance(ms, s, p + 2);
          if (s == nullptr) return nullptr;
          p += 4;
          goto init;
        case 'f': {
          p += 2;
          if (*p != '[') luaL_error(ms->L, "missing '[' after '%%f' in pattern");
          const char* ep = ClassEnd(ms, p);
          const char previous = s == ms->src_init ? '\0' : *(s - 1);
          if (MatchBracketClass(ToUChar(previous), p, ep - 1) ||
              !MatchBracketClass(ToUChar(*s), p, ep - 1))
            return nullptr;
          p = ep;
          goto init;
        }
        default:
          if (std::isdigit(ToUChar(*(p + 1)))) {
            s = MatchCapture(ms, s, ToUChar(*(p + 1)));
            if (s == nullptr) return nullptr;
            p += 2;
            goto init;
          }
          goto dflt;
      }
    case '\0':
      return s;
    case '$':
      if (*(p + 1) == '\0') return s == ms->src_end ? s : nullptr;
      goto dflt;
    default:
    dflt : {
      const char* ep = ClassEnd(ms, p);
      const bool m = s < ms->src_end && SingleMatch(ToUChar(*s), p, ep);
      switch (*ep) {
        case '?':
          if (m) {
            if (const char* res = Match(ms, s + 1, ep + 1)) return res;
          }
          p = ep + 1;
          goto init;
        case '*':
          return MaxExpand(ms, s, p, ep);
        case '+':
          return m ? MaxExpand(ms, s + 1, p, ep) : nullptr;
        case '-':
          return MinExpand(ms, s, p, ep);
        default:
          if (!m) return nullptr;
          s++;
          p = ep;
          goto init;
      }
    }
  }
}

const char* Match(MatchState* ms, const char* s, const char* p) {
  if (++ms->depth > kMaxMatchDepth) luaL_error(ms->L, "pattern too complex");
  const char* res = DoMatch(ms, s, p);
  --ms->depth;
  return res;
}

void InitMatch(MatchState* ms, lua_State* L, const char* s, size_t len) {
  ms->L = L;
  ms->src_init = s;
  ms->src_end = s + len;
  ms->level = 0;
  ms->depth = 0;
  ms->steps = 0;
}

void PushOneCapture(MatchState* ms, int i, const char* s, const char* e) {
  if (i >= ms->level) {
    if (i == 0) {
      lua_pushlstring(ms->L, s, e - s);  // the whole match
    } else {
      luaL_error(ms->L, "invalid capture index");
    }
    return;
  }
  const ptrdiff_t l = ms->capture[i].len;
  if (l == kCapUnfinished) luaL_error(ms->L, "unfinished capture");
  if (l == kCapPosition) {
    lua_pushinteger(ms->L, ms->capture[i].init - ms->src_init + 1);
  } else {
    lua_pushlstring(ms->L, ms->capture[i].init, l);
  }
}

int PushCaptures(MatchState* ms, const char* s, const char* e) {
  const int n = (ms->level == 0 && s != nullptr) ? 1 : ms->level;
  luaL_checkstack(ms->L, n, "too many captures");
  for (int i = 0; i < n; ++i) PushOneCapture(ms, i, s, e);
  return n;
}

ptrdiff_t RelativePosition(ptrdiff_t pos, size_t len) {
  if (pos < 0) pos += static_cast<ptrdiff_t>(len) + 1;
  return pos >= 0 ? pos : 0;
}

const char* MemFind(const char* s1, size_t l1, const char* s2, size_t l2) {
  if (l2 == 0) return s1;
  if (l2 > l1) return nullptr;
  l2--;
  l1 = l1 - l2;
  const char* init;
  while (l1 > 0 && (init = static_cast<const char*>(std::memchr(s1, *s2, l1))) != nullptr) {
    init++;
    if (std::memcmp(init, s2 + 1, l2) == 0) return init - 1;
    l1 -= init - s1;
    s1 = init;
  }
  return nullptr;
}

int FindAux(lua_State* L, bool find) {
  size_t l1, l2;
  const char* s = luaL_checklstring(L, 1, &l1);
  const char* p = luaL_checklstring(L, 2, &l2);
  ptrdiff_t init = RelativePosition(luaL_optinteger(L, 3, 1), l1) - 1;
  if (init < 0) {
    init = 0;
  } else if (static_cast<size_t>(init) > l1) {
    init = static_cast<ptrdiff_t>(l1);
  }
  if (find && (lua_toboolean(L, 4) || std::strpbrk(p, kSpecials) == nullptr)) {
    const char* s2 = MemFind(s + init, l1 - init, p, l2);
    if (s2 != nullptr) {
      lua_pushinteger(L, s2 - s + 1);
      lua_pushinteger(L, static_cast<lua_Integer>(s2 - s + l2));
      return 2;
    }
  } else {
    MatchState ms;
    const bool anchor = *p == '^';
    if (anchor) p++;
    const char* s1 = s + init;
    InitMatch(&ms, L, s, l1);
    do {
      ms.level = 0;
      if (const char* res = Match(&ms, s1, p)) {
        if (find) {
          lua_pushinteger(L, s1 - s + 1);
          lua_pushinteger(L, res - s);
          return PushCaptures(&ms, nullptr, nullptr) + 2;
        }
        return PushCaptures(&ms, s1, res);
      }
    } while (s1++ < ms.src_end && !anchor);
  }
  lua_pushnil(L);
  return 1;
}

int StrFind(lua_State* L) { return FindAux(L, true); }
int StrMatch(lua_State* L) { return FindAux(L, false); }

int GmatchAux(lua_State* L) {
  MatchState ms;
  size_t ls;
  const char* s = lua_tolstring(L, lua_upvalueindex(1), &ls);
  const char* p = lua_tostring(L, lua_upvalueindex(2));
  InitMatch(&ms, L, s, ls);
  for (const char* src = s + static_cast<size_t>(lua_tointeger(L, lua_upvalueindex(3)));
       src <= ms.src_end; src++) {
    ms.level = 0;
    if (const char* e = Match(&ms, src, p)) {
      lua_Integer next = e - s;
      if (e == src) next++;  // an empty match: go on at least one position
      lua_pushinteger(L, next);
      lua_replace(L, lua_upvalueindex(3));
      return PushCaptures(&ms, src, e);
    }
  }
  return 0;
}

int StrGmatch(lua_State* L) {
  luaL_checkstring(L, 1);
  luaL_checkstring(L, 2);
  lua_settop(L, 2);
  lua_pushinteger(L, 0);
  lua_pushcclosure(L, GmatchAux, 3);
  return 1;
}

void AddString(MatchState* ms, luaL_Buffer* b, const char* s, const char* e) {
  size_t l;
  const char* news = lua_tolstring(ms->L, 3, &l);
  for (size_t i = 0; i < l; i++) {
    if (news[i] != kEsc) {
      luaL_addchar(b, news[i]);
      continue;
    }
    i++;  // the character after '%' (the string's terminating NUL after a final '%')
    if (!std::isdigit(ToUChar(news[i]))) {
      luaL_addchar(b, news[i]);
    } else if (news[i] == '0') {
      luaL_addlstring(b, s, e - s);
    } else {
      PushOneCapture(ms, news[i] - '1', s, e);
      luaL_addvalue(b);
    }
  }
}

void AddValue(MatchState* ms, luaL_Buffer* b, const char* s, const char* e) {
  lua_State* L = ms->L;
  switch (lua_type(L, 3)) {
    case LUA_TNUMBER:
    case LUA_TSTRING:
      AddString(ms, b, s, e);
      return;
    case LUA_TFUNCTION: {
      lua_pushvalue(L, 3);
      const int n = PushCaptures(ms, s, e);
      lua_call(L, n, 1);
      break;
    }
    case LUA_TTABLE:
      PushOneCapture(ms, 0, s, e);
      lua_gettable(L, 3);
      break;
  }
  if (!lua_toboolean(L, -1)) {  // nil or false: keep the original text
    lua_pop(L, 1);
    lua_pushlstring(L, s, e - s);
  } else if (!lua_isstring(L, -1)) {
    luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
  }
  luaL_addvalue(b);
}

int StrGsub(lua_State* L) {
  size_t srcl;
  const char* src = luaL_checklstring(L, 1, &srcl);
  const char* p = luaL_checkstring(L, 2);
  const int tr = lua_type(L, 3);
  const int max_s = luaL_optint(L, 4, static_cast<int>(srcl + 1));
  const bool anchor = *p == '^';
  if (anchor) p++;
  int n = 0;
  MatchState ms;
  luaL_Buffer b;
  luaL_argcheck(L,
                tr == LUA_TNUMBER || tr == LUA_TSTRING || tr == LUA_TFUNCTION || tr == LUA_TTABLE,
                3, "string/function/table expected");
  luaL_buffinit(L, &b);
  InitMatch(&ms, L, src, srcl);
  while (n < max_s) {
    ms.level = 0;
    const char* e = Match(&ms, src, p);
    if (e != nullptr) {
      n++;
      AddValue(&ms, &b, src, e);
    }
    if (e != nullptr && e > src) {
      src = e;
    } else if (src < ms.src_end) {
      luaL_addchar(&b, *src++);
    } else {
      break;
    }
    if (anchor) break;
  }
  luaL_addlstring(&b, src, ms.src_end - src);
  luaL_pushresult(&b);
  lua_pushinteger(L, n);
  return 2;
}

// ---- string.rep ----
// Lua 5.1's copies byte by byte through a luaL_Buffer, so a loop that repeats a megabyte string
// spends milliseconds per instruction the count hook sees (and allocates nothing once the result
// is interned, so the kill's allocation failure never comes). This one doubles with memcpy into
// memory from the state's allocator (the memory cap and Lua's memory error apply) and polls
// SCRIPT KILL on every call.
int StrRep(lua_State* L) {
  size_t len;
  const char* s = luaL_checklstring(L, 1, &len);
  const int n = luaL_checkint(L, 2);
  CheckKilled(L);
  if (n <= 0 || len == 0) {
    lua_pushliteral(L, "");
    return 1;
  }
  const auto times = static_cast<size_t>(n);
  if (len > (SIZE_MAX / 2) / times) {
    lua_pushliteral(L, "not enough memory");
    return lua_error(L);
  }
  const size_t total = len * times;
  auto* buf = static_cast<char*>(lua_newuserdata(L, total));
  std::memcpy(buf, s, len);
  for (size_t done = len; done < total; done += std::min(done, total - done))
    std::memcpy(buf + done, buf, std::min(done, total - done));
  lua_pushlstring(L, buf, total);
  return 1;
}

}  // namespace

void ReplaceStringPatterns(lua_State* L) {
  static const luaL_Reg kFns[] = {{"rep", StrRep},       {"find", StrFind}, {"match", StrMatch},
                                  {"gmatch", StrGmatch}, {"gsub", StrGsub}, {nullptr, nullptr}};
  luaL_register(L, nullptr, kFns);
  lua_getfield(L, -1, "gfind");  // Lua 5.1's compatibility alias of gmatch
  const bool gfind = lua_isfunction(L, -1);
  lua_pop(L, 1);
  if (gfind) {
    lua_pushcfunction(L, StrGmatch);
    lua_setfield(L, -2, "gfind");
  }
}

}  // namespace vessel::scripting
