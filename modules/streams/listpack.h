// Redis's listpack format (listpack.c), which RDB files and DUMP payloads use for stream nodes:
// a writer that produces exactly Redis's bytes, and a reader that checks an untrusted blob as
// thoroughly as Redis's deep integrity validation before handing out a single element.
#ifndef VESSEL_MODULES_STREAMS_LISTPACK_H_
#define VESSEL_MODULES_STREAMS_LISTPACK_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vessel::streams {

class ListpackWriter {
 public:
  ListpackWriter() { buf_.assign(6, '\0'); }
  // A string element; the canonical text of an integer is stored as the integer (as lpAppend).
  void Add(std::string_view s);
  void AddInt(int64_t v);
  // The finished listpack (header filled in, end byte appended); the writer is spent.
  std::string Finish();

 private:
  void Element(const unsigned char* enc, size_t n, std::string_view data);
  std::string buf_;
  uint64_t count_ = 0;
};

// One element of a listpack: an integer or a string (a view into the blob).
struct LpElem {
  bool is_int = false;
  int64_t v = 0;
  std::string_view s;
};

// Decodes every element of an untrusted listpack: the header's byte count must equal the blob's
// size, each element's encoding and back length must be valid and inside the blob, the element
// count must match the header's (unless it saturated at 65535), and the end byte must be last.
// false on any inconsistency.
bool ReadListpack(std::string_view blob, std::vector<LpElem>* out);

}  // namespace vessel::streams

#endif  // VESSEL_MODULES_STREAMS_LISTPACK_H_
