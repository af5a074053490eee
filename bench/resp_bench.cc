// Micro-benchmarks for the RESP parser and reply writer (the per-request hot path).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "host/resp/parser.h"
#include "host/resp/writer.h"

namespace vessel::resp {
namespace {

// A pipelined batch of `SET key:000123 xxx` commands, as redis-benchmark -P sends them.
void BM_ParsePipelinedSet(benchmark::State& state) {
  const int batch = static_cast<int>(state.range(0));
  std::string input;
  for (int i = 0; i < batch; ++i) {
    char key[16];
    std::snprintf(key, sizeof(key), "key:%06d", i);
    input += "*3\r\n$3\r\nSET\r\n$10\r\n";
    input += key;
    input += "\r\n$3\r\nxxx\r\n";
  }
  Parser parser;
  std::vector<std::string_view> args;
  for (auto _ : state) {
    std::string_view rest = input;
    while (parser.Parse(rest, &args) == ParseStatus::kOk) {
      benchmark::DoNotOptimize(args.data());
      rest.remove_prefix(parser.consumed());
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * input.size());
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * batch);
}
BENCHMARK(BM_ParsePipelinedSet)->Arg(1)->Arg(100);

// One 1 MiB bulk arriving in 16 KiB reads: the parser must not rescan what it has seen.
void BM_ParseLargeBulkInChunks(benchmark::State& state) {
  const size_t kChunk = 16 * 1024;
  std::string input = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048576\r\n";
  input.append(1 << 20, 'v');
  input += "\r\n";
  Parser parser;
  std::vector<std::string_view> args;
  int64_t calls = 0;
  for (auto _ : state) {
    for (size_t fed = kChunk;; fed += kChunk) {
      fed = std::min(fed, input.size());
      ++calls;
      if (parser.Parse(std::string_view(input).substr(0, fed), &args) == ParseStatus::kOk) break;
    }
    benchmark::DoNotOptimize(args.data());
  }
  // Time per Parse call stays flat: the payload bytes are never scanned.
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * input.size());
  state.SetItemsProcessed(calls);
}
BENCHMARK(BM_ParseLargeBulkInChunks);

// 1000 bulk replies of 16 bytes, e.g. the answers to a pipeline of GETs.
void BM_WriteBulkReplies(benchmark::State& state) {
  const std::string value(16, 'v');
  std::string out;
  for (auto _ : state) {
    out.clear();
    Writer writer(&out, 2);
    for (int i = 0; i < 1000; ++i) writer.Bulk(value);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * 1000);
}
BENCHMARK(BM_WriteBulkReplies);

// An LRANGE-like reply: a deferred array header and 100 short elements.
void BM_WriteLrangeReply(benchmark::State& state) {
  std::vector<std::string> elements;
  for (int i = 0; i < 100; ++i) elements.push_back("element:" + std::to_string(i));
  std::string out;
  for (auto _ : state) {
    out.clear();
    Writer writer(&out, 2);
    size_t mark = writer.Mark();
    for (const std::string& element : elements) writer.Bulk(element);
    writer.FinishDeferred(mark, AggKind::kArray, static_cast<int64_t>(elements.size()));
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * 100);
}
BENCHMARK(BM_WriteLrangeReply);

}  // namespace
}  // namespace vessel::resp
