// OrderTree: the order half of a large sorted set, a B+tree with subtree counts over the
// members' positions in a MemberTable, ordered by (score, member bytes) as Redis orders a zset.
//
// Leaves hold up to 62 {score, position} pairs (768 bytes) and are linked both ways; inner
// nodes hold up to 31 children with their element counts and, for children 1.., a separator:
// the exact minimum {score, position} of that child's subtree (kept exact on every change).
// Comparisons read scores from the nodes and members from the table only on equal scores. So:
//   - insert, erase, rank of an element, element at a rank, and the rank where a score or a
//     member bound falls are all O(log n) (counts summed on the way down);
//   - a range is a walk along the leaves, O(1) per element;
//   - about 12-16 bytes per element (leaves over 3/4 full; an insertion at either end of the
//     tree splits unevenly, so ordered loads fill leaves completely).
// Only erasing never allocates; Insert allocates the nodes a split needs before changing
// anything, so std::bad_alloc leaves the tree as it was. Not thread-safe.
#ifndef VESSEL_MODULES_ZSETS_ORDER_TREE_H_
#define VESSEL_MODULES_ZSETS_ORDER_TREE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "member_table.h"

namespace vessel::zsets {

// Redis's sdscmp: memcmp over the common prefix, then the shorter first.
int CompareMembers(std::string_view a, std::string_view b);

class OrderTree {
 public:
  static constexpr int kLeafCap = 62;
  static constexpr int kInnerCap = 31;

  struct Node {
    uint16_t n;  // elements (leaf) or children (inner)
    bool leaf;
  };
  struct Leaf : Node {
    Leaf* prev;
    Leaf* next;
    double score[kLeafCap];
    uint32_t pos[kLeafCap];
  };
  struct Inner : Node {
    uint32_t cnt[kInnerCap];  // elements under each child
    Node* child[kInnerCap];
    double sscore[kInnerCap];  // separators: the minimum key of child i, i >= 1
    uint32_t spos[kInnerCap];
  };

  // A position in the order: a leaf and an index in it (leaf == nullptr past either end).
  struct Cursor {
    const Leaf* leaf = nullptr;
    int i = 0;
    bool valid() const { return leaf != nullptr; }
    double score() const { return leaf->score[i]; }
    uint32_t pos() const { return leaf->pos[i]; }
    void Next() {
      if (++i == leaf->n) {
        leaf = leaf->next;
        i = 0;
      }
    }
    void Prev() {
      if (i-- == 0) {
        leaf = leaf->prev;
        i = leaf == nullptr ? 0 : leaf->n - 1;
      }
    }
  };

  OrderTree() = default;
  ~OrderTree() { Clear(); }
  OrderTree(const OrderTree&) = delete;
  OrderTree& operator=(const OrderTree&) = delete;

  size_t size() const { return size_; }
  // Adds the element at table position pos with `score` (not in the tree yet). Throws
  // std::bad_alloc with the tree unchanged.
  void Insert(const MemberTable& t, double score, uint32_t pos);
  // Removes an element that is in the tree. Never throws.
  void Erase(const MemberTable& t, double score, uint32_t pos);
  // The number of splits an Insert of this key would make now: allocating that many nodes
  // up front (Reserve) makes the next Insert nothrow, even after an Erase (an erase never
  // makes a node on the way full).
  void Reserve(const MemberTable& t, double score, uint32_t pos);

  // 0-based rank of an element in the tree.
  size_t Rank(const MemberTable& t, double score, uint32_t pos) const;
  // Elements with a score below `score` (inclusive: not above it).
  size_t CountBelow(double score, bool inclusive) const;
  // Elements whose member is below s (inclusive: not above), assuming the tree is also in
  // member order (all scores equal, as ZRANGEBYLEX requires).
  size_t CountLexBelow(const MemberTable& t, std::string_view s, bool inclusive) const;
  // The element at rank r (< size()).
  Cursor At(size_t r) const;
  Cursor First() const { return Cursor{first_, 0}; }
  Cursor Last() const { return Cursor{last_, last_ == nullptr ? 0 : last_->n - 1}; }

  // Replaces every position p by map[p] (after MemberTable::Compact).
  void Remap(const uint32_t* map);
  // Builds the tree (empty) from n elements already in order. Throws std::bad_alloc with the
  // tree still empty.
  void Build(const uint32_t* pos, const double* score, size_t n);
  // Makes this (empty) tree a copy of `other`. Throws std::bad_alloc with the tree empty.
  void CopyFrom(const OrderTree& other);
  void Clear();
  size_t MemUsage() const { return node_bytes_; }

 private:
  static constexpr int kLeafMin = kLeafCap / 2;
  static constexpr int kInnerMin = kInnerCap / 2;
  static constexpr int kMaxHeight = 24;

  struct Step {
    Inner* node;
    int idx;
  };
  // A descent from the root to the leaf where key (score, pos) is or would go.
  struct Path {
    Step steps[kMaxHeight];
    int depth = 0;  // inner levels
    Leaf* leaf = nullptr;
    int i = 0;  // lower bound of the key in the leaf
  };

  int Compare(const MemberTable& t, double s1, uint32_t p1, double s2, uint32_t p2) const;
  // The length of the prefix of the order whose elements satisfy below(score, position), which
  // holds for a prefix and then never again: O(log n).
  template <class Below>
  size_t CountPrefix(Below&& below) const;
  void Descend(const MemberTable& t, double score, uint32_t pos, Path* path) const;
  int SplitsNeeded(const Path& path) const;

  Leaf* NewLeaf();
  Inner* NewInner();
  Node* TakeSpare(bool leaf);
  void FreeNode(Node* n);
  void EnsureSpares(int splits);

  void PropagateMin(Path& path, int level, double score, uint32_t pos);
  void RebalanceLeaf(Path& path);
  void RebalanceInner(Path& path, int level);
  void RemoveChild(Inner* p, int c);

  Node* CopyNode(const Node* n, Leaf** prev_leaf);
  void FreeSubtree(Node* n);
  void RemapNode(Node* n, const uint32_t* map);

  Node* root_ = nullptr;
  Leaf* first_ = nullptr;
  Leaf* last_ = nullptr;
  size_t size_ = 0;
  int height_ = 0;  // inner levels above the leaves
  size_t node_bytes_ = 0;
  // Nodes allocated by Reserve for the next Insert (both kinds, at most kMaxHeight + 1).
  Node* spares_[kMaxHeight + 2] = {};
  int n_spares_ = 0;
};

}  // namespace vessel::zsets

#endif  // VESSEL_MODULES_ZSETS_ORDER_TREE_H_
