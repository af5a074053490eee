// SORT and SORT_RO over lists, sets and sorted sets, with Redis 7.0's options and replies.
//
// The host knows no value family: it reads the elements and the BY/GET lookups by running the
// families' own commands internally (Engine::Call: LRANGE, SMEMBERS, ZRANGE, GET, HGET), under
// the locks SORT holds. A BY or GET pattern names keys that no key spec can find, so such a SORT
// runs with the whole keyspace held (needs_world); without patterns it locks only its key and
// the STORE destination.
//
// As in Redis 7.0, BY and GET patterns are refused to a user who may not read every key (their
// keys are not checked one by one against the user's patterns).
//
// Deliberate differences from Redis: ALPHA compares bytes (Redis uses strcoll, which in the C
// locale is the same up to an embedded NUL); elements that compare equal keep the order they were
// read in (Redis's quicksort leaves ties unspecified).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "host/engine/builtins.h"
#include "host/resp/reply.h"

namespace vessel::engine {
namespace {

Engine& E(CommandCtx* ctx) { return *ctx->engine; }

struct SortOptions {
  bool desc = false, alpha = false, dontsort = false;
  int64_t limit_start = 0, limit_count = -1;
  std::optional<std::string_view> by, store;
  std::vector<std::string_view> gets;
};

// True when a pattern may name a key ('#' alone is the element itself).
bool NamesKeys(std::string_view pattern) {
  return pattern != "#" && pattern.find('*') != std::string_view::npos;
}

// The index of the STORE destination, as Redis's sortGetKeys finds it (the last STORE wins;
// LIMIT's and BY's/GET's arguments are skipped), or 0.
int StoreIndex(const std::string_view* argv, int argc) {
  int store = 0;
  for (int j = 2; j < argc; ++j) {
    if (EqualsIgnoreCase(argv[j], "limit") && j + 2 < argc) {
      j += 2;
    } else if ((EqualsIgnoreCase(argv[j], "get") || EqualsIgnoreCase(argv[j], "by")) &&
               j + 1 < argc) {
      ++j;
    } else if (EqualsIgnoreCase(argv[j], "store") && j + 1 < argc) {
      store = ++j;
    }
  }
  return store;
}

bool SortNeedsWorld(const std::string_view* argv, int argc) {
  for (int j = 2; j + 1 < argc; ++j) {
    if ((EqualsIgnoreCase(argv[j], "by") || EqualsIgnoreCase(argv[j], "get")) &&
        NamesKeys(argv[j + 1]))
      return true;
    if (EqualsIgnoreCase(argv[j], "limit")) j += 2;
  }
  return false;
}

// The STORE destination, a key no key spec can find (it follows a keyword anywhere).
void SortStoreKey(const std::string_view* argv, int argc, KeyRefs* out) {
  const int at = StoreIndex(argv, argc);
  if (at != 0 && !out->empty())
    out->push_back({static_cast<uint32_t>(at), VSL_KS_OW | VSL_KS_UPDATE});
}

// Whether the caller may read any key, as SORT's BY and GET patterns may (Redis's
// ACLUserCheckCmdWithUnrestrictedKeyAccess with read access). Scripts run SORT with their
// caller's session, so its user; host-internal calls have none and may.
bool MayReadAnyKey(CommandCtx* ctx) {
  const Session* s = ctx->session;
  AccessControl* ac = E(ctx).access();
  if (s == nullptr || s->user() == nullptr || ac == nullptr || s->user()->unrestricted())
    return true;
  return ac->UnrestrictedKeyAccess(*s->user(), *ctx->cmd, ctx->argv, ctx->argc, VSL_KS_ACCESS);
}

// Parses the options after the key; false after replying an error. As Redis 7.0, a user who may
// not read every key gets an error for a BY pattern that names keys (one with a '*'; a constant
// BY such as "nosort" only skips sorting) and for any GET, even "GET #", in argument order with
// the other errors.
bool ParseOptions(CommandCtx* ctx, bool readonly, SortOptions* o) {
  const bool any_key = MayReadAnyKey(ctx);
  for (int j = 2; j < ctx->argc; ++j) {
    const std::string_view a = Arg(ctx, j);
    const int left = ctx->argc - j - 1;
    if (EqualsIgnoreCase(a, "asc")) {
      o->desc = false;
    } else if (EqualsIgnoreCase(a, "desc")) {
      o->desc = true;
    } else if (EqualsIgnoreCase(a, "alpha")) {
      o->alpha = true;
    } else if (EqualsIgnoreCase(a, "limit") && left >= 2) {
      if (!ParseInt64(Arg(ctx, j + 1), &o->limit_start) ||
          !ParseInt64(Arg(ctx, j + 2), &o->limit_count)) {
        ReplyNotInteger(ctx);
        return false;
      }
      j += 2;
    } else if (!readonly && EqualsIgnoreCase(a, "store") && left >= 1) {
      o->store = Arg(ctx, ++j);
    } else if (EqualsIgnoreCase(a, "by") && left >= 1) {
      o->by = Arg(ctx, ++j);
      o->dontsort = o->by->find('*') == std::string_view::npos;
      if (!o->dontsort && !any_key) {
        W(ctx).ErrorLine("ERR BY option of SORT denied due to insufficient ACL permissions.");
        return false;
      }
    } else if (EqualsIgnoreCase(a, "get") && left >= 1) {
      if (!any_key) {
        W(ctx).ErrorLine("ERR GET option of SORT denied due to insufficient ACL permissions.");
        return false;
      }
      o->gets.push_back(Arg(ctx, ++j));
    } else {
      ReplySyntaxError(ctx);
      return false;
    }
  }
  return true;
}

// Runs a command internally in RESP2 and decodes its reply.
resp::ReplyValue CallReply(CommandCtx* ctx, std::vector<std::string_view> argv) {
  std::string out;
  E(ctx).Call(ctx, argv, 2, &out);
  resp::ReplyValue v;
  resp::ParseReply(out, &v);
  return v;
}

// Redis's lookupKeyByPattern: '#' is the element; else the first '*' takes the element, and
// "->field" reads a hash field; a missing key or one of another type gives nothing.
std::optional<std::string> LookupByPattern(CommandCtx* ctx, std::string_view pattern,
                                           std::string_view element) {
  if (pattern == "#") return std::string(element);
  const size_t star = pattern.find('*');
  if (star == std::string_view::npos) return std::nullopt;
  std::string_view key_part = pattern, field;
  const size_t arrow = pattern.find("->", star + 1);
  if (arrow != std::string_view::npos && arrow + 2 < pattern.size()) {
    field = pattern.substr(arrow + 2);
    key_part = pattern.substr(0, arrow);
  }
  const std::string key = Cat(key_part.substr(0, star), element, key_part.substr(star + 1));
  const resp::ReplyValue v =
      field.empty() ? CallReply(ctx, {"GET", key}) : CallReply(ctx, {"HGET", key, field});
  if (v.type != resp::ReplyValue::Type::kBulk) return std::nullopt;
  return v.str;
}

struct Item {
  std::string element;
  double score = 0;
  std::optional<std::string> cmp;  // ALPHA with BY: the looked-up value
};

// SORT key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC|DESC] [ALPHA]
//   [STORE destination]
void SortGeneric(CommandCtx* ctx, bool readonly) {
  SortOptions o;
  if (!ParseOptions(ctx, readonly, &o)) return;
  const Entry* e = LookupKey(ctx, 0);
  std::string type;
  if (e != nullptr) {
    type = E(ctx).registry().TypeById(e->type_id())->name;
    if (type != "list" && type != "set" && type != "zset") {
      return W(ctx).ErrorLine("WRONGTYPE Operation against a key holding the wrong kind of value");
    }
  }
  const std::string_view key = Arg(ctx, 1);
  // A set has no order of its own: with STORE its elements are sorted, so the stored list is the
  // same wherever the command runs.
  if (o.dontsort && type == "set" && o.store) {
    o.dontsort = false;
    o.alpha = true;
    o.by.reset();
  }
  std::vector<Item> items;
  if (e != nullptr) {
    const resp::ReplyValue all = type == "list"  ? CallReply(ctx, {"LRANGE", key, "0", "-1"})
                                 : type == "set" ? CallReply(ctx, {"SMEMBERS", key})
                                                 : CallReply(ctx, {"ZRANGE", key, "0", "-1"});
    items.reserve(all.elems.size());
    for (const resp::ReplyValue& v : all.elems) items.push_back({v.str, 0, std::nullopt});
  }
  const int64_t n = static_cast<int64_t>(items.size());
  int64_t start = std::min(std::max<int64_t>(o.limit_start, 0), n);
  const int64_t count = std::min(std::max<int64_t>(o.limit_count, -1), n);
  int64_t end = count < 0 ? n - 1 : start + count - 1;
  if (start >= n) {
    start = n - 1;
    end = n - 2;
  }
  if (end >= n) end = n - 1;

  if (o.dontsort) {
    // Lists and sorted sets keep their own order, reversed by DESC.
    if (o.desc && type != "set") std::reverse(items.begin(), items.end());
  } else {
    bool conversion_error = false;
    for (Item& it : items) {
      std::optional<std::string> by =
          o.by ? LookupByPattern(ctx, *o.by, it.element) : std::optional<std::string>(it.element);
      if (!by) continue;
      if (o.alpha) {
        if (o.by) it.cmp = std::move(by);
      } else {
        char* endp = nullptr;
        errno = 0;
        it.score = std::strtod(by->c_str(), &endp);
        // As Redis: the text up to an embedded NUL is what counts.
        if (*endp != '\0' || errno == ERANGE || std::isnan(it.score)) conversion_error = true;
      }
    }
    if (conversion_error)
      return W(ctx).ErrorLine("ERR One or more scores can't be converted into double");
    auto compare = [&](const Item& a, const Item& b) {
      int cmp;
      if (!o.alpha) {
        cmp = a.score > b.score ? 1 : a.score < b.score ? -1 : a.element.compare(b.element);
      } else if (o.by) {
        cmp = !a.cmp || !b.cmp ? (a.cmp.has_value() - b.cmp.has_value()) : a.cmp->compare(*b.cmp);
      } else {
        cmp = a.element.compare(b.element);
      }
      return (o.desc ? -cmp : cmp) < 0;
    };
    std::stable_sort(items.begin(), items.end(), compare);
  }

  const int64_t shown = end >= start ? end - start + 1 : 0;
  const int64_t per = o.gets.empty() ? 1 : static_cast<int64_t>(o.gets.size());
  if (!o.store) {
    W(ctx).Aggregate(resp::AggKind::kArray, shown * per);
    for (int64_t j = start; j <= end; ++j) {
      if (o.gets.empty()) W(ctx).Bulk(items[j].element);
      for (std::string_view get : o.gets) {
        const std::optional<std::string> v = LookupByPattern(ctx, get, items[j].element);
        v ? W(ctx).Bulk(*v) : W(ctx).Null();
      }
    }
    return;
  }
  // STORE: the result replaces the destination as a list; an empty result deletes it.
  std::vector<std::string> values;
  for (int64_t j = start; j <= end; ++j) {
    if (o.gets.empty()) values.push_back(items[j].element);
    for (std::string_view get : o.gets)
      values.push_back(LookupByPattern(ctx, get, items[j].element).value_or(""));
  }
  // Redis's events: "sortstore" (after "new" for a new key), or "del" when an empty result
  // deleted the destination; not those of the internal DEL and RPUSH.
  bool existed;
  {
    const Engine::MuteNotifications mute;
    existed = CallReply(ctx, {"DEL", *o.store}).integer == 1;
    constexpr size_t kBatch = 1024;
    for (size_t i = 0; i < values.size(); i += kBatch) {
      std::vector<std::string_view> push = {"RPUSH", *o.store};
      for (size_t k = i; k < std::min(values.size(), i + kBatch); ++k) push.push_back(values[k]);
      const resp::ReplyValue r = CallReply(ctx, push);
      if (r.type == resp::ReplyValue::Type::kError) return W(ctx).ErrorLine(r.str);
    }
  }
  // Redis's server.dirty: the elements stored, or one for a deleted destination (the internal
  // calls count nothing of their own).
  ctx->AddChanges(!values.empty() ? values.size() : (existed ? 1 : 0));
  const int db = ctx->db->index();
  if (!values.empty()) {
    if (!existed) E(ctx).NotifyKeyspaceEvent(kNotifyNew, "new", *o.store, db);
    E(ctx).NotifyKeyspaceEvent(kNotifyList, "sortstore", *o.store, db);
  } else if (existed) {
    E(ctx).NotifyKeyspaceEvent(kNotifyGeneric, "del", *o.store, db);
  }
  W(ctx).Int(static_cast<int64_t>(values.size()));
}

void CmdSort(CommandCtx* ctx) { SortGeneric(ctx, /*readonly=*/false); }
void CmdSortRo(CommandCtx* ctx) { SortGeneric(ctx, /*readonly=*/true); }

}  // namespace

void RegisterSortCommands(Registry& r) {
  const char* g = "generic";
  const KeySpec patterns = KeyUnknown(
      VSL_KS_RO | VSL_KS_ACCESS,
      "For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from "
      "the content of the key we sort");
  const KeySpec store = KeyUnknown(
      VSL_KS_OW | VSL_KS_UPDATE,
      "For the optional STORE keyword. It is marked 'unknown' because the keyword can appear "
      "anywhere in the argument array");
  const char* complexity =
      "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the "
      "number of returned elements. When the elements are not sorted, complexity is O(N).";
  // clang-format off
  AddBuiltins(r, {
      // Redis: not @keyspace
      {.name = "SORT", .arity = -2, .flags = VSL_CMD_WRITE | VSL_CMD_DENYOOM,
       .keys = {KeyAt(1, VSL_KS_RO | VSL_KS_ACCESS), patterns, store}, .fn = CmdSort, .group = g,
       .since = "1.0.0",
       .summary = "Sorts the elements in a list, a set, or a sorted set, optionally storing the "
         "result.",
       .syntax = "key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] "
         "[ASC|DESC] [ALPHA] [STORE destination]", .complexity = complexity,
       .acl = "!set sortedset list dangerous", .needs_world = SortNeedsWorld,
       .getkeys = SortStoreKey},
      // Redis: not @keyspace
      {.name = "SORT_RO", .arity = -2, .flags = VSL_CMD_READONLY,
       .keys = {KeyAt(1, VSL_KS_RO | VSL_KS_ACCESS), patterns}, .fn = CmdSortRo, .group = g,
       .since = "7.0.0",
       .summary = "Returns the sorted elements of a list, a set, or a sorted set.",
       .syntax = "key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] "
         "[ASC|DESC] [ALPHA]", .complexity = complexity, .acl = "!set sortedset list dangerous",
       .needs_world = SortNeedsWorld},
  });
  // clang-format on
}

}  // namespace vessel::engine
