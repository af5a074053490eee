// The zsets module's shared command pieces: result storing, range and timeout parsing, and the
// reply formats of scores.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "zsets.h"

namespace vessel::zsets {

int64_t StoreResult(Key& dst, std::span<const Zset::Item> sorted, const ZsetLimits& lim,
                    const char* event) {
  if (sorted.empty()) {
    if (dst.Delete()) dst.Notify(VSL_NOTIFY_GENERIC, "del");
    return 0;
  }
  ZsetPtr z(Zset::Build(sorted, lim));
  dst.Set(g_zset_type, z.release());
  dst.Notify(VSL_NOTIFY_ZSET, event);
  return static_cast<int64_t>(sorted.size());
}

void SortItems(std::span<Zset::Item> items) {
  std::sort(items.begin(), items.end(), [](const Zset::Item& a, const Zset::Item& b) {
    if (a.score != b.score) return a.score < b.score;
    return CompareMembers(a.member, b.member) < 0;
  });
}

// ---- parsing ----

namespace {

// strtod() over the argument as a C string (it ends at a NUL byte, as in Redis), which must be
// consumed whole; NaN refused.
bool ParseBound(std::string_view s, double* out, bool* ex) {
  *ex = !s.empty() && s[0] == '(';
  if (*ex) s.remove_prefix(1);
  const std::string buf(s);
  char* end = nullptr;
  const double v = std::strtod(buf.c_str(), &end);
  if (*end != '\0' || std::isnan(v)) return false;
  *out = v;
  return true;
}

bool ParseLexItem(std::string_view s, LexBound* out) {
  if (s.empty()) return false;
  const bool alone = s.size() == 1 || s[1] == '\0';  // Redis tests c[1] of a C string
  switch (s[0]) {
    case '+':
      if (!alone) return false;
      *out = {LexBound::kPlusInf, true, {}};
      return true;
    case '-':
      if (!alone) return false;
      *out = {LexBound::kMinusInf, true, {}};
      return true;
    case '(':
      *out = {LexBound::kString, true, s.substr(1)};
      return true;
    case '[':
      *out = {LexBound::kString, false, s.substr(1)};
      return true;
    default:
      return false;
  }
}

}  // namespace

bool ParseScoreRange(std::string_view min, std::string_view max, ScoreRange* out) {
  return ParseBound(min, &out->min, &out->minex) && ParseBound(max, &out->max, &out->maxex);
}

bool ParseLexRange(std::string_view min, std::string_view max, LexRange* out) {
  return ParseLexItem(min, &out->min) && ParseLexItem(max, &out->max);
}

// ---- replies ----

void ItemReply::Begin(int64_t n) {
  const bool flat_pairs = withscores_ && ctx_.protocol() == 2;
  if (n < 0) {
    deferred_ = true;
    agg_ = ctx_.DeferredArray();
    return;
  }
  ctx_.Array(flat_pairs ? n * 2 : n);
}

void ItemReply::Emit(const Zset::Item& it) {
  if (withscores_ && ctx_.protocol() > 2) ctx_.Array(2);
  ctx_.Bulk(it.member);
  if (withscores_) ctx_.Double(it.score);
  ++sent_;
}

void ItemReply::Finish() {
  if (!deferred_) return;
  ctx_.SetLen(agg_, withscores_ && ctx_.protocol() == 2 ? sent_ * 2 : sent_);
}

std::string_view FormatScore(double v, char (&buf)[40]) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  const int n = std::snprintf(buf, sizeof(buf), "%.17g", v);
  return {buf, static_cast<size_t>(n)};
}

std::string_view FormatPackScore(double v, char (&buf)[40]) {
  // Redis's double2ll: an integral value within +-LLONG_MAX/2 is stored as an integer.
  constexpr double kLimit = static_cast<double>(INT64_MAX / 2);
  if (v >= -kLimit && v <= kLimit && v == std::trunc(v)) {
    const int n = std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(v));
    return {buf, static_cast<size_t>(n)};
  }
  return FormatScore(v, buf);
}

std::string_view FormatHuman(double v, char (&buf)[64]) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  int n = std::snprintf(buf, sizeof(buf), "%.17Lf", static_cast<long double>(v));
  if (n < 0 || n >= static_cast<int>(sizeof(buf))) n = 0;  // |v| <= 180 here: never
  if (std::memchr(buf, '.', static_cast<size_t>(n)) != nullptr) {
    while (n > 0 && buf[n - 1] == '0') --n;
    if (n > 0 && buf[n - 1] == '.') --n;
  }
  if (n == 2 && buf[0] == '-' && buf[1] == '0') {
    buf[0] = '0';
    n = 1;
  }
  return {buf, static_cast<size_t>(n)};
}

}  // namespace vessel::zsets
