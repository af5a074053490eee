/* Small modules the SDK tests load, one per variant: tests/sdk/CMakeLists.txt builds this file
 * once per variant with -DTEST_MODULE_NAME="<name>" -DTEST_VARIANT_<NAME> into
 * bin/test_modules/<name>.so. Each exercises one path of the loader or the registry:
 *
 *   good          a working module: type "goodval" (not persisted), GOOD.PUT key value (its
 *                 COMMAND DOCS arguments derived from its syntax), GOOD.GET key (declared ones),
 *                 GOOD.MISUSE key and GOOD.TWICE key (API misuse the host refuses and logs)
 *   older_minor   asks for an older ABI minor (0 when the host is at x.0) and loads
 *   newer_minor   asks for the minor after the host's: refused from the manifest
 *   other_major   a hand-written manifest for ABI major 2: refused from the manifest
 *   odd_manifest  a manifest whose struct_size is no released size: refused from the manifest
 *   no_manifest   no vsl_manifest section
 *   bad_magic     a vsl_manifest section that is not a manifest
 *   empty_name    a manifest with an empty module name
 *   no_init       a manifest but no vsl_module_init
 *   hidden_init   vsl_module_init without VSL_EXPORT: exported anyway (module.h declares it)
 *   unresolved    calls a function nothing defines: dlopen(RTLD_NOW) fails
 *   init_error    init fails: no message without arguments, else a message naming them
 *   collide       registers the command or type named by its arguments ("command GET")
 *   bad           registers one malformed descriptor, chosen by its first argument
 *   crash         CRASH.NOW dereferences NULL in its handler (the crash report names it)
 *   capped        CAPPED.PUSH (group list, declares @capped) and CAPPED.LEN (group capped): a
 *                 third-party module's own ACL category
 *
 * Every variant has a constructor that sets VSL_TEST_RAN_<name>=1, so a test can tell whether any
 * of the module's code ran (it must not for a module refused from its manifest).
 */
#define _POSIX_C_SOURCE 200112L /* setenv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vessel/module.h"

__attribute__((constructor)) static void MarkCodeRan(void) {
  setenv("VSL_TEST_RAN_" TEST_MODULE_NAME, "1", 1);
}

/* Helpers some variants use. */
#define MAYBE_UNUSED __attribute__((unused))

static const vsl_api* api;

MAYBE_UNUSED static int ArgIs(const vsl_slice* args, size_t nargs, size_t i, const char* word) {
  return i < nargs && args[i].len == strlen(word) && memcmp(args[i].ptr, word, args[i].len) == 0;
}

/* A NUL-terminated copy of args[i] in buf ("" past the end). */
MAYBE_UNUSED static const char* ArgStr(const vsl_slice* args, size_t nargs, size_t i, char* buf,
                                       size_t n) {
  snprintf(buf, n, "%.*s", i < nargs ? (int)args[i].len : 0, i < nargs ? args[i].ptr : "");
  return buf;
}

MAYBE_UNUSED static int CmdNothing(vsl_ctx* ctx, const vsl_slice* argv, int argc) {
  (void)argv;
  (void)argc;
  return api->reply_simple(ctx, "OK", 2);
}

/* ---- good: a value type holding one string, without copy (COPY must refuse it) ---- */
#if defined(TEST_VARIANT_GOOD)
VSL_MODULE(TEST_MODULE_NAME, "1.2.3");

typedef struct goodval {
  size_t len;
  char* data;
} goodval;

static const vsl_type* good_type;

static void GoodFree(vsl_type_ctx* tc, void* v) {
  (void)tc;
  api->free(((goodval*)v)->data);
  api->free(v);
}

static size_t GoodMemUsage(vsl_type_ctx* tc, const void* v) {
  (void)tc;
  return sizeof(goodval) + ((const goodval*)v)->len;
}

/* GOOD.PUT key value */
static int CmdGoodPut(vsl_ctx* ctx, const vsl_slice* argv, int argc) {
  goodval* v = api->alloc(sizeof(*v));
  (void)argc;
  v->len = argv[2].len;
  v->data = api->alloc(v->len);
  memcpy(v->data, argv[2].ptr, v->len);
  api->key_set(api->key_open(ctx, 0), good_type, v, 0);
  return api->reply_simple(ctx, "OK", 2);
}

/* GOOD.GET key */
static int CmdGoodGet(vsl_ctx* ctx, const vsl_slice* argv, int argc) {
  void* v = NULL;
  (void)argv;
  (void)argc;
  switch (api->key_get(api->key_open(ctx, 0), good_type, &v)) {
    case VSL_OK:
      return api->reply_bulk(ctx, ((goodval*)v)->data, ((goodval*)v)->len);
    case VSL_WRONGTYPE:
      return api->reply_error(ctx, "WRONGTYPE", VSL_WRONGTYPE_MSG);
    default:
      return api->reply_null(ctx);
  }
}

/* GOOD.MISUSE key: passes NULL handles, opens a key it did not declare, deletes its read-only key,
 * then passes the handles it kept from its previous call; replies how many of those calls the
 * host refused (5 the first time; 7 after, when this call's context is not where the previous
 * one was, e.g. the second call runs inside EXEC). */
static vsl_key* stale_key;
static vsl_ctx* stale_ctx;
static int CmdGoodMisuse(vsl_ctx* ctx, const vsl_slice* argv, int argc) {
  void* v = NULL;
  int refused = 0;
  (void)argv;
  (void)argc;
  refused += api->key_get(NULL, good_type, &v) == VSL_ERR;
  refused += api->reply_int64(NULL, 1) == VSL_ERR;
  refused += api->key_open(NULL, 0) == NULL;
  refused += api->key_open(ctx, 1) == NULL;
  refused += api->key_delete(api->key_open(ctx, 0)) == VSL_ERR;
  if (stale_key != NULL) refused += api->key_get(stale_key, good_type, &v) == VSL_ERR;
  if (stale_ctx != NULL) refused += api->reply_int64(stale_ctx, 1) == VSL_ERR;
  stale_key = api->key_open(ctx, 0);
  stale_ctx = ctx;
  return api->reply_int64(ctx, refused);
}

/* GOOD.TWICE key: replies twice (the host replaces both by an error and logs it). */
static int CmdGoodTwice(vsl_ctx* ctx, const vsl_slice* argv, int argc) {
  (void)argv;
  (void)argc;
  api->reply_simple(ctx, "OK", 2);
  return api->reply_simple(ctx, "OK", 2);
}

VSL_EXPORT int vsl_module_init(const vsl_api* host, vsl_module* m, const vsl_slice* args,
                               size_t nargs, char* err, size_t errlen) {
  static const vsl_keyspec write_key = {
      .struct_size = sizeof(vsl_keyspec), .flags = VSL_KS_OW | VSL_KS_UPDATE, .begin_index = 1};
  static const vsl_keyspec read_key = {
      .struct_size = sizeof(vsl_keyspec), .flags = VSL_KS_RO | VSL_KS_ACCESS, .begin_index = 1};
  vsl_type_desc t;
  vsl_command_desc put, get, misuse, twice;
  (void)args;
  (void)nargs;
  api = host;
  /* GOOD.GET key [AS bulk | simple] (the option is documentation only) */
  /* clang-format off */
  static const vsl_command_arg get_as[] = {
      {.struct_size = sizeof(vsl_command_arg), .type = VSL_ARG_PURE_TOKEN, .name = "bulk",
       .token = "BULK"},
      {.struct_size = sizeof(vsl_command_arg), .type = VSL_ARG_PURE_TOKEN, .name = "simple",
       .token = "SIMPLE", .since = "1.2.0"}};
  static const vsl_command_arg get_args[] = {
      {.struct_size = sizeof(vsl_command_arg), .type = VSL_ARG_KEY, .name = "key",
       .key_spec_index = 0, .summary = "the key to read"},
      {.struct_size = sizeof(vsl_command_arg), .type = VSL_ARG_ONEOF, .name = "form", .token = "AS",
       .flags = VSL_ARG_OPTIONAL, .subargs = get_as, .n_subargs = 2}};
  /* clang-format on */
  memset(&t, 0, sizeof(t));
  t.struct_size = sizeof(t);
  t.name = "goodval";
  t.free = GoodFree;
  t.mem_usage = GoodMemUsage;
  t.flags = VSL_TYPE_NOT_PERSISTED; /* no serialize/deserialize: its keys live in memory only */
  memset(&put, 0, sizeof(put));
  put.struct_size = sizeof(put);
  put.name = "GOOD.PUT";
  put.arity = 3;
  put.flags = VSL_CMD_WRITE | VSL_CMD_DENYOOM;
  put.keyspecs = &write_key;
  put.n_keyspecs = 1;
  put.handler = CmdGoodPut;
  put.syntax = "key value";
  get = put;
  get.name = "GOOD.GET";
  get.arity = 2;
  get.flags = VSL_CMD_READONLY | VSL_CMD_FAST;
  get.keyspecs = &read_key;
  get.handler = CmdGoodGet;
  get.syntax = "key [AS BULK | SIMPLE]";
  get.args = get_args;
  get.n_args = 2;
  misuse = get;
  misuse.syntax = NULL;
  misuse.args = NULL;
  misuse.n_args = 0;
  twice = misuse;
  twice.name = "GOOD.TWICE";
  twice.handler = CmdGoodTwice;
  misuse.name = "GOOD.MISUSE";
  misuse.handler = CmdGoodMisuse;
  if (api->register_type(m, &t, &good_type) != VSL_OK || api->register_command(m, &put) != VSL_OK ||
      api->register_command(m, &get) != VSL_OK || api->register_command(m, &misuse) != VSL_OK ||
      api->register_command(m, &twice) != VSL_OK) {
    snprintf(err, errlen, "registration failed");
    return VSL_ERR;
  }
  return VSL_OK;
}

/* ---- older_minor: targets an older host, and probes newer slots with VSL_HAS ---- */
#elif defined(TEST_VARIANT_OLDER_MINOR)
VSL_MODULE_MIN_MINOR(TEST_MODULE_NAME, "1.0.0", VSL_ABI_MINOR > 0 ? VSL_ABI_MINOR - 1 : 0);

VSL_EXPORT int vsl_module_init(const vsl_api* host, vsl_module* m, const vsl_slice* args,
                               size_t nargs, char* err, size_t errlen) {
  (void)m;
  (void)args;
  (void)nargs;
  /* A module built for minor N that accepts N-1 checks each slot of minor N before calling it. */
  if (!VSL_HAS(host, register_command)) {
    snprintf(err, errlen, "host lacks register_command");
    return VSL_ERR;
  }
  return VSL_OK;
}

/* ---- newer_minor: needs a slot this host does not have ---- */
#elif defined(TEST_VARIANT_NEWER_MINOR)
VSL_MODULE_MIN_MINOR(TEST_MODULE_NAME, "1.0.0", VSL_ABI_MINOR + 1);

VSL_EXPORT int vsl_module_init(const vsl_api* host, vsl_module* m, const vsl_slice* args,
                               size_t nargs, char* err, size_t errlen) {
  (void)host, (void)m, (void)args, (void)nargs, (void)err, (void)errlen;
  return VSL_OK;
}

/* ---- other_major: what a module built against a future SDK 2.x would carry ---- */
#elif defined(TEST_VARIANT_OTHER_MAJOR)
VSL_EXPORT const vsl_manifest vsl_module_manifest
    __attribute__((section(VSL_MANIFEST_SECTION), used, aligned(8))) = {
        VSL_MANIFEST_MAGIC, sizeof(vsl_manifest), 2, 0, 0, TEST_MODULE_NAME, "2.0.0"};

VSL_EXPORT int vsl_module_init(const vsl_api* host, vsl_module* m, const vsl_slice* args,
                               size_t nargs, char* err, size_t errlen) {
  (void)host, (void)m, (void)args, (void)nargs, (void)err, (void)errlen;
  return VSL_OK;
}

/* ---- odd_manifest: a struct_size between releases ---- */
#elif defined(TEST_VARIANT_ODD_MANIFEST)
VSL_EXPORT const vsl_manifest vsl_module_manifest
    __attribute__((section(VSL_MANIFEST_SECTION), used, aligned(8))) = {
        VSL_MANIFEST_MAGIC, 72, VSL_ABI_MAJOR, 0, 0, TEST_MODULE_NAME, "1.0.0"};

VSL_EXPORT int vsl_module_init(const vsl_api* host, vsl_module* m, const vsl_slice* args,
                               size_t nargs, char* err, size_t errlen) {
  (void)host, (void)m, (void)args, (void)nargs, (void)err, (void)errlen;
  return VSL_OK;
}

/* ---- bad_magic: something else in the section ---- */
#elif defined(TEST_VARIANT_BAD_MAGIC)
VSL_EXPORT const vsl_manifest vsl_module_manifest
    __attribute__((section(VSL_MANIFEST_SECTION), used, aligned(8))) = {
        0x12345678u, sizeof(vsl_manifest), VSL_ABI_MAJOR, 0, 0, TEST_MODULE_NAME, "1.0.0"};

VSL_EXPORT int vsl_module_init(const vsl_api* host, vsl_module* m, const vsl_slice* args,
                               size_t nargs, char* err, size_t errlen) {
  (void)host, (void)m, (void)args, (void)nargs, (void)err, (void)errlen;
  return VSL_OK;
}

/* ---- empty_name: a manifest without a name ---- */
#elif defined(TEST_VARIANT_EMPTY_NAME)
VSL_EXPORT const vsl_manifest vsl_module_manifest
    __attribute__((section(VSL_MANIFEST_SECTION), used, aligned(8))) = {
        VSL_MANIFEST_MAGIC, sizeof(vsl_manifest), VSL_ABI_MAJOR, 0, 0, "", "1.0.0"};

VSL_EXPORT int vsl_module_init(const vsl_api* host, vsl_module* m, const vsl_slice* args,
                               size_t nargs, char* err, size_t errlen) {
  (void)host, (void)m, (void)args, (void)nargs, (void)err, (void)errlen;
  return VSL_OK;
}

/* ---- crash: a handler that faults ---- */
#elif defined(TEST_VARIANT_CRASH)
VSL_MODULE(TEST_MODULE_NAME, "1.0.0");

/* CRASH.NOW: a real SIGSEGV, also in sanitizer builds (UBSan would stop at the null load first). */
#if defined(__GNUC__)
__attribute__((no_sanitize("undefined")))
#endif
static int
CmdCrashNow(vsl_ctx* ctx, const vsl_slice* argv, int argc) {
  volatile int* nowhere = (volatile int*)(argv == NULL ? (void*)argv : NULL);
  (void)ctx;
  (void)argc;
  return *nowhere;
}

VSL_EXPORT int vsl_module_init(const vsl_api* host, vsl_module* m, const vsl_slice* args,
                               size_t nargs, char* err, size_t errlen) {
  vsl_command_desc d;
  (void)args, (void)nargs;
  api = host;
  memset(&d, 0, sizeof(d));
  d.struct_size = sizeof(d);
  d.name = "CRASH.NOW";
  d.arity = 1;
  d.flags = VSL_CMD_NO_KEYS;
  d.handler = CmdCrashNow;
  if (api->register_command(m, &d) != VSL_OK) {
    snprintf(err, errlen, "registration failed");
    return VSL_ERR;
  }
  return VSL_OK;
}

/* ---- no_manifest: forgot VSL_MODULE ---- */
#elif defined(TEST_VARIANT_NO_MANIFEST)
VSL_EXPORT int vsl_module_init(const vsl_api* host, vsl_module* m, const vsl_slice* args,
                               size_t nargs, char* err, size_t errlen) {
  (void)host, (void)m, (void)args, (void)nargs, (void)err, (void)errlen;
  return VSL_OK;
}

/* ---- no_init: a manifest and nothing else ---- */
#elif defined(TEST_VARIANT_NO_INIT)
VSL_MODULE(TEST_MODULE_NAME, "1.0.0");
VSL_EXPORT int vsl_module_start(void) { return 0; } /* a near miss is not the entry point */

/* ---- hidden_init: the entry point without VSL_EXPORT; the header's declaration exports it ---- */
#elif defined(TEST_VARIANT_HIDDEN_INIT)
VSL_MODULE(TEST_MODULE_NAME, "1.0.0");

int vsl_module_init(const vsl_api* host, vsl_module* m, const vsl_slice* args, size_t nargs,
                    char* err, size_t errlen) {
  (void)host, (void)m, (void)args, (void)nargs, (void)err, (void)errlen;
  return VSL_OK;
}

/* ---- unresolved: linked without -Wl,--no-undefined, so the mistake shows only at load ---- */
#elif defined(TEST_VARIANT_UNRESOLVED)
VSL_MODULE(TEST_MODULE_NAME, "1.0.0");
extern int vsl_test_no_such_function(void);

VSL_EXPORT int vsl_module_init(const vsl_api* host, vsl_module* m, const vsl_slice* args,
                               size_t nargs, char* err, size_t errlen) {
  (void)host, (void)m, (void)args, (void)nargs, (void)err, (void)errlen;
  return vsl_test_no_such_function();
}

/* ---- init_error: refuses to start ---- */
#elif defined(TEST_VARIANT_INIT_ERROR)
VSL_MODULE(TEST_MODULE_NAME, "1.0.0");

VSL_EXPORT int vsl_module_init(const vsl_api* host, vsl_module* m, const vsl_slice* args,
                               size_t nargs, char* err, size_t errlen) {
  char arg[64];
  (void)host;
  (void)m;
  if (nargs == 0) return VSL_ERR; /* no message: the host says so */
  if (ArgIs(args, nargs, 0, "overflow")) {
    memset(err, 'x', errlen); /* not NUL-terminated: the host must cut it */
    return VSL_ERR;
  }
  if (ArgIs(args, nargs, 0, "ok")) return VSL_OK;
  snprintf(err, errlen, "bad argument '%s' (%lu arguments)",
           ArgStr(args, nargs, 0, arg, sizeof(arg)), (unsigned long)nargs);
  return VSL_ERR;
}

/* ---- collide: registers what its arguments name ---- */
#elif defined(TEST_VARIANT_COLLIDE)
VSL_MODULE(TEST_MODULE_NAME, "1.0.0");

static void NothingFree(vsl_type_ctx* tc, void* v) { (void)tc, (void)v; }
static size_t NothingMemUsage(vsl_type_ctx* tc, const void* v) { return (void)tc, (void)v, 0; }

/* args: ("command" | "type") NAME, repeated */
VSL_EXPORT int vsl_module_init(const vsl_api* host, vsl_module* m, const vsl_slice* args,
                               size_t nargs, char* err, size_t errlen) {
  size_t i;
  api = host;
  for (i = 0; i + 1 < nargs; i += 2) {
    char name[80];
    int rc;
    ArgStr(args, nargs, i + 1, name, sizeof(name));
    if (ArgIs(args, nargs, i, "command")) {
      vsl_command_desc d;
      memset(&d, 0, sizeof(d));
      d.struct_size = sizeof(d);
      d.name = name;
      d.arity = 1;
      d.flags = VSL_CMD_FAST;
      d.handler = CmdNothing;
      rc = api->register_command(m, &d);
    } else {
      vsl_type_desc t;
      const vsl_type* out;
      memset(&t, 0, sizeof(t));
      t.struct_size = sizeof(t);
      t.name = name;
      t.free = NothingFree;
      t.mem_usage = NothingMemUsage;
      t.flags = VSL_TYPE_NOT_PERSISTED;
      rc = api->register_type(m, &t, &out);
    }
    if (rc != VSL_OK) {
      snprintf(err, errlen, "cannot register %s", name);
      return VSL_ERR;
    }
  }
  return VSL_OK;
}

/* ---- bad: one malformed descriptor, chosen by args[0] ---- */
#elif defined(TEST_VARIANT_BAD)
VSL_MODULE(TEST_MODULE_NAME, "1.0.0");

static void NothingFree(vsl_type_ctx* tc, void* v) { (void)tc, (void)v; }
static size_t NothingMemUsage(vsl_type_ctx* tc, const void* v) { return (void)tc, (void)v, 0; }

VSL_EXPORT int vsl_module_init(const vsl_api* host, vsl_module* m, const vsl_slice* args,
                               size_t nargs, char* err, size_t errlen) {
  vsl_keyspec ks;
  vsl_command_desc d;
  (void)err;
  (void)errlen;
  api = host;
  memset(&ks, 0, sizeof(ks));
  ks.struct_size = sizeof(ks);
  ks.flags = VSL_KS_RW;
  ks.begin_index = 1;
  memset(&d, 0, sizeof(d));
  d.struct_size = sizeof(d);
  d.name = "BAD.CMD";
  d.arity = 2;
  d.flags = VSL_CMD_WRITE;
  d.keyspecs = &ks;
  d.n_keyspecs = 1;
  d.handler = CmdNothing;
  d.summary = "documented";
  if (ArgIs(args, nargs, 0, "flags")) d.flags |= 1ull << 20;
  if (ArgIs(args, nargs, 0, "write-readonly")) d.flags |= VSL_CMD_READONLY;
  if (ArgIs(args, nargs, 0, "keyless-write")) d.n_keyspecs = 0;
  if (ArgIs(args, nargs, 0, "keyless-read")) {
    d.flags = VSL_CMD_READONLY;
    d.n_keyspecs = 0;
  }
  if (ArgIs(args, nargs, 0, "readonly-writes")) {
    d.flags = VSL_CMD_READONLY;
    ks.flags = VSL_KS_OW;
  }
  if (ArgIs(args, nargs, 0, "arity")) d.arity = 0;
  if (ArgIs(args, nargs, 0, "name")) d.name = "BAD CMD";
  if (ArgIs(args, nargs, 0, "no-handler")) d.handler = NULL;
  if (ArgIs(args, nargs, 0, "small-desc")) d.struct_size = 8;
  /* A module built against SDK 1.0: its struct ends after tips (no acl_categories, no args). */
  if (ArgIs(args, nargs, 0, "old-desc")) {
    d.struct_size = offsetof(vsl_command_desc, acl_categories);
    d.acl_categories = "@nosuchcategory"; /* refused if the host read it */
    d.n_args = 1;                         /* and args NULL: refused if read */
  }
  /* A size no SDK had: it covers args but not n_args. */
  if (ArgIs(args, nargs, 0, "odd-desc")) d.struct_size = offsetof(vsl_command_desc, n_args);
  /* A newer SDK's descriptor: longer than this host's, its new fields unset or set. */
  if (ArgIs(args, nargs, 0, "newer-desc") || ArgIs(args, nargs, 0, "newer-desc-set")) {
    static unsigned char buf[sizeof(vsl_command_desc) + 16];
    memset(buf, 0, sizeof(buf));
    d.struct_size = sizeof(buf);
    memcpy(buf, &d, sizeof(d));
    if (ArgIs(args, nargs, 0, "newer-desc-set")) buf[sizeof(d) + 3] = 1;
    return api->register_command(m, (const vsl_command_desc*)(const void*)buf);
  }
  if (ArgIs(args, nargs, 0, "args-key") || ArgIs(args, nargs, 0, "args-type") ||
      ArgIs(args, nargs, 0, "args-size") || ArgIs(args, nargs, 0, "args-oneof")) {
    static vsl_command_arg a[2];
    memset(a, 0, sizeof(a));
    a[0].struct_size = a[1].struct_size = sizeof(vsl_command_arg);
    a[0].type = VSL_ARG_KEY;
    a[0].name = "key";
    a[1].type = VSL_ARG_STRING;
    a[1].name = "value";
    if (ArgIs(args, nargs, 0, "args-key")) a[0].key_spec_index = 1;
    if (ArgIs(args, nargs, 0, "args-type")) a[1].type = 42;
    if (ArgIs(args, nargs, 0, "args-size")) a[0].struct_size = a[1].struct_size = 40;
    if (ArgIs(args, nargs, 0, "args-oneof")) a[1].type = VSL_ARG_ONEOF;
    d.args = a;
    d.n_args = 2;
  }
  if (ArgIs(args, nargs, 0, "small-stride")) d.keyspec_stride = 8;
  if (ArgIs(args, nargs, 0, "keyspec-flags")) ks.flags |= 0x8000u;
  if (ArgIs(args, nargs, 0, "keyspec-access")) ks.flags = VSL_KS_INSERT;
  if (ArgIs(args, nargs, 0, "keyspec-begin")) ks.begin_index = 0;
  if (ArgIs(args, nargs, 0, "keyspec-step")) ks.key_step = -1;
  if (ArgIs(args, nargs, 0, "keyspec-size")) ks.struct_size = 4;
  if (ArgIs(args, nargs, 0, "keyspec-null")) d.keyspecs = NULL;
  if (ArgIs(args, nargs, 0, "type-no-serialize") || ArgIs(args, nargs, 0, "type-old") ||
      ArgIs(args, nargs, 0, "type-odd-size") || ArgIs(args, nargs, 0, "type-flags")) {
    vsl_type_desc t;
    const vsl_type* out;
    memset(&t, 0, sizeof(t));
    t.struct_size = sizeof(t);
    t.name = "badtype";
    t.free = NothingFree;
    t.mem_usage = NothingMemUsage;
    /* SDK 1.5's descriptor: no flags field, so no way to say "not persisted". */
    if (ArgIs(args, nargs, 0, "type-old")) t.struct_size = offsetof(vsl_type_desc, flags);
    if (ArgIs(args, nargs, 0, "type-odd-size")) t.struct_size = offsetof(vsl_type_desc, expire_due);
    if (ArgIs(args, nargs, 0, "type-flags")) t.flags = VSL_TYPE_NOT_PERSISTED | (1ull << 40);
    return api->register_type(m, &t, &out);
  }
  if (ArgIs(args, nargs, 0, "type-no-free")) {
    vsl_type_desc t;
    const vsl_type* out;
    memset(&t, 0, sizeof(t));
    t.struct_size = sizeof(t);
    t.name = "badtype";
    return api->register_type(m, &t, &out);
  }
  if (ArgIs(args, nargs, 0, "type-ignored")) { /* a failed registration whose result is ignored */
    vsl_type_desc t;
    const vsl_type* out;
    memset(&t, 0, sizeof(t));
    t.struct_size = sizeof(t);
    t.name = "bad type";
    t.free = NothingFree;
    api->register_type(m, &t, &out);
    return VSL_OK;
  }
  return api->register_command(m, &d);
}

/* ---- capped: a third-party module with its own ACL category (@capped, its name) ---- */
#elif defined(TEST_VARIANT_CAPPED)
VSL_MODULE(TEST_MODULE_NAME, "1.0.0");

VSL_EXPORT int vsl_module_init(const vsl_api* host, vsl_module* m, const vsl_slice* args,
                               size_t nargs, char* err, size_t errlen) {
  static const vsl_keyspec key = {
      .struct_size = sizeof(vsl_keyspec), .flags = VSL_KS_RW | VSL_KS_INSERT, .begin_index = 1};
  vsl_command_desc push, len;
  (void)args, (void)nargs;
  api = host;
  /* CAPPED.PUSH key value: in Redis's @list group, and in @capped because it says so. */
  memset(&push, 0, sizeof(push));
  push.struct_size = sizeof(push);
  push.name = "CAPPED.PUSH";
  push.arity = 3;
  push.flags = VSL_CMD_WRITE;
  push.keyspecs = &key;
  push.n_keyspecs = 1;
  push.handler = CmdNothing;
  push.group = "list";
  push.acl_categories = "@write @list @capped";
  /* CAPPED.LEN: in no Redis group, so in the module's own category without saying so. */
  memset(&len, 0, sizeof(len));
  len.struct_size = sizeof(len);
  len.name = "CAPPED.LEN";
  len.arity = 1;
  len.flags = VSL_CMD_FAST | VSL_CMD_NO_KEYS;
  len.handler = CmdNothing;
  len.group = "capped";
  if (api->register_command(m, &push) != VSL_OK || api->register_command(m, &len) != VSL_OK) {
    snprintf(err, errlen, "registration failed");
    return VSL_ERR;
  }
  return VSL_OK;
}

#else
#error "define one TEST_VARIANT_*"
#endif
