/* vessel/module.h as a C99 compiler sees it: built with -std=c99 -pedantic-errors -Wall -Wextra
 * -Werror (tests/sdk/CMakeLists.txt), it uses every macro of the header, checks the frozen layout
 * of abi_frozen.inc at compile time and the slot signatures by assignment, and exports two
 * functions abi_test.cc calls to compare C's view with C++'s at run time.
 */
#include "vessel/module.h"

/* A C99 static assertion: an array of negative size does not compile. */
#define C99_ASSERT(name, cond) typedef char c99_assert_##name[(cond) ? 1 : -1]

#define VSL_FROZEN_SIZE(type, bytes) C99_ASSERT(size_##type, sizeof(type) == (bytes));
#define VSL_FROZEN_FIELD(type, field, offset, ftype) \
  C99_ASSERT(offset_##type##_##field,                \
             offsetof(type, field) == (offset) && sizeof(((type*)0)->field) == sizeof(ftype));
#define VSL_FROZEN_SLOT(slot, offset, ret, params) \
  C99_ASSERT(slot_##slot, offsetof(vsl_api, slot) == (offset));
#include "abi_frozen.inc"
#undef VSL_FROZEN_SIZE
#undef VSL_FROZEN_FIELD
#undef VSL_FROZEN_SLOT

/* Constants are ABI too. */
C99_ASSERT(status_codes, VSL_OK == 0 && VSL_EMPTY == 1 && VSL_WRONGTYPE == 2 && VSL_ERR == -1 &&
                             VSL_ENOTSUP == -2 && VSL_LEN_DEFERRED == -1);
C99_ASSERT(cmd_flags, VSL_CMD_WRITE == 1 && VSL_CMD_NO_KEYS == 32 && VSL_CMD_NOSCRIPT == 128 &&
                          VSL_CMD_ALL_FLAGS == 255);
C99_ASSERT(ks_flags, VSL_KS_RO == 1 && VSL_KS_KEYNUM == 0x100 && VSL_KS_ALL_FLAGS == 0x7FF);
C99_ASSERT(manifest_magic, VSL_MANIFEST_MAGIC == 0x4D4C5356u && sizeof(VSL_MANIFEST_SECTION) == 13);

/* The manifest macro at file scope, as a module writes it. */
VSL_MODULE_MIN_MINOR("c99check", "1.0.0", 0);

/* Every slot has the signature abi_frozen.inc records: an assignment from another function
 * pointer type is a constraint violation, an error under -pedantic-errors. */
void vsl_c99_check_signatures(const vsl_api* a) {
#define VSL_FROZEN_SIZE(type, bytes)
#define VSL_FROZEN_FIELD(type, field, offset, ftype)
#define VSL_FROZEN_SLOT(slot, offset, ret, params) \
  {                                                \
    ret(*p) params = a->slot;                      \
    (void)p;                                       \
  }
#include "abi_frozen.inc"
#undef VSL_FROZEN_SIZE
#undef VSL_FROZEN_FIELD
#undef VSL_FROZEN_SLOT
}

/* VSL_HAS as C evaluates it: 1 when the table has a slot of `offset`, for the slots below. */
int vsl_c99_has(const vsl_api* api, int which) {
  switch (which) {
    case 0:
      return VSL_HAS(api, register_type);
    case 1:
      return VSL_HAS(api, reply_null);
    case 2:
      return VSL_HAS(api, read_bytes);
    default:
      return -1;
  }
}

/* The manifest as this C translation unit laid it out. */
const vsl_manifest* vsl_c99_manifest(void) { return &vsl_module_manifest; }
