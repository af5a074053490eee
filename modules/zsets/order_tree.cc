// OrderTree: descent, insertion with splits, erasure with borrowing and merging, rank queries,
// bulk building, copying and remapping.
#include "order_tree.h"

#include <algorithm>
#include <cstring>
#include <new>

#include "vessel/module.hpp"

namespace vessel::zsets {
namespace {

size_t Usable(const void* p) { return vsl::Api().usable_size(const_cast<void*>(p)); }

}  // namespace

int CompareMembers(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  const int c = n == 0 ? 0 : std::memcmp(a.data(), b.data(), n);
  if (c != 0) return c;
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

int OrderTree::Compare(const MemberTable& t, double s1, uint32_t p1, double s2, uint32_t p2) const {
  if (s1 < s2) return -1;
  if (s1 > s2) return 1;
  if (p1 == p2) return 0;
  return CompareMembers(t.Member(p1), t.Member(p2));
}

// ---- nodes ----

OrderTree::Leaf* OrderTree::NewLeaf() {
  auto* l = static_cast<Leaf*>(vsl::Alloc(sizeof(Leaf)));
  l->n = 0;
  l->leaf = true;
  l->prev = l->next = nullptr;
  node_bytes_ += Usable(l);
  return l;
}

OrderTree::Inner* OrderTree::NewInner() {
  auto* in = static_cast<Inner*>(vsl::Alloc(sizeof(Inner)));
  in->n = 0;
  in->leaf = false;
  node_bytes_ += Usable(in);
  return in;
}

void OrderTree::FreeNode(Node* n) {
  node_bytes_ -= Usable(n);
  vsl::Free(n);
}

OrderTree::Node* OrderTree::TakeSpare(bool leaf) {
  for (int i = 0; i < n_spares_; ++i) {
    if (spares_[i]->leaf != leaf) continue;
    Node* n = spares_[i];
    spares_[i] = spares_[--n_spares_];
    return n;
  }
  return leaf ? static_cast<Node*>(NewLeaf()) : static_cast<Node*>(NewInner());
}

// Allocates what k splits need (one leaf, k - 1 inner nodes) beyond the spares on hand.
void OrderTree::EnsureSpares(int k) {
  int have_leaf = 0, have_inner = 0;
  for (int i = 0; i < n_spares_; ++i) (spares_[i]->leaf ? have_leaf : have_inner)++;
  while (have_leaf < (k > 0 ? 1 : 0) || have_inner < k - 1) {
    const bool leaf = have_leaf < (k > 0 ? 1 : 0);
    spares_[n_spares_] = leaf ? static_cast<Node*>(NewLeaf()) : static_cast<Node*>(NewInner());
    ++n_spares_;
    (leaf ? have_leaf : have_inner)++;
  }
}

// ---- descent ----

void OrderTree::Descend(const MemberTable& t, double score, uint32_t pos, Path* path) const {
  path->depth = 0;
  Node* n = root_;
  while (!n->leaf) {
    auto* in = static_cast<Inner*>(n);
    int lo = 1, hi = in->n;  // last child whose separator is <= the key
    while (lo < hi) {
      const int mid = (lo + hi) / 2;
      if (Compare(t, in->sscore[mid], in->spos[mid], score, pos) <= 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    path->steps[path->depth++] = {in, lo - 1};
    n = in->child[lo - 1];
  }
  auto* leaf = static_cast<Leaf*>(n);
  int lo = 0, hi = leaf->n;  // first element >= the key
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (Compare(t, leaf->score[mid], leaf->pos[mid], score, pos) < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  path->leaf = leaf;
  path->i = lo;
}

int OrderTree::SplitsNeeded(const Path& path) const {
  if (path.leaf->n < kLeafCap) return 0;
  int k = 1;
  for (int lvl = path.depth - 1; lvl >= 0; --lvl) {
    if (path.steps[lvl].node->n < kInnerCap) return k;
    ++k;
  }
  return k + 1;  // the root splits too: a new root
}

void OrderTree::Reserve(const MemberTable& t, double score, uint32_t pos) {
  if (root_ == nullptr) return;
  Path path;
  Descend(t, score, pos, &path);
  EnsureSpares(SplitsNeeded(path));
}

// ---- insertion ----

void OrderTree::Insert(const MemberTable& t, double score, uint32_t pos) {
  if (root_ == nullptr) {
    Leaf* l = static_cast<Leaf*>(TakeSpare(true));
    l->n = 1;
    l->prev = l->next = nullptr;
    l->score[0] = score;
    l->pos[0] = pos;
    root_ = first_ = last_ = l;
    size_ = 1;
    height_ = 0;
    while (n_spares_ > 0) FreeNode(spares_[--n_spares_]);
    return;
  }
  Path path;
  Descend(t, score, pos, &path);
  EnsureSpares(SplitsNeeded(path));  // every node the splits need, before anything changes

  Leaf* l = path.leaf;
  const int i = path.i;
  int edge = 0;           // +1: appended past the last element, -1: prepended before the first
  Node* right = nullptr;  // a new right sibling to insert above, with its count and minimum
  uint32_t right_cnt = 0, left_cnt = 0;
  double up_score = 0;
  uint32_t up_pos = 0;
  if (l->n < kLeafCap) {
    std::memmove(l->score + i + 1, l->score + i, sizeof(double) * (l->n - i));
    std::memmove(l->pos + i + 1, l->pos + i, sizeof(uint32_t) * (l->n - i));
    l->score[i] = score;
    l->pos[i] = pos;
    ++l->n;
  } else {
    Leaf* r = static_cast<Leaf*>(TakeSpare(true));
    // The combined kLeafCap + 1 elements: old[0, i), new, old[i, cap). `keep` stay left.
    int keep = (kLeafCap + 1) / 2;
    if (i == kLeafCap && l->next == nullptr) {  // appending at the end: keep this leaf full
      keep = kLeafCap;
      edge = 1;
    } else if (i == 0 && l->prev == nullptr) {  // prepending at the start
      keep = 1;
      edge = -1;
    }
    double cs[kLeafCap + 1];
    uint32_t cp[kLeafCap + 1];
    std::memcpy(cs, l->score, sizeof(double) * i);
    std::memcpy(cp, l->pos, sizeof(uint32_t) * i);
    cs[i] = score;
    cp[i] = pos;
    std::memcpy(cs + i + 1, l->score + i, sizeof(double) * (kLeafCap - i));
    std::memcpy(cp + i + 1, l->pos + i, sizeof(uint32_t) * (kLeafCap - i));
    l->n = static_cast<uint16_t>(keep);
    std::memcpy(l->score, cs, sizeof(double) * keep);
    std::memcpy(l->pos, cp, sizeof(uint32_t) * keep);
    r->n = static_cast<uint16_t>(kLeafCap + 1 - keep);
    std::memcpy(r->score, cs + keep, sizeof(double) * r->n);
    std::memcpy(r->pos, cp + keep, sizeof(uint32_t) * r->n);
    r->prev = l;
    r->next = l->next;
    if (l->next != nullptr) l->next->prev = r;
    l->next = r;
    if (last_ == l) last_ = r;
    right = r;
    right_cnt = r->n;
    left_cnt = l->n;
    up_score = r->score[0];
    up_pos = r->pos[0];
  }
  ++size_;
  // The new element became its leaf's minimum: the separator naming the old one moves.
  if (i == 0) PropagateMin(path, path.depth, l->score[0], l->pos[0]);

  for (int lvl = path.depth - 1; lvl >= 0; --lvl) {
    Inner* p = path.steps[lvl].node;
    const int c = path.steps[lvl].idx;
    if (right == nullptr) {
      ++p->cnt[c];
      continue;
    }
    p->cnt[c] = left_cnt;
    if (p->n < kInnerCap) {
      const int at = c + 1, move = p->n - at;
      std::memmove(p->cnt + at + 1, p->cnt + at, sizeof(uint32_t) * move);
      std::memmove(p->child + at + 1, p->child + at, sizeof(Node*) * move);
      std::memmove(p->sscore + at + 1, p->sscore + at, sizeof(double) * move);
      std::memmove(p->spos + at + 1, p->spos + at, sizeof(uint32_t) * move);
      p->cnt[at] = right_cnt;
      p->child[at] = right;
      p->sscore[at] = up_score;
      p->spos[at] = up_pos;
      ++p->n;
      right = nullptr;
      continue;
    }
    // Split p: the combined kInnerCap + 1 children, the new one at c + 1.
    Inner* q = static_cast<Inner*>(TakeSpare(false));
    uint32_t ccnt[kInnerCap + 1];
    Node* cchild[kInnerCap + 1];
    double csc[kInnerCap + 1];
    uint32_t cps[kInnerCap + 1];
    for (int j = 0, w = 0; j < kInnerCap; ++j) {
      ccnt[w] = p->cnt[j];
      cchild[w] = p->child[j];
      csc[w] = p->sscore[j];
      cps[w] = p->spos[j];
      ++w;
      if (j == c) {
        ccnt[w] = right_cnt;
        cchild[w] = right;
        csc[w] = up_score;
        cps[w] = up_pos;
        ++w;
      }
    }
    // Ordered loads split unevenly at the edge they grow from; every inner node keeps two
    // children at least, so every node below the root has a sibling to borrow from.
    int keep = (kInnerCap + 1) / 2;
    if (edge > 0 && c + 1 == kInnerCap) keep = kInnerCap - 1;
    if (edge < 0 && c == 0) keep = 2;
    p->n = static_cast<uint16_t>(keep);
    q->n = static_cast<uint16_t>(kInnerCap + 1 - keep);
    uint32_t lsum = 0, rsum = 0;
    for (int j = 0; j < keep; ++j) {
      p->cnt[j] = ccnt[j];
      p->child[j] = cchild[j];
      p->sscore[j] = csc[j];
      p->spos[j] = cps[j];
      lsum += ccnt[j];
    }
    for (int j = 0; j < q->n; ++j) {
      q->cnt[j] = ccnt[keep + j];
      q->child[j] = cchild[keep + j];
      q->sscore[j] = csc[keep + j];
      q->spos[j] = cps[keep + j];
      rsum += ccnt[keep + j];
    }
    right = q;
    left_cnt = lsum;
    right_cnt = rsum;
    up_score = csc[keep];
    up_pos = cps[keep];
  }
  if (right != nullptr) {  // the root split: a new root above both halves
    Inner* root = static_cast<Inner*>(TakeSpare(false));
    root->n = 2;
    root->cnt[0] = left_cnt;
    root->child[0] = root_;
    root->cnt[1] = right_cnt;
    root->child[1] = right;
    root->sscore[1] = up_score;
    root->spos[1] = up_pos;
    root_ = root;
    ++height_;
  }
  while (n_spares_ > 0) FreeNode(spares_[--n_spares_]);
}

// The minimum of the subtree under path level `level` (a leaf when level == depth) changed:
// the separator naming it lives at the nearest ancestor reached through a child other than
// the first.
void OrderTree::PropagateMin(Path& path, int level, double score, uint32_t pos) {
  for (int lvl = level - 1; lvl >= 0; --lvl) {
    const int c = path.steps[lvl].idx;
    if (c > 0) {
      path.steps[lvl].node->sscore[c] = score;
      path.steps[lvl].node->spos[c] = pos;
      return;
    }
  }
}

// ---- erasure ----

void OrderTree::Erase(const MemberTable& t, double score, uint32_t pos) {
  Path path;
  Descend(t, score, pos, &path);
  Leaf* l = path.leaf;
  const int i = path.i;
  std::memmove(l->score + i, l->score + i + 1, sizeof(double) * (l->n - i - 1));
  std::memmove(l->pos + i, l->pos + i + 1, sizeof(uint32_t) * (l->n - i - 1));
  --l->n;
  --size_;
  for (int lvl = 0; lvl < path.depth; ++lvl) --path.steps[lvl].node->cnt[path.steps[lvl].idx];
  if (i == 0 && l->n > 0) PropagateMin(path, path.depth, l->score[0], l->pos[0]);
  if (path.depth == 0) {
    if (l->n == 0) {
      FreeNode(l);
      root_ = nullptr;
      first_ = last_ = nullptr;
    }
    return;
  }
  if (l->n < kLeafMin) RebalanceLeaf(path);
}

void OrderTree::RemoveChild(Inner* p, int c) {
  const int move = p->n - c - 1;
  std::memmove(p->cnt + c, p->cnt + c + 1, sizeof(uint32_t) * move);
  std::memmove(p->child + c, p->child + c + 1, sizeof(Node*) * move);
  std::memmove(p->sscore + c, p->sscore + c + 1, sizeof(double) * move);
  std::memmove(p->spos + c, p->spos + c + 1, sizeof(uint32_t) * move);
  --p->n;
}

void OrderTree::RebalanceLeaf(Path& path) {
  Leaf* l = path.leaf;
  Inner* p = path.steps[path.depth - 1].node;
  const int c = path.steps[path.depth - 1].idx;
  Leaf* ls = c > 0 ? static_cast<Leaf*>(p->child[c - 1]) : nullptr;
  Leaf* rs = c + 1 < p->n ? static_cast<Leaf*>(p->child[c + 1]) : nullptr;
  if (ls != nullptr && ls->n > kLeafMin) {  // borrow the left sibling's last element
    std::memmove(l->score + 1, l->score, sizeof(double) * l->n);
    std::memmove(l->pos + 1, l->pos, sizeof(uint32_t) * l->n);
    --ls->n;
    l->score[0] = ls->score[ls->n];
    l->pos[0] = ls->pos[ls->n];
    ++l->n;
    --p->cnt[c - 1];
    ++p->cnt[c];
    p->sscore[c] = l->score[0];
    p->spos[c] = l->pos[0];
    return;
  }
  if (rs != nullptr && rs->n > kLeafMin) {  // borrow the right sibling's first element
    l->score[l->n] = rs->score[0];
    l->pos[l->n] = rs->pos[0];
    ++l->n;
    std::memmove(rs->score, rs->score + 1, sizeof(double) * (rs->n - 1));
    std::memmove(rs->pos, rs->pos + 1, sizeof(uint32_t) * (rs->n - 1));
    --rs->n;
    ++p->cnt[c];
    --p->cnt[c + 1];
    p->sscore[c + 1] = rs->score[0];
    p->spos[c + 1] = rs->pos[0];
    if (l->n == 1) PropagateMin(path, path.depth, l->score[0], l->pos[0]);
    return;
  }
  if (ls != nullptr) {  // merge l into its left sibling
    std::memcpy(ls->score + ls->n, l->score, sizeof(double) * l->n);
    std::memcpy(ls->pos + ls->n, l->pos, sizeof(uint32_t) * l->n);
    ls->n = static_cast<uint16_t>(ls->n + l->n);
    ls->next = l->next;
    if (l->next != nullptr) l->next->prev = ls;
    if (last_ == l) last_ = ls;
    p->cnt[c - 1] += p->cnt[c];
    RemoveChild(p, c);
    FreeNode(l);
  } else {  // merge the right sibling into l
    const bool was_empty = l->n == 0;
    std::memcpy(l->score + l->n, rs->score, sizeof(double) * rs->n);
    std::memcpy(l->pos + l->n, rs->pos, sizeof(uint32_t) * rs->n);
    l->n = static_cast<uint16_t>(l->n + rs->n);
    l->next = rs->next;
    if (rs->next != nullptr) rs->next->prev = l;
    if (last_ == rs) last_ = l;
    p->cnt[c] += p->cnt[c + 1];
    RemoveChild(p, c + 1);
    FreeNode(rs);
    if (was_empty) PropagateMin(path, path.depth, l->score[0], l->pos[0]);
  }
  RebalanceInner(path, path.depth - 1);
}

// The inner node at path level `level` lost a child.
void OrderTree::RebalanceInner(Path& path, int level) {
  Inner* n = path.steps[level].node;
  if (level == 0) {  // the root: collapse it when one child is left
    if (n->n == 1) {
      root_ = n->child[0];
      FreeNode(n);
      --height_;
    }
    return;
  }
  if (n->n >= kInnerMin) return;
  Inner* p = path.steps[level - 1].node;
  const int c = path.steps[level - 1].idx;
  Inner* ls = c > 0 ? static_cast<Inner*>(p->child[c - 1]) : nullptr;
  Inner* rs = c + 1 < p->n ? static_cast<Inner*>(p->child[c + 1]) : nullptr;
  if (ls != nullptr && ls->n > kInnerMin) {  // borrow the left sibling's last child
    const int m = n->n;
    std::memmove(n->cnt + 1, n->cnt, sizeof(uint32_t) * m);
    std::memmove(n->child + 1, n->child, sizeof(Node*) * m);
    std::memmove(n->sscore + 1, n->sscore, sizeof(double) * m);
    std::memmove(n->spos + 1, n->spos, sizeof(uint32_t) * m);
    n->sscore[1] = p->sscore[c];  // the old first child's minimum is n's old minimum
    n->spos[1] = p->spos[c];
    const int last = ls->n - 1;
    n->cnt[0] = ls->cnt[last];
    n->child[0] = ls->child[last];
    p->sscore[c] = ls->sscore[last];
    p->spos[c] = ls->spos[last];
    --ls->n;
    ++n->n;
    p->cnt[c - 1] -= n->cnt[0];
    p->cnt[c] += n->cnt[0];
    return;
  }
  if (rs != nullptr && rs->n > kInnerMin) {  // borrow the right sibling's first child
    const int m = n->n;
    n->cnt[m] = rs->cnt[0];
    n->child[m] = rs->child[0];
    n->sscore[m] = p->sscore[c + 1];
    n->spos[m] = p->spos[c + 1];
    ++n->n;
    p->sscore[c + 1] = rs->sscore[1];
    p->spos[c + 1] = rs->spos[1];
    p->cnt[c] += rs->cnt[0];
    p->cnt[c + 1] -= rs->cnt[0];
    RemoveChild(rs, 0);
    return;
  }
  Inner* into = ls != nullptr ? ls : n;  // merge the right one of the pair into the left one
  Inner* from = ls != nullptr ? n : rs;
  const int fc = ls != nullptr ? c : c + 1;  // from's index in p
  const int m = into->n;
  for (int j = 0; j < from->n; ++j) {
    into->cnt[m + j] = from->cnt[j];
    into->child[m + j] = from->child[j];
    into->sscore[m + j] = j == 0 ? p->sscore[fc] : from->sscore[j];
    into->spos[m + j] = j == 0 ? p->spos[fc] : from->spos[j];
  }
  into->n = static_cast<uint16_t>(m + from->n);
  p->cnt[fc - 1] += p->cnt[fc];
  RemoveChild(p, fc);
  FreeNode(from);
  RebalanceInner(path, level - 1);
}

// ---- queries ----

template <class Below>
size_t OrderTree::CountPrefix(Below&& below) const {
  if (root_ == nullptr) return 0;
  size_t rank = 0;
  const Node* n = root_;
  while (!n->leaf) {  // into the last child whose minimum is below; the ones before it count whole
    const auto* in = static_cast<const Inner*>(n);
    int lo = 1, hi = in->n;
    while (lo < hi) {
      const int mid = (lo + hi) / 2;
      if (below(in->sscore[mid], in->spos[mid])) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    for (int j = 0; j < lo - 1; ++j) rank += in->cnt[j];
    n = in->child[lo - 1];
  }
  const auto* leaf = static_cast<const Leaf*>(n);
  int lo = 0, hi = leaf->n;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (below(leaf->score[mid], leaf->pos[mid])) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return rank + static_cast<size_t>(lo);
}

size_t OrderTree::Rank(const MemberTable& t, double score, uint32_t pos) const {
  return CountPrefix([&](double s, uint32_t p) { return Compare(t, s, p, score, pos) < 0; });
}

size_t OrderTree::CountBelow(double score, bool inclusive) const {
  return CountPrefix([&](double s, uint32_t) { return inclusive ? s <= score : s < score; });
}

size_t OrderTree::CountLexBelow(const MemberTable& t, std::string_view s, bool inclusive) const {
  return CountPrefix([&](double, uint32_t p) {
    const int c = CompareMembers(t.Member(p), s);
    return inclusive ? c <= 0 : c < 0;
  });
}

OrderTree::Cursor OrderTree::At(size_t r) const {
  const Node* n = root_;
  while (!n->leaf) {
    const auto* in = static_cast<const Inner*>(n);
    int c = 0;
    while (c + 1 < in->n && r >= in->cnt[c]) r -= in->cnt[c++];
    n = in->child[c];
  }
  return Cursor{static_cast<const Leaf*>(n), static_cast<int>(r)};
}

// ---- whole-tree operations ----

void OrderTree::RemapNode(Node* n, const uint32_t* map) {
  if (n->leaf) {
    auto* l = static_cast<Leaf*>(n);
    for (int i = 0; i < l->n; ++i) l->pos[i] = map[l->pos[i]];
    return;
  }
  auto* in = static_cast<Inner*>(n);
  for (int i = 1; i < in->n; ++i) in->spos[i] = map[in->spos[i]];
  for (int i = 0; i < in->n; ++i) RemapNode(in->child[i], map);
}

void OrderTree::Remap(const uint32_t* map) {
  if (root_ != nullptr) RemapNode(root_, map);
}

void OrderTree::FreeSubtree(Node* n) {
  if (!n->leaf) {
    auto* in = static_cast<Inner*>(n);
    for (int i = 0; i < in->n; ++i) FreeSubtree(in->child[i]);
  }
  FreeNode(n);
}

void OrderTree::Clear() {
  if (root_ != nullptr) FreeSubtree(root_);
  while (n_spares_ > 0) FreeNode(spares_[--n_spares_]);
  root_ = nullptr;
  first_ = last_ = nullptr;
  size_ = 0;
  height_ = 0;
}

void OrderTree::Build(const uint32_t* pos, const double* score, size_t n) {
  if (n == 0) return;
  // Leaves filled completely (the last one takes the rest), then inner levels over them. Every
  // node is allocated first, so a failure leaves the tree empty.
  const size_t n_leaves = (n + kLeafCap - 1) / kLeafCap;
  size_t n_inner = 0;
  for (size_t w = n_leaves; w > 1;) {
    w = (w + kInnerCap - 1) / kInnerCap;
    n_inner += w;
  }
  Node** pool = static_cast<Node**>(vsl::Alloc(sizeof(Node*) * (n_leaves + n_inner)));
  uint32_t* counts = nullptr;
  size_t made = 0;
  try {
    counts = static_cast<uint32_t*>(vsl::Alloc(sizeof(uint32_t) * n_leaves));
    for (; made < n_leaves + n_inner; ++made) {
      pool[made] = made < n_leaves ? static_cast<Node*>(NewLeaf()) : static_cast<Node*>(NewInner());
    }
  } catch (...) {
    while (made > 0) FreeNode(pool[--made]);
    vsl::Free(pool);
    vsl::Free(counts);
    throw;
  }
  Leaf* prev = nullptr;
  for (size_t i = 0; i < n_leaves; ++i) {
    auto* l = static_cast<Leaf*>(pool[i]);
    const size_t from = i * kLeafCap, take = std::min<size_t>(kLeafCap, n - from);
    l->n = static_cast<uint16_t>(take);
    std::memcpy(l->score, score + from, sizeof(double) * take);
    std::memcpy(l->pos, pos + from, sizeof(uint32_t) * take);
    l->prev = prev;
    if (prev != nullptr) prev->next = l;
    prev = l;
    counts[i] = static_cast<uint32_t>(take);
  }
  first_ = static_cast<Leaf*>(pool[0]);
  last_ = prev;
  // Each level is built over the previous one, which starts at pool[below].
  size_t below = 0, width = n_leaves, next = n_leaves;
  int height = 0;
  while (width > 1) {
    const size_t parents = (width + kInnerCap - 1) / kInnerCap;
    for (size_t i = 0; i < parents; ++i) {
      auto* in = static_cast<Inner*>(pool[next + i]);
      const size_t from = i * kInnerCap, take = std::min<size_t>(kInnerCap, width - from);
      uint32_t sum = 0;
      for (size_t j = 0; j < take; ++j) {
        Node* ch = pool[below + from + j];
        in->child[j] = ch;
        in->cnt[j] = counts[from + j];
        sum += counts[from + j];
        const Node* lm = ch;  // the child's minimum: its leftmost leaf's first element
        while (!lm->leaf) lm = static_cast<const Inner*>(lm)->child[0];
        in->sscore[j] = static_cast<const Leaf*>(lm)->score[0];
        in->spos[j] = static_cast<const Leaf*>(lm)->pos[0];
      }
      in->n = static_cast<uint16_t>(take);
      counts[i] = sum;
    }
    below = next;
    next += parents;
    width = parents;
    ++height;
  }
  root_ = pool[below];
  height_ = height;
  size_ = n;
  vsl::Free(pool);
  vsl::Free(counts);
}

OrderTree::Node* OrderTree::CopyNode(const Node* n, Leaf** prev_leaf) {
  if (n->leaf) {
    const auto* l = static_cast<const Leaf*>(n);
    Leaf* c = NewLeaf();
    c->n = l->n;
    std::memcpy(c->score, l->score, sizeof(double) * l->n);
    std::memcpy(c->pos, l->pos, sizeof(uint32_t) * l->n);
    c->prev = *prev_leaf;
    if (*prev_leaf != nullptr) {
      (*prev_leaf)->next = c;
    } else {
      first_ = c;
    }
    *prev_leaf = c;
    last_ = c;
    return c;
  }
  const auto* in = static_cast<const Inner*>(n);
  Inner* c = NewInner();
  std::memcpy(c->cnt, in->cnt, sizeof(uint32_t) * in->n);
  std::memcpy(c->sscore, in->sscore, sizeof(double) * in->n);
  std::memcpy(c->spos, in->spos, sizeof(uint32_t) * in->n);
  c->n = 0;
  try {
    for (int i = 0; i < in->n; ++i) {
      c->child[i] = CopyNode(in->child[i], prev_leaf);
      c->n = static_cast<uint16_t>(i + 1);
    }
  } catch (...) {
    FreeSubtree(c);
    throw;
  }
  return c;
}

void OrderTree::CopyFrom(const OrderTree& o) {
  if (o.root_ == nullptr) return;
  Leaf* prev = nullptr;
  try {
    root_ = CopyNode(o.root_, &prev);
  } catch (...) {
    first_ = last_ = nullptr;
    throw;
  }
  if (prev != nullptr) prev->next = nullptr;
  size_ = o.size_;
  height_ = o.height_;
}

}  // namespace vessel::zsets
