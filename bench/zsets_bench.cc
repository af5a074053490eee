// The zsets module's large representation (an entry table with stable positions plus a B+tree
// with subtree counts) against a pointer-based order-statistic tree, GNU pb_ds's red-black tree
// with node counts plus std::unordered_map for scores — the same shape as Redis's skiplist with
// spans plus dict: insertion, score lookup, rank, a 100-element range, a score update, popping
// the minimum, and bytes per member. The module's code is compiled in directly, with the
// stand-in for the host's API table of tests/ds/host_stub.h, which counts allocated bytes as the
// host does.
//   build/bin/zsets_bench [--benchmark_filter=Memory]
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <ext/pb_ds/assoc_container.hpp>
#include <ext/pb_ds/tree_policy.hpp>
#include <new>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "tests/ds/host_stub.h"
#include "vessel/module.hpp"
#include "zsets_type.h"

// std's allocations counted with the module's (tests/ds/host_stub.h), by usable size.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

void* operator new(size_t n) {
  void* p = vessel::stub::CountedAlloc(n);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void operator delete(void* p) noexcept { vessel::stub::CountedFree(p); }
void operator delete(void* p, size_t) noexcept { vessel::stub::CountedFree(p); }

namespace {

using vessel::zsets::Walker;
using vessel::zsets::Zset;
using vessel::zsets::ZsetLimits;

const bool g_api_ready = [] {
  vessel::stub::InstallHostApi();
  return true;
}();

std::vector<std::string> Members(size_t n) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.push_back("member:" + std::to_string(i));
  return out;
}
double ScoreOf(size_t i) { return static_cast<double>((i * 7919) % 1000003); }

// The module's sorted set, in its tree representation from the first member.
struct Module {
  Zset* z = Zset::NewTree();
  ~Module() { vsl::Delete(z); }
  void Add(const std::string& m, double s) {
    double unused;
    z->Add(m, s, 0, &unused, ZsetLimits{});
  }
  double Score(const std::string& m) const {
    double s = 0;
    z->Score(m, &s);
    return s;
  }
  int64_t Rank(const std::string& m) const { return z->Rank(m); }
  double Range(size_t from) const {
    double sum = 0;
    Walker w(*z, from);
    for (int i = 0; i < 100 && w.valid(); ++i, w.Next()) sum += w.Get().score;
    return sum;
  }
  void Incr(const std::string& m, double by) {
    double unused;
    z->Add(m, by, vessel::zsets::kAddIncr, &unused, ZsetLimits{});
  }
  void PopMin() { z->EraseRanks(0, 1); }
  size_t size() const { return z->size(); }
};

// An order-statistic red-black tree of (score, member) and a hash of member -> score.
struct Pointers {
  using Tree =
      __gnu_pbds::tree<std::pair<double, std::string>, __gnu_pbds::null_type, std::less<>,
                       __gnu_pbds::rb_tree_tag, __gnu_pbds::tree_order_statistics_node_update>;
  Tree tree;
  std::unordered_map<std::string, double> scores;
  void Add(const std::string& m, double s) {
    auto [it, added] = scores.try_emplace(m, s);
    if (!added) {
      tree.erase({it->second, m});
      it->second = s;
    }
    tree.insert({s, m});
  }
  double Score(const std::string& m) const { return scores.find(m)->second; }
  int64_t Rank(const std::string& m) const {
    return static_cast<int64_t>(tree.order_of_key({scores.find(m)->second, m}));
  }
  double Range(size_t from) const {
    double sum = 0;
    auto it = tree.find_by_order(from);
    for (int i = 0; i < 100 && it != tree.end(); ++i, ++it) sum += it->first;
    return sum;
  }
  void Incr(const std::string& m, double by) { Add(m, Score(m) + by); }
  void PopMin() {
    auto it = tree.begin();
    scores.erase(it->second);
    tree.erase(it);
  }
  size_t size() const { return tree.size(); }
};

template <class Impl>
void Fill(Impl& c, const std::vector<std::string>& m) {
  for (size_t i = 0; i < m.size(); ++i) c.Add(m[i], ScoreOf(i));
}

template <class Impl>
void BM_Insert(benchmark::State& state) {
  const auto m = Members(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    Impl c;
    Fill(c, m);
    benchmark::DoNotOptimize(c.size());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

// Reads of one kind on a filled container: 0 score, 1 rank, 2 range of 100, 3 incr.
template <class Impl, int kOp>
void BM_Op(benchmark::State& state) {
  const auto m = Members(static_cast<size_t>(state.range(0)));
  Impl c;
  Fill(c, m);
  std::mt19937_64 rng(1);
  for (auto _ : state) {
    const size_t i = rng() % m.size();
    if constexpr (kOp == 0) benchmark::DoNotOptimize(c.Score(m[i]));
    if constexpr (kOp == 1) benchmark::DoNotOptimize(c.Rank(m[i]));
    if constexpr (kOp == 2) benchmark::DoNotOptimize(c.Range(i));
    if constexpr (kOp == 3) c.Incr(m[i], 1);
  }
}

template <class Impl>
void BM_PopMin(benchmark::State& state) {
  const auto m = Members(static_cast<size_t>(state.range(0)));
  Impl c;
  Fill(c, m);
  size_t popped = 0;
  for (auto _ : state) {
    if (c.size() == 0) {
      state.PauseTiming();
      Fill(c, m);
      state.ResumeTiming();
    }
    c.PopMin();
    ++popped;
  }
  benchmark::DoNotOptimize(popped);
}

template <class Impl>
void BM_Memory(benchmark::State& state) {
  const auto m = Members(static_cast<size_t>(state.range(0)));
  double per = 0;
  for (auto _ : state) {
    const size_t before = vessel::stub::AllocatedBytes();
    auto* c = new Impl;
    Fill(*c, m);
    per = static_cast<double>(vessel::stub::AllocatedBytes() - before) /
          static_cast<double>(m.size());
    delete c;
  }
  state.counters["bytes_per_member"] = per;
}

constexpr int64_t kSmall = 1000, kLarge = 1000000;

BENCHMARK_TEMPLATE(BM_Insert, Module)->Arg(kSmall)->Arg(100000);
BENCHMARK_TEMPLATE(BM_Insert, Pointers)->Arg(kSmall)->Arg(100000);
BENCHMARK_TEMPLATE(BM_Op, Module, 0)->Name("BM_Score/Module")->Arg(kLarge);
BENCHMARK_TEMPLATE(BM_Op, Pointers, 0)->Name("BM_Score/Pointers")->Arg(kLarge);
BENCHMARK_TEMPLATE(BM_Op, Module, 1)->Name("BM_Rank/Module")->Arg(kLarge);
BENCHMARK_TEMPLATE(BM_Op, Pointers, 1)->Name("BM_Rank/Pointers")->Arg(kLarge);
BENCHMARK_TEMPLATE(BM_Op, Module, 2)->Name("BM_Range100/Module")->Arg(kLarge);
BENCHMARK_TEMPLATE(BM_Op, Pointers, 2)->Name("BM_Range100/Pointers")->Arg(kLarge);
BENCHMARK_TEMPLATE(BM_Op, Module, 3)->Name("BM_Incr/Module")->Arg(kLarge);
BENCHMARK_TEMPLATE(BM_Op, Pointers, 3)->Name("BM_Incr/Pointers")->Arg(kLarge);
BENCHMARK_TEMPLATE(BM_PopMin, Module)->Arg(100000);
BENCHMARK_TEMPLATE(BM_PopMin, Pointers)->Arg(100000);
BENCHMARK_TEMPLATE(BM_Memory, Module)->Arg(kLarge)->Iterations(1);
BENCHMARK_TEMPLATE(BM_Memory, Pointers)->Arg(kLarge)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
