// The hot path allocates nothing with operator new: once a session has warmed up, a pipelined
// batch of GET, SET (overwriting), INCR, HGET, SISMEMBER and LINDEX on existing keys parses,
// dispatches, locks, runs and replies without one call of the global operator new. (Values live
// in the host allocator, memory::Alloc, which this test does not count: SET must allocate its new
// value.) The counting operator new below replaces the global one in this binary only; sanitizer
// builds keep theirs and skip the test.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

#include "host/config/config.h"
#include "host/engine/engine.h"
#include "host/modules/loader.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define VESSEL_COUNTING_NEW 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define VESSEL_COUNTING_NEW 0
#endif
#endif
#ifndef VESSEL_COUNTING_NEW
#define VESSEL_COUNTING_NEW 1
#endif

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_news{0};
}  // namespace

#if VESSEL_COUNTING_NEW
// GCC cannot see that these replacements pair malloc with free throughout.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_news.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
#endif

namespace vessel::engine {
namespace {

class NullIo : public SessionIo {
 public:
  void Wake() override {}
  void Close() override {}
};

std::string Command(std::initializer_list<std::string> args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

TEST(HotPathAlloc, PipelinedCommandsOnExistingKeysCallNoOperatorNew) {
  if (!VESSEL_COUNTING_NEW) GTEST_SKIP() << "sanitizer build: its operator new is not replaced";
  config::Config cfg = config::Defaults();
  Engine engine(cfg);
  for (const char* name : {"strings", "hashes", "sets", "lists"}) {
    std::string error;
    ASSERT_TRUE(modules::LoadModule(&engine, config::ModuleConfig{name, {}},
                                    modules::DefaultModuleDirs(), &error))
        << error;
  }
  NullIo io;
  Session session(&engine, engine.external_worker(), &io, "test", "test", -1);

  std::string setup;
  std::string batch;
  for (int i = 0; i < 64; ++i) {
    const std::string n = std::to_string(i);
    setup += Command({"SET", "key:" + n, "value-" + n});
    setup += Command({"SET", "counter:" + n, "10"});
    setup += Command({"HSET", "hash:" + n, "field", "v"});
    setup += Command({"SADD", "set:" + n, "member"});
    setup += Command({"RPUSH", "list:" + n, "a", "b", "c"});
    batch += Command({"GET", "key:" + n});
    batch += Command({"SET", "key:" + n, "other-" + n});
    batch += Command({"INCR", "counter:" + n});
    batch += Command({"HGET", "hash:" + n, "field"});
    batch += Command({"SISMEMBER", "set:" + n, "member"});
    batch += Command({"LINDEX", "list:" + n, "1"});
  }
  ASSERT_EQ(session.Process(setup), setup.size());
  session.output().clear();
  for (int warm = 0; warm < 3; ++warm) {  // buffers reach their working size
    ASSERT_EQ(session.Process(batch), batch.size());
    session.output().clear();
  }

  g_news.store(0);
  g_counting.store(true);
  const size_t consumed = session.Process(batch);
  g_counting.store(false);
  EXPECT_EQ(consumed, batch.size());
  EXPECT_EQ(g_news.load(), 0) << "operator new called on the hot path";
  // The replies are real: 64 of each, the GETs saw the previous batch's values.
  const std::string& out = session.output();
  EXPECT_NE(out.find("$8\r\nother-10\r\n"), std::string::npos);
  EXPECT_NE(out.find(":14\r\n"), std::string::npos);  // 10, three warm-up batches, this one
  EXPECT_TRUE(!out.starts_with("-") && out.find("\r\n-") == std::string::npos)
      << out.substr(0, 200);
}

}  // namespace
}  // namespace vessel::engine
