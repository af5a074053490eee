// libFuzzer target for resp::Parser: invariants, and whole-buffer versus chunked parsing agree.
//
// Input layout: byte 0 holds options (bit 0: small limits, bit 1: chunks of 1-4 bytes instead of
// 1-64), bytes 1-2 seed the chunk sizes, the rest is the byte stream a client sends.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "host/resp/parser.h"

namespace {

using vessel::resp::Parser;
using vessel::resp::ParserLimits;
using vessel::resp::ParseStatus;
using Command = std::vector<std::string>;

struct Outcome {
  std::vector<Command> commands;
  ParseStatus last = ParseStatus::kNeedMore;
  std::string error;
  std::string rest;
};

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant failed: %s\n", what);
    std::abort();
  }
}

bool Inside(std::string_view part, std::string_view whole) {
  const char* begin = whole.data();
  const char* end = whole.data() + whole.size();
  return part.data() >= begin && part.data() + part.size() <= end;
}

bool Overlaps(std::string_view part, std::string_view whole) {
  if (part.empty() || whole.empty()) return false;
  return part.data() < whole.data() + whole.size() && whole.data() < part.data() + part.size();
}

// One Parse call on `buffer` with the invariants every call must satisfy.
ParseStatus ParseChecked(Parser& parser, std::string_view buffer,
                         std::vector<std::string_view>* args) {
  ParseStatus status = parser.Parse(buffer, args);
  Check(parser.consumed() <= buffer.size(), "consumed exceeds input");
  switch (status) {
    case ParseStatus::kOk: {
      Check(!args->empty(), "kOk with no arguments");
      Check(parser.consumed() > 0, "kOk consumed nothing");
      for (std::string_view arg : *args) {
        // Arguments are views of the input, or of the parser's scratch space for unescaped
        // inline arguments; reading them lets ASan catch a view into freed scratch memory.
        Check(Inside(arg, buffer) || !Overlaps(arg, buffer), "argument straddles the input");
        Check(arg.size() <= parser.consumed(), "argument longer than the command");
        volatile char sink = 0;
        for (char c : arg) sink = sink ^ c;
      }
      break;
    }
    case ParseStatus::kNeedMore:
      Check(args->empty(), "kNeedMore with arguments");
      Check(parser.bytes_hint() == 0 || parser.bytes_hint() > buffer.size(), "bad bytes_hint");
      break;
    case ParseStatus::kError:
      Check(!parser.error().empty(), "kError without text");
      Check(parser.error().starts_with("Protocol error: "), "unexpected error text");
      break;
  }
  return status;
}

// Feeds `input` up to each cut in turn, as a connection does.
Outcome Run(const ParserLimits& limits, std::string_view input, const std::vector<size_t>& cuts) {
  Parser parser(limits);
  Outcome outcome;
  std::string buffer;
  std::vector<std::string_view> args;
  size_t fed = 0;
  for (size_t i = 0; i <= cuts.size(); ++i) {
    const size_t cut = i < cuts.size() ? cuts[i] : input.size();
    buffer.append(input.substr(fed, cut - fed));
    fed = cut;
    while (true) {
      const ParseStatus status = ParseChecked(parser, buffer, &args);
      outcome.last = status;
      if (status == ParseStatus::kError) {
        outcome.error = std::string(parser.error());
        return outcome;
      }
      if (status == ParseStatus::kOk) outcome.commands.emplace_back(args.begin(), args.end());
      buffer.erase(0, parser.consumed());
      if (status == ParseStatus::kNeedMore) break;
    }
  }
  outcome.rest = buffer;
  return outcome;
}

std::string Encode(const Command& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& arg : args) {
    out += "$" + std::to_string(arg.size()) + "\r\n" + arg + "\r\n";
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  ParserLimits limits;
  if (data[0] & 1) {
    limits.max_bulk_len = 64;
    limits.max_multibulk_len = 8;
    limits.max_inline_len = 32;
  }
  uint32_t seed = (uint32_t{data[1]} << 8 | data[2]) + 1;
  const std::string_view input(reinterpret_cast<const char*>(data) + 3, size - 3);

  std::vector<size_t> cuts;
  for (size_t at = 0;;) {
    seed = seed * 1103515245 + 12345;
    at += 1 + (seed >> 16) % (data[0] & 2 ? 4 : 64);
    if (at >= input.size()) break;
    cuts.push_back(at);
  }

  const Outcome whole = Run(limits, input, {});
  const Outcome split = Run(limits, input, cuts);

  // A line longer than the limit is an error only while its end has not arrived, which depends
  // on how the input was split (as in Redis). Otherwise the split does not matter.
  const bool split_too_big = split.error.starts_with("Protocol error: too big");
  if (split_too_big) {
    Check(split.commands.size() <= whole.commands.size(), "split parsed more commands");
    for (size_t i = 0; i < split.commands.size(); ++i) {
      Check(split.commands[i] == whole.commands[i], "split command differs");
    }
  } else {
    Check(split.commands == whole.commands, "split commands differ");
    Check(split.last == whole.last, "split status differs");
    Check(split.error == whole.error, "split error differs");
    Check(split.rest == whole.rest, "split leftover differs");
  }

  // Every command re-encoded as multibulk parses back to itself.
  for (const Command& command : whole.commands) {
    const std::string wire = Encode(command);
    const Outcome again = Run({}, wire, {});
    Check(again.commands.size() == 1 && again.commands[0] == command, "round trip differs");
    Check(again.rest.empty(), "round trip left bytes");
  }
  return 0;
}
