// Unit tests for resp::Writer: golden bytes for every reply type in RESP2 and RESP3.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "host/resp/writer.h"

namespace vessel::resp {
namespace {

struct Golden {
  const char* name;
  std::function<void(Writer&)> write;
  std::string resp2;
  std::string resp3;
};

std::string Write(int protocol, const std::function<void(Writer&)>& write) {
  std::string out;
  Writer writer(&out, protocol);
  write(writer);
  return out;
}

TEST(RespWriterTest, GoldenBytes) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<Golden> cases = {
      {"null", [](Writer& w) { w.Null(); }, "$-1\r\n", "_\r\n"},
      {"null array", [](Writer& w) { w.NullArray(); }, "*-1\r\n", "_\r\n"},
      {"true", [](Writer& w) { w.Bool(true); }, ":1\r\n", "#t\r\n"},
      {"false", [](Writer& w) { w.Bool(false); }, ":0\r\n", "#f\r\n"},
      {"int 0", [](Writer& w) { w.Int(0); }, ":0\r\n", ":0\r\n"},
      {"int 7", [](Writer& w) { w.Int(7); }, ":7\r\n", ":7\r\n"},
      {"int -1", [](Writer& w) { w.Int(-1); }, ":-1\r\n", ":-1\r\n"},
      {"int 1234567890", [](Writer& w) { w.Int(1234567890); }, ":1234567890\r\n",
       ":1234567890\r\n"},
      {"int max", [](Writer& w) { w.Int(INT64_MAX); }, ":9223372036854775807\r\n",
       ":9223372036854775807\r\n"},
      {"int min", [](Writer& w) { w.Int(INT64_MIN); }, ":-9223372036854775808\r\n",
       ":-9223372036854775808\r\n"},
      {"double 1.5", [](Writer& w) { w.Double(1.5); }, "$3\r\n1.5\r\n", ",1.5\r\n"},
      {"double 0.1", [](Writer& w) { w.Double(0.1); }, "$19\r\n0.10000000000000001\r\n",
       ",0.10000000000000001\r\n"},
      {"double 1e300", [](Writer& w) { w.Double(1e300); }, "$23\r\n1.0000000000000001e+300\r\n",
       ",1.0000000000000001e+300\r\n"},
      {"double 3", [](Writer& w) { w.Double(3); }, "$1\r\n3\r\n", ",3\r\n"},
      {"double -0", [](Writer& w) { w.Double(-0.0); }, "$2\r\n-0\r\n", ",-0\r\n"},
      {"double inf", [inf](Writer& w) { w.Double(inf); }, "$3\r\ninf\r\n", ",inf\r\n"},
      {"double -inf", [inf](Writer& w) { w.Double(-inf); }, "$4\r\n-inf\r\n", ",-inf\r\n"},
      {"double nan", [](Writer& w) { w.Double(std::nan("")); }, "$3\r\nnan\r\n", ",nan\r\n"},
      {"simple", [](Writer& w) { w.Simple("OK"); }, "+OK\r\n", "+OK\r\n"},
      {"simple sanitised", [](Writer& w) { w.Simple("a\r\nb\nc\r"); }, "+a  b c \r\n",
       "+a  b c \r\n"},
      {"bulk", [](Writer& w) { w.Bulk("hello"); }, "$5\r\nhello\r\n", "$5\r\nhello\r\n"},
      {"bulk empty", [](Writer& w) { w.Bulk(""); }, "$0\r\n\r\n", "$0\r\n\r\n"},
      // A default string_view holds nullptr: UBSan in the ASan build checks it is never copied.
      {"bulk null view", [](Writer& w) { w.Bulk(std::string_view()); }, "$0\r\n\r\n",
       "$0\r\n\r\n"},
      {"simple null view", [](Writer& w) { w.Simple(std::string_view()); }, "+\r\n", "+\r\n"},
      {"bulk binary", [](Writer& w) { w.Bulk("a\r\nb"); }, "$4\r\na\r\nb\r\n", "$4\r\na\r\nb\r\n"},
      {"verbatim", [](Writer& w) { w.Verbatim("txt", "Some string"); }, "$11\r\nSome string\r\n",
       "=15\r\ntxt:Some string\r\n"},
      {"verbatim mkd", [](Writer& w) { w.Verbatim("mkd", ""); }, "$0\r\n\r\n", "=4\r\nmkd:\r\n"},
      {"error", [](Writer& w) { w.Error("ERR", "unknown command"); }, "-ERR unknown command\r\n",
       "-ERR unknown command\r\n"},
      {"error sanitised", [](Writer& w) { w.Error("WRONGTYPE", "bad\r\nthing"); },
       "-WRONGTYPE bad  thing\r\n", "-WRONGTYPE bad  thing\r\n"},
      {"error line", [](Writer& w) { w.ErrorLine("NOSCRIPT No matching script"); },
       "-NOSCRIPT No matching script\r\n", "-NOSCRIPT No matching script\r\n"},
      {"error line sanitised", [](Writer& w) { w.ErrorLine("ERR a\nb"); }, "-ERR a b\r\n",
       "-ERR a b\r\n"},
      {"array", [](Writer& w) { w.Aggregate(AggKind::kArray, 3); }, "*3\r\n", "*3\r\n"},
      {"array empty", [](Writer& w) { w.Aggregate(AggKind::kArray, 0); }, "*0\r\n", "*0\r\n"},
      {"map", [](Writer& w) { w.Aggregate(AggKind::kMap, 2); }, "*4\r\n", "%2\r\n"},
      {"set", [](Writer& w) { w.Aggregate(AggKind::kSet, 12); }, "*12\r\n", "~12\r\n"},
      {"push", [](Writer& w) { w.Aggregate(AggKind::kPush, 3); }, "*3\r\n", ">3\r\n"},
      {"map reply",
       [](Writer& w) {
         w.Aggregate(AggKind::kMap, 2);
         w.Bulk("a");
         w.Int(1);
         w.Bulk("b");
         w.Null();
       },
       "*4\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n$-1\r\n", "%2\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n_\r\n"},
  };
  for (const Golden& c : cases) {
    EXPECT_EQ(Write(2, c.write), c.resp2) << c.name;
    EXPECT_EQ(Write(3, c.write), c.resp3) << c.name;
  }
}

TEST(RespWriterTest, AppendsToExistingOutput) {
  std::string out = "+PONG\r\n";
  Writer writer(&out, 2);
  writer.Int(5);
  EXPECT_EQ(out, "+PONG\r\n:5\r\n");
  EXPECT_EQ(writer.out(), &out);
}

TEST(RespWriterTest, ProtocolCanChange) {
  std::string out;
  Writer writer(&out, 2);
  EXPECT_EQ(writer.protocol(), 2);
  writer.Null();
  writer.set_protocol(3);
  EXPECT_EQ(writer.protocol(), 3);
  writer.Null();
  EXPECT_EQ(out, "$-1\r\n_\r\n");
}

TEST(RespWriterTest, DeferredHeaders) {
  for (int protocol : {2, 3}) {
    std::string out = "+before\r\n";
    Writer writer(&out, protocol);
    size_t outer = writer.Mark();
    writer.Bulk("k");
    size_t inner = writer.Mark();
    writer.Int(1);
    writer.Int(2);
    writer.FinishDeferred(inner, AggKind::kSet, 2);
    writer.Bulk("k2");
    writer.Aggregate(AggKind::kArray, 0);
    writer.FinishDeferred(outer, AggKind::kMap, 2);
    if (protocol == 2) {
      EXPECT_EQ(out, "+before\r\n*4\r\n$1\r\nk\r\n*2\r\n:1\r\n:2\r\n$2\r\nk2\r\n*0\r\n");
    } else {
      EXPECT_EQ(out, "+before\r\n%2\r\n$1\r\nk\r\n~2\r\n:1\r\n:2\r\n$2\r\nk2\r\n*0\r\n");
    }
  }
}

TEST(RespWriterTest, DeferredEmptyAndLargeLengths) {
  std::string out;
  Writer writer(&out, 3);
  size_t mark = writer.Mark();
  writer.FinishDeferred(mark, AggKind::kPush, 0);
  EXPECT_EQ(out, ">0\r\n");
  out.clear();
  mark = writer.Mark();
  writer.FinishDeferred(mark, AggKind::kArray, 1234567);
  EXPECT_EQ(out, "*1234567\r\n");
}

TEST(RespWriterTest, FormatHeader) {
  char buf[32];
  std::string out;
  Writer resp2(&out, 2);
  Writer resp3(&out, 3);
  EXPECT_EQ(std::string(buf, resp2.FormatHeader(buf, AggKind::kMap, 5)), "*10\r\n");
  EXPECT_EQ(std::string(buf, resp3.FormatHeader(buf, AggKind::kMap, 5)), "%5\r\n");
  EXPECT_EQ(std::string(buf, resp2.FormatHeader(buf, AggKind::kArray, -1)), "*-1\r\n");
  EXPECT_EQ(std::string(buf, resp3.FormatHeader(buf, AggKind::kSet, INT64_MAX)),
            "~9223372036854775807\r\n");
  EXPECT_TRUE(out.empty());
}

// The double formatting must equal Redis's snprintf("%.17g") for every finite value.
TEST(RespWriterTest, DoublesMatchPrintf) {
  std::mt19937_64 rng(42);
  std::vector<double> values = {0.0,  1.0,  -1.0,   1e-300,  5e-324, 1.7976931348623157e308,
                                1e16, 1e17, 123.45, -2.5e-7, 1e21,   3.0000000000000004};
  for (int i = 0; i < 20000; ++i) {
    uint64_t bits = rng();
    double v;
    std::memcpy(&v, &bits, sizeof(v));
    if (std::isfinite(v)) values.push_back(v);
    values.push_back(static_cast<double>(static_cast<int64_t>(rng() >> (rng() % 64))) / 1000);
  }
  for (double v : values) {
    char expected[64];
    snprintf(expected, sizeof(expected), "%.17g", v);
    EXPECT_EQ(Write(3, [v](Writer& w) { w.Double(v); }), std::string(",") + expected + "\r\n");
  }
}

TEST(RespWriterTest, IntsMatchPrintf) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    int64_t v = static_cast<int64_t>(rng() >> (rng() % 64));
    if (i % 2) v = -v;
    EXPECT_EQ(Write(2, [v](Writer& w) { w.Int(v); }), ":" + std::to_string(v) + "\r\n");
  }
}

// Short frames are built in one piece; every length around the cut-offs gives the same bytes as
// the general path would.
TEST(RespWriterTest, FramesOfEveryShortLength) {
  for (size_t len = 0; len <= 300; ++len) {
    std::string payload(len, 'x');
    if (len > 2) payload[len / 2] = '\n';
    if (len > 3) payload[1] = '\r';
    const std::string len_line = std::to_string(len) + "\r\n";
    EXPECT_EQ(Write(2, [&](Writer& w) { w.Bulk(payload); }), "$" + len_line + payload + "\r\n");
    std::string clean = payload;
    for (char& c : clean) {
      if (c == '\r' || c == '\n') c = ' ';
    }
    EXPECT_EQ(Write(2, [&](Writer& w) { w.Simple(payload); }), "+" + clean + "\r\n");
    EXPECT_EQ(Write(2, [&](Writer& w) { w.ErrorLine(payload); }), "-" + clean + "\r\n");
  }
}

}  // namespace
}  // namespace vessel::resp
