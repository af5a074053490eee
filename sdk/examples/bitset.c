/* bitset.c -- a complete Vessel module in plain C99: a "bitset" value type and five commands.
 *
 * The SDK's worked example, in the spirit of Redis's src/modules/hellotype.c. It shows what every
 * module does: the manifest (VSL_MODULE), the entry point (vsl_module_init), a value type with
 * all its callbacks, a command table with key specs, Redis-style errors, and memory taken from
 * the host allocator so that INFO, MEMORY USAGE and MEMORY STATS see it.
 *
 * A bitset is a growable array of bits, all zero until set:
 *
 *   BITS.SET key index              sets a bit; replies its previous value (0 or 1)
 *   BITS.CLEAR key index            clears a bit; replies its previous value
 *   BITS.GET key index              replies the bit (0 for a missing key or a bit past the end)
 *   BITS.COUNT key                  replies the number of bits set (0 for a missing key)
 *   BITS.UNION dest key [key ...]   stores the union of the keys in dest; replies its count
 *
 * Indexes go from 0 to max-bits - 1 (module argument "max-bits N", default 2^24: 2 MiB a value).
 * As with Redis's own containers, an empty bitset is never stored: BITS.CLEAR of the last bit
 * and a BITS.UNION of nothing delete the key, so EXISTS, TYPE and DBSIZE stay right.
 *
 * Build it (see sdk/README.md): cmake -S . -B build -DCMAKE_PREFIX_PATH=<sdk prefix>, or
 *   cc -std=c99 -shared -fPIC $(pkg-config --cflags vessel-sdk) -o bitset.so bitset.c
 * Load it: vessel-server --loadmodule ./bitset.so [max-bits N]
 */
#include <stdio.h>
#include <string.h>

#include "vessel/module.h"

/* The manifest: the host reads it from the .so file before running any of our code. */
VSL_MODULE("bitset", "1.0.0");

static const vsl_api* api;          /* the host's function table, set once by init */
static const vsl_type* bitset_type; /* our value type, from register_type */
static int64_t max_bits;            /* indexes go from 0 to max_bits - 1 */

#define BITSET_ENCODING_VERSION 1
#define BITSET_DEFAULT_BITS (INT64_C(1) << 24)
#define BITSET_LIMIT (INT64_C(1) << 32) /* the largest max-bits accepted (512 MiB a value) */

/* ------------------------------------------------------------------------------------------------
 * The value type. Everything a value owns comes from api->alloc, so the host accounts it to
 * this module. The header never moves once stored (the host holds its address): growing
 * reallocates only the words.
 * ---------------------------------------------------------------------------------------------- */

typedef struct bitset {
  uint64_t count;  /* bits set; never 0 in a stored value */
  uint64_t nwords; /* length of words */
  uint64_t* words; /* bit i is (words[i / 64] >> (i % 64)) & 1 */
} bitset;

/* A bitset of nwords zero words, or NULL when out of memory. */
static bitset* bitset_new(uint64_t nwords) {
  bitset* b = api->alloc(sizeof(*b));
  if (b == NULL) return NULL;
  b->count = 0;
  b->nwords = nwords;
  b->words = api->alloc((size_t)nwords * sizeof(uint64_t));
  if (b->words == NULL) {
    api->free(b);
    return NULL;
  }
  memset(b->words, 0, (size_t)nwords * sizeof(uint64_t));
  return b;
}

static int bitset_test(const bitset* b, uint64_t i) {
  return i / 64 < b->nwords && ((b->words[i / 64] >> (i % 64)) & 1u);
}

/* Makes room for bit i (< max_bits), doubling to amortize a run of growing indexes, but never
 * past max_bits. 0 when out of memory. */
static int bitset_reserve(bitset* b, uint64_t i) {
  uint64_t need = i / 64 + 1, n = b->nwords * 2, limit = ((uint64_t)max_bits + 63) / 64;
  uint64_t* words;
  if (need <= b->nwords) return 1;
  if (n < need) n = need;
  if (n > limit) n = limit;
  words = api->realloc(b->words, (size_t)n * sizeof(uint64_t));
  if (words == NULL) return 0;
  memset(words + b->nwords, 0, (size_t)(n - b->nwords) * sizeof(uint64_t));
  b->words = words;
  b->nwords = n;
  return 1;
}

static uint64_t popcount64(uint64_t x) {
  uint64_t n = 0;
  for (; x != 0; x &= x - 1) n++;
  return n;
}

static void bitset_free(vsl_type_ctx* tc, void* value) {
  bitset* b = value;
  (void)tc;
  api->free(b->words);
  api->free(b);
}

/* What the value owns, as the allocator sees it (MEMORY USAGE adds the key's own overhead). */
static size_t bitset_mem_usage(vsl_type_ctx* tc, const void* value) {
  const bitset* b = value;
  (void)tc;
  return api->usable_size((void*)b) + api->usable_size(b->words);
}

/* COPY source destination: a deep copy, or NULL (the host replies an error). */
static void* bitset_copy(vsl_type_ctx* tc, const void* value) {
  const bitset* b = value;
  bitset* c = bitset_new(b->nwords);
  (void)tc;
  if (c == NULL) return NULL;
  memcpy(c->words, b->words, (size_t)b->nwords * sizeof(uint64_t));
  c->count = b->count;
  return c;
}

/* Encoding 1: the word count, then each word (the host writes integers little-endian). */
static int bitset_serialize(vsl_type_ctx* tc, const void* value, vsl_writer* w) {
  const bitset* b = value;
  uint64_t i;
  (void)tc;
  api->write_u64(w, b->nwords);
  for (i = 0; i < b->nwords; i++) api->write_u64(w, b->words[i]);
  return VSL_OK;
}

/* The inverse of bitset_serialize; NULL on bad or truncated input, never a partial value. */
static void* bitset_deserialize(vsl_type_ctx* tc, vsl_reader* r, uint32_t encoding_version) {
  uint64_t nwords, i;
  bitset* b;
  (void)tc;
  if (encoding_version != BITSET_ENCODING_VERSION || api->read_u64(r, &nwords) != VSL_OK ||
      nwords == 0 || nwords > (uint64_t)BITSET_LIMIT / 64)
    return NULL;
  if ((b = bitset_new(nwords)) == NULL) return NULL;
  for (i = 0; i < nwords; i++) {
    if (api->read_u64(r, &b->words[i]) != VSL_OK) {
      bitset_free(tc, b);
      return NULL;
    }
    b->count += popcount64(b->words[i]);
  }
  if (b->count == 0) { /* an empty bitset is never stored, so never valid input */
    bitset_free(tc, b);
    return NULL;
  }
  return b;
}

/* How much work free() is: large values are freed off the hot path (UNLINK, FLUSHALL ASYNC). */
static size_t bitset_free_effort(vsl_type_ctx* tc, const void* value) {
  (void)tc;
  return (size_t)((const bitset*)value)->nwords;
}

static const char* bitset_encoding(vsl_type_ctx* tc, const void* value) {
  (void)tc;
  (void)value;
  return "dense"; /* OBJECT ENCODING */
}

/* ------------------------------------------------------------------------------------------------
 * Helpers shared by the commands. Each returns 0 after sending an error reply.
 * ---------------------------------------------------------------------------------------------- */

/* The bitset stored at the command's i-th declared key, or NULL in *out when there is none. The
 * host decides the type: another module's value is never handed to us, only VSL_WRONGTYPE. */
static int get_bitset(vsl_ctx* ctx, int i, bitset** out) {
  void* value = NULL;
  int rc = api->key_get(api->key_open(ctx, i), bitset_type, &value);
  if (rc == VSL_WRONGTYPE) {
    api->reply_error(ctx, "WRONGTYPE", VSL_WRONGTYPE_MSG);
    return 0;
  }
  *out = rc == VSL_OK ? value : NULL;
  return 1;
}

/* Parses a bit index with the host's strict integer rules (no spaces, no "+", no "007"). */
static int parse_index(vsl_ctx* ctx, vsl_slice arg, uint64_t* out) {
  int64_t v;
  if (api->parse_int64(arg.ptr, arg.len, &v) != VSL_OK || v < 0 || v >= max_bits) {
    api->reply_error(ctx, "ERR", "bit index is not an integer or out of range");
    return 0;
  }
  *out = (uint64_t)v;
  return 1;
}

static int reply_oom(vsl_ctx* ctx) { return api->reply_error(ctx, "OOM", "bitset: out of memory"); }

/* ------------------------------------------------------------------------------------------------
 * Commands. The host has already checked the arity and locked the declared keys; a handler sends
 * exactly one reply and returns VSL_OK.
 * ---------------------------------------------------------------------------------------------- */

/* BITS.SET key index */
static int CmdBitsSet(vsl_ctx* ctx, const vsl_slice* argv, int argc) {
  uint64_t i, have;
  bitset* b;
  int created = 0;
  (void)argc;
  if (!parse_index(ctx, argv[2], &i) || !get_bitset(ctx, 0, &b)) return VSL_OK;
  if (b != NULL && bitset_test(b, i)) return api->reply_int64(ctx, 1);
  /* The index, not the bytes the client sent, decides how much the value grows: under maxmemory
   * ask the host first (ABI 1.6; it evicts by its policy, or says no and we change nothing). */
  have = b != NULL ? b->nwords : 0;
  if (i / 64 + 1 > have && VSL_HAS(api, may_allocate) &&
      api->may_allocate(ctx, (i / 64 + 1 - have) * sizeof(uint64_t)) != VSL_OK)
    return api->reply_error(ctx, "OOM", VSL_OOM_MSG);
  if (b == NULL) {
    if ((b = bitset_new(i / 64 + 1)) == NULL) return reply_oom(ctx);
    created = 1;
  } else if (!bitset_reserve(b, i)) {
    return reply_oom(ctx);
  }
  b->words[i / 64] |= UINT64_C(1) << (i % 64);
  b->count++;
  if (created) {
    api->key_set(api->key_open(ctx, 0), bitset_type, b, 0); /* the host owns b from here */
  } else {
    api->key_modified(api->key_open(ctx, 0)); /* changed in place: tell WATCH */
  }
  return api->reply_int64(ctx, 0);
}

/* BITS.CLEAR key index */
static int CmdBitsClear(vsl_ctx* ctx, const vsl_slice* argv, int argc) {
  uint64_t i;
  bitset* b;
  (void)argc;
  if (!parse_index(ctx, argv[2], &i) || !get_bitset(ctx, 0, &b)) return VSL_OK;
  if (b == NULL || !bitset_test(b, i)) return api->reply_int64(ctx, 0);
  b->words[i / 64] &= ~(UINT64_C(1) << (i % 64));
  if (--b->count == 0) {
    api->key_delete(api->key_open(ctx, 0)); /* frees b through bitset_free */
  } else {
    api->key_modified(api->key_open(ctx, 0));
  }
  return api->reply_int64(ctx, 1);
}

/* BITS.GET key index */
static int CmdBitsGet(vsl_ctx* ctx, const vsl_slice* argv, int argc) {
  uint64_t i;
  bitset* b;
  (void)argc;
  if (!parse_index(ctx, argv[2], &i) || !get_bitset(ctx, 0, &b)) return VSL_OK;
  return api->reply_int64(ctx, b != NULL && bitset_test(b, i));
}

/* BITS.COUNT key */
static int CmdBitsCount(vsl_ctx* ctx, const vsl_slice* argv, int argc) {
  bitset* b;
  (void)argv;
  (void)argc;
  if (!get_bitset(ctx, 0, &b)) return VSL_OK;
  return api->reply_int64(ctx, b != NULL ? (int64_t)b->count : 0);
}

/* BITS.UNION dest key [key ...] */
static int CmdBitsUnion(vsl_ctx* ctx, const vsl_slice* argv, int argc) {
  int i, nkeys = api->key_count(ctx); /* key 0 is dest, then the sources */
  uint64_t nwords = 0, w;
  bitset *b, *u;
  (void)argv;
  (void)argc;
  for (i = 1; i < nkeys; i++) { /* check every source's type before changing anything */
    if (!get_bitset(ctx, i, &b)) return VSL_OK;
    if (b != NULL && b->nwords > nwords) nwords = b->nwords;
  }
  if (nwords == 0) { /* no source exists: the union is empty, so dest must not exist either */
    api->key_delete(api->key_open(ctx, 0));
    return api->reply_int64(ctx, 0);
  }
  if ((u = bitset_new(nwords)) == NULL) return reply_oom(ctx);
  for (i = 1; i < nkeys; i++) {
    get_bitset(ctx, i, &b);
    for (w = 0; b != NULL && w < b->nwords; w++) u->words[w] |= b->words[w];
  }
  for (w = 0; w < nwords; w++) u->count += popcount64(u->words[w]);
  /* dest may also be a source: it is replaced only now, after every source was read. */
  api->key_set(api->key_open(ctx, 0), bitset_type, u, 0);
  return api->reply_int64(ctx, (int64_t)u->count);
}

/* ------------------------------------------------------------------------------------------------
 * Registration: one row per command. The host derives the arity check, the key locks, COMMAND
 * INFO, COMMAND DOCS and COMMAND GETKEYS from these rows.
 * ---------------------------------------------------------------------------------------------- */

#define KS(flags_, begin_, last_)                                                   \
  {                                                                                 \
    .struct_size = sizeof(vsl_keyspec), .flags = (flags_), .begin_index = (begin_), \
    .last_key = (last_)                                                             \
  }

static const vsl_keyspec key1_read[] = {KS(VSL_KS_RO | VSL_KS_ACCESS, 1, 0)};
static const vsl_keyspec key1_insert[] = {KS(VSL_KS_RW | VSL_KS_ACCESS | VSL_KS_INSERT, 1, 0)};
static const vsl_keyspec key1_delete[] = {KS(VSL_KS_RW | VSL_KS_ACCESS | VSL_KS_DELETE, 1, 0)};
/* dest is overwritten without being read; the sources run from argv[2] to the last argument. */
static const vsl_keyspec union_keys[] = {KS(VSL_KS_OW | VSL_KS_UPDATE, 1, 0),
                                         KS(VSL_KS_RO | VSL_KS_ACCESS, 2, -1)};

/* One row per command with named fields, so the adjacent strings (summary, syntax, complexity)
 * cannot be swapped silently; CMD fills in what every row shares and KEYS the key specs. */
#define KEYS(keys_) .keyspecs = (keys_), .n_keyspecs = sizeof(keys_) / sizeof(vsl_keyspec)
#define CMD(...)                                                                    \
  {                                                                                 \
    .struct_size = sizeof(vsl_command_desc), .keyspec_stride = sizeof(vsl_keyspec), \
    .since = "1.0.0", .group = "module", __VA_ARGS__                                \
  }

/* clang-format off */
static const vsl_command_desc commands[] = {
    CMD(.name = "BITS.SET", .arity = 3, .flags = VSL_CMD_WRITE | VSL_CMD_DENYOOM | VSL_CMD_FAST,
        KEYS(key1_insert), .handler = CmdBitsSet, .summary = "Sets a bit, returning its old value.",
        .syntax = "key index", .complexity = "O(1) amortized"),
    CMD(.name = "BITS.CLEAR", .arity = 3, .flags = VSL_CMD_WRITE | VSL_CMD_FAST,
        KEYS(key1_delete), .handler = CmdBitsClear,
        .summary = "Clears a bit, returning its old value.", .syntax = "key index",
        .complexity = "O(1)"),
    CMD(.name = "BITS.GET", .arity = 3, .flags = VSL_CMD_READONLY | VSL_CMD_FAST,
        KEYS(key1_read), .handler = CmdBitsGet, .summary = "Returns the value of a bit.",
        .syntax = "key index", .complexity = "O(1)"),
    CMD(.name = "BITS.COUNT", .arity = 2, .flags = VSL_CMD_READONLY | VSL_CMD_FAST,
        KEYS(key1_read), .handler = CmdBitsCount, .summary = "Returns the number of bits set.",
        .syntax = "key", .complexity = "O(1)"),
    CMD(.name = "BITS.UNION", .arity = -3, .flags = VSL_CMD_WRITE | VSL_CMD_DENYOOM,
        KEYS(union_keys), .handler = CmdBitsUnion,
        .summary = "Stores the union of bitsets in destination, returning its count.",
        .syntax = "destination key [key ...]",
        .complexity = "O(N) where N is the total size of the sources"),
};
/* clang-format on */

/* The entry point, called once at startup on the main thread, after the manifest was accepted.
 * args are the module's arguments: from --loadmodule PATH ARGS... or [[modules]] args. */
VSL_EXPORT int vsl_module_init(const vsl_api* host, vsl_module* m, const vsl_slice* args,
                               size_t nargs, char* err, size_t errlen) {
  vsl_type_desc type;
  size_t i;
  if (!VSL_HAS(host, read_bytes)) { /* the last slot we call; see "Versioning" in the README */
    snprintf(err, errlen, "host API table too old");
    return VSL_ERR;
  }
  api = host;
  max_bits = BITSET_DEFAULT_BITS;
  if (nargs == 2 && args[0].len == 8 && memcmp(args[0].ptr, "max-bits", 8) == 0) {
    if (api->parse_int64(args[1].ptr, args[1].len, &max_bits) != VSL_OK || max_bits < 1 ||
        max_bits > BITSET_LIMIT) {
      snprintf(err, errlen, "max-bits must be an integer from 1 to %lld", (long long)BITSET_LIMIT);
      return VSL_ERR;
    }
  } else if (nargs != 0) {
    snprintf(err, errlen, "usage: bitset [max-bits N]");
    return VSL_ERR;
  }

  memset(&type, 0, sizeof(type)); /* fields we leave zero are optional callbacks */
  type.struct_size = sizeof(type);
  type.name = "bitset"; /* what TYPE prints */
  type.encoding_version = BITSET_ENCODING_VERSION;
  type.free = bitset_free;
  type.mem_usage = bitset_mem_usage;
  type.copy = bitset_copy;
  type.serialize = bitset_serialize;
  type.deserialize = bitset_deserialize;
  type.free_effort = bitset_free_effort;
  type.encoding = bitset_encoding;
  if (api->register_type(m, &type, &bitset_type) != VSL_OK) {
    snprintf(err, errlen, "cannot register type bitset");
    return VSL_ERR;
  }
  for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
    if (api->register_command(m, &commands[i]) != VSL_OK) {
      snprintf(err, errlen, "cannot register command %s", commands[i].name);
      return VSL_ERR;
    }
  }
  return VSL_OK;
}
