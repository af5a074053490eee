// The module ABI, frozen: every vsl_api slot's offset and signature, the size and layout of every
// public struct, the constants, VSL_HAS on tables of other sizes, the host's table itself, and
// the C compiler's view of the same header (header_c99.c, built with -std=c99 -pedantic-errors).
#include <cstddef>
#include <cstring>
#include <iterator>
#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"
#include "host/config/config.h"
#include "host/engine/abi_sizes.h"
#include "host/engine/engine.h"
#include "host/modules/loader.h"
#include "vessel/module.h"
#include "vessel/module.hpp"

extern "C" {
void vsl_c99_check_signatures(const vsl_api* a);
int vsl_c99_has(const vsl_api* api, int which);
const vsl_manifest* vsl_c99_manifest(void);
}

namespace {

// ---- compile time: layout, types, constants ----

static_assert(sizeof(void*) == 8 && sizeof(size_t) == 8, "the frozen layout is LP64's");

#define VSL_FROZEN_SIZE(type, bytes) static_assert(sizeof(type) == (bytes), #type " changed size");
#define VSL_FROZEN_FIELD(type, field, offset, ftype)                           \
  static_assert(offsetof(type, field) == (offset), #type "." #field " moved"); \
  static_assert(std::is_same_v<decltype(type::field), ftype>, #type "." #field " changed type");
#define VSL_FROZEN_SLOT(slot, offset, ret, params)                               \
  static_assert(offsetof(vsl_api, slot) == (offset), "vsl_api." #slot " moved"); \
  static_assert(std::is_same_v<decltype(vsl_api::slot), ret(*) params>,          \
                "vsl_api." #slot " changed signature");
#include "abi_frozen.inc"
#undef VSL_FROZEN_SIZE
#undef VSL_FROZEN_FIELD
#undef VSL_FROZEN_SLOT

// The size of vsl_api at each released minor: appending a slot without bumping VSL_ABI_MINOR, or
// bumping it without recording the new size here, fails to compile.
constexpr size_t kApiSizeAtMinor[] = {
    344,  // 1.0
    352,  // 1.1: setting_int64
    368,  // 1.2: key_type_name, key_visit (and vsl_type_desc.visit)
    376,  // 1.3: reply_double_text (and vsl_type_desc.next_due, expire_due)
    384,  // 1.4: notify (and vsl_command_desc.acl_categories)
    408,  // 1.5: write_i64, read_i64, propagate (and vsl_type_desc.rdb_name)
    432,  // 1.6: value_size_limit, may_allocate, add_changes (and the args and type flags)
    496,  // 1.7: block_ex, block_state, the RDB slots (and rdb_type, command containers)
    504,  // 1.8: in_script
};
static_assert(VSL_ABI_MAJOR == 1);
static_assert(std::size(kApiSizeAtMinor) == VSL_ABI_MINOR + 1, "record the new minor's size");
static_assert(sizeof(vsl_api) == kApiSizeAtMinor[VSL_ABI_MINOR], "a new slot bumps VSL_ABI_MINOR");

// Every slot is a pointer, so an older table ends exactly at a slot boundary.
static_assert(offsetof(vsl_api, register_type) == 8 && sizeof(vsl_api) % sizeof(void*) == 0);

// Status codes, flags and markers cross the boundary as numbers: they never change.
static_assert(VSL_OK == 0 && VSL_EMPTY == 1 && VSL_WRONGTYPE == 2 && VSL_ERR == -1 &&
              VSL_ENOTSUP == -2 && VSL_LEN_DEFERRED == -1);
static_assert(VSL_MANIFEST_MAGIC == 0x4D4C5356u);
static_assert(std::string_view(VSL_MANIFEST_SECTION) == "vsl_manifest");
static_assert(std::string_view(VSL_INIT_SYMBOL) == "vsl_module_init");
static_assert(VSL_KS_RO == 0x1 && VSL_KS_RW == 0x2 && VSL_KS_OW == 0x4 && VSL_KS_RM == 0x8 &&
              VSL_KS_ACCESS == 0x10 && VSL_KS_UPDATE == 0x20 && VSL_KS_INSERT == 0x40 &&
              VSL_KS_DELETE == 0x80 && VSL_KS_KEYNUM == 0x100 && VSL_KS_INCOMPLETE == 0x200 &&
              VSL_KS_VARIABLE_FLAGS == 0x400);
static_assert(VSL_KS_ALL_FLAGS == 0x7FF, "a new key spec flag is a minor bump; update this");
static_assert(VSL_CMD_WRITE == 1 && VSL_CMD_READONLY == 2 && VSL_CMD_FAST == 4 &&
              VSL_CMD_DENYOOM == 8 && VSL_CMD_BLOCKING == 16 && VSL_CMD_NO_KEYS == 32 &&
              VSL_CMD_ADMIN == 64 && VSL_CMD_NOSCRIPT == 128);
static_assert(VSL_CMD_ALL_FLAGS == 0xFF, "a new command flag is a minor bump; update this");
static_assert(VSL_SET_KEEPTTL == 1);
static_assert(VSL_ARG_STRING == 0 && VSL_ARG_INTEGER == 1 && VSL_ARG_DOUBLE == 2 &&
              VSL_ARG_KEY == 3 && VSL_ARG_PATTERN == 4 && VSL_ARG_UNIX_TIME == 5 &&
              VSL_ARG_PURE_TOKEN == 6 && VSL_ARG_ONEOF == 7 && VSL_ARG_BLOCK == 8);
static_assert(VSL_ARG_OPTIONAL == 1 && VSL_ARG_MULTIPLE == 2 && VSL_ARG_MULTIPLE_TOKEN == 4);
static_assert(VSL_ARG_ALL_FLAGS == 0x7, "a new argument flag is a minor bump; update this");
static_assert(VSL_TYPE_NOT_PERSISTED == 1);
static_assert(VSL_TYPE_ALL_FLAGS == 0x1, "a new type flag is a minor bump; update this");
static_assert(VSL_BLOCK_EVERY_WRITE == 1 && VSL_BLOCK_KEY_GONE == 2);
static_assert(VSL_BLOCK_ALL_FLAGS == 0x3, "a new block flag is a minor bump; update this");

// The host's table of released struct sizes (host/engine/abi_sizes.h) grows in order and ends
// with this header's size: a struct that grows records its new size at the new minor.
template <size_t N>
constexpr bool SizesInOrder(const vessel::engine::abi::ReleasedSize (&s)[N], size_t current) {
  for (size_t i = 1; i < N; ++i)
    if (s[i].minor < s[i - 1].minor || s[i].size <= s[i - 1].size) return false;
  return s[N - 1].size == current && s[N - 1].minor <= VSL_ABI_MINOR;
}
namespace abi = vessel::engine::abi;
static_assert(SizesInOrder(abi::kManifestSizes, sizeof(vsl_manifest)));
static_assert(SizesInOrder(abi::kKeySpecSizes, sizeof(vsl_keyspec)));
static_assert(SizesInOrder(abi::kCommandDescSizes, sizeof(vsl_command_desc)));
static_assert(SizesInOrder(abi::kTypeDescSizes, sizeof(vsl_type_desc)));
static_assert(SizesInOrder(abi::kCommandArgSizes, sizeof(vsl_command_arg)));
// (1.7 grew vsl_type_desc alone; vsl_command_desc's last size is 1.6's; 1.8 grew vsl_api alone.)
static_assert(abi::kCommandDescSizes[std::size(abi::kCommandDescSizes) - 1].minor == 6 &&
                  abi::kTypeDescSizes[std::size(abi::kTypeDescSizes) - 1].minor == 7,
              "a struct that grew records its new size at the new minor");
static_assert(VSL_LOG_DEBUG == 0 && VSL_LOG_INFO == 1 && VSL_LOG_WARN == 2 && VSL_LOG_ERROR == 3);
static_assert(std::is_same_v<vsl_cmd_fn, int (*)(vsl_ctx*, const vsl_slice*, int)>);
static_assert(std::is_same_v<vsl_visit_fn, int (*)(void*, const char*, size_t, double)>);
static_assert(std::is_same_v<vsl_init_fn, int (*)(const vsl_api*, vsl_module*, const vsl_slice*,
                                                  size_t, char*, size_t)>);

// ---- run time ----

// Every released size in the host's table is where a frozen field of that struct ends (padded to
// the struct's alignment): a size cut inside a field was never a release.
TEST(ReleasedSizes, EndOnFrozenFields) {
  std::map<std::string, std::set<size_t>> ends;
  auto end = [](size_t offset, size_t size, size_t align) {
    return (offset + size + align - 1) / align * align;
  };
#define VSL_FROZEN_SIZE(type, bytes)
#define VSL_FROZEN_FIELD(type, field, offset, ftype) \
  ends[#type].insert(end(offset, sizeof(ftype), alignof(type)));
#define VSL_FROZEN_SLOT(slot, offset, ret, params)
#include "abi_frozen.inc"
#undef VSL_FROZEN_SIZE
#undef VSL_FROZEN_FIELD
#undef VSL_FROZEN_SLOT
  const std::pair<const char*, std::span<const abi::ReleasedSize>> tables[] = {
      {"vsl_manifest", abi::kManifestSizes},
      {"vsl_keyspec", abi::kKeySpecSizes},
      {"vsl_command_desc", abi::kCommandDescSizes},
      {"vsl_type_desc", abi::kTypeDescSizes},
      {"vsl_command_arg", abi::kCommandArgSizes}};
  for (const auto& [name, sizes] : tables) {
    for (const abi::ReleasedSize& r : sizes)
      EXPECT_TRUE(ends[name].contains(r.size))
          << name << " size " << r.size << " (ABI 1." << r.minor << ") ends inside a field";
  }
}

// The registry's verdict on sizes: released ones pass, others name what the host knows, and a
// newer SDK's longer struct passes only with its unknown tail zero.
TEST(ReleasedSizes, CheckStructSize) {
  alignas(8) unsigned char buf[sizeof(vsl_type_desc) + 16] = {};
  for (const abi::ReleasedSize& r : abi::kTypeDescSizes)
    EXPECT_EQ(abi::CheckStructSize("vsl_type_desc", abi::kTypeDescSizes, sizeof(vsl_type_desc), buf,
                                   r.size),
              "");
  EXPECT_EQ(
      abi::CheckStructSize("vsl_type_desc", abi::kTypeDescSizes, sizeof(vsl_type_desc), buf, 96),
      "vsl_type_desc struct_size 96 matches no SDK release; known sizes: 80 (ABI 1.0), 88 "
      "(ABI 1.2), 104 (ABI 1.3), 112 (ABI 1.5), 128 (ABI 1.5), 136 (ABI 1.6), 152 (ABI 1.7)");
  EXPECT_EQ(abi::CheckStructSize("vsl_type_desc", abi::kTypeDescSizes, sizeof(vsl_type_desc), buf,
                                 sizeof(buf)),
            "");
  buf[sizeof(vsl_type_desc) + 15] = 1;
  EXPECT_EQ(abi::CheckStructSize("vsl_type_desc", abi::kTypeDescSizes, sizeof(vsl_type_desc), buf,
                                 sizeof(buf)),
            "vsl_type_desc struct_size " + std::to_string(sizeof(buf)) +
                " is from a newer SDK and sets fields this host (ABI 1." +
                std::to_string(VSL_ABI_MINOR) + ") does not know");
}

const vsl_api* HostApi() {
  static vessel::engine::Engine* engine = new vessel::engine::Engine(vessel::config::Defaults());
  return engine->api();
}

// The host's table as a module sees it: its own size and version, and every slot filled.
TEST(HostApi, DescribesItselfAndFillsEverySlot) {
  const vsl_api* api = HostApi();
  EXPECT_EQ(api->struct_size, sizeof(vsl_api));
  EXPECT_EQ(api->abi_major, VSL_ABI_MAJOR);
  EXPECT_EQ(api->abi_minor, VSL_ABI_MINOR);
  for (size_t off = offsetof(vsl_api, register_type); off < sizeof(vsl_api); off += sizeof(void*)) {
    void* slot;
    std::memcpy(&slot, reinterpret_cast<const char*>(api) + off, sizeof(slot));
    EXPECT_NE(slot, nullptr) << "vsl_api slot at offset " << off << " is null";
  }
  vsl_c99_check_signatures(api);  // links: the C side agrees on the symbol and types
}

// A table truncated to end just before or just after each slot, as an older host's would.
TEST(VslHas, EverySlotAtItsBoundary) {
  vsl_api t = *HostApi();
#define VSL_FROZEN_SIZE(type, bytes)
#define VSL_FROZEN_FIELD(type, field, offset, ftype)
#define VSL_FROZEN_SLOT(slot, offset, ret, params)                         \
  t.struct_size = (offset);                                                \
  EXPECT_FALSE(VSL_HAS(&t, slot)) << #slot " in a table ending before it"; \
  t.struct_size = (offset) + sizeof(void*) - 1;                            \
  EXPECT_FALSE(VSL_HAS(&t, slot)) << #slot " in a table ending inside it"; \
  t.struct_size = (offset) + sizeof(void*);                                \
  EXPECT_TRUE(VSL_HAS(&t, slot)) << #slot " in a table ending after it";
#include "abi_frozen.inc"
#undef VSL_FROZEN_SIZE
#undef VSL_FROZEN_FIELD
#undef VSL_FROZEN_SLOT
}

TEST(VslHas, TruncatedCopyOfTheHostTable) {
  // An ABI 1.0-style host that stopped after key_modified: the reply slots are absent.
  alignas(vsl_api) unsigned char buf[sizeof(vsl_api)];
  std::memcpy(buf, HostApi(), sizeof(vsl_api));
  auto* t = reinterpret_cast<vsl_api*>(buf);
  t->struct_size = offsetof(vsl_api, reply_null);
  EXPECT_TRUE(VSL_HAS(t, register_type));
  EXPECT_TRUE(VSL_HAS(t, key_modified));
  EXPECT_FALSE(VSL_HAS(t, reply_null));
  EXPECT_FALSE(VSL_HAS(t, read_bytes));
  // C computes the same answers from the same macro.
  EXPECT_EQ(vsl_c99_has(t, 0), 1);
  EXPECT_EQ(vsl_c99_has(t, 1), 0);
  EXPECT_EQ(vsl_c99_has(t, 2), 0);
  t->struct_size = 0;
  EXPECT_FALSE(VSL_HAS(t, register_type));
  const vsl_api* none = nullptr;
  EXPECT_FALSE(VSL_HAS(none, alloc));
  EXPECT_EQ(vsl_c99_has(nullptr, 0), 0);
}

TEST(VslHas, NewerHostWithMoreSlots) {
  // A newer host's table is longer than this header knows: every known slot is present.
  std::vector<unsigned char> buf(sizeof(vsl_api) + 8 * sizeof(void*));
  std::memcpy(buf.data(), HostApi(), sizeof(vsl_api));
  auto* t = reinterpret_cast<vsl_api*>(buf.data());
  t->struct_size = static_cast<uint32_t>(buf.size());
  t->abi_minor = VSL_ABI_MINOR + 8;
  EXPECT_TRUE(VSL_HAS(t, read_bytes));
  EXPECT_EQ(vsl_c99_has(t, 2), 1);
}

// The C++ layer refuses a table missing a slot it calls, or of another major.
TEST(ModuleHpp, InitChecksTheTable) {
  vsl_api t = *HostApi();
  char err[64] = {};
  t.struct_size = offsetof(vsl_api, read_bytes);
  EXPECT_FALSE(vsl::Init(&t, err, sizeof(err)));
  EXPECT_STREQ(err, "host API table too old");
  t = *HostApi();
  t.abi_major = VSL_ABI_MAJOR + 1;
  EXPECT_FALSE(vsl::Init(&t, err, sizeof(err)));
  EXPECT_FALSE(vsl::Init(nullptr, err, sizeof(err)));
  EXPECT_TRUE(vsl::Init(HostApi(), err, sizeof(err)));
  EXPECT_EQ(vsl::g_api, HostApi());
}

// The manifest a C99 translation unit laid out with VSL_MODULE_MIN_MINOR reads back from the ELF
// file (this test binary) byte for byte as C++ sees it.
TEST(Manifest, C99LayoutReadsBackFromTheElfFile) {
  const vsl_manifest* c = vsl_c99_manifest();
  EXPECT_EQ(c->magic, VSL_MANIFEST_MAGIC);
  EXPECT_EQ(c->struct_size, sizeof(vsl_manifest));
  EXPECT_EQ(c->abi_major, VSL_ABI_MAJOR);
  EXPECT_EQ(c->min_abi_minor, 0);
  EXPECT_STREQ(c->name, "c99check");
  EXPECT_STREQ(c->version, "1.0.0");
  vsl_manifest m;
  std::string error;
  ASSERT_TRUE(vessel::modules::ReadManifest("/proc/self/exe", &m, &error)) << error;
  EXPECT_EQ(std::memcmp(&m, c, sizeof(m)), 0);
  EXPECT_EQ(vessel::modules::CheckAbi(m), "");
}

}  // namespace
