// Pack: the compact representation of a small sorted set ("listpack" to OBJECT ENCODING), one
// block of the host allocator: a header {count, bytes} and the entries in order of (score,
// member bytes), as Redis's listpack keeps them.
//
// An entry is [head][length varint?][member][score]: the head byte's top two bits say how the
// score is stored (int8, int16, int32, or the 8-byte double) and its low six bits are the
// member's length, 63 meaning a varint of (length - 63) follows. Scores that are integers
// fitting 32 bits take 1-4 bytes, so an entry of a 10-byte member with a small integer score
// is 12 bytes (Redis's listpack: 14). A score stored here reads back as Redis's listpack gives
// it back, so -0 becomes 0 (Redis stores an integral score as an integer).
//
// Everything is O(n) with n <= zset-max-listpack-entries, as in Redis. Not thread-safe.
#ifndef VESSEL_MODULES_ZSETS_PACK_H_
#define VESSEL_MODULES_ZSETS_PACK_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace vessel::zsets {

class Pack {
 public:
  // The most bytes of entries a pack holds (Redis's listpack safety limit, 1 GiB).
  static constexpr size_t kMaxBytes = size_t{1} << 30;

  struct Item {
    std::string_view member;
    double score;
  };

  // An empty pack. Throws std::bad_alloc.
  Pack();
  // No block at all (a sorted set in the tree representation); only valid() and Free() apply.
  explicit Pack(std::nullptr_t) : block_(nullptr) {}
  ~Pack();
  bool valid() const { return block_ != nullptr; }
  void Free();
  Pack(const Pack&) = delete;
  Pack& operator=(const Pack&) = delete;
  // Takes the block of `other`, which is left empty-handed (for moving between owners).
  void Swap(Pack& other) noexcept;

  size_t size() const;
  size_t bytes() const;  // bytes of entries
  // Entry offsets run from begin() to end(); Decode gives the entry at off and the next offset.
  size_t begin() const;
  size_t end() const;
  Item Decode(size_t off, size_t* next) const;

  // The offset of m's entry (its score in *score), or false.
  bool Find(std::string_view m, size_t* off, double* score) const;
  // Bytes an entry of m with `score` takes.
  static size_t EntryBytes(std::string_view m, double score);
  // Adds m (not a member) in order. Throws std::bad_alloc with the pack unchanged.
  void Insert(std::string_view m, double score);
  // Changes the score of the entry at off (member m): it moves to its new place. Throws
  // std::bad_alloc with the pack unchanged.
  void Update(size_t off, std::string_view m, double score);
  // Removes the entries in bytes [from, to), n of them. Never throws.
  void Erase(size_t from, size_t to, size_t n);
  // Appends m after every entry (the caller keeps the order). Throws std::bad_alloc.
  void Append(std::string_view m, double score);
  void Reserve(size_t bytes);

  size_t MemUsage() const;
  void CopyFrom(const Pack& other);

 private:
  void InsertInPlace(std::string_view m, double score, size_t need);

  unsigned char* block_;  // Header then entries
};

}  // namespace vessel::zsets

#endif  // VESSEL_MODULES_ZSETS_PACK_H_
