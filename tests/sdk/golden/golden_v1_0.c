/* A golden module: written against the frozen SDK 1.0 header (golden/sdk-1.0/vessel/module.h,
 * never the current one) and built with it, so it has 1.0's struct sizes, 1.0's vsl_api slots and
 * min_abi_minor 0. golden_test.cc loads it into the current host: whatever the SDK grows, a
 * module built for 1.0 must keep loading and replying the same. Do not "update" this file to a
 * newer SDK; write another golden module for that version instead.
 *
 * The type "tally" holds an integer sum and the number of additions:
 *   GOLD.ADD key delta [delta ...]   adds every delta, creating the key; replies the new sum
 *   GOLD.GET key                     [sum, count], or a null array when the key does not exist
 *   GOLD.RESET key                   deletes the key; 1 if it existed, else 0
 */
#include <stdio.h>
#include <string.h>

#include "vessel/module.h"

#if VSL_ABI_MINOR != 0
#error "golden_v1_0.c must be built against the frozen SDK 1.0 header"
#endif

VSL_MODULE("golden_v1_0", "1.0.0");

static const struct vsl_api* api;
static const vsl_type* tally_type;

typedef struct Tally {
  int64_t sum;
  uint64_t count;
} Tally;

/* ---- the type ---- */

static Tally* TallyNew(int64_t sum, uint64_t count) {
  Tally* t = (Tally*)api->alloc(sizeof(Tally));
  if (t != NULL) {
    t->sum = sum;
    t->count = count;
  }
  return t;
}
static void TallyFree(vsl_type_ctx* c, void* v) {
  (void)c;
  api->free(v);
}
static size_t TallyMemUsage(vsl_type_ctx* c, const void* v) {
  (void)c;
  return api->usable_size((void*)v);
}
static void* TallyCopy(vsl_type_ctx* c, const void* v) {
  const Tally* t = (const Tally*)v;
  (void)c;
  return TallyNew(t->sum, t->count);
}
static int TallySerialize(vsl_type_ctx* c, const void* v, vsl_writer* w) {
  const Tally* t = (const Tally*)v;
  (void)c;
  api->write_u64(w, (uint64_t)t->sum);
  api->write_u64(w, t->count);
  return VSL_OK;
}
static void* TallyDeserialize(vsl_type_ctx* c, vsl_reader* r, uint32_t encver) {
  uint64_t sum, count;
  (void)c;
  if (encver != 1 || api->read_u64(r, &sum) != VSL_OK || api->read_u64(r, &count) != VSL_OK)
    return NULL;
  return TallyNew((int64_t)sum, count);
}
static const char* TallyEncoding(vsl_type_ctx* c, const void* v) {
  (void)c, (void)v;
  return "tally";
}

/* ---- commands ---- */

/* Looks the key up: VSL_OK (*out set, or NULL when there is no key) or VSL_WRONGTYPE, replied. */
static int Lookup(vsl_ctx* ctx, vsl_key* key, Tally** out) {
  void* v = NULL;
  const int rc = api->key_get(key, tally_type, &v);
  if (rc == VSL_WRONGTYPE) {
    api->reply_error(ctx, "WRONGTYPE", VSL_WRONGTYPE_MSG);
    return VSL_WRONGTYPE;
  }
  *out = rc == VSL_OK ? (Tally*)v : NULL;
  return VSL_OK;
}

/* GOLD.ADD key delta [delta ...] */
static int CmdGoldAdd(vsl_ctx* ctx, const vsl_slice* argv, int argc) {
  vsl_key* key = api->key_open(ctx, 0);
  Tally* t;
  int64_t sum;
  int i;
  if (Lookup(ctx, key, &t) != VSL_OK) return VSL_OK;
  sum = t != NULL ? t->sum : 0;
  for (i = 2; i < argc; ++i) { /* all deltas are checked before anything changes */
    int64_t d;
    if (api->parse_int64(argv[i].ptr, argv[i].len, &d) != VSL_OK) {
      api->reply_error(ctx, "ERR", "value is not an integer or out of range");
      return VSL_OK;
    }
    if ((d > 0 && sum > INT64_MAX - d) || (d < 0 && sum < INT64_MIN - d)) {
      api->reply_error(ctx, "ERR", "increment or decrement would overflow");
      return VSL_OK;
    }
    sum += d;
  }
  if (t == NULL) {
    t = TallyNew(sum, (uint64_t)(argc - 2));
    if (t == NULL || api->key_set(key, tally_type, t, 0) != VSL_OK) {
      if (t != NULL) api->free(t);
      api->reply_error(ctx, "ERR", "cannot store the value");
      return VSL_OK;
    }
  } else {
    t->sum = sum;
    t->count += (uint64_t)(argc - 2);
    api->key_modified(key);
  }
  api->reply_int64(ctx, sum);
  return VSL_OK;
}

/* GOLD.GET key */
static int CmdGoldGet(vsl_ctx* ctx, const vsl_slice* argv, int argc) {
  Tally* t;
  (void)argv, (void)argc;
  if (Lookup(ctx, api->key_open(ctx, 0), &t) != VSL_OK) return VSL_OK;
  if (t == NULL) {
    api->reply_null_array(ctx);
    return VSL_OK;
  }
  api->reply_array(ctx, 2);
  api->reply_int64(ctx, t->sum);
  api->reply_int64(ctx, (int64_t)t->count);
  return VSL_OK;
}

/* GOLD.RESET key */
static int CmdGoldReset(vsl_ctx* ctx, const vsl_slice* argv, int argc) {
  vsl_key* key = api->key_open(ctx, 0);
  Tally* t;
  (void)argv, (void)argc;
  if (Lookup(ctx, key, &t) != VSL_OK) return VSL_OK;
  api->reply_int64(ctx, t != NULL && api->key_delete(key) == 1 ? 1 : 0);
  return VSL_OK;
}

/* ---- registration, with 1.0's struct sizes ---- */

static const vsl_keyspec add_key[] = {
    {sizeof(vsl_keyspec), VSL_KS_RW | VSL_KS_UPDATE, 1, NULL, 0, 1, 0, 0, 0, NULL}};
static const vsl_keyspec get_key[] = {
    {sizeof(vsl_keyspec), VSL_KS_RO | VSL_KS_ACCESS, 1, NULL, 0, 1, 0, 0, 0, NULL}};
static const vsl_keyspec reset_key[] = {
    {sizeof(vsl_keyspec), VSL_KS_RW | VSL_KS_DELETE, 1, NULL, 0, 1, 0, 0, 0, NULL}};

#define ROW(...)                                                                    \
  {                                                                                 \
    .struct_size = sizeof(vsl_command_desc), .keyspec_stride = sizeof(vsl_keyspec), \
    .n_keyspecs = 1, .since = "1.0.0", .group = "module", __VA_ARGS__               \
  }

static const vsl_command_desc commands[] = {
    ROW(.name = "GOLD.ADD", .arity = -3, .flags = VSL_CMD_WRITE | VSL_CMD_DENYOOM | VSL_CMD_FAST,
        .keyspecs = add_key, .handler = CmdGoldAdd, .summary = "Adds to a tally.",
        .syntax = "key delta [delta ...]", .complexity = "O(N) where N is the number of deltas"),
    ROW(.name = "GOLD.GET", .arity = 2, .flags = VSL_CMD_READONLY | VSL_CMD_FAST,
        .keyspecs = get_key, .handler = CmdGoldGet, .summary = "Returns a tally's sum and count.",
        .syntax = "key", .complexity = "O(1)"),
    ROW(.name = "GOLD.RESET", .arity = 2, .flags = VSL_CMD_WRITE | VSL_CMD_FAST,
        .keyspecs = reset_key, .handler = CmdGoldReset, .summary = "Deletes a tally.",
        .syntax = "key", .complexity = "O(1)"),
};

VSL_EXPORT int vsl_module_init(const struct vsl_api* host, vsl_module* m, const vsl_slice* args,
                               size_t nargs, char* err, size_t errlen) {
  vsl_type_desc type;
  size_t i;
  (void)args, (void)nargs;
  if (!VSL_HAS(host, read_bytes)) { /* the last 1.0 slot */
    snprintf(err, errlen, "host API table too old");
    return VSL_ERR;
  }
  api = host;
  memset(&type, 0, sizeof(type));
  type.struct_size = sizeof(type);
  type.name = "tally";
  type.encoding_version = 1;
  type.free = TallyFree;
  type.mem_usage = TallyMemUsage;
  type.copy = TallyCopy;
  type.serialize = TallySerialize;
  type.deserialize = TallyDeserialize;
  type.encoding = TallyEncoding;
  if (api->register_type(m, &type, &tally_type) != VSL_OK) {
    snprintf(err, errlen, "cannot register the tally type");
    return VSL_ERR;
  }
  for (i = 0; i < sizeof(commands) / sizeof(commands[0]); ++i) {
    if (api->register_command(m, &commands[i]) != VSL_OK) {
      snprintf(err, errlen, "cannot register a command");
      return VSL_ERR;
    }
  }
  return VSL_OK;
}
