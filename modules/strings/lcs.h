// The longest common subsequence of two strings, for the LCS command.
#ifndef VESSEL_MODULES_STRINGS_LCS_H_
#define VESSEL_MODULES_STRINGS_LCS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vessel::strings {

// One common run of the two strings, as LCS IDX reports it (inclusive ranges).
struct LcsMatch {
  uint32_t a_start, a_end, b_start, b_end;
};

struct LcsResult {
  uint32_t len = 0;
  std::string lcs;  // the subsequence itself, when walked
  std::vector<LcsMatch> matches;
};

// The bytes of the scratch table OpLcs allocates for strings of these lengths.
uint64_t LcsTableBytes(size_t a_len, size_t b_len);

// The LCS of a and b by dynamic programming. With `walk`, also the subsequence and its runs of
// at least min_match_len bytes, found walking back from the end exactly as Redis 7.0 does, so IDX
// reports the same runs in the same order. Throws vsl::Error when the scratch table would pass
// max_table_bytes (the host's proto-max-bulk-len) or cannot be allocated (Redis's errors).
LcsResult OpLcs(std::string_view a, std::string_view b, bool walk, int64_t min_match_len,
                uint64_t max_table_bytes);

}  // namespace vessel::strings

#endif  // VESSEL_MODULES_STRINGS_LCS_H_
