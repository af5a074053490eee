// vessel/module.h and module.hpp as a strict C++20 compiler sees them: built with -std=c++20
// -pedantic-errors -Wall -Wextra -Werror (tests/sdk/CMakeLists.txt), instantiating every template
// of the C++ layer once so its code is compiled, not just parsed.
#include <array>
#include <string_view>

#include "vessel/module.h"
#include "vessel/module.hpp"

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

}  // namespace

// Not exported (no VSL_MODULE, hidden in a module): only compiled.
int vsl_cxx_check_init(const vsl_api* api, vsl_module* m, char* err, size_t errlen) {
  if (!vsl::Init(api, err, errlen) || !counter_type.Register(m, "counter", 1) ||
      !scratch_type.Register(m, "scratch", 1))
    return VSL_ERR;
  return vsl::RegisterCommands(m, kCommands, "module", err, errlen) ? VSL_OK : VSL_ERR;
}
