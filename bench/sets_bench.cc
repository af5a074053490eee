// The set representations of modules/sets against each other and against
// std::unordered_set<std::string>: membership (hit and miss), insertion, removal, random
// member, and memory per member, at the sizes where the module switches representation
// (intset up to 512 integers, listpack up to 128 short members, hashtable beyond). The module's
// code is compiled in directly, with the stand-in for the host's API table of tests/ds/host_stub.h,
// which counts allocated bytes as the host does.
//   build/bin/sets_bench [--benchmark_filter=Memory]
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <new>
#include <random>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "hash_set.h"
#include "sets_type.h"
#include "tests/ds/host_stub.h"
#include "vessel/module.hpp"

namespace {

using vessel::sets::HashSet;
using vessel::sets::Rep;
using vessel::sets::Set;

// Members: "member:<i>" (short strings), or the integers themselves.
std::vector<std::string> Members(size_t n, bool ints, size_t offset = 0) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) {
    out.push_back(ints ? std::to_string((i + offset) * 7) : "member:" + std::to_string(i + offset));
  }
  return out;
}

// The three containers behind one interface.
struct Module {  // the module's Set: its representation follows the members
  Set* s = Set::New();
  ~Module() { vsl::Delete(s); }
  bool Add(std::string_view m) { return s->Add(m); }
  bool Has(std::string_view m) const { return s->Contains(m); }
  bool Del(std::string_view m) { return s->Remove(m); }
  const char* name() const { return s->Encoding(); }
};
struct Table {  // always the hashtable
  HashSet h;
  bool Add(std::string_view m) { return h.Insert(m); }
  bool Has(std::string_view m) const { return h.Contains(m); }
  bool Del(std::string_view m) { return h.Erase(m); }
  const char* name() const { return "hashtable"; }
};
struct Std {
  std::unordered_set<std::string> u;
  bool Add(std::string_view m) { return u.emplace(m).second; }
  bool Has(std::string_view m) const { return u.count(std::string(m)) != 0; }
  bool Del(std::string_view m) { return u.erase(std::string(m)) != 0; }
  const char* name() const { return "std::unordered_set"; }
};

// range(0): members, range(1): 1 for integers.
template <class C>
void BM_ContainsHit(benchmark::State& state) {
  const auto members = Members(state.range(0), state.range(1) != 0);
  C c;
  for (const auto& m : members) c.Add(m);
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(c.Has(members[i]));
    if (++i == members.size()) i = 0;
  }
  state.SetLabel(c.name());
}

template <class C>
void BM_ContainsMiss(benchmark::State& state) {
  const auto members = Members(state.range(0), state.range(1) != 0);
  const auto others = Members(1024, state.range(1) != 0, 1u << 30);
  C c;
  for (const auto& m : members) c.Add(m);
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(c.Has(others[i]));
    i = (i + 1) & 1023;
  }
  state.SetLabel(c.name());
}

// Building a set of n members, then removing them all: per member.
template <class C>
void BM_AddThenRemove(benchmark::State& state) {
  const auto members = Members(state.range(0), state.range(1) != 0);
  for (auto _ : state) {
    C c;
    for (const auto& m : members) c.Add(m);
    for (const auto& m : members) c.Del(m);
    benchmark::DoNotOptimize(c.name());
  }
  state.SetItemsProcessed(state.iterations() * 2 * members.size());
}

// SRANDMEMBER: a uniform random member (the module: one position; std: no such operation
// without walking buckets, so it is not measured).
void BM_RandomMember(benchmark::State& state) {
  const auto members = Members(state.range(0), false);
  Module c;
  for (const auto& m : members) c.Add(m);
  vessel::sets::NumBuf buf;
  for (auto _ : state) {
    benchmark::DoNotOptimize(c.s->At(vsl::RandomBelow(c.s->size()), buf));
  }
  state.SetLabel(c.name());
}

// Memory per member: every byte allocated for the container, by usable size (jemalloc's size
// classes when the build links it).
template <class C>
void BM_Memory(benchmark::State& state) {
  const auto members = Members(state.range(0), state.range(1) != 0);
  double per_member = 0;
  for (auto _ : state) {
    const size_t before = vessel::stub::AllocatedBytes();
    auto* c = new C;
    for (const auto& m : members) c->Add(m);
    per_member = double(vessel::stub::AllocatedBytes() - before) / members.size();
    state.SetLabel(c->name());
    delete c;
  }
  state.counters["bytes_per_member"] = per_member;
}

void Sizes(benchmark::internal::Benchmark* b) {
  for (int ints : {1, 0}) {
    for (int n : {16, 128, 512, 100000}) b->Args({n, ints});
  }
}

BENCHMARK(BM_ContainsHit<Module>)->Apply(Sizes);
BENCHMARK(BM_ContainsHit<Table>)->Apply(Sizes);
BENCHMARK(BM_ContainsHit<Std>)->Apply(Sizes);
BENCHMARK(BM_ContainsMiss<Module>)->Apply(Sizes);
BENCHMARK(BM_ContainsMiss<Table>)->Apply(Sizes);
BENCHMARK(BM_ContainsMiss<Std>)->Apply(Sizes);
BENCHMARK(BM_AddThenRemove<Module>)->Apply(Sizes);
BENCHMARK(BM_AddThenRemove<Table>)->Apply(Sizes);
BENCHMARK(BM_AddThenRemove<Std>)->Apply(Sizes);
BENCHMARK(BM_RandomMember)->Arg(100)->Arg(1000000);
BENCHMARK(BM_Memory<Module>)->Apply(Sizes)->Args({1000000, 0})->Iterations(1);
BENCHMARK(BM_Memory<Table>)->Apply(Sizes)->Args({1000000, 0})->Iterations(1);
BENCHMARK(BM_Memory<Std>)->Apply(Sizes)->Args({1000000, 0})->Iterations(1);

}  // namespace

// Counted like the module's allocations; the warning is about pairing malloc with delete, which
// is what these replacements deliberately do.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(size_t n) {
  void* p = vessel::stub::CountedAlloc(n);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void operator delete(void* p) noexcept { vessel::stub::CountedFree(p); }
void operator delete(void* p, size_t) noexcept { vessel::stub::CountedFree(p); }

int main(int argc, char** argv) {
  vessel::stub::InstallHostApi();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
