// What the data-structure tests share: a fixture that installs the host stand-in and checks that
// each test gives back every byte it allocated, the run's random seed (DS_SEED=n replays one),
// and random strings of every length class the structures store differently.
#ifndef VESSEL_TESTS_DS_DS_TEST_H_
#define VESSEL_TESTS_DS_DS_TEST_H_

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/ds/host_stub.h"

namespace vessel::ds {

class DsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    stub::InstallHostApi();
    before_ = stub::AllocatedBytes();
    const char* s = std::getenv("DS_SEED");
    seed_ = s != nullptr ? std::strtoull(s, nullptr, 10) : 20240611;
    rng_.seed(seed_);
  }
  void TearDown() override {
    EXPECT_EQ(stub::AllocatedBytes(), before_) << "bytes not given back; DS_SEED=" << seed_;
  }

  // A uniform integer in [0, n).
  uint64_t Below(uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng_); }
  bool OneIn(uint64_t n) { return Below(n) == 0; }

  // A string from a small alphabet (so that values repeat) whose length falls in one of the
  // classes the structures store differently: empty, up to 15 bytes (inline), 16-63, 64-255
  // and 256-700 (their own block); a canonical or non-canonical integer one time in five.
  std::string RandomString(uint64_t distinct = 1000) {
    const uint64_t n = Below(distinct);
    switch (Below(10)) {
      case 0:
        return std::to_string(static_cast<int64_t>(n) - static_cast<int64_t>(distinct / 2));
      case 1:
        return "0" + std::to_string(n);  // not canonical: stays a string
      case 2:
        return n % 7 == 0 ? "" : "m" + std::to_string(n);
      case 3:
        return std::string(16 + n % 48, static_cast<char>('a' + n % 26)) + std::to_string(n);
      case 4:
        return std::string(64 + n % 192, static_cast<char>('A' + n % 26)) + std::to_string(n);
      case 5:
        return std::string(256 + n % 444, static_cast<char>('0' + n % 10)) + "x" +
               std::to_string(n);
      default:
        return "member:" + std::to_string(n);
    }
  }

  std::string Trace() const { return "DS_SEED=" + std::to_string(seed_); }

  // Members that come and go between the steps of a scan, each distinct from every other.
  struct Churn {
    std::vector<std::string> live;
    uint64_t made = 0;
    bool empty() const { return live.empty(); }
    size_t size() const { return live.size(); }
  };
  const std::string& AddChurn(Churn& c) {
    c.live.push_back(RandomString(1000000) + "#" + std::to_string(++c.made));
    return c.live.back();
  }
  std::string TakeChurn(Churn& c) {  // a random live one, which leaves the list
    const size_t j = Below(c.live.size());
    std::string m = std::move(c.live[j]);
    c.live[j] = std::move(c.live.back());
    c.live.pop_back();
    return m;
  }
  // A scan's guarantee: every member present for the whole walk (`stable`) came back at least
  // once (some may have come twice).
  void ExpectScanned(const std::vector<std::string>& stable,
                     const std::unordered_set<std::string>& returned, uint64_t count) {
    for (const std::string& m : stable) {
      ASSERT_TRUE(returned.contains(m))
          << "missed " << m << " (COUNT " << count << "); " << Trace();
    }
  }

  // Bytes the test holds through the host's allocator now.
  size_t Allocated() const { return stub::AllocatedBytes() - before_; }

  uint64_t seed_ = 0;
  std::mt19937_64 rng_;

 private:
  size_t before_ = 0;
};

}  // namespace vessel::ds

#endif  // VESSEL_TESTS_DS_DS_TEST_H_
