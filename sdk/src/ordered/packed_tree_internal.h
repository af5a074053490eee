// The private parts of PackedTree shared by its two source files (packed_tree.cc: cursors,
// descents and blocks; packed_tree_edit.cc: adding and removing): the node layouts and the
// entry encoding's helpers. Not part of the SDK's interface.
#ifndef VESSEL_SDK_SRC_ORDERED_PACKED_TREE_INTERNAL_H_
#define VESSEL_SDK_SRC_ORDERED_PACKED_TREE_INTERNAL_H_

#include <charconv>
#include <cstddef>
#include <cstring>

#include "vessel/module.hpp"
#include "vessel/ordered/packed_tree.h"
#include "vessel/packed_element.hpp"

namespace vessel::ordered {

// Leaves and inner nodes share their first four bytes: which kind, and the count of entries
// (leaf) or children (inner).
struct PackedTree::Node {
  uint8_t leaf;
  uint8_t level;  // 0 for leaves, 1 + the children's for inner nodes: the root's is the height
  uint16_t n;
};
struct PackedTree::Leaf {
  uint8_t leaf;   // 1
  uint8_t level;  // 0
  uint16_t n;     // entries
  uint16_t used;  // bytes of entries
  uint16_t cap;   // bytes available for entries
  unsigned char data[];
};
// Room for the children a leaf split adds (at most 4) before the node itself splits.
static constexpr int kInnerCap = PackedTree::kInnerMax + 4;
struct PackedTree::Inner {
  uint8_t leaf;  // 0
  uint8_t level;
  uint16_t n;  // children
  uint32_t pad2;
  // In the root only: the usable bytes of every block of the tree (a one-leaf tree counts its
  // leaf when asked instead, which keeps the tree's own header at 16 bytes).
  uint64_t tree_bytes;
  Node* child[kInnerCap];
  uint64_t count[kInnerCap];  // entries under each child
  Sep* sep[kInnerCap];        // sep[i], i >= 1: the separator before child i; sep[0] is null
};
struct PackedTree::Sep {
  uint32_t len;
  char data[];
  std::string_view view() const { return {data, len}; }
};

struct PackedTree::Path {
  struct Step {
    Inner* node;
    int idx;
  };
  Step steps[kMaxHeight];
  int depth = 0;
  Leaf* leaf = nullptr;
  int idx = 0;         // entry in the leaf (may be leaf->n: the end)
  size_t off = 0;      // its byte offset
  size_t rank = 0;     // entries before it in the whole tree
  bool equal = false;  // after a descent by key: the entry's key is that key
};

// An entry written out, with the blocks of its long key or value until the tree owns them.
struct PackedTree::Encoded {
  PackedTree* owner;
  unsigned char bytes[2 * (10 + kInlineMax) + 16];
  size_t len = 0;
  void* blobs[2] = {nullptr, nullptr};
  explicit Encoded(PackedTree* t) : owner(t) {}
  ~Encoded() {
    for (void* b : blobs) owner->FreeBlob(b);
  }
  void Commit() { blobs[0] = blobs[1] = nullptr; }
};

// ---- helpers ----

inline constexpr size_t kLeafHeader = offsetof(PackedTree::Leaf, data);
inline constexpr unsigned char kStr8 = 0xF0;  // string of 64..200 bytes: a length byte, the bytes
inline constexpr unsigned char kBlob = 0xF1;  // a varint length, then a pointer to the bytes
// A split aims at leaves of this weight (bytes plus kEntryWeight per entry): a leaf's weight
// bounds both its bytes and its entries.
inline constexpr size_t kEntryWeight = 8;
inline constexpr size_t kSplitWeight = 600;
// Two neighbours this light become one.
inline constexpr size_t kMergeWeight = PackedTree::kLeafBytes;
inline constexpr int kInnerMin = PackedTree::kInnerMax / 4;

inline PackedTree::Node* AsNode(void* p) { return static_cast<PackedTree::Node*>(p); }

inline size_t Usable(const void* p) { return vsl::Api().usable_size(p); }

inline size_t PutVarint(unsigned char* p, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    p[n++] = static_cast<unsigned char>(v | 0x80);
    v >>= 7;
  }
  p[n++] = static_cast<unsigned char>(v);
  return n;
}

inline uint64_t GetVarint(const unsigned char* p, size_t* len) {
  if (p[0] < 0x80) {  // a key of up to 127 bytes: the common case
    *len = 1;
    return p[0];
  }
  uint64_t v = 0;
  size_t n = 0;
  for (int shift = 0;; shift += 7) {
    const unsigned char b = p[n++];
    v |= uint64_t{b & 0x7Fu} << shift;
    if ((b & 0x80) == 0) break;
  }
  *len = n;
  return v;
}

template <class T>
T* LoadPtr(const unsigned char* p) {
  T* v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// A value's integer and short-string forms are the packed element encoding's.
using vsl::packed::CanonicalInt;
using vsl::packed::DecodeInt;
using vsl::packed::EncodeInt;

// ---- entries ----

inline size_t KeyPartSize(const unsigned char* p) {
  size_t n;
  const uint64_t klen = GetVarint(p, &n);
  return n + (klen <= PackedTree::kInlineMax ? klen : sizeof(void*));
}

inline std::string_view KeyOf(const unsigned char* p) {
  size_t n;
  const uint64_t klen = GetVarint(p, &n);
  if (klen <= PackedTree::kInlineMax) return {reinterpret_cast<const char*>(p + n), klen};
  return {LoadPtr<const char>(p + n), klen};
}

inline size_t ValueSizeSlow(const unsigned char* v) {
  const unsigned char t = *v;
  if (t < 0xE0) return 2;
  if (t < 0xF0) {
    static constexpr size_t kBytes[] = {2, 3, 4, 8};
    return 1 + kBytes[t & 3];
  }
  if (t == kStr8) return 2 + size_t{v[1]};
  size_t n;
  GetVarint(v + 1, &n);
  return 1 + n + sizeof(void*);
}

// The bytes of the value at v: inline for the small integers and short strings a leaf scan steps
// over most.
inline size_t ValueSize(const unsigned char* v) {
  const unsigned char t = *v;
  if (t < 0x80) return 1;
  if (t < 0xC0) return 1 + (t & 0x3F);
  return ValueSizeSlow(v);
}

inline size_t EntrySize(const unsigned char* p) {
  const size_t k = KeyPartSize(p);
  return k + ValueSize(p + k);
}

// The key of the entry at p, and in *key_part the bytes of the entry's key part (one varint
// decode for both, as a leaf scan needs).
inline std::string_view KeyAndPart(const unsigned char* p, size_t* key_part) {
  size_t n;
  const uint64_t klen = GetVarint(p, &n);
  if (klen <= PackedTree::kInlineMax) {
    *key_part = n + klen;
    return {reinterpret_cast<const char*>(p + n), klen};
  }
  *key_part = n + sizeof(void*);
  return {LoadPtr<const char>(p + n), klen};
}

// The first entry of leaf l whose key is above key (upper) or not below it (else): its index,
// its byte offset in *off, and in *equal whether its key is key.
inline int LeafBound(const PackedTree::Leaf* l, std::string_view key, bool upper, size_t* off,
                     bool* equal) {
  size_t o = 0;
  int k = 0;
  for (; k < l->n; ++k) {
    const unsigned char* p = l->data + o;
    size_t key_part;
    const int c = CompareKeys(KeyAndPart(p, &key_part), key);
    if (c > 0 || (c == 0 && !upper)) {
      *equal = c == 0;
      *off = o;
      return k;
    }
    o += key_part + ValueSize(p + key_part);
  }
  *equal = false;
  *off = o;
  return k;
}

inline std::string_view ValueView(const unsigned char* v, ValueBuf& buf) {
  const unsigned char t = *v;
  if (t >= 0x80 && t < 0xC0) return {reinterpret_cast<const char*>(v + 1), size_t{t & 0x3Fu}};
  if (t < kStr8) {
    auto [end, ec] = std::to_chars(buf.b, buf.b + sizeof(buf.b), DecodeInt(v));
    return {buf.b, static_cast<size_t>(end - buf.b)};
  }
  if (t == kStr8) return {reinterpret_cast<const char*>(v + 2), v[1]};
  size_t n;
  const uint64_t len = GetVarint(v + 1, &n);
  return {LoadPtr<const char>(v + 1 + n), len};
}

// Byte offset of entry k of a leaf.
inline size_t Offset(const PackedTree::Leaf* l, size_t k) {
  size_t off = 0;
  for (size_t j = 0; j < k; ++j) off += EntrySize(l->data + off);
  return off;
}

inline size_t Weight(size_t bytes, size_t n) { return bytes + kEntryWeight * n; }

// The last child i (0 when none) whose separator is below key (or, upper, not above it).
inline int ChildFor(const PackedTree::Inner* in, std::string_view key, bool upper) {
  int lo = 1, hi = in->n;  // the answer is the last i in [1, hi) with sep[i] before key, or 0
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    const int c = CompareKeys(in->sep[mid]->view(), key);
    if (c < 0 || (upper && c == 0)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo - 1;
}

}  // namespace vessel::ordered

#endif  // VESSEL_SDK_SRC_ORDERED_PACKED_TREE_INTERNAL_H_
