// List (modules/lists/lists_type.h), the ring of packed chunks behind every list, against a
// std::deque<std::string>: thousands of random pushes and pops at both ends (in bursts that grow
// and shrink the ring), LSET, LINSERT, LTRIM and LREM, with elements of every encoding (integers
// of each width, canonical or not, strings inline, of 64-255 bytes, in their own block). Checked:
// every element by index, walks from any index in both directions, LPOS's matches with MAXLEN,
// LINSERT's pivot search, the bytes it reports, and copies.
#include "lists_type.h"

#include <algorithm>
#include <deque>
#include <string>
#include <vector>

#include "tests/ds/ds_test.h"

namespace vessel::ds {
namespace {

using lists::ElemBuf;
using lists::List;
using lists::Needle;
using Model = std::deque<std::string>;

class ListTest : public DsTest {
 protected:
  // An element: often an integer at the edge of an encoding's range (in canonical text or not),
  // else one of DsTest's strings, from few enough values that searches find them.
  std::string RandomElement() {
    // clang-format off
    static const char* const kEdges[] = {
        "0", "127", "128", "-1", "-4096", "4095", "-4097", "4096", "32767", "-32768", "32768",
        "8388607", "-8388608", "8388608", "2147483647", "-2147483648", "2147483648",
        "9223372036854775807", "-9223372036854775808",
        "9223372036854775808", "-0", "+1", "00", "1.0", " 1", "1 "};  // strings: not int64 text
    // clang-format on
    if (OneIn(4)) return kEdges[Below(std::size(kEdges))];
    return RandomString(60);
  }

  void ExpectSame(const List& l, const Model& model) {
    ASSERT_EQ(l.size(), model.size()) << Trace();
    ElemBuf buf;
    for (size_t i = 0; i < model.size(); ++i) {
      ASSERT_EQ(l.At(i, buf), model[i]) << "index " << i << "; " << Trace();
    }
    size_t next = 0;
    l.ForEach(0, [&](size_t i, std::string_view e) {
      EXPECT_EQ(i, next);
      EXPECT_EQ(e, model[i]);
      ++next;
      return true;
    });
    ASSERT_EQ(next, model.size()) << Trace();
  }

  // Walks from a random index, forward and backward, stopping at a random point.
  void ExpectWalks(const List& l, const Model& model) {
    if (model.empty()) return;
    const size_t from = Below(model.size()), stop = Below(model.size());
    size_t i = from;
    l.ForEach(from, [&](size_t at, std::string_view e) {
      EXPECT_EQ(at, i);
      EXPECT_EQ(e, model[at]);
      return ++i <= stop;
    });
    ASSERT_EQ(i, std::max(from, stop) + 1) << Trace();
    size_t j = from + 1;
    l.ForEachReverse(from, [&](size_t at, std::string_view e) {
      EXPECT_EQ(at, j - 1);
      EXPECT_EQ(e, model[at]);
      --j;
      return at > stop / 2;
    });
    ASSERT_EQ(j, std::min(from, stop / 2)) << Trace();
  }

  // LPOS's walks: the indexes equal to x among `limit` elements from `from` on (or back).
  void ExpectMatches(const List& l, const Model& model, const std::string& x) {
    if (model.empty()) return;
    const size_t from = Below(model.size()), limit = 1 + Below(model.size());
    std::vector<size_t> want, got;
    for (size_t i = from; i < model.size() && i - from < limit; ++i) {
      if (model[i] == x) want.push_back(i);
    }
    l.ForEachMatch(Needle(x), from, limit, [&](size_t i) { return got.push_back(i), true; });
    ASSERT_EQ(got, want) << x << "; " << Trace();
    want.clear();
    got.clear();
    for (size_t i = from + 1; i-- > 0 && from - i < limit;) {
      if (model[i] == x) want.push_back(i);
    }
    l.ForEachMatchReverse(Needle(x), from, limit, [&](size_t i) { return got.push_back(i), true; });
    ASSERT_EQ(got, want) << x << "; " << Trace();
    const auto first = std::find(model.begin(), model.end(), x);
    ASSERT_EQ(l.Find(x), first == model.end() ? -1 : first - model.begin()) << x << Trace();
  }
};

TEST_F(ListTest, RandomOperationsMatchTheModel) {
  List l;
  Model model;
  for (int op = 0; op < 20000; ++op) {
    const bool growing = (op / 2000) % 2 == 0;  // phases of growth and of shrinking
    const std::string x = RandomElement();
    switch (Below(12)) {
      case 0:
      case 1:
        for (uint64_t k = growing ? 1 + Below(150) : 1; k > 0; --k) {
          const std::string e = RandomElement();
          l.PushBack(e);
          model.push_back(e);
        }
        break;
      case 2:
      case 3:
        for (uint64_t k = growing ? 1 + Below(150) : 1; k > 0; --k) {
          const std::string e = RandomElement();
          l.PushFront(e);
          model.push_front(e);
        }
        break;
      case 4:
        for (uint64_t k = growing ? 1 : 1 + Below(150); k > 0 && !model.empty(); --k) {
          l.PopFront();
          model.pop_front();
        }
        break;
      case 5:
        for (uint64_t k = growing ? 1 : 1 + Below(150); k > 0 && !model.empty(); --k) {
          if (OneIn(2)) {
            l.PopBack();
          } else {
            l.PopBack([&](std::string_view e) { EXPECT_EQ(e, model.back()); });
          }
          model.pop_back();
        }
        break;
      case 6:  // LSET
        if (!model.empty()) {
          const size_t i = Below(model.size());
          l.Set(i, x);
          model[i] = x;
        }
        break;
      case 7: {  // LINSERT: one entry shifts per chunk towards the nearer end
        const size_t i = Below(model.size() + 1);
        l.Insert(i, x);
        model.insert(model.begin() + static_cast<ptrdiff_t>(i), x);
        break;
      }
      case 8:  // LTRIM
        if (!model.empty() && !growing) {
          const size_t front = Below(model.size() / 8 + 1), back = Below(model.size() / 8 + 1);
          l.TrimFront(front);
          model.erase(model.begin(), model.begin() + static_cast<ptrdiff_t>(front));
          const size_t b = std::min(back, model.size());
          l.TrimBack(b);
          model.erase(model.end() - static_cast<ptrdiff_t>(b), model.end());
        }
        break;
      case 9: {  // LREM: from the head, from the tail, or all
        const int64_t count = static_cast<int64_t>(Below(5)) - 2;
        size_t want = 0;
        if (count >= 0) {
          for (auto it = model.begin(); it != model.end();) {
            if (*it == x && (count == 0 || want < static_cast<size_t>(count))) {
              it = model.erase(it);
              ++want;
            } else {
              ++it;
            }
          }
        } else {
          for (size_t i = model.size(); i-- > 0 && want < static_cast<size_t>(-count);) {
            if (model[i] == x) {
              model.erase(model.begin() + static_cast<ptrdiff_t>(i));
              ++want;
            }
          }
        }
        ASSERT_EQ(l.Remove(x, count), want) << x << " count " << count << "; " << Trace();
        break;
      }
      case 10:
        ExpectMatches(l, model, OneIn(2) || model.empty() ? x : model[Below(model.size())]);
        break;
      default:
        ExpectWalks(l, model);
    }
    ASSERT_EQ(l.size(), model.size()) << Trace();
    if (op % 500 == 0) {
      ExpectSame(l, model);
      ASSERT_EQ(l.MemUsage(), sizeof(List) + Allocated()) << "MemUsage is exact; " << Trace();
    }
  }
  ExpectSame(l, model);
  while (!model.empty()) {  // down to nothing from both ends
    l.PopFront();
    model.pop_front();
    if (model.empty()) break;
    l.PopBack();
    model.pop_back();
  }
  ExpectSame(l, model);
  EXPECT_EQ(l.MemUsage(), sizeof(List) + Allocated()) << Trace();
}

TEST_F(ListTest, CopiesAreEqualAndIndependent) {
  List l;
  Model model;
  for (int i = 0; i < 5000; ++i) {
    const std::string e = RandomElement();
    if (i % 3 == 0) {
      l.PushFront(e);
      model.push_front(e);
    } else {
      l.PushBack(e);
      model.push_back(e);
    }
  }
  List* copy = l.Clone();
  ExpectSame(*copy, model);
  copy->PopFront();
  copy->Set(0, "changed");
  vsl::Delete(copy);  // the copy owned its chunks and long strings
  ExpectSame(l, model);
  EXPECT_EQ(l.MemUsage(), sizeof(List) + Allocated()) << Trace();
}

}  // namespace
}  // namespace vessel::ds
