// vessel/module.h, module.hpp, util.hpp and packed_element.hpp as a strict C++20 compiler sees
// them: built with -std=c++20 -pedantic-errors -Wall -Wextra -Werror (tests/sdk/CMakeLists.txt),
// instantiating every template of the C++ layers once so its code is compiled, not just parsed.
#include <array>
#include <string_view>

#include "vessel/module.h"
#include "vessel/module.hpp"
#include "vessel/packed_element.hpp"
#include "vessel/util.hpp"

namespace {

// A value type with every optional member module.hpp looks for.
struct Counter {
  int64_t n = 0;
  size_t MemUsage() const { return sizeof(*this); }
  Counter* Clone() const { return vsl::New<Counter>(*this); }
  void Serialize(vsl::Writer& w) const { w.U64(static_cast<uint64_t>(n)); }
  static Counter* Deserialize(vsl::Reader& r, uint32_t) {
    uint64_t v;
    if (!r.U64(&v)) return nullptr;
    Counter* c = vsl::New<Counter>();
    c->n = static_cast<int64_t>(v);
    return c;
  }
  size_t FreeEffort() const { return 1; }
  const char* Encoding() const { return "int"; }
};

vsl::Type<Counter> counter_type;

// A value type kept in memory only (ABI 1.6): no Serialize/Deserialize.
struct Scratch {
  static constexpr bool kNotPersisted = true;
  size_t MemUsage() const { return sizeof(*this); }
};

vsl::Type<Scratch> scratch_type;

// CTR.GET's arguments, declared rather than derived from its syntax.
constexpr vsl_command_arg kCtrGetArgs[] = {
    {.struct_size = sizeof(vsl_command_arg), .type = VSL_ARG_KEY, .name = "key"}};

// CTR.INCR key
void CmdCtrIncr(vsl::Ctx& ctx) {
  vsl::Key key = ctx.key(0);
  Counter* c = key.Get(counter_type);
  if (c == nullptr) {
    c = vsl::New<Counter>();
    key.Set(counter_type, c);
  } else {
    key.Modified();
  }
  ctx.Int(++c->n);
}

// CTR.GET key
void CmdCtrGet(vsl::Ctx& ctx) {
  const Counter* c = ctx.key(0).Get(counter_type);
  if (c == nullptr) return ctx.Null();
  ctx.Int(c->n);
}

// clang-format off
constexpr std::array<vsl::CommandDef, 2> kCommands = {{
    {.name = "CTR.INCR", .arity = 2, .flags = VSL_CMD_WRITE | VSL_CMD_FAST,
     .keys = {vsl::KeyAt(1, VSL_KS_RW | VSL_KS_UPDATE)}, .handler = vsl::Handler<CmdCtrIncr>,
     .since = "1.0.0", .summary = "Increments a counter.", .syntax = "key", .complexity = "O(1)"},
    {.name = "CTR.GET", .arity = 2, .flags = VSL_CMD_READONLY | VSL_CMD_FAST,
     .keys = {vsl::KeyAt(1, VSL_KS_RO)}, .handler = vsl::Handler<CmdCtrGet>, .since = "1.0.0",
     .summary = "Returns a counter.", .syntax = "key", .complexity = "O(1)", .args = kCtrGetArgs},
}};
// clang-format on

// CTR.SCAN key cursor [MATCH pattern] [COUNT count]: util.hpp's helpers, one call each.
void CmdCtrScan(vsl::Ctx& ctx) {
  const uint64_t cursor = vsl::CursorArg(ctx, 2);
  const Counter* c = ctx.key(0).Get(counter_type);
  if (c == nullptr) return vsl::ReplyEmptyScan(ctx);
  const vsl::ScanOptions o = vsl::ScanOptionsArg(ctx, 3);
  vsl::PositionSet seen(o.count);
  vsl::Vec<int64_t> picks;
  for (uint64_t i = 0; i < o.count; ++i) {
    if (seen.Insert(vsl::RandomBelow(o.count))) picks.push_back(c->n);
  }
  size_t first = 0, last = 0;
  const bool any = vsl::ClampRange(0, vsl::Position(-1, picks.size()), picks.size(), &first, &last);
  vsl::ReplyScanCursor(ctx, cursor ^ vsl::HashBytes(o.pattern) ^ vsl::HashBytes32(o.pattern));
  ctx.Array(any ? static_cast<int64_t>(last - first) : 0);
  for (size_t i = first; any && i < last; ++i) ctx.Int(picks[i]);
}

// clang-format off
constexpr vsl::CommandDef kUtilCommands[] = {
    {.name = "CTR.SCAN", .arity = -3, .flags = vsl::table::kRead, .keys = {vsl::table::kRoAccess},
     .handler = vsl::Handler<CmdCtrScan>, .since = "1.0.0", .summary = "Scans a counter.",
     .syntax = "key cursor [MATCH pattern] [COUNT count]",
     .complexity = vsl::table::kScanComplexity, .tips = vsl::table::kTipRandom},
};
// clang-format on

}  // namespace

// util.hpp's ModuleInit (only compiled, as below).
int vsl_cxx_check_util_init(const vsl_api* api, vsl_module* m, size_t nargs, char* err,
                            size_t errlen) {
  vsl::ModuleInit init(api, m, "counter", nargs, err, errlen);
  init.Type(counter_type, "counter", 1);
  init.Commands(kUtilCommands, "module");
  return init.result();
}

// packed_element.hpp: an element through its entry and back, strings up to 4 KiB inline (only
// compiled, as below).
std::string_view vsl_cxx_check_packed(std::string_view s, unsigned char* out,
                                      vsl::packed::TextBuf& buf) {
  const vsl::packed::Encoded e = vsl::packed::Encode(s, 4096);
  vsl::packed::Write(e, out);
  return out[0] < vsl::packed::kStr8 || vsl::packed::EntrySize(out) == e.size()
             ? vsl::packed::EntryView(out, buf)
             : std::string_view();
}

// Not exported (no VSL_MODULE, hidden in a module): only compiled.
int vsl_cxx_check_init(const vsl_api* api, vsl_module* m, char* err, size_t errlen) {
  if (!vsl::Init(api, err, errlen) || !counter_type.Register(m, "counter", 1) ||
      !scratch_type.Register(m, "scratch", 1))
    return VSL_ERR;
  return vsl::RegisterCommands(m, kCommands, "module", err, errlen) ? VSL_OK : VSL_ERR;
}
