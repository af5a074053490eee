// Micro-benchmarks of the dispatch path without sockets: bytes in a session's buffer -> parse ->
// command lookup -> key locks -> module handler -> reply bytes. Loads the in-tree strings module
// from the build tree (bin/modules), as the server does.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "host/config/config.h"
#include "host/engine/engine.h"
#include "host/modules/loader.h"

namespace {

using vessel::engine::Engine;
using vessel::engine::Session;

class NullIo : public vessel::engine::SessionIo {
 public:
  void Wake() override {}
  void Close() override {}
};

Engine& SharedEngine() {
  static Engine* engine = [] {
    vessel::config::Config cfg = vessel::config::Defaults();
    auto* e = new Engine(cfg);
    std::string error;
    const vessel::config::ModuleConfig strings{"strings", {}};
    if (!vessel::modules::LoadModule(e, strings, vessel::modules::DefaultModuleDirs(), &error)) {
      fprintf(stderr, "%s\n", error.c_str());
      std::abort();
    }
    return e;
  }();
  return *engine;
}

std::string Batch(const char* verb, int n, bool with_value, const char* prefix = "key:") {
  std::string out;
  for (int i = 0; i < n; ++i) {
    const std::string key = prefix + std::to_string(100000 + i);
    out += with_value ? "*3\r\n" : "*2\r\n";
    out += "$" + std::to_string(strlen(verb)) + "\r\n" + verb + "\r\n";
    out += "$" + std::to_string(key.size()) + "\r\n" + key + "\r\n";
    if (with_value) out += "$3\r\nxxx\r\n";
  }
  return out;
}

void Populate(const std::string& batch) {
  Engine& engine = SharedEngine();
  NullIo io;
  Session session(&engine, engine.external_worker(), &io, "bench", "bench", -1);
  session.Process(batch);
}

void RunBatch(benchmark::State& state, const std::string& batch, int n) {
  Engine& engine = SharedEngine();
  NullIo io;
  Session session(&engine, engine.external_worker(), &io, "bench", "bench", -1);
  for (auto _ : state) {
    size_t consumed = session.Process(batch);
    benchmark::DoNotOptimize(consumed);
    session.output().clear();
  }
  state.SetItemsProcessed(state.iterations() * n);
}

void BM_DispatchSet(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  RunBatch(state, Batch("SET", n, true), n);
}
BENCHMARK(BM_DispatchSet)->Arg(1)->Arg(16)->Arg(256);

void BM_DispatchGet(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Populate(Batch("SET", n, true));
  RunBatch(state, Batch("GET", n, false), n);
}
BENCHMARK(BM_DispatchGet)->Arg(1)->Arg(16)->Arg(256);

void BM_DispatchIncr(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  RunBatch(state, Batch("INCR", n, false, "counter:"), n);
}
BENCHMARK(BM_DispatchIncr)->Arg(16);

void BM_DispatchPing(benchmark::State& state) {
  std::string batch;
  for (int i = 0; i < 16; ++i) batch += "*1\r\n$4\r\nPING\r\n";
  RunBatch(state, batch, 16);
}
BENCHMARK(BM_DispatchPing);

}  // namespace
