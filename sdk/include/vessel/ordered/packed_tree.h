// PackedTree: an order-statistics B+tree of (key, value) byte-string entries packed into its
// leaves, ordered by key bytes (memcmp, a prefix before the longer string, as Redis's sdscmp).
// The ordered container modules (omap, bag, multimap) store their values in it. Part of the SDK
// (target vessel::ordered): its sources compile into each module that links it.
//
// Shape:
//   - A leaf is one allocation: an 8-byte header and its entries back to back, sized to what they
//     use (the allocator's size class, no reserve). An entry is
//       <key length, LEB128 varint> <key bytes, or a pointer to them when longer than 200 bytes>
//       <value, tagged as below>
//     and a value is tagged like a Redis listpack element (the integer and short-string forms of
//     vessel/packed_element.hpp, which the lists and deque modules use): an integer in canonical
//     decimal form takes 1 to 9 bytes (tag 0xxxxxxx: 0..127; 110xxxxx +1 byte: 13 bits; 111000tt
//     + 2/3/4/8 bytes), a string of up to 63 bytes a tag byte and its bytes (10llllll), up to 200
//     bytes a tag, a length byte and its bytes (0xF0), longer ones a tag, a varint length and a
//     pointer to a block of their own (0xF1). A 10-byte key with a 10-byte value costs 22 bytes.
//   - A tree of one leaf holds up to 128 entries and 16 KiB (as a Redis listpack holds a small hash
//     or sorted set); beyond that leaves hold up to 128 entries and 1 KiB, and an inner node up to
//     32 children with each child's entry count and, for children 1.., a separator: the shortest
//     prefix of the child's first key that is above the previous child's last key (separators
//     are their own small blocks). So a key lookup, the rank of a key, the entry at a rank and
//     the rank where a bound falls are all O(log n): counts are summed on the way down and a leaf
//     scan is bounded by 128 entries. A walk in order is O(1) per entry.
//   - Equal keys may repeat (multimap): InsertAfterEquals puts an entry after those with the same
//     key, so equal keys keep their insertion order. Separators then satisfy
//     last key of child i-1 <= separator i <= first key of child i.
// Every byte lives in the host allocator (accounted to the calling module); bytes() is exact, kept
// in the root of a deeper tree and counted over the leaf of a one-leaf tree (at most 128 entries).
// The tree's own header is one pointer. Every change allocates what it needs before it changes
// anything, so std::bad_alloc leaves the tree as it was; erasing never fails (merging nodes is
// skipped when memory is short). Not thread-safe: values are used under their key's lock.
#ifndef VESSEL_SDK_ORDERED_PACKED_TREE_H_
#define VESSEL_SDK_ORDERED_PACKED_TREE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace vessel::ordered {

// Room for an integer value formatted back to text.
struct ValueBuf {
  char b[24];
};

// Redis's sdscmp: memcmp over the common prefix, then the shorter first.
inline int CompareKeys(std::string_view a, std::string_view b) {
  const size_t n = a.size() < b.size() ? a.size() : b.size();
  const int c = n == 0 ? 0 : std::memcmp(a.data(), b.data(), n);
  if (c != 0) return c;
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

class PackedTree {
 public:
  static constexpr size_t kInlineMax = 200;  // longer keys and values live in blocks of their own
  static constexpr size_t kMaxEntries = 128;
  static constexpr size_t kRootBytes = 16384;
  static constexpr size_t kLeafBytes = 1024;
  static constexpr int kInnerMax = 32;
  static constexpr int kMaxHeight = 40;

  struct Node;
  struct Leaf;
  struct Inner;
  struct Sep;

  // A position in key order: valid until the tree changes.
  class Cursor {
   public:
    bool valid() const { return leaf_ != nullptr; }
    size_t rank() const { return rank_; }
    std::string_view key() const;
    std::string_view value(ValueBuf& buf) const;
    void Next();
    void Prev();  // walks the leaf from its start: O(entries in a leaf)

   private:
    friend class PackedTree;
    struct Step {
      const Inner* node;
      int idx;
    };
    void DescendFirst(const Node* n);
    void DescendLast(const Node* n);
    Step path_[kMaxHeight];
    int depth_ = 0;
    const Leaf* leaf_ = nullptr;
    int idx_ = 0;
    size_t off_ = 0;
    size_t rank_ = 0;
  };

  PackedTree() = default;
  ~PackedTree() { Clear(); }
  PackedTree(const PackedTree&) = delete;
  PackedTree& operator=(const PackedTree&) = delete;

  size_t size() const;
  bool empty() const { return root_ == nullptr; }
  // Usable bytes of every block the tree owns (leaves, inner nodes, separators, long keys and
  // values): kept in the root of a deeper tree, counted over the leaf of a one-leaf tree.
  size_t bytes() const;
  // Whether the tree is a single leaf (OBJECT ENCODING tells the two shapes apart).
  bool small() const;

  // Entries with a key below key / not above key.
  size_t LowerBound(std::string_view key) const { return Bound(key, false); }
  size_t UpperBound(std::string_view key) const { return Bound(key, true); }
  // The first entry with this key, or an invalid cursor.
  Cursor Find(std::string_view key) const;
  // The value of the first entry with this key (a view into the tree, or into buf for an
  // integer), or false: Find without a cursor's path and rank.
  bool Lookup(std::string_view key, ValueBuf& buf, std::string_view* value) const;
  // The entry at rank r (r < size()).
  Cursor At(size_t r) const;
  Cursor First() const;
  Cursor Last() const;

  // Sets key's value, adding the entry when there is none; true when it was added.
  bool Upsert(std::string_view key, std::string_view value);
  // Adds an entry after every entry whose key is not above key.
  void InsertAfterEquals(std::string_view key, std::string_view value);
  // Replaces the value of the entry at rank r.
  void SetValueAt(size_t r, std::string_view value);
  // Removes the entry at rank r / the first entry with this key (false when there is none).
  // Never throw.
  void EraseAt(size_t r) noexcept;
  bool Erase(std::string_view key) noexcept;
  void Clear() noexcept;
  // Makes this (empty) tree a copy of other; throws std::bad_alloc with this tree empty.
  void CopyFrom(const PackedTree& other);

  // Whether every structural invariant and byte count holds (tests, fuzzers).
  bool Valid() const;

 private:
  struct Path;
  struct Encoded;

  // How a descent by key picks children and the entry in the leaf: kLower and kUpper by the
  // lower / upper bound of the key (kUpper is where an entry goes after its equals); kUnique by
  // the upper bound in inner nodes but the lower bound in the leaf, which in a tree without
  // equal keys is the leaf that holds the key or where it goes (its separators are strictly above
  // the keys before them).
  enum class Mode { kLower, kUpper, kUnique };
  size_t Bound(std::string_view key, bool upper) const;
  void DescendKey(std::string_view key, Mode mode, Path* path) const;
  void DescendRank(size_t r, Path* path) const;
  Cursor CursorAt(const Path& path) const;

  // Writes key and value as an entry; blocks for long ones are allocated (and freed again when
  // this throws).
  Encoded EncodeEntry(std::string_view key, std::string_view value);
  // Replaces old_len bytes at path's entry with e (count_delta 1 for an insertion, 0 for a
  // replacement), splitting the leaf when it grows past its limits.
  void Put(Path& path, size_t old_len, Encoded& e, int count_delta);
  // edge: 1 when the entry was added at the very end of the tree, -1 at the very start, else 0.
  void Split(Path& path, const unsigned char* content, size_t bytes, size_t n, int count_delta,
             int edge);
  void RemoveAt(Path& path) noexcept;
  void RemoveChild(Inner* parent, int c, bool keep_sep) noexcept;
  void MergeLeaves(Path& path) noexcept;
  void FixInner(Path& path, int level) noexcept;

  Leaf* NewLeaf(size_t bytes);
  Inner* NewInner();
  Sep* NewSep(std::string_view s);
  void FreeLeaf(Leaf* l) noexcept;
  void FreeInner(Inner* in) noexcept;
  void FreeSep(Sep* s) noexcept;
  void FreeBlob(void* p) noexcept;
  void ReleaseEntry(const unsigned char* p) noexcept;
  // Sets the pointer that leads to path's leaf (its parent's child slot or the root).
  void Relink(Path& path, Leaf* l) noexcept;
  // Gives back a leaf's spare room when it is large (never throws).
  void ShrinkLeaf(Path& path) noexcept;
  void FreeSubtree(Node* n) noexcept;
  bool ValidNode(const Node* n, int level, std::string_view lo, bool has_lo, std::string_view hi,
                 bool has_hi, size_t* count, size_t* bytes) const;

  // Adds delta to the byte count (a no-op for a one-leaf tree, which counts when asked).
  void Account(int64_t delta) noexcept;
  // The bytes of a subtree, counted block by block.
  size_t CountBytes(const Node* n) const;

  // The whole header is one pointer: a small container costs its leaf and little more. The size
  // is the root's (a leaf's entries, or the sum of an inner root's counts), the height the
  // root's level, the byte count kept in an inner root.
  Node* root_ = nullptr;
};

}  // namespace vessel::ordered

#endif  // VESSEL_SDK_ORDERED_PACKED_TREE_H_
