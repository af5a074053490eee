// PackedTree: adding, replacing and removing entries, with the splits and merges they cause
// (see packed_tree.h).
#include <algorithm>
#include <new>
#include <vector>

#include "packed_tree_internal.h"

namespace vessel::ordered {

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
