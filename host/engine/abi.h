// The ABI boundary: the SDK's opaque handles and the engine objects they name.
//
// A module sees a command invocation as a vsl_ctx* and a declared key as a vsl_key*; the host
// never defines those structs (they stay incomplete types). A handle is the address of the
// engine's CommandCtx / CommandKey reinterpreted: the conversions below are the only place that
// relation is used, and they cost nothing (no allocation, no table, no extra indirection).
// Included only by api.cc (the vsl_api table) and engine.cc (calling a module's handler); every
// other part of the host works with CommandCtx and CommandKey.
#ifndef VESSEL_HOST_ENGINE_ABI_H_
#define VESSEL_HOST_ENGINE_ABI_H_

#include <type_traits>

#include "host/engine/context.h"
#include "vessel/module.h"

namespace vessel::engine {

inline vsl_ctx* ToAbi(CommandCtx* c) { return reinterpret_cast<vsl_ctx*>(c); }
inline CommandCtx* FromAbi(vsl_ctx* c) { return reinterpret_cast<CommandCtx*>(c); }
inline vsl_key* ToAbi(CommandKey* k) { return reinterpret_cast<vsl_key*>(k); }
inline CommandKey* FromAbi(vsl_key* k) { return reinterpret_cast<CommandKey*>(k); }

// The ABI type of an engine parameter or result: handles for CommandCtx* / CommandKey*, the
// same type for everything else.
template <typename T>
struct AbiType {
  using type = T;
  static T To(T v) { return v; }
  static T From(T v) { return v; }
};
template <>
struct AbiType<void> {
  using type = void;
};
template <>
struct AbiType<CommandCtx*> {
  using type = vsl_ctx*;
  static vsl_ctx* To(CommandCtx* c) { return ToAbi(c); }
  static CommandCtx* From(vsl_ctx* c) { return FromAbi(c); }
};
template <>
struct AbiType<CommandKey*> {
  using type = vsl_key*;
  static vsl_key* To(CommandKey* k) { return ToAbi(k); }
  static CommandKey* From(vsl_key* k) { return FromAbi(k); }
};

// AbiEntry<F>::Call: the engine function F (taking CommandCtx* / CommandKey*) with the signature
// the vsl_api table declares (vsl_ctx* / vsl_key*). The conversions are casts: Call inlines F.
template <auto F>
struct AbiEntry;
template <typename R, typename... A, R (*F)(A...)>
struct AbiEntry<F> {
  static typename AbiType<R>::type Call(typename AbiType<A>::type... a) {
    if constexpr (std::is_void_v<R>) {
      F(AbiType<A>::From(a)...);
    } else {
      return AbiType<R>::To(F(AbiType<A>::From(a)...));
    }
  }
};
}  // namespace vessel::engine

#endif  // VESSEL_HOST_ENGINE_ABI_H_
