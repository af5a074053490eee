// PackedTree: cursors, descents and the blocks of the tree (see packed_tree.h; adding and
// removing entries are in packed_tree_edit.cc).
#include "vessel/ordered/packed_tree.h"

#include <algorithm>
#include <new>
#include <vector>

#include "packed_tree_internal.h"

namespace vessel::ordered {

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

}  // namespace vessel::ordered
