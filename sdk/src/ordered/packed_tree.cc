// PackedTree: the entry encoding, descents, splits and merges (see packed_tree.h).
#include "vessel/ordered/packed_tree.h"

#include <algorithm>
#include <charconv>
#include <new>
#include <vector>

#include "vessel/module.hpp"
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

namespace {

constexpr size_t kLeafHeader = offsetof(PackedTree::Leaf, data);
constexpr unsigned char kStr8 = 0xF0;  // string of 64..200 bytes: a length byte, the bytes
constexpr unsigned char kBlob = 0xF1;  // a varint length, then a pointer to the bytes
// A split aims at leaves of this weight (bytes plus kEntryWeight per entry): a leaf's weight
// bounds both its bytes and its entries.
constexpr size_t kEntryWeight = 8;
constexpr size_t kSplitWeight = 600;
constexpr size_t kMergeWeight = PackedTree::kLeafBytes;  // two neighbours this light become one
constexpr int kInnerMin = PackedTree::kInnerMax / 4;

PackedTree::Node* AsNode(void* p) { return static_cast<PackedTree::Node*>(p); }

size_t Usable(const void* p) { return vsl::Api().usable_size(p); }

size_t PutVarint(unsigned char* p, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    p[n++] = static_cast<unsigned char>(v | 0x80);
    v >>= 7;
  }
  p[n++] = static_cast<unsigned char>(v);
  return n;
}

uint64_t GetVarint(const unsigned char* p, size_t* len) {
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

size_t KeyPartSize(const unsigned char* p) {
  size_t n;
  const uint64_t klen = GetVarint(p, &n);
  return n + (klen <= PackedTree::kInlineMax ? klen : sizeof(void*));
}

std::string_view KeyOf(const unsigned char* p) {
  size_t n;
  const uint64_t klen = GetVarint(p, &n);
  if (klen <= PackedTree::kInlineMax) return {reinterpret_cast<const char*>(p + n), klen};
  return {LoadPtr<const char>(p + n), klen};
}

size_t ValueSizeSlow(const unsigned char* v) {
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

size_t EntrySize(const unsigned char* p) {
  const size_t k = KeyPartSize(p);
  return k + ValueSize(p + k);
}

// The key of the entry at p, and in *key_part the bytes of the entry's key part (one varint
// decode for both, as a leaf scan needs).
std::string_view KeyAndPart(const unsigned char* p, size_t* key_part) {
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
int LeafBound(const PackedTree::Leaf* l, std::string_view key, bool upper, size_t* off,
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

std::string_view ValueView(const unsigned char* v, ValueBuf& buf) {
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
size_t Offset(const PackedTree::Leaf* l, size_t k) {
  size_t off = 0;
  for (size_t j = 0; j < k; ++j) off += EntrySize(l->data + off);
  return off;
}

size_t Weight(size_t bytes, size_t n) { return bytes + kEntryWeight * n; }

// The last child i (0 when none) whose separator is below key (or, upper, not above it).
int ChildFor(const PackedTree::Inner* in, std::string_view key, bool upper) {
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

}  // namespace

// ---- cursors ----

std::string_view PackedTree::Cursor::key() const { return KeyOf(leaf_->data + off_); }

std::string_view PackedTree::Cursor::value(ValueBuf& buf) const {
  const unsigned char* p = leaf_->data + off_;
  return ValueView(p + KeyPartSize(p), buf);
}

void PackedTree::Cursor::DescendFirst(const Node* n) {
  while (n->leaf == 0) {
    const Inner* in = reinterpret_cast<const Inner*>(n);
    path_[depth_++] = {in, 0};
    n = in->child[0];
  }
  leaf_ = reinterpret_cast<const Leaf*>(n);
  idx_ = 0;
  off_ = 0;
}

void PackedTree::Cursor::DescendLast(const Node* n) {
  while (n->leaf == 0) {
    const Inner* in = reinterpret_cast<const Inner*>(n);
    path_[depth_++] = {in, in->n - 1};
    n = in->child[in->n - 1];
  }
  leaf_ = reinterpret_cast<const Leaf*>(n);
  idx_ = leaf_->n - 1;
  off_ = Offset(leaf_, static_cast<size_t>(idx_));
}

void PackedTree::Cursor::Next() {
  ++rank_;
  if (idx_ + 1 < leaf_->n) {
    off_ += EntrySize(leaf_->data + off_);
    ++idx_;
    return;
  }
  while (depth_ > 0) {
    Step& s = path_[depth_ - 1];
    if (s.idx + 1 < s.node->n) {
      ++s.idx;
      DescendFirst(s.node->child[s.idx]);
      return;
    }
    --depth_;
  }
  leaf_ = nullptr;
}

void PackedTree::Cursor::Prev() {
  --rank_;
  if (idx_ > 0) {
    --idx_;
    off_ = Offset(leaf_, static_cast<size_t>(idx_));
    return;
  }
  while (depth_ > 0) {
    Step& s = path_[depth_ - 1];
    if (s.idx > 0) {
      --s.idx;
      DescendLast(s.node->child[s.idx]);
      return;
    }
    --depth_;
  }
  leaf_ = nullptr;
}

PackedTree::Cursor PackedTree::CursorAt(const Path& path) const {
  Cursor c;
  for (int i = 0; i < path.depth; ++i) c.path_[i] = {path.steps[i].node, path.steps[i].idx};
  c.depth_ = path.depth;
  c.leaf_ = path.leaf;
  c.idx_ = path.idx;
  c.off_ = path.off;
  c.rank_ = path.rank;
  if (c.leaf_ != nullptr && c.idx_ == c.leaf_->n) {  // the end of a leaf: the next one's first
    c.idx_ = c.leaf_->n - 1;
    c.off_ = Offset(c.leaf_, static_cast<size_t>(c.idx_));
    --c.rank_;
    c.Next();
  }
  return c;
}

PackedTree::Cursor PackedTree::First() const {
  Cursor c;
  if (root_ != nullptr) c.DescendFirst(root_);
  return c;
}

PackedTree::Cursor PackedTree::Last() const {
  Cursor c;
  if (root_ == nullptr) return c;
  c.DescendLast(root_);
  c.rank_ = size() - 1;
  return c;
}

PackedTree::Cursor PackedTree::At(size_t r) const {
  Path p;
  DescendRank(r, &p);
  return CursorAt(p);
}

// One descent to the lower bound. It may fall at the end of a leaf whose successor starts with
// the key (a separator can be the whole key); CursorAt steps there. (One cursor, returned as it
// is: a cursor is large.)
PackedTree::Cursor PackedTree::Find(std::string_view key) const {
  Path p;
  if (root_ != nullptr) DescendKey(key, Mode::kLower, &p);
  if (p.leaf != nullptr && !p.equal && p.idx < p.leaf->n) p.leaf = nullptr;  // a greater key
  Cursor c = CursorAt(p);
  if (!p.equal && c.valid() && c.key() != key) c.leaf_ = nullptr;
  return c;
}

bool PackedTree::Lookup(std::string_view key, ValueBuf& buf, std::string_view* value) const {
  if (root_ == nullptr) return false;
  const Node* n = root_;
  while (n->leaf == 0) {
    const Inner* in = reinterpret_cast<const Inner*>(n);
    n = in->child[ChildFor(in, key, false)];
  }
  const Leaf* l = reinterpret_cast<const Leaf*>(n);
  size_t off;
  bool equal;
  const int k = LeafBound(l, key, false, &off, &equal);
  if (!equal) {
    if (k < l->n) return false;
    const Cursor c = Find(key);  // the key may start the next leaf: see Find
    if (!c.valid()) return false;
    *value = c.value(buf);
    return true;
  }
  const unsigned char* p = l->data + off;
  *value = ValueView(p + KeyPartSize(p), buf);
  return true;
}

// ---- descents ----

size_t PackedTree::Bound(std::string_view key, bool upper) const {
  if (root_ == nullptr) return 0;
  size_t rank = 0;
  const Node* n = root_;
  while (n->leaf == 0) {
    const Inner* in = reinterpret_cast<const Inner*>(n);
    const int i = ChildFor(in, key, upper);
    for (int j = 0; j < i; ++j) rank += in->count[j];
    n = in->child[i];
  }
  size_t off;
  bool equal;
  return rank +
         static_cast<size_t>(LeafBound(reinterpret_cast<const Leaf*>(n), key, upper, &off, &equal));
}

void PackedTree::DescendKey(std::string_view key, Mode mode, Path* path) const {
  path->depth = 0;
  path->rank = 0;
  Node* n = root_;
  while (n->leaf == 0) {
    Inner* in = reinterpret_cast<Inner*>(n);
    const int i = ChildFor(in, key, mode != Mode::kLower);
    for (int j = 0; j < i; ++j) path->rank += in->count[j];
    path->steps[path->depth++] = {in, i};
    n = in->child[i];
  }
  Leaf* l = reinterpret_cast<Leaf*>(n);
  const int k = LeafBound(l, key, mode == Mode::kUpper, &path->off, &path->equal);
  path->leaf = l;
  path->idx = k;
  path->rank += static_cast<size_t>(k);
}

void PackedTree::DescendRank(size_t r, Path* path) const {
  path->depth = 0;
  path->rank = r;
  Node* n = root_;
  while (n->leaf == 0) {
    Inner* in = reinterpret_cast<Inner*>(n);
    int i = 0;
    while (i + 1 < in->n && r >= in->count[i]) r -= in->count[i++];
    path->steps[path->depth++] = {in, i};
    n = in->child[i];
  }
  path->leaf = reinterpret_cast<Leaf*>(n);
  path->idx = static_cast<int>(r);
  path->off = Offset(path->leaf, r);
}

// ---- blocks ----

void PackedTree::Account(int64_t delta) noexcept {
  if (root_ != nullptr && root_->leaf == 0)
    reinterpret_cast<Inner*>(root_)->tree_bytes += static_cast<uint64_t>(delta);
}

size_t PackedTree::size() const {
  if (root_ == nullptr) return 0;
  if (root_->leaf != 0) return root_->n;
  const Inner* in = reinterpret_cast<const Inner*>(root_);
  size_t n = 0;
  for (int i = 0; i < in->n; ++i) n += in->count[i];
  return n;
}

bool PackedTree::small() const { return root_ == nullptr || root_->leaf != 0; }

size_t PackedTree::bytes() const {
  if (root_ == nullptr) return 0;
  if (root_->leaf != 0) return CountBytes(root_);
  return reinterpret_cast<const Inner*>(root_)->tree_bytes;
}

size_t PackedTree::CountBytes(const Node* n) const {
  if (n->leaf != 0) {
    const Leaf* l = reinterpret_cast<const Leaf*>(n);
    size_t bytes = Usable(l);
    for (size_t off = 0; off < l->used; off += EntrySize(l->data + off)) {
      const unsigned char* p = l->data + off;
      size_t vn;
      if (GetVarint(p, &vn) > kInlineMax) bytes += Usable(LoadPtr<void>(p + vn));
      const unsigned char* v = p + KeyPartSize(p);
      if (*v == kBlob) {
        GetVarint(v + 1, &vn);
        bytes += Usable(LoadPtr<void>(v + 1 + vn));
      }
    }
    return bytes;
  }
  const Inner* in = reinterpret_cast<const Inner*>(n);
  size_t bytes = Usable(in);
  for (int i = 0; i < in->n; ++i) {
    if (in->sep[i] != nullptr) bytes += Usable(in->sep[i]);
    bytes += CountBytes(in->child[i]);
  }
  return bytes;
}

PackedTree::Leaf* PackedTree::NewLeaf(size_t bytes) {
  auto* l = static_cast<Leaf*>(vsl::Alloc(kLeafHeader + bytes));
  const size_t usable = Usable(l);
  Account(static_cast<int64_t>(usable));
  l->leaf = 1;
  l->level = 0;
  l->n = 0;
  l->used = 0;
  l->cap = static_cast<uint16_t>(std::min<size_t>(usable - kLeafHeader, UINT16_MAX));
  return l;
}

PackedTree::Inner* PackedTree::NewInner() {
  auto* in = static_cast<Inner*>(vsl::Alloc(sizeof(Inner)));
  Account(static_cast<int64_t>(Usable(in)));
  in->leaf = 0;
  in->level = 0;
  in->n = 0;
  in->pad2 = 0;
  in->tree_bytes = 0;
  in->sep[0] = nullptr;
  return in;
}

PackedTree::Sep* PackedTree::NewSep(std::string_view s) {
  auto* sep = static_cast<Sep*>(vsl::Alloc(sizeof(Sep) + s.size()));
  Account(static_cast<int64_t>(Usable(sep)));
  sep->len = static_cast<uint32_t>(s.size());
  if (!s.empty()) std::memcpy(sep->data, s.data(), s.size());
  return sep;
}

void PackedTree::FreeLeaf(Leaf* l) noexcept {
  Account(-static_cast<int64_t>(Usable(l)));
  vsl::Free(l);
}

void PackedTree::FreeInner(Inner* in) noexcept {
  Account(-static_cast<int64_t>(Usable(in)));
  vsl::Free(in);
}

void PackedTree::FreeSep(Sep* s) noexcept {
  if (s == nullptr) return;
  Account(-static_cast<int64_t>(Usable(s)));
  vsl::Free(s);
}

void PackedTree::FreeBlob(void* p) noexcept {
  if (p == nullptr) return;
  Account(-static_cast<int64_t>(Usable(p)));
  vsl::Free(p);
}

void PackedTree::ReleaseEntry(const unsigned char* p) noexcept {
  size_t n;
  const uint64_t klen = GetVarint(p, &n);
  if (klen > kInlineMax) FreeBlob(LoadPtr<void>(p + n));
  const unsigned char* v = p + KeyPartSize(p);
  if (*v == kBlob) {
    GetVarint(v + 1, &n);
    FreeBlob(LoadPtr<void>(v + 1 + n));
  }
}

void PackedTree::Relink(Path& path, Leaf* l) noexcept {
  if (path.depth == 0) {
    root_ = AsNode(l);
  } else {
    const Path::Step& s = path.steps[path.depth - 1];
    s.node->child[s.idx] = AsNode(l);
  }
  path.leaf = l;
}

void PackedTree::ShrinkLeaf(Path& path) noexcept {
  Leaf* l = path.leaf;
  if (l->cap <= l->used + 64 || l->cap <= l->used + l->used / 4) return;
  const size_t before = Usable(l);
  void* p = vsl::Api().realloc(l, kLeafHeader + l->used);
  if (p == nullptr) return;  // keeps the larger block
  l = static_cast<Leaf*>(p);
  Relink(path, l);  // first: the root may be this leaf, and Account reads the root
  const size_t usable = Usable(l);
  Account(static_cast<int64_t>(usable) - static_cast<int64_t>(before));
  l->cap = static_cast<uint16_t>(std::min<size_t>(usable - kLeafHeader, UINT16_MAX));
}

// ---- adding and replacing ----

PackedTree::Encoded PackedTree::EncodeEntry(std::string_view key, std::string_view value) {
  Encoded e(this);
  unsigned char* p = e.bytes;
  p += PutVarint(p, key.size());
  if (key.size() <= kInlineMax) {
    if (!key.empty()) std::memcpy(p, key.data(), key.size());
    p += key.size();
  } else {
    void* b = vsl::Alloc(key.size());
    Account(static_cast<int64_t>(Usable(b)));
    std::memcpy(b, key.data(), key.size());
    e.blobs[0] = b;
    std::memcpy(p, &b, sizeof(b));
    p += sizeof(b);
  }
  int64_t v;
  if (CanonicalInt(value, &v)) {
    p += EncodeInt(v, p);
  } else if (value.size() <= 63) {
    *p++ = static_cast<unsigned char>(0x80 | value.size());
    if (!value.empty()) std::memcpy(p, value.data(), value.size());
    p += value.size();
  } else if (value.size() <= kInlineMax) {
    *p++ = kStr8;
    *p++ = static_cast<unsigned char>(value.size());
    std::memcpy(p, value.data(), value.size());
    p += value.size();
  } else {
    void* b = vsl::Alloc(value.size());
    Account(static_cast<int64_t>(Usable(b)));
    std::memcpy(b, value.data(), value.size());
    e.blobs[1] = b;
    *p++ = kBlob;
    p += PutVarint(p, value.size());
    std::memcpy(p, &b, sizeof(b));
    p += sizeof(b);
  }
  e.len = static_cast<size_t>(p - e.bytes);
  return e;
}

bool PackedTree::Upsert(std::string_view key, std::string_view value) {
  Encoded e = EncodeEntry(key, value);
  if (root_ == nullptr) {
    Leaf* l = NewLeaf(e.len);
    std::memcpy(l->data, e.bytes, e.len);
    l->used = static_cast<uint16_t>(e.len);
    l->n = 1;
    root_ = AsNode(l);
    e.Commit();
    return true;
  }
  Path p;
  DescendKey(key, Mode::kUnique, &p);
  const bool found = p.idx < p.leaf->n && KeyOf(p.leaf->data + p.off) == key;
  Put(p, found ? EntrySize(p.leaf->data + p.off) : 0, e, found ? 0 : 1);
  return !found;
}

void PackedTree::InsertAfterEquals(std::string_view key, std::string_view value) {
  if (root_ == nullptr) {
    Upsert(key, value);
    return;
  }
  Encoded e = EncodeEntry(key, value);
  Path p;
  DescendKey(key, Mode::kUpper, &p);
  Put(p, 0, e, 1);
}

void PackedTree::SetValueAt(size_t r, std::string_view value) {
  Path p;
  DescendRank(r, &p);
  Encoded e = EncodeEntry(KeyOf(p.leaf->data + p.off), value);
  Put(p, EntrySize(p.leaf->data + p.off), e, 0);
}

void PackedTree::Put(Path& path, size_t old_len, Encoded& e, int count_delta) {
  Leaf* l = path.leaf;
  const size_t off = path.off;
  const size_t used = l->used - old_len + e.len;
  const size_t n = l->n + static_cast<size_t>(count_delta);
  const size_t limit = root_->leaf != 0 ? kRootBytes : kLeafBytes;
  if (n <= kMaxEntries && used <= limit) {
    if (used > l->cap) {
      const size_t before = Usable(l);
      l = static_cast<Leaf*>(vsl::Realloc(l, kLeafHeader + used));
      Relink(path, l);  // first: the root may be this leaf, and Account reads the root
      const size_t usable = Usable(l);
      Account(static_cast<int64_t>(usable) - static_cast<int64_t>(before));
      l->cap = static_cast<uint16_t>(std::min<size_t>(usable - kLeafHeader, UINT16_MAX));
    }
    if (old_len != 0) ReleaseEntry(l->data + off);
    std::memmove(l->data + off + e.len, l->data + off + old_len, l->used - off - old_len);
    std::memcpy(l->data + off, e.bytes, e.len);
    l->used = static_cast<uint16_t>(used);
    l->n = static_cast<uint16_t>(n);
    e.Commit();
    for (int i = 0; i < path.depth; ++i)
      path.steps[i].node->count[path.steps[i].idx] += static_cast<uint64_t>(count_delta);
    if (e.len < old_len) ShrinkLeaf(path);
    return;
  }
  // The leaf would be too big: its new content goes into new leaves.
  auto* content = static_cast<unsigned char*>(vsl::Alloc(used));
  std::memcpy(content, l->data, off);
  std::memcpy(content + off, e.bytes, e.len);
  std::memcpy(content + off + e.len, l->data + off + old_len, l->used - off - old_len);
  // An entry added at the very end (or start) of the tree splits the leaf unevenly: ordered
  // loads fill their leaves.
  int edge = 0;
  if (count_delta == 1 && old_len == 0 && root_->leaf == 0) {
    bool last = off == l->used, first = off == 0;
    for (int i = 0; i < path.depth; ++i) {
      last = last && path.steps[i].idx + 1 == path.steps[i].node->n;
      first = first && path.steps[i].idx == 0;
    }
    edge = last ? 1 : (first ? -1 : 0);
  }
  void* old_blobs[2] = {nullptr, nullptr};
  if (old_len != 0) {
    const unsigned char* p = l->data + off;
    size_t vn;
    const uint64_t klen = GetVarint(p, &vn);
    if (klen > kInlineMax) old_blobs[0] = LoadPtr<void>(p + vn);
    const unsigned char* v = p + KeyPartSize(p);
    if (*v == kBlob) {
      GetVarint(v + 1, &vn);
      old_blobs[1] = LoadPtr<void>(v + 1 + vn);
    }
  }
  try {
    Split(path, content, used, n, count_delta, edge);
  } catch (...) {
    vsl::Free(content);
    throw;
  }
  vsl::Free(content);
  e.Commit();
  FreeBlob(old_blobs[0]);
  FreeBlob(old_blobs[1]);
}

// Replaces path's leaf by leaves cut from `content` (bytes, n entries), growing the parents and
// splitting those that overflow, up to a new root. Everything is allocated first.
void PackedTree::Split(Path& path, const unsigned char* content, size_t bytes, size_t n,
                       int count_delta, int edge) {
  // Entry offsets of the content (n + 1 of them: the last is the end).
  std::vector<uint32_t, vsl::Allocator<uint32_t>> offs(n + 1);
  for (size_t k = 0, off = 0; k <= n; ++k) {
    offs[k] = static_cast<uint32_t>(off);
    if (k < n) off += EntrySize(content + off);
  }
  // Cut points: pieces of about kSplitWeight, each cut at the entry boundary nearest its target.
  std::vector<size_t, vsl::Allocator<size_t>> cuts;  // entry index where each piece starts
  cuts.push_back(0);
  if (edge > 0) {
    cuts.push_back(n - 1);
  } else if (edge < 0) {
    cuts.push_back(1);
  } else {
    const size_t total = Weight(bytes, n);
    const size_t k = std::max<size_t>(2, (total + kSplitWeight - 1) / kSplitWeight);
    size_t e = 0;
    for (size_t j = 1; j < k; ++j) {
      const size_t target = total * j / k;
      while (e < n && Weight(offs[e + 1], e + 1) <= target) ++e;
      // Entries [0, e) weigh at most target, [0, e + 1) more: cut before or after entry e.
      size_t cut = e;
      if (e < n && target - Weight(offs[e], e) > Weight(offs[e + 1], e + 1) - target) cut = e + 1;
      cut = std::max(cut, cuts.back() + 1);
      if (cut >= n) break;
      cuts.push_back(cut);
    }
  }
  const size_t pieces = cuts.size();
  cuts.push_back(n);
  // The inner nodes this needs: each parent that overflows splits, and a new root on top.
  int spares_needed = 0;
  {
    size_t added = pieces - 1;
    int level = path.depth - 1;
    if (level < 0) spares_needed = 1;
    for (; level >= 0; --level) {
      if (path.steps[level].node->n + added <= static_cast<size_t>(kInnerMax)) break;
      ++spares_needed;
      added = 1;
      if (level == 0) ++spares_needed;
    }
  }
  Leaf* leaves[kInnerCap];
  Sep* seps[kInnerCap] = {};
  Inner* spares[kMaxHeight + 1];
  size_t made_leaves = 0, made_seps = 0;
  int made_spares = 0;
  try {
    for (; made_leaves < pieces; ++made_leaves) {
      leaves[made_leaves] = NewLeaf(offs[cuts[made_leaves + 1]] - offs[cuts[made_leaves]]);
    }
    for (made_seps = 1; made_seps < pieces; ++made_seps) {
      const std::string_view a = KeyOf(content + offs[cuts[made_seps] - 1]);
      const std::string_view b = KeyOf(content + offs[cuts[made_seps]]);
      size_t lcp = 0;
      while (lcp < a.size() && lcp < b.size() && a[lcp] == b[lcp]) ++lcp;
      seps[made_seps] = NewSep(CompareKeys(a, b) < 0 ? b.substr(0, lcp + 1) : b);
    }
    for (; made_spares < spares_needed; ++made_spares) spares[made_spares] = NewInner();
  } catch (...) {
    for (size_t i = 0; i < made_leaves; ++i) FreeLeaf(leaves[i]);
    for (size_t i = 1; i < made_seps; ++i) FreeSep(seps[i]);
    for (int i = 0; i < made_spares; ++i) FreeInner(spares[i]);
    throw;
  }
  // Nothing below allocates.
  for (size_t j = 0; j < pieces; ++j) {
    Leaf* l = leaves[j];
    const size_t from = offs[cuts[j]], to = offs[cuts[j + 1]];
    std::memcpy(l->data, content + from, to - from);
    l->used = static_cast<uint16_t>(to - from);
    l->n = static_cast<uint16_t>(cuts[j + 1] - cuts[j]);
  }
  FreeLeaf(path.leaf);  // its entries' blocks now belong to the new leaves
  int spare = 0;
  if (path.depth == 0) {
    Inner* root = spares[spare++];
    for (size_t j = 0; j < pieces; ++j) {
      root->child[j] = AsNode(leaves[j]);
      root->count[j] = leaves[j]->n;
      root->sep[j] = seps[j];
    }
    root->n = static_cast<uint16_t>(pieces);
    root->level = 1;
    root_ = AsNode(root);
    root->tree_bytes = CountBytes(root_);  // a one-leaf tree kept no count
    return;
  }
  int level = path.depth - 1;
  Inner* node = path.steps[level].node;
  const int idx = path.steps[level].idx;
  const int grow = static_cast<int>(pieces) - 1;
  for (int i = node->n - 1; i > idx; --i) {
    node->child[i + grow] = node->child[i];
    node->count[i + grow] = node->count[i];
    node->sep[i + grow] = node->sep[i];
  }
  for (size_t j = 0; j < pieces; ++j) {
    node->child[idx + static_cast<int>(j)] = AsNode(leaves[j]);
    node->count[idx + static_cast<int>(j)] = leaves[j]->n;
    if (j > 0) node->sep[idx + static_cast<int>(j)] = seps[j];
  }
  node->n = static_cast<uint16_t>(node->n + grow);
  for (int l = level - 1; l >= 0; --l)
    path.steps[l].node->count[path.steps[l].idx] += static_cast<uint64_t>(count_delta);
  while (node->n > kInnerMax) {
    Inner* right = spares[spare++];
    right->level = node->level;
    const int m = node->n / 2;
    Sep* promoted = node->sep[m];
    for (int i = m; i < node->n; ++i) {
      right->child[i - m] = node->child[i];
      right->count[i - m] = node->count[i];
      right->sep[i - m] = i == m ? nullptr : node->sep[i];
    }
    right->n = static_cast<uint16_t>(node->n - m);
    node->n = static_cast<uint16_t>(m);
    uint64_t left_total = 0, right_total = 0;
    for (int i = 0; i < node->n; ++i) left_total += node->count[i];
    for (int i = 0; i < right->n; ++i) right_total += right->count[i];
    if (level == 0) {
      Inner* root = spares[spare++];
      root->child[0] = AsNode(node);
      root->child[1] = AsNode(right);
      root->count[0] = left_total;
      root->count[1] = right_total;
      root->sep[1] = promoted;
      root->n = 2;
      root->tree_bytes = node->tree_bytes;  // the count so far, new blocks included
      root->level = static_cast<uint8_t>(node->level + 1);
      root_ = AsNode(root);
      break;
    }
    Inner* parent = path.steps[level - 1].node;
    const int pidx = path.steps[level - 1].idx;
    for (int i = parent->n - 1; i > pidx; --i) {
      parent->child[i + 1] = parent->child[i];
      parent->count[i + 1] = parent->count[i];
      parent->sep[i + 1] = parent->sep[i];
    }
    parent->child[pidx + 1] = AsNode(right);
    parent->sep[pidx + 1] = promoted;
    parent->count[pidx] = left_total;
    parent->count[pidx + 1] = right_total;
    ++parent->n;
    node = parent;
    --level;
  }
  for (; spare < spares_needed; ++spare) FreeInner(spares[spare]);  // none expected
}

// ---- removing ----

void PackedTree::EraseAt(size_t r) noexcept {
  Path p;
  DescendRank(r, &p);
  RemoveAt(p);
}

bool PackedTree::Erase(std::string_view key) noexcept {
  const size_t r = LowerBound(key);
  if (r >= size()) return false;
  Path p;
  DescendRank(r, &p);
  if (KeyOf(p.leaf->data + p.off) != key) return false;
  RemoveAt(p);
  return true;
}

void PackedTree::RemoveAt(Path& path) noexcept {
  Leaf* l = path.leaf;
  const size_t off = path.off;
  const size_t len = EntrySize(l->data + off);
  ReleaseEntry(l->data + off);
  std::memmove(l->data + off, l->data + off + len, l->used - off - len);
  l->used = static_cast<uint16_t>(l->used - len);
  --l->n;
  for (int i = 0; i < path.depth; ++i) --path.steps[i].node->count[path.steps[i].idx];
  if (path.depth == 0 ? l->n == 0 : size() == 0) return Clear();
  if (path.depth == 0) return ShrinkLeaf(path);
  if (l->n == 0) {
    const Path::Step& s = path.steps[path.depth - 1];
    FreeLeaf(l);
    RemoveChild(s.node, s.idx, false);
    return FixInner(path, path.depth - 1);
  }
  if (Weight(l->used, l->n) < kMergeWeight / 4) return MergeLeaves(path);
  ShrinkLeaf(path);
}

// Removes child c of parent; the separator that goes with it (child c's own, or for c == 0 the
// one of child 1, which becomes the first) is freed unless keep_sep (it moved elsewhere).
void PackedTree::RemoveChild(Inner* parent, int c, bool keep_sep) noexcept {
  if (!keep_sep) FreeSep(c > 0 ? parent->sep[c] : (parent->n > 1 ? parent->sep[1] : nullptr));
  for (int i = c; i + 1 < parent->n; ++i) {
    parent->child[i] = parent->child[i + 1];
    parent->count[i] = parent->count[i + 1];
    parent->sep[i] = parent->sep[i + 1];
  }
  --parent->n;
  parent->sep[0] = nullptr;
}

// A light leaf joins a neighbour under the same parent when the two fit in one leaf.
void PackedTree::MergeLeaves(Path& path) noexcept {
  const Path::Step& s = path.steps[path.depth - 1];
  Inner* parent = s.node;
  Leaf* l = path.leaf;
  for (const int other : {s.idx - 1, s.idx + 1}) {
    if (other < 0 || other >= parent->n) continue;
    const int left_i = std::min(s.idx, other), right_i = std::max(s.idx, other);
    Leaf* left = reinterpret_cast<Leaf*>(parent->child[left_i]);
    Leaf* right = reinterpret_cast<Leaf*>(parent->child[right_i]);
    const size_t used = size_t{left->used} + right->used;
    if (Weight(used, size_t{left->n} + right->n) > kMergeWeight) continue;
    if (used > left->cap) {
      const size_t before = Usable(left);
      void* p = vsl::Api().realloc(left, kLeafHeader + used);
      if (p == nullptr) return;  // stays light; nothing is lost
      left = static_cast<Leaf*>(p);
      const size_t usable = Usable(left);
      Account(static_cast<int64_t>(usable) - static_cast<int64_t>(before));
      left->cap = static_cast<uint16_t>(std::min<size_t>(usable - kLeafHeader, UINT16_MAX));
      parent->child[left_i] = AsNode(left);
    }
    std::memcpy(left->data + left->used, right->data, right->used);
    left->used = static_cast<uint16_t>(used);
    left->n = static_cast<uint16_t>(left->n + right->n);
    parent->count[left_i] += parent->count[right_i];
    FreeLeaf(right);
    RemoveChild(parent, right_i, false);
    return FixInner(path, path.depth - 1);
  }
  (void)l;
  ShrinkLeaf(path);
}

// After a child left inner node path.steps[level]: a light node joins a neighbour when the two fit
// in one, up the path; a root with one child gives way to it.
void PackedTree::FixInner(Path& path, int level) noexcept {
  for (; level >= 0; --level) {
    Inner* node = path.steps[level].node;
    if (level == 0) {
      while (root_->leaf == 0 && reinterpret_cast<Inner*>(root_)->n == 1) {
        Inner* old = reinterpret_cast<Inner*>(root_);
        const uint64_t remaining = old->tree_bytes - Usable(old);
        root_ = old->child[0];
        if (root_->leaf == 0) reinterpret_cast<Inner*>(root_)->tree_bytes = remaining;
        vsl::Free(old);
      }
      return;
    }
    if (node->n >= kInnerMin) return;
    Inner* parent = path.steps[level - 1].node;
    const int pidx = path.steps[level - 1].idx;
    if (node->n == 0) {  // its last child went: it goes too, with its separator
      FreeInner(node);
      RemoveChild(parent, pidx, false);
      continue;
    }
    bool merged = false;
    for (const int other : {pidx - 1, pidx + 1}) {
      if (other < 0 || other >= parent->n) continue;
      const int left_i = std::min(pidx, other), right_i = std::max(pidx, other);
      Inner* left = reinterpret_cast<Inner*>(parent->child[left_i]);
      Inner* right = reinterpret_cast<Inner*>(parent->child[right_i]);
      if (left->n + right->n > kInnerMax) continue;
      // The parent's separator of the right node comes down before its first child.
      for (int i = 0; i < right->n; ++i) {
        left->child[left->n + i] = right->child[i];
        left->count[left->n + i] = right->count[i];
        left->sep[left->n + i] = i == 0 ? parent->sep[right_i] : right->sep[i];
      }
      left->n = static_cast<uint16_t>(left->n + right->n);
      parent->count[left_i] += parent->count[right_i];
      FreeInner(right);
      RemoveChild(parent, right_i, true);
      merged = true;
      break;
    }
    if (!merged) return;
  }
}

void PackedTree::FreeSubtree(Node* n) noexcept {
  if (n->leaf != 0) {
    Leaf* l = reinterpret_cast<Leaf*>(n);
    for (size_t off = 0; off < l->used; off += EntrySize(l->data + off))
      ReleaseEntry(l->data + off);
    FreeLeaf(l);
    return;
  }
  Inner* in = reinterpret_cast<Inner*>(n);
  for (int i = 0; i < in->n; ++i) {
    FreeSubtree(in->child[i]);
    FreeSep(in->sep[i]);
  }
  FreeInner(in);
}

void PackedTree::Clear() noexcept {
  if (root_ != nullptr) FreeSubtree(root_);
  root_ = nullptr;
}

void PackedTree::CopyFrom(const PackedTree& other) {
  try {
    ValueBuf buf;
    for (Cursor c = other.First(); c.valid(); c.Next()) InsertAfterEquals(c.key(), c.value(buf));
  } catch (...) {
    Clear();
    throw;
  }
}

// ---- checks ----

bool PackedTree::ValidNode(const Node* n, int level, std::string_view lo, bool has_lo,
                           std::string_view hi, bool has_hi, size_t* count, size_t* bytes) const {
  if (n->leaf != 0) {
    if (level != 0) return false;
    const Leaf* l = reinterpret_cast<const Leaf*>(n);
    if (l->n == 0 || l->n > kMaxEntries || l->used > l->cap ||
        l->used > (n == root_ ? kRootBytes : kLeafBytes) || l->cap > Usable(l) - kLeafHeader) {
      return false;
    }
    *bytes += Usable(l);
    size_t off = 0;
    std::string_view prev;
    for (int k = 0; k < l->n; ++k) {
      if (off >= l->used) return false;
      const unsigned char* p = l->data + off;
      const std::string_view key = KeyOf(p);
      if ((has_lo && CompareKeys(key, lo) < 0) || (has_hi && CompareKeys(key, hi) > 0))
        return false;
      if (k > 0 && CompareKeys(prev, key) > 0) return false;
      prev = key;
      size_t vn;
      if (GetVarint(p, &vn) > kInlineMax) *bytes += Usable(LoadPtr<void>(p + vn));
      const unsigned char* v = p + KeyPartSize(p);
      if (*v > kBlob || (*v > 0xE3 && *v < kStr8)) return false;
      if (*v == kStr8 && (v[1] < 64 || v[1] > kInlineMax)) return false;
      if (*v == kBlob) {
        const uint64_t len = GetVarint(v + 1, &vn);
        if (len <= kInlineMax) return false;
        *bytes += Usable(LoadPtr<void>(v + 1 + vn));
      }
      off += EntrySize(p);
    }
    if (off != l->used) return false;
    *count += l->n;
    return true;
  }
  const Inner* in = reinterpret_cast<const Inner*>(n);
  if (in->level != level || level < 1 || in->n == 0 || in->n > kInnerMax ||
      (n == root_ && in->n < 2) || in->sep[0] != nullptr)
    return false;
  *bytes += Usable(in);
  for (int i = 0; i < in->n; ++i) {
    std::string_view clo = lo, chi = hi;
    bool chas_lo = has_lo, chas_hi = has_hi;
    if (i > 0) {
      *bytes += Usable(in->sep[i]);
      clo = in->sep[i]->view();
      chas_lo = true;
      if (i > 1 && CompareKeys(in->sep[i - 1]->view(), clo) > 0) return false;
    }
    if (i + 1 < in->n) {
      chi = in->sep[i + 1]->view();
      chas_hi = true;
    }
    size_t c = 0;
    if (!ValidNode(in->child[i], level - 1, clo, chas_lo, chi, chas_hi, &c, bytes)) return false;
    if (c != in->count[i]) return false;
    *count += c;
  }
  return true;
}

bool PackedTree::Valid() const {
  if (root_ == nullptr) return true;
  size_t count = 0, bytes = 0;
  if (!ValidNode(root_, root_->level, {}, false, {}, false, &count, &bytes)) return false;
  return count == size() && bytes == this->bytes();
}

}  // namespace vessel::ordered
