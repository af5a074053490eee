// The list representation (modules/lists/lists_type.h: a ring of packed chunks) against
// std::deque<std::string>: pushes and pops at both ends, random index, a full
// range read, and memory per element. Both use the same allocator (jemalloc when the build links
// it), the ring through the stand-in for the host's API table of tests/ds/host_stub.h.
//   build/bin/lists_bench [--benchmark_filter=Memory]
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <deque>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "lists_type.h"
#include "tests/ds/host_stub.h"
#include "vessel/module.hpp"
#if defined(VESSEL_BENCH_JEMALLOC)
#include <jemalloc/jemalloc.h>
#endif

namespace {

using vessel::lists::List;

// Bytes currently allocated (jemalloc's stats.allocated), or 0 without jemalloc.
size_t Allocated() {
#if defined(VESSEL_BENCH_JEMALLOC)
  uint64_t epoch = 1;
  size_t len = sizeof(epoch);
  mallctl("epoch", &epoch, &len, &epoch, len);
  size_t allocated = 0;
  len = sizeof(allocated);
  mallctl("stats.allocated", &allocated, &len, nullptr, 0);
  return allocated;
#else
  return 0;
#endif
}

struct Ring {
  List list;
  mutable vessel::lists::ElemBuf buf;
  void PushBack(std::string_view s) { list.PushBack(s); }
  void PushFront(std::string_view s) { list.PushFront(s); }
  size_t PopFront() {
    const size_t n = list.Front(buf).size();
    list.PopFront();
    return n;
  }
  size_t PopBack() {
    const size_t n = list.Back(buf).size();
    list.PopBack();
    return n;
  }
  size_t SizeAt(size_t i) const { return list.At(i, buf).size(); }
  const char* DataAt(size_t i) const { return list.At(i, buf).data(); }
  size_t size() const { return list.size(); }
};

struct Deque {
  std::deque<std::string> d;
  void PushBack(std::string_view s) { d.emplace_back(s); }
  void PushFront(std::string_view s) { d.emplace_front(s); }
  size_t PopFront() {
    const size_t n = d.front().size();
    d.pop_front();
    return n;
  }
  size_t PopBack() {
    const size_t n = d.back().size();
    d.pop_back();
    return n;
  }
  size_t SizeAt(size_t i) const { return d[i].size(); }
  const char* DataAt(size_t i) const { return d[i].data(); }
  size_t size() const { return d.size(); }
};

std::string Element(size_t len, size_t i) {
  std::string s(len, 'x');
  for (size_t j = 0; j < len && j < 8; ++j) s[j] = static_cast<char>('a' + (i >> (4 * j)) % 16);
  return s;
}

// args: elements, element length
template <class C>
void BM_QueueBackToFront(benchmark::State& state) {  // RPUSH then LPOP (a queue)
  const size_t n = state.range(0);
  const std::string e = Element(state.range(1), 7);
  for (auto _ : state) {
    C c;
    for (size_t i = 0; i < n; ++i) c.PushBack(e);
    size_t sum = 0;
    for (size_t i = 0; i < n; ++i) sum += c.PopFront();
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * n * 2);
}

template <class C>
void BM_StackFront(benchmark::State& state) {  // LPUSH then LPOP
  const size_t n = state.range(0);
  const std::string e = Element(state.range(1), 7);
  for (auto _ : state) {
    C c;
    for (size_t i = 0; i < n; ++i) c.PushFront(e);
    size_t sum = 0;
    for (size_t i = 0; i < n; ++i) sum += c.PopBack();
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * n * 2);
}

// A steady queue of n elements: one push and one pop per item (a job queue under load).
template <class C>
void BM_SteadyQueue(benchmark::State& state) {
  const size_t n = state.range(0);
  const std::string e = Element(state.range(1), 7);
  C c;
  for (size_t i = 0; i < n; ++i) c.PushBack(e);
  size_t sum = 0;
  for (auto _ : state) {
    c.PushBack(e);
    sum += c.PopFront();
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations() * 2);
}

template <class C>
void BM_Index(benchmark::State& state) {  // LINDEX at random positions
  const size_t n = state.range(0);
  C c;
  for (size_t i = 0; i < n; ++i) {
    c.PushFront(Element(state.range(1), i));  // the ring wraps, the deque grows at the front
  }
  std::mt19937_64 rng(42);
  std::vector<size_t> idx(4096);
  for (auto& i : idx) i = rng() % n;
  size_t k = 0, sum = 0;
  for (auto _ : state) {
    const size_t i = idx[k++ & 4095];
    sum += c.SizeAt(i) + static_cast<unsigned char>(c.DataAt(i)[0]);
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations());
}

template <class C>
void BM_Range(benchmark::State& state) {  // LRANGE 0 -1: read every element's bytes
  const size_t n = state.range(0);
  C c;
  for (size_t i = 0; i < n; ++i) c.PushBack(Element(state.range(1), i));
  for (auto _ : state) {
    size_t sum = 0;
    for (size_t i = 0; i < n; ++i) sum += c.SizeAt(i) + static_cast<unsigned char>(c.DataAt(i)[0]);
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * n);
}

// Without the thread cache every allocation and free reaches jemalloc's statistics at once.
void DisableThreadCache() {
#if defined(VESSEL_BENCH_JEMALLOC)
  bool off = false;
  mallctl("thread.tcache.flush", nullptr, nullptr, nullptr, 0);
  mallctl("thread.tcache.enabled", nullptr, nullptr, &off, sizeof(off));
#endif
}

template <class C>
void BM_Memory(benchmark::State& state) {  // bytes per element, from the allocator's statistics
  const size_t n = state.range(0);
  DisableThreadCache();
  double per_element = 0;
  for (auto _ : state) {
    const size_t before = Allocated();
    auto* c = new C;
    for (size_t i = 0; i < n; ++i) c->PushBack(Element(state.range(1), i));
    per_element = static_cast<double>(Allocated() - before) / n;
    delete c;
  }
  state.counters["bytes_per_elem"] = per_element;
}

void Sizes(benchmark::internal::Benchmark* b) {
  for (int len : {8, 32, 100}) {
    for (int n : {16, 1000, 100000}) b->Args({n, len});
  }
}
void MemorySizes(benchmark::internal::Benchmark* b) {
  for (int len : {8, 15, 16, 32, 100}) {
    for (int n : {10, 1000, 1000000}) b->Args({n, len});
  }
  b->Iterations(1);
}

#define VESSEL_LIST_BENCH(fn, sizes)          \
  BENCHMARK_TEMPLATE(fn, Ring)->Apply(sizes); \
  BENCHMARK_TEMPLATE(fn, Deque)->Apply(sizes)

VESSEL_LIST_BENCH(BM_QueueBackToFront, Sizes);
VESSEL_LIST_BENCH(BM_StackFront, Sizes);
VESSEL_LIST_BENCH(BM_SteadyQueue, Sizes);
VESSEL_LIST_BENCH(BM_Index, Sizes);
VESSEL_LIST_BENCH(BM_Range, Sizes);
VESSEL_LIST_BENCH(BM_Memory, MemorySizes);

}  // namespace

int main(int argc, char** argv) {
  vessel::stub::InstallHostApi();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
