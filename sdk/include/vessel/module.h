/* The stable C ABI between the Vessel host and its modules: the only header a module includes.
 *
 * Compiles as C99 and as C++. Only fixed-width integers, opaque handles and plain structs cross
 * the boundary. The rules (see sdk/README.md):
 *   - vsl_api is append-only: a slot is never moved, removed or changed; a new slot bumps
 *     VSL_ABI_MINOR. VSL_HAS(api, slot) says whether the running host has it.
 *   - Every struct a module hands to the host starts with struct_size, so it can grow; the host
 *     reads a field only when struct_size covers it. struct_size must be the struct's size in a
 *     released SDK (or, from a newer SDK, larger with every field this host does not know left
 *     zero); any other size is refused. Unknown flag bits are refused.
 *   - The manifest (VSL_MODULE) is read from the .so file before any module code runs; a module
 *     needing a newer minor or another major is refused with a precise message.
 *
 * Threads: handlers run on any worker thread, concurrently, each under the locks of the keys it
 * declared. A handler must not block; it may only open the keys it declared.
 */
#ifndef VESSEL_MODULE_H_
#define VESSEL_MODULE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VSL_ABI_MAJOR 1
#define VSL_ABI_MINOR 8

#if defined(__GNUC__)
#define VSL_EXPORT __attribute__((visibility("default")))
#else
#define VSL_EXPORT
#endif

/* ---------------------------------------------------------------------------------------------
 * Basic types
 * ------------------------------------------------------------------------------------------- */

/* A borrowed byte string. Arguments are valid for the duration of the call only. */
typedef struct vsl_slice {
  const char* ptr;
  size_t len;
} vsl_slice;

typedef struct vsl_ctx vsl_ctx;           /* one command invocation */
typedef struct vsl_key vsl_key;           /* a declared, already locked key of the invocation */
typedef struct vsl_module vsl_module;     /* the module being initialised */
typedef struct vsl_type vsl_type;         /* a registered value type */
typedef struct vsl_type_ctx vsl_type_ctx; /* context of a type callback */
typedef struct vsl_writer vsl_writer;     /* serialization sink */
typedef struct vsl_reader vsl_reader;     /* serialization source */

/* Handle of an aggregate reply whose length is given later with reply_set_len. */
typedef struct vsl_agg {
  uint64_t id;
} vsl_agg;

/* Status codes. */
#define VSL_OK 0
#define VSL_EMPTY 1     /* key_get: the key does not exist */
#define VSL_WRONGTYPE 2 /* key_get: the key holds a value of another type */
#define VSL_ERR (-1)    /* misuse or failure; the host logs the reason */
#define VSL_ENOTSUP (-2)

#define VSL_LEN_DEFERRED (-1) /* reply_array/map/set: length given later with reply_set_len */

/* The standard WRONGTYPE reply, for reply_error(ctx, "WRONGTYPE", VSL_WRONGTYPE_MSG). */
#define VSL_WRONGTYPE_MSG "Operation against a key holding the wrong kind of value"
/* ABI 1.6: the standard reply of a command refused by may_allocate, for
 * reply_error(ctx, "OOM", VSL_OOM_MSG) (Redis's text). */
#define VSL_OOM_MSG "command not allowed when used memory > 'maxmemory'."

/* ---------------------------------------------------------------------------------------------
 * The manifest: static data describing the module, checked before any of its code runs.
 * Define it with VSL_MODULE("name", "1.2.3") in exactly one translation unit.
 * ------------------------------------------------------------------------------------------- */

#define VSL_MANIFEST_MAGIC 0x4D4C5356u /* "VSLM" */
#define VSL_MANIFEST_SECTION "vsl_manifest"

typedef struct vsl_manifest {
  uint32_t magic;         /* VSL_MANIFEST_MAGIC */
  uint32_t struct_size;   /* sizeof(vsl_manifest) as the module was built */
  uint16_t abi_major;     /* must equal the host's VSL_ABI_MAJOR */
  uint16_t min_abi_minor; /* the host must have at least this minor */
  uint32_t reserved;
  char name[48];    /* NUL-terminated module name, e.g. "lists" */
  char version[16]; /* NUL-terminated module version, e.g. "1.0.0" */
} vsl_manifest;

/* Places the manifest in its own ELF section, where the loader reads it from the file before
 * dlopen. min_minor defaults to the minor this header declares; a module that checks VSL_HAS
 * for newer slots may set a lower one with VSL_MODULE_MIN_MINOR. */
#ifdef __cplusplus
#define VSL_EXTERN_C extern "C"
#else
#define VSL_EXTERN_C
#endif
#define VSL_MODULE_MIN_MINOR(name_, version_, min_minor_)                        \
  VSL_EXTERN_C VSL_EXPORT const vsl_manifest vsl_module_manifest __attribute__(( \
      section(VSL_MANIFEST_SECTION), used, aligned(8))) = {                      \
      VSL_MANIFEST_MAGIC, sizeof(vsl_manifest), VSL_ABI_MAJOR, (min_minor_), 0, name_, version_}
#define VSL_MODULE(name_, version_) VSL_MODULE_MIN_MINOR(name_, version_, VSL_ABI_MINOR)

struct vsl_api;

/* The module's entry point, called once at startup on the main thread after the manifest was
 * accepted. args are the module's arguments from the config (valid for the call). Return VSL_OK,
 * or VSL_ERR with a message in err (errlen bytes, NUL-terminated) to stop startup. */
typedef int (*vsl_init_fn)(const struct vsl_api* api, vsl_module* m, const vsl_slice* args,
                           size_t nargs, char* err, size_t errlen);
#define VSL_INIT_SYMBOL "vsl_module_init"
/* Declared here so that a definition with another signature does not compile and the symbol is
 * exported even under -fvisibility=hidden. */
VSL_EXPORT int vsl_module_init(const struct vsl_api* api, vsl_module* m, const vsl_slice* args,
                               size_t nargs, char* err, size_t errlen);

/* ---------------------------------------------------------------------------------------------
 * Key specs (Redis 7 style): where the keys of a command are in its arguments.
 *
 * Begin search: the first key is at argv[begin_index]; or, with begin_keyword, the search for
 * the keyword starts at argv[begin_index] (from the end when begin_index < 0) and the first key
 * follows the keyword.
 * Find keys, range (default): keys from the first one to last_key (relative to the first key;
 *   -1 = the last argument, -2 = the one before, ...), every key_step arguments; with a negative
 *   last_key, limit > 1 keeps only the first 1/limit of them.
 * Find keys, keynum (flag VSL_KS_KEYNUM): the number of keys is at argv[begin + keynum_index],
 *   the first key at argv[begin + first_key], then every key_step arguments.
 * Examples: SMOVE = {RW @1}, {RW|INSERT @2}; SUNIONSTORE = {OW @1}, {RO @2, last_key -1};
 * MSET = {OW @1, last_key -1, key_step 2}; LMPOP = {RW|KEYNUM @1, keynum_index 0, first_key 1}.
 * ------------------------------------------------------------------------------------------- */

#define VSL_KS_RO 0x0001u             /* the key is read only */
#define VSL_KS_RW 0x0002u             /* read and modified */
#define VSL_KS_OW 0x0004u             /* overwritten: the old value is not read */
#define VSL_KS_RM 0x0008u             /* may be deleted */
#define VSL_KS_ACCESS 0x0010u         /* returns user data from the value */
#define VSL_KS_UPDATE 0x0020u         /* updates data in the value */
#define VSL_KS_INSERT 0x0040u         /* adds data: may wake clients blocked on the key */
#define VSL_KS_DELETE 0x0080u         /* removes data from the value */
#define VSL_KS_KEYNUM 0x0100u         /* find keys with keynum_index/first_key/key_step */
#define VSL_KS_INCOMPLETE 0x0200u     /* the spec may not find every key */
#define VSL_KS_VARIABLE_FLAGS 0x0400u /* the access flags depend on other arguments */
#define VSL_KS_ALL_FLAGS 0x07FFu

typedef struct vsl_keyspec {
  uint32_t struct_size;
  uint32_t flags;
  int32_t begin_index;
  const char* begin_keyword; /* NULL: begin at begin_index */
  int32_t last_key;          /* range: 0 = a single key */
  int32_t key_step;          /* range and keynum: 0 means 1 */
  int32_t limit;             /* range: 0 = no limit */
  int32_t keynum_index;      /* keynum */
  int32_t first_key;         /* keynum */
  const char* notes;         /* for COMMAND INFO; NULL = none */
} vsl_keyspec;

/* ---------------------------------------------------------------------------------------------
 * Commands
 * ------------------------------------------------------------------------------------------- */

#define VSL_CMD_WRITE (1ull << 0)
#define VSL_CMD_READONLY (1ull << 1)
#define VSL_CMD_FAST (1ull << 2)
#define VSL_CMD_DENYOOM (1ull << 3)
#define VSL_CMD_BLOCKING (1ull << 4)
#define VSL_CMD_NO_KEYS (1ull << 5)
#define VSL_CMD_ADMIN (1ull << 6)
#define VSL_CMD_NOSCRIPT (1ull << 7) /* for COMMAND INFO fidelity: not allowed in scripts */
#define VSL_CMD_ALL_FLAGS ((1ull << 8) - 1)

/* ABI 1.4: keyspace event classes of vsl_api.notify (Redis's NOTIFY_* values and letters of
 * notify-keyspace-events). */
#define VSL_NOTIFY_GENERIC (1 << 2) /* g: del, expire, rename_from, ... */
#define VSL_NOTIFY_STRING (1 << 3)  /* $ */
#define VSL_NOTIFY_LIST (1 << 4)    /* l */
#define VSL_NOTIFY_SET (1 << 5)     /* s */
#define VSL_NOTIFY_HASH (1 << 6)    /* h */
#define VSL_NOTIFY_ZSET (1 << 7)    /* z */
#define VSL_NOTIFY_STREAM (1 << 10) /* t */
#define VSL_NOTIFY_MODULE (1 << 13) /* d: a module's own types */

/* ABI 1.6: one argument of a command, for COMMAND DOCS (Redis 7's argument tree, which clients
 * such as redis-cli turn into hints). The types and flags are Redis's; a token is the literal word
 * before the value (COUNT in "[COUNT count]") or, for VSL_ARG_PURE_TOKEN, the word itself. ONEOF
 * and BLOCK have sub-arguments (n_subargs entries): the alternatives, or the parts in order.
 * Every entry of an array starts with its struct_size (the same in all). LPOS's
 * "key element [RANK rank] ..." is {.type = VSL_ARG_KEY, .name = "key"}, {.type = VSL_ARG_STRING,
 * .name = "element"}, {.type = VSL_ARG_INTEGER, .name = "rank", .token = "RANK", .flags =
 * VSL_ARG_OPTIONAL}, ... A command without args gets a tree the host derives from its syntax
 * string (sdk/README.md says how). */
#define VSL_ARG_STRING 0
#define VSL_ARG_INTEGER 1
#define VSL_ARG_DOUBLE 2
#define VSL_ARG_KEY 3 /* key_spec_index: the key spec that finds it */
#define VSL_ARG_PATTERN 4
#define VSL_ARG_UNIX_TIME 5
#define VSL_ARG_PURE_TOKEN 6 /* the token alone, no value */
#define VSL_ARG_ONEOF 7      /* exactly one of the sub-arguments */
#define VSL_ARG_BLOCK 8      /* the sub-arguments in order */

#define VSL_ARG_OPTIONAL (1u << 0)
#define VSL_ARG_MULTIPLE (1u << 1)       /* may repeat: "element [element ...]" */
#define VSL_ARG_MULTIPLE_TOKEN (1u << 2) /* with MULTIPLE: the token repeats too */
#define VSL_ARG_ALL_FLAGS 0x7u

typedef struct vsl_command_arg {
  uint32_t struct_size;
  uint32_t type;          /* VSL_ARG_* */
  const char* name;       /* required: "element", "count" */
  const char* token;      /* NULL = none; required for VSL_ARG_PURE_TOKEN */
  uint32_t flags;         /* VSL_ARG_OPTIONAL | VSL_ARG_MULTIPLE | VSL_ARG_MULTIPLE_TOKEN */
  int32_t key_spec_index; /* VSL_ARG_KEY: index into the command's key specs; ignored otherwise */
  const struct vsl_command_arg* subargs; /* ONEOF and BLOCK */
  uint32_t n_subargs;
  const char* summary; /* NULL = none */
  const char* since;
  const char* deprecated_since;
} vsl_command_arg;

/* A command handler. argv[0] is the command name as the client sent it. It must send exactly one
 * reply (or block, see vsl_api.block) and return VSL_OK; any other return value is logged.
 *
 * ABI 1.7: a descriptor without handler registers a container (as Redis's XGROUP or CONFIG):
 * arity -2, no flags, no key specs. Its subcommands follow as descriptors named "NAME|SUB"
 * ("XGROUP|CREATE"), each a command of its own whose arity counts from the container's name and
 * whose key specs index the whole argument list (XGROUP CREATE key: begin_index 2). The host
 * dispatches "NAME SUB ..." to the subcommand, answers an unknown one with Redis's error, and
 * shows them in COMMAND, COMMAND DOCS and ACL rules (+xgroup|create) as Redis does. A container
 * that gets no subcommand fails the load. */
typedef int (*vsl_cmd_fn)(vsl_ctx* ctx, const vsl_slice* argv, int argc);

typedef struct vsl_command_desc {
  uint32_t struct_size;
  const char* name; /* "LPUSH"; matched case-insensitively */
  int32_t arity;    /* Redis convention: N = exactly N arguments, -N = at least N */
  uint64_t flags;   /* VSL_CMD_* */
  const vsl_keyspec* keyspecs;
  uint32_t n_keyspecs;
  uint32_t keyspec_stride; /* sizeof(vsl_keyspec) as the module was built; 0 = that */
  vsl_cmd_fn handler;
  /* documentation for COMMAND DOCS (NULL = none) */
  const char* summary;
  const char* syntax; /* arguments after the name: "key element [element ...]" */
  const char* complexity;
  const char* since;
  const char* group; /* "list", "string", ... */
  const char* tips;  /* space separated COMMAND INFO tips, e.g. "nondeterministic_output" */
  /* ABI 1.4: the command's ACL categories besides those its flags imply (@write, @read, @fast or
   * @slow, @blocking, @admin and @dangerous), space separated, '@' optional: "@hash",
   * "@sortedset @geo". NULL: the group's category when it names one ("hash" -> @hash). The
   * module's own category (its name) may be named too; a command whose group names no Redis
   * category is in it anyway (see sdk/README.md). */
  const char* acl_categories;
  /* ABI 1.6: the command's arguments as COMMAND DOCS shows them (n_args entries; see
   * vsl_command_arg). NULL: the host derives them from syntax. */
  const struct vsl_command_arg* args;
  uint32_t n_args;
} vsl_command_desc;

/* ---------------------------------------------------------------------------------------------
 * Value types. Values are opaque to the host: it only stores the pointer and hands it back to
 * the callbacks of the type that created it. A value may be a tagged non-pointer.
 * ------------------------------------------------------------------------------------------- */

/* ABI 1.2: one element of a value, for read-only generic access (vsl_type_desc.visit,
 * vsl_api.key_visit). elem/len are the element's bytes, valid for the call only. score is the
 * element's score where the type has one (a sorted set's); types without scores pass 0. Return 0
 * to go on, nonzero to stop the walk. The callback must not touch the keyspace or the value.
 *
 * The order is the type's own: a list from head to tail, a set in no particular order, a sorted
 * set by ascending score (equal scores by member bytes), as Redis iterates them. A string is one
 * element (its bytes). A hash (ABI 1.5) is its fields in no particular order, each field followed
 * by its value as the next element; the value's score is the field's absolute expiry in unix ms
 * (0 when it has none), so a walk may include fields whose time has already passed. */
typedef int (*vsl_visit_fn)(void* ud, const char* elem, size_t len, double score);

typedef struct vsl_type_desc {
  uint32_t struct_size;
  const char* name; /* what TYPE prints: "list" */
  uint32_t encoding_version;
  void (*free)(vsl_type_ctx*, void* value);                        /* required */
  size_t (*mem_usage)(vsl_type_ctx*, const void* value);           /* required: bytes owned */
  void* (*copy)(vsl_type_ctx*, const void* value);                 /* COPY; NULL = unsupported */
  int (*serialize)(vsl_type_ctx*, const void* value, vsl_writer*); /* VSL_OK or VSL_ERR */
  void* (*deserialize)(vsl_type_ctx*, vsl_reader*, uint32_t encoding_version); /* NULL=bad */
  size_t (*free_effort)(vsl_type_ctx*, const void* value);   /* e.g. element count */
  const char* (*encoding)(vsl_type_ctx*, const void* value); /* OBJECT ENCODING; optional */
  /* ABI 1.2, optional: calls fn for every element in the type's order (see vsl_visit_fn) until
   * fn returns nonzero. Returns VSL_OK (all visited, or stopped by fn) or VSL_ERR. Runs under the
   * key's lock, read-only; lets the host and other modules read the value (ZUNIONSTORE over a
   * set, SORT, snapshots) without knowing its layout. */
  int (*visit)(vsl_type_ctx*, const void* value, vsl_visit_fn fn, void* ud);
  /* ABI 1.3, optional (both or neither): values whose parts expire on their own (hash fields
   * with a TTL). next_due returns the earliest time (unix ms) a part of the value expires, or -1
   * when none will; the host asks after every store (key_set) and in-place change (key_modified)
   * of the value and keeps the key in its active-expiry schedule for that time, so a value with
   * nothing expiring costs one call per write. expire_due removes in place (the value stays the
   * same pointer) the parts due at now_ms and returns how many it removed, setting *empty when
   * nothing is left; the host calls it from its active expiry cycle under the key's exclusive
   * lock, then deletes an empty value's key or reschedules the key with next_due. */
  int64_t (*next_due)(vsl_type_ctx*, const void* value);
  size_t (*expire_due)(vsl_type_ctx*, void* value, int64_t now_ms, int* empty);
  /* ABI 1.5, optional: the type's 9-character name in RDB files (Redis's module type name:
   * characters A-Z a-z 0-9 - _), which with encoding_version (at most 1023) makes the 64-bit id
   * of its RDB_TYPE_MODULE_2 records; serialize/deserialize then write and read the record's
   * module opcodes. Registration fails on an invalid name or a duplicate. NULL: the host derives
   * one from the type's name (its first 9 characters, others replaced by '_', padded with '_'). */
  const char* rdb_name;
  /* ABI 1.5, optional (with expire_due): the keyspace event of parts the host's active cycle
   * expired, fired once per value and cycle with class parts_expired_class (a VSL_NOTIFY_*),
   * then "del" when the value was left empty (Redis 7.4's "hexpired" for hash fields). NULL: no
   * event. */
  const char* parts_expired_event;
  int parts_expired_class;
  /* ABI 1.6: VSL_TYPE_* flags. */
  uint64_t flags;
  /* ABI 1.7, optional: the type is one of Redis's own data types and is saved in Redis's own RDB
   * encoding rather than as a module record, so RDB files, DUMP payloads and AOF bases cross with
   * redis-server (a stream: RDB_TYPE_STREAM_LISTPACKS_2 = 19). The host writes the type byte
   * rdb_type (and the key), then serialize writes the value with write_rdb_len, write_rdb_string
   * and write_raw. rdb_load_types has bit n set for each RDB type byte n (below 64) that
   * deserialize reads: it gets the byte as its encoding_version and reads with read_rdb_len,
   * read_rdb_string and read_raw. Registration fails on a byte the host reads itself (strings,
   * lists, sets, hashes, sorted sets, module records) or that another type claims. 0: module
   * records (rdb_name). */
  uint32_t rdb_type;
  uint64_t rdb_load_types;
} vsl_type_desc;

/* vsl_type_desc.flags (ABI 1.6) */
/* The type's values live in memory only. Without this flag serialize and deserialize are required
 * and registration fails without them. With it they may be NULL: SAVE, BGSAVE, the shutdown save
 * and the AOF rewrite leave its keys out (one warning per save names the types and the count),
 * DUMP of such a key is an error, and a restart loses its keys (commands the append-only file
 * recorded since its last rewrite still replay). A type registered by a module built against an
 * older SDK without both callbacks is treated as if it had this flag. */
#define VSL_TYPE_NOT_PERSISTED (1ull << 0)
#define VSL_TYPE_ALL_FLAGS ((1ull << 1) - 1)

/* vsl_api.block_ex flags (ABI 1.7) */
/* Every write to one of the keys re-runs this waiter, as it re-runs the first waiter the value can
 * serve: for readers that do not consume what they read (XREAD, XREADGROUP of different groups),
 * where serving one waiter leaves the data there for the next. */
#define VSL_BLOCK_EVERY_WRITE (1u << 0)
/* Deleting one of the keys, or storing a value of another type in it, re-runs this waiter too:
 * its handler finds the key gone and answers so (XREADGROUP: the stream no longer exists). */
#define VSL_BLOCK_KEY_GONE (1u << 1)
#define VSL_BLOCK_ALL_FLAGS 0x3u

/* Key opening modes follow the key spec: a key declared VSL_KS_RO opens read-only. */

/* vsl_api.set flags */
#define VSL_SET_KEEPTTL 0x1u /* keep the key's expiry (default: a new value has none) */

/* Log levels */
#define VSL_LOG_DEBUG 0
#define VSL_LOG_INFO 1
#define VSL_LOG_WARN 2
#define VSL_LOG_ERROR 3

/* ---------------------------------------------------------------------------------------------
 * The API table given to vsl_module_init. Append-only, forever.
 * ------------------------------------------------------------------------------------------- */

typedef struct vsl_api {
  uint32_t struct_size;
  uint16_t abi_major;
  uint16_t abi_minor;

  /* -- registration: only inside vsl_module_init -- */
  /* Registers a value type; *out receives its handle. Fails on a duplicate name. */
  int (*register_type)(vsl_module* m, const vsl_type_desc* desc, const vsl_type** out);
  /* Registers a command. Fails on a duplicate name, bad arity, unknown flag bits or key specs. */
  int (*register_command)(vsl_module* m, const vsl_command_desc* desc);

  /* -- keys: the i-th key the command's key specs found, in argument order (duplicates kept) -- */
  int (*key_count)(vsl_ctx* ctx);
  vsl_key* (*key_open)(vsl_ctx* ctx, int i); /* NULL when i is out of range */
  vsl_slice (*key_name)(vsl_key* key);
  /* OK with *out set, EMPTY (no key, or expired), or WRONGTYPE (another type's value). */
  int (*key_get)(vsl_key* key, const vsl_type* type, void** out);
  /* Stores value (the host takes ownership) replacing any old value, which is freed by its type
   * unless it is the same pointer (storing the current value again after changing it in place
   * is allowed; never realloc a stored value: if the block moves, the host would free the old
   * pointer a second time). flags: VSL_SET_KEEPTTL. Fails on a read-only key. */
  int (*key_set)(vsl_key* key, const vsl_type* type, void* value, uint32_t flags);
  int (*key_delete)(vsl_key* key);         /* 1 deleted, 0 did not exist, VSL_ERR read-only */
  int64_t (*key_expire_get)(vsl_key* key); /* absolute unix ms; -1 no expiry; -2 no key */
  /* Sets the absolute expiry; -1 removes it; a time not after now_ms deletes the key at once.
   * VSL_ERR when the key does not exist or is read-only. */
  int (*key_expire_set)(vsl_key* key, int64_t abs_ms);
  /* Reports an in-place change of the value (WATCH, blocked clients). key_set and key_delete
   * report themselves. */
  void (*key_modified)(vsl_key* key);

  /* -- replies: protocol neutral, encoded by the host for RESP2 or RESP3 -- */
  int (*reply_null)(vsl_ctx* ctx);       /* RESP2: $-1 */
  int (*reply_null_array)(vsl_ctx* ctx); /* RESP2: *-1 */
  int (*reply_bool)(vsl_ctx* ctx, int value);
  int (*reply_int64)(vsl_ctx* ctx, int64_t value);
  int (*reply_double)(vsl_ctx* ctx, double value);
  int (*reply_simple)(vsl_ctx* ctx, const char* s, size_t len);
  int (*reply_bulk)(vsl_ctx* ctx, const char* s, size_t len);
  int (*reply_verbatim)(vsl_ctx* ctx, const char* format3, const char* s, size_t len);
  /* code "ERR", "WRONGTYPE", ...; msg without the code. */
  int (*reply_error)(vsl_ctx* ctx, const char* code, const char* msg);
  vsl_agg (*reply_array)(vsl_ctx* ctx, int64_t len); /* len or VSL_LEN_DEFERRED */
  vsl_agg (*reply_map)(vsl_ctx* ctx, int64_t pairs);
  vsl_agg (*reply_set)(vsl_ctx* ctx, int64_t len);
  void (*reply_set_len)(vsl_ctx* ctx, vsl_agg agg, int64_t len);

  /* -- blocking -- */
  /* Parks the client on the command's keys instead of replying. The host re-runs the handler
   * (with the same arguments, under the same locks, on the client's own worker) when one of the
   * keys receives data, and once more when timeout_ms (0 = forever) expires. Returns VSL_OK when
   * parked; VSL_ERR when the client cannot block (inside MULTI, or the timeout expired): the
   * handler then sends its "nothing" reply. */
  int (*block)(vsl_ctx* ctx, int64_t timeout_ms);
  int (*in_transaction)(vsl_ctx* ctx);

  /* -- memory: the host allocator, accounted to the calling module -- */
  void* (*alloc)(size_t size);
  void* (*realloc)(void* ptr, size_t size);
  void (*free)(void* ptr);
  size_t (*usable_size)(const void* ptr);

  /* -- misc -- */
  int64_t (*now_ms)(vsl_ctx* ctx); /* the host clock, unix ms, cached per batch */
  int (*protocol)(vsl_ctx* ctx);   /* 2 or 3 */
  void (*log)(vsl_module* m, int level, const char* msg);
  /* Redis glob (* ? [a-z] [^a] \x); 1 when str matches. */
  int (*glob_match)(const char* pattern, size_t plen, const char* str, size_t slen, int nocase);
  /* Redis's strict integer and float parsing (no spaces, no leading zeros, no "+"); VSL_OK/ERR. */
  int (*parse_int64)(const char* s, size_t len, int64_t* out);
  int (*parse_double)(const char* s, size_t len, double* out);

  /* -- serialization, for type serialize/deserialize -- */
  void (*write_u64)(vsl_writer* w, uint64_t v);
  void (*write_double)(vsl_writer* w, double v);
  void (*write_bytes)(vsl_writer* w, const char* p, size_t len);
  int (*read_u64)(vsl_reader* r, uint64_t* v); /* VSL_OK, or VSL_ERR at end of input */
  int (*read_double)(vsl_reader* r, double* v);
  int (*read_bytes)(vsl_reader* r, vsl_slice* out); /* borrowed until the callback returns */

  /* ---- ABI 1.1 ---- */
  /* The integer value of a host setting by its CONFIG GET name ("proto-max-bulk-len",
   * "maxmemory", ...): VSL_OK with *out set, VSL_ERR when unknown or not an integer. */
  int (*setting_int64)(vsl_ctx* ctx, const char* name, int64_t* out);

  /* ---- ABI 1.2 ---- */
  /* The name TYPE prints for the key's value ("string", "list", "set", "zset", a module type's
   * name), or NULL when the key does not exist (or has expired). Valid while the server runs.
   * Lets a module accept values of another module's type, with key_visit. */
  const char* (*key_type_name)(vsl_key* key);
  /* Walks the key's value, whatever its type, with the type's visit callback (see
   * vsl_visit_fn): VSL_OK when walked (to the end, or until fn stopped it), VSL_EMPTY when the
   * key does not exist, VSL_ENOTSUP when the value's type has no visit callback. */
  int (*key_visit)(vsl_key* key, vsl_visit_fn fn, void* ud);

  /* ---- ABI 1.3 (and vsl_type_desc.next_due / expire_due) ---- */
  /* A double reply whose text the module formats itself (Redis's human-readable forms, e.g.
   * GEOPOS's coordinates): a RESP3 double with that text, a bulk string in RESP2. */
  int (*reply_double_text)(vsl_ctx* ctx, const char* text, size_t len);

  /* ---- ABI 1.4 (and vsl_command_desc.acl_categories) ---- */
  /* Fires the keyspace event `event` ("lpush", "hset", "del", ...) of class `type` (one
   * VSL_NOTIFY_*) for an open key, as Redis's notifyKeyspaceEvent: published on
   * __keyspace@<db>__:<key> and __keyevent@<db>__:<event> when notify-keyspace-events enables the
   * class. Call it after the change, once per event, in Redis's order (e.g. "lpop" then "del"
   * when the pop emptied the list). VSL_OK, VSL_ERR on a bad handle, class or event. */
  int (*notify)(vsl_key* key, int type, const char* event);

  /* ---- ABI 1.5 (and vsl_type_desc.rdb_name) ---- */
  /* Signed integers in serialize/deserialize (an RDB module record's SINT opcode). */
  void (*write_i64)(vsl_writer* w, int64_t v);
  int (*read_i64)(vsl_reader* r, int64_t* v); /* VSL_OK, or VSL_ERR */
  /* What the append-only file (and replication) records for this call of a write command,
   * instead of the command as called: each call appends one command (argv[0] its name), in
   * order; argc == 0 records nothing for this call. By default the host records the command as
   * called when it changed something (a key_set, key_delete, key_expire_set or key_modified).
   * Use it where a replay could diverge: random choices (SPOP as SREM), relative times (SET EX as
   * SET PXAT), floating point results (INCRBYFLOAT as SET KEEPTTL). VSL_ERR outside a command. */
  int (*propagate)(vsl_ctx* ctx, const vsl_slice* argv, int argc);

  /* ---- ABI 1.6: what one command may allocate, and what it changed ---- */
  /* The most bytes one command may create from its arguments: the size of a value it grows or
   * builds (SETRANGE's offset, a vector resized to a length), a scratch table, a reply whose size
   * an argument decides (SRANDMEMBER with a negative count). The host's proto-max-bulk-len (512 MiB
   * by default), Redis's limit on one value; reply an error naming it past that. With a NULL
   * ctx (a type callback), Redis's default. */
  uint64_t (*value_size_limit)(vsl_ctx* ctx);
  /* Asks whether the command may allocate `bytes` more before it does (a size an argument decides,
   * not the bytes the client sent, which the host already bounds). Under maxmemory the host
   * evicts by its policy first (never the keys of this command); VSL_OK: go ahead (the bytes count
   * as used until the host next reads its allocator's figure); VSL_ERR: refuse, changing nothing,
   * with reply_error(ctx, "OOM", VSL_OOM_MSG). Always VSL_OK without maxmemory. */
  int (*may_allocate)(vsl_ctx* ctx, uint64_t bytes);
  /* Reports what the call changed as Redis's server.dirty counts it (INFO
   * rdb_changes_since_last_save; the save rules count it): adds n to the call's count; calls
   * add up, and n == 0 says the call counts nothing. A command that never calls it counts one per
   * key it changed (key_set, key_delete, key_expire_set, key_modified). Use it where Redis counts
   * otherwise: elements (LPUSH counts every element, HSET every field given, SADD the members
   * added, DEL the keys deleted). VSL_ERR outside a command. */
  int (*add_changes)(vsl_ctx* ctx, uint64_t n);

  /* ---- ABI 1.7: parked readers, and values in Redis's own RDB encodings ---- */
  /* block() with VSL_BLOCK_* flags and a state the host keeps for the re-runs (state_len bytes,
   * copied; NULL/0 for none): what the first run decided that a re-run must not decide again
   * (XREAD's "$", the stream's last ID when the client parked). block(ctx, t) is
   * block_ex(ctx, t, 0, NULL, 0). VSL_ERR also on unknown flag bits. */
  int (*block_ex)(vsl_ctx* ctx, int64_t timeout_ms, uint32_t flags, const char* state,
                  size_t state_len);
  /* In a re-run of a parked command (a key got data or went away, the timeout, CLIENT UNBLOCK):
   * VSL_OK with *out the state given to block_ex (valid for the call). VSL_EMPTY in a first run. */
  int (*block_state)(vsl_ctx* ctx, vsl_slice* out);
  /* RDB encodings, for serialize/deserialize of a type with rdb_type (vsl_type_desc): Redis's
   * length encoding (rdbSaveLen), a string (rdbSaveRawString: the host stores a short integer's
   * text as an integer and compresses with LZF when rdbcompression is on), and bytes as they are
   * (rdbSaveMillisecondTime is 8 bytes little-endian; a stream ID is 16 bytes big-endian). Reading
   * accepts every string encoding; a read slice is valid until deserialize returns. In any other
   * serialization (DEBUG DIGEST, a host without persistence) they use the host's own framing. */
  void (*write_rdb_len)(vsl_writer* w, uint64_t v);
  void (*write_rdb_string)(vsl_writer* w, const char* p, size_t len);
  void (*write_raw)(vsl_writer* w, const char* p, size_t len);
  int (*read_rdb_len)(vsl_reader* r, uint64_t* v);            /* VSL_OK, or VSL_ERR */
  int (*read_rdb_string)(vsl_reader* r, vsl_slice* out);      /* VSL_OK, or VSL_ERR */
  int (*read_raw)(vsl_reader* r, size_t len, vsl_slice* out); /* VSL_OK, or VSL_ERR */

  /* ---- ABI 1.8 ---- */
  /* 1 when the command runs from a Lua script or function (redis.call), 0 otherwise: Redis
   * refuses some options there (XREAD's BLOCK). VSL_ERR outside a command. */
  int (*in_script)(vsl_ctx* ctx);

  /* ... new slots go below this line, forever; each bumps VSL_ABI_MINOR ... */
} vsl_api;

#define VSL_HAS(api, slot) \
  ((api) != NULL &&        \
   offsetof(struct vsl_api, slot) + sizeof(((struct vsl_api*)0)->slot) <= (api)->struct_size)

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* VESSEL_MODULE_H_ */
