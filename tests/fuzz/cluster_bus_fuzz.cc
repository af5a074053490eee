// libFuzzer target for the cluster bus: the framer cuts the input stream the same way whether it
// arrives whole or in chunks, every packet it delivers decodes or is refused with a reason, and a
// decoded packet encodes back to a packet no longer than it that decodes to the same message.
//
// Input layout: bytes 0-1 seed the chunk sizes (1-64 bytes, or 1-4 when bit 0 of byte 0 is set),
// the rest is the byte stream a peer sends. The framer's limit is kept small so that the fuzzer
// reaches whole packets.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/cluster/bus_message.h"

namespace {

using vessel::cluster::BusMessage;
using vessel::cluster::Decode;
using vessel::cluster::Encode;
using vessel::cluster::Frame;
using vessel::cluster::FrameStatus;
using vessel::cluster::NextFrame;

constexpr uint64_t kMaxLen = 1 << 16;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant failed: %s\n", what);
    std::abort();
  }
}

struct Outcome {
  std::vector<std::string> packets;
  bool error = false;
};

// Feeds `input` up to each cut in turn, taking every whole packet as it is framed.
Outcome Run(std::string_view input, const std::vector<size_t>& cuts) {
  Outcome out;
  std::string buffered;
  size_t fed = 0;
  for (size_t i = 0; i <= cuts.size(); ++i) {
    const size_t cut = i < cuts.size() ? cuts[i] : input.size();
    buffered.append(input.substr(fed, cut - fed));
    fed = cut;
    while (true) {
      const Frame f = NextFrame(buffered, kMaxLen);
      if (f.status == FrameStatus::kError) {
        Check(!f.error.empty(), "framer error without text");
        out.error = true;
        return out;
      }
      if (f.status == FrameStatus::kNeedMore) {
        Check(f.length > buffered.size(), "need-more without needing more");
        break;
      }
      Check(f.length >= vessel::cluster::kBusHeaderLen && f.length <= buffered.size(),
            "ready with a bad length");
      out.packets.push_back(buffered.substr(0, f.length));
      buffered.erase(0, f.length);
    }
  }
  return out;
}

void CheckPacket(const std::string& packet) {
  std::string error;
  const std::optional<BusMessage> m = Decode(packet, &error);
  if (!m) {
    Check(!error.empty(), "refused without a reason");
    return;
  }
  // Not byte for byte: a hostname extension may carry more padding than the encoder writes.
  const std::string again = Encode(*m);
  Check(again.size() <= packet.size(), "re-encoded packet grew");
  std::string error2;
  const std::optional<BusMessage> m2 = Decode(again, &error2);
  Check(m2.has_value(), "re-encoded packet refused");
  Check(*m2 == *m, "re-encoded packet decodes differently");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  uint32_t seed = (uint32_t{data[0]} << 8 | data[1]) + 1;
  const bool tiny = data[0] & 1;
  const std::string_view input(reinterpret_cast<const char*>(data) + 2, size - 2);

  std::vector<size_t> cuts;
  for (size_t at = 0;;) {
    seed = seed * 1103515245 + 12345;
    at += 1 + (seed >> 16) % (tiny ? 4 : 64);
    if (at >= input.size()) break;
    cuts.push_back(at);
  }
  const Outcome whole = Run(input, {});
  const Outcome split = Run(input, cuts);
  Check(whole.packets == split.packets, "split framing differs");
  Check(whole.error == split.error, "split framing error differs");
  for (const std::string& packet : whole.packets) CheckPacket(packet);
  // The whole input as one packet too: the decoder sees every length, not only framed ones.
  CheckPacket(std::string(input));
  return 0;
}
