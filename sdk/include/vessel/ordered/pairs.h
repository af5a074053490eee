// The type glue of a value that is one PackedTree of (key, value) pairs (the omap and multimap
// modules): its serialized form, its loading and its visit, so each value type's callbacks are a
// line each.
//
// Serialized form: u64 count, then count pairs of byte strings (key, value) in tree order.
// Loading trusts nothing: an empty value, input that ends early, a key out of order and, where
// keys must be unique, a repeated key are refused. Used under the value's key lock, as the tree.
#ifndef VESSEL_SDK_ORDERED_PAIRS_H_
#define VESSEL_SDK_ORDERED_PAIRS_H_

#include <cstdint>

#include "vessel/module.hpp"
#include "vessel/ordered/packed_tree.h"

namespace vessel::ordered {

void SavePairs(const PackedTree& t, vsl::Writer& w);
// Fills the empty tree t from what SavePairs wrote; false on anything malformed (t then holds
// what was read so far, for the caller to free). With `repeats` equal keys may follow each other
// (they keep their order); `distinct`, when given, receives the number of distinct keys.
bool LoadPairs(vsl::Reader& r, bool repeats, PackedTree* t, uint64_t* distinct = nullptr);
// Calls fn with every key and then its value, in tree order (as a hash's visit hands over field,
// value pairs), until it returns nonzero. Returns VSL_OK.
int VisitPairs(const PackedTree& t, vsl_visit_fn fn, void* ud);

}  // namespace vessel::ordered

#endif  // VESSEL_SDK_ORDERED_PAIRS_H_
