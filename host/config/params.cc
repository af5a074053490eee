// The table of Redis parameters without a Config field, and their validation (params.h).
#include "host/config/params.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdlib>

#include "host/config/config.h"

namespace vessel::config {
namespace {

using K = ParamKind;
constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();
constexpr int64_t kIntMin = std::numeric_limits<int32_t>::min();
constexpr int64_t kLongMax = std::numeric_limits<int64_t>::max();
constexpr uint32_t kN = kNoEffect;

constexpr std::string_view kYesNoLocal[] = {"no", "yes", "local"};
constexpr std::string_view kFsync[] = {"everysec", "always", "no"};
constexpr std::string_view kOomAdj[] = {"no", "yes", "relative", "absolute"};
constexpr std::string_view kPubsubDefault[] = {"allchannels", "resetchannels"};
constexpr std::string_view kSanitize[] = {"no", "yes", "clients"};
constexpr std::string_view kEndpoint[] = {"ip", "hostname", "unknown-endpoint"};
constexpr std::string_view kPropagation[] = {"ignore", "panic", "panic-on-replicas"};
constexpr std::string_view kShutdownSig[] = {"default", "save", "nosave", "now", "force"};
constexpr std::string_view kSupervised[] = {"upstart", "systemd", "auto", "no"};
constexpr std::string_view kFacility[] = {"user",   "local0", "local1", "local2", "local3",
                                          "local4", "local5", "local6", "local7"};
constexpr std::string_view kDisklessLoad[] = {"disabled", "on-empty-db", "swapdb"};
constexpr std::string_view kTlsAuth[] = {"no", "yes", "optional"};

// Ordered by TOML section, then as Redis's config.c lists them.
constexpr ParamDef kParams[] = {
    // [server]: process and connection settings beyond those of ServerConfig.
    {"daemonize", "", "server", K::kBool, "no", 0, 0, {}, kImmutable | kN},
    {"supervised", "", "server", K::kEnum, "no", 0, 0, kSupervised, kImmutable | kN},
    {"pidfile", "", "server", K::kString, "", 0, 0, {}, kImmutable | kN},
    {"unixsocket", "", "server", K::kString, "", 0, 0, {}, kImmutable | kN},
    {"unixsocketperm", "", "server", K::kInteger, "0", 0, 0777, {}, kImmutable | kN},
    {"socket-mark-id", "", "server", K::kInteger, "0", 0, 4294967295, {}, kImmutable | kN},
    {"bind-source-addr", "", "server", K::kString, "", 0, 0, {}, kN},
    {"io-threads-do-reads", "", "server", K::kBool, "no", 0, 0, {}, kImmutable | kN},
    {"always-show-logo", "", "server", K::kBool, "no", 0, 0, {}, kImmutable | kN},
    {"set-proc-title", "", "server", K::kBool, "yes", 0, 0, {}, kImmutable | kN},
    {"proc-title-template",
     "",
     "server",
     K::kString,
     "{title} {listen-addr} {server-mode}",
     0,
     0,
     {},
     kN},
    {"server_cpulist", "", "server", K::kString, "", 0, 0, {}, kImmutable | kN},
    {"bio_cpulist", "", "server", K::kString, "", 0, 0, {}, kImmutable | kN},
    {"aof_rewrite_cpulist", "", "server", K::kString, "", 0, 0, {}, kImmutable | kN},
    {"bgsave_cpulist", "", "server", K::kString, "", 0, 0, {}, kImmutable | kN},
    {"ignore-warnings", "", "server", K::kString, "", 0, 0, {}, kN},
    {"disable-thp", "", "server", K::kBool, "yes", 0, 0, {}, kImmutable | kN},
    {"jemalloc-bg-thread", "", "server", K::kBool, "yes", 0, 0, {}, kN},
    {"oom-score-adj", "", "server", K::kEnum, "no", 0, 0, kOomAdj, kN},
    {"oom-score-adj-values", "", "server", K::kString, "0 200 800", 0, 0, {}, kN},
    {"shutdown-on-sigint", "", "server", K::kWords, "default", 0, 0, kShutdownSig, kN},
    {"shutdown-on-sigterm", "", "server", K::kWords, "default", 0, 0, kShutdownSig, kN},
    {"shutdown-timeout", "", "server", K::kInteger, "10", 0, kIntMax, {}, kN},
    {"crash-log-enabled", "", "server", K::kBool, "yes", 0, 0, {}, kN},
    {"crash-memcheck-enabled", "", "server", K::kBool, "yes", 0, 0, {}, kN},
    {"enable-debug-command", "", "server", K::kEnum, "no", 0, 0, kYesNoLocal, kImmutable},
    {"enable-module-command", "", "server", K::kEnum, "no", 0, 0, kYesNoLocal, kImmutable},
    {"busy-reply-threshold", "lua-time-limit", "server", K::kInteger, "5000", 0, kLongMax, {}, 0},
    {"tracking-table-max-keys", "", "server", K::kInteger, "1000000", 0, kLongMax},
    {"notify-keyspace-events", "", "server", K::kKeyspaceEvents, ""},
    {"maxmemory-clients", "", "server", K::kString, "0", 0, 0, {}, kN},
    // [monitoring]: SLOWLOG, LATENCY and INFO latencystats.
    {"slowlog-log-slower-than", "", "monitoring", K::kInteger, "10000", -1, kLongMax},
    {"slowlog-max-len", "", "monitoring", K::kInteger, "128", 0, kLongMax},
    {"latency-monitor-threshold", "", "monitoring", K::kInteger, "0", 0, kLongMax},
    {"latency-tracking", "", "monitoring", K::kBool, "yes"},
    {"latency-tracking-info-percentiles", "", "monitoring", K::kPercentiles, "50 99 99.9"},
    // [storage]: keyspace housekeeping.
    {"activerehashing", "", "storage", K::kBool, "yes", 0, 0, {}, kN},
    {"dynamic-hz", "", "storage", K::kBool, "yes", 0, 0, {}, kN},
    {"active-expire-effort", "", "storage", K::kInteger, "1", 1, 10, {}, kN},
    {"lazyfree-lazy-eviction", "", "storage", K::kBool, "no", 0, 0, {}, kN},
    {"lazyfree-lazy-expire", "", "storage", K::kBool, "no", 0, 0, {}, kN},
    {"lazyfree-lazy-server-del", "", "storage", K::kBool, "no", 0, 0, {}, kN},
    {"lazyfree-lazy-user-del", "", "storage", K::kBool, "no", 0, 0, {}, kN},
    {"lazyfree-lazy-user-flush", "", "storage", K::kBool, "no", 0, 0, {}, kN},
    {"lfu-log-factor", "", "storage", K::kInteger, "10", 0, kIntMax, {}, kN},
    {"lfu-decay-time", "", "storage", K::kInteger, "1", 0, kIntMax, {}, kN},
    {"maxmemory-eviction-tenacity", "", "storage", K::kInteger, "10", 0, 100, {}, kN},
    {"activedefrag", "", "storage", K::kBool, "no", 0, 0, {}, kN},
    {"active-defrag-cycle-min", "", "storage", K::kInteger, "1", 1, 99, {}, kN},
    {"active-defrag-cycle-max", "", "storage", K::kInteger, "25", 1, 99, {}, kN},
    {"active-defrag-threshold-lower", "", "storage", K::kInteger, "10", 0, 1000, {}, kN},
    {"active-defrag-threshold-upper", "", "storage", K::kInteger, "100", 0, 1000, {}, kN},
    {"active-defrag-ignore-bytes", "", "storage", K::kMemory, "104857600", 1, kLongMax, {}, kN},
    {"active-defrag-max-scan-fields", "", "storage", K::kInteger, "1000", 1, kLongMax, {}, kN},
    // [encoding]: when a small value switches to its large representation.
    {"hash-max-listpack-entries", "hash-max-ziplist-entries", "encoding", K::kInteger, "512", 0,
     kLongMax},
    {"hash-max-listpack-value", "hash-max-ziplist-value", "encoding", K::kMemory, "64", 0,
     kLongMax},
    {"zset-max-listpack-entries", "zset-max-ziplist-entries", "encoding", K::kInteger, "128", 0,
     kLongMax},
    {"zset-max-listpack-value", "zset-max-ziplist-value", "encoding", K::kMemory, "64", 0,
     kLongMax},
    // The sets module switches at fixed sizes (512 integers, 128 members of at most 64 bytes).
    {"set-max-intset-entries", "", "encoding", K::kInteger, "512", 0, kLongMax, {}, kN},
    {"hll-sparse-max-bytes", "", "encoding", K::kMemory, "3000", 0, kLongMax},
    {"list-max-listpack-size",
     "list-max-ziplist-size",
     "encoding",
     K::kInteger,
     "-2",
     kIntMin,
     kIntMax,
     {},
     kN},
    {"list-compress-depth", "", "encoding", K::kInteger, "0", 0, kIntMax, {}, kN},
    {"stream-node-max-bytes", "", "encoding", K::kMemory, "4096", 0, kLongMax, {}, kN},
    {"stream-node-max-entries", "", "encoding", K::kInteger, "100", 0, kLongMax, {}, kN},
    // [persistence]
    {"save", "", "persistence", K::kString, "3600 1 300 100 60 10000", 0, 0, {}, 0},
    {"dir", "", "persistence", K::kString, ".", 0, 0, {}, kProtected},
    {"dbfilename", "", "persistence", K::kString, "dump.rdb", 0, 0, {}, kProtected},
    {"rdbcompression", "", "persistence", K::kBool, "yes", 0, 0, {}, 0},
    {"rdbchecksum", "", "persistence", K::kBool, "yes", 0, 0, {}, kImmutable},
    {"rdb-del-sync-files", "", "persistence", K::kBool, "no", 0, 0, {}, kN},
    {"rdb-save-incremental-fsync", "", "persistence", K::kBool, "yes", 0, 0, {}, kN},
    // Microseconds of sleep per key a snapshot saves (negative: 1 us per -N keys), as Redis's
    // tests slow a save down; slept after each shard, with no lock held.
    {"rdb-key-save-delay", "", "persistence", K::kInteger, "0", kIntMin, kIntMax, {}, kHidden},
    {"stop-writes-on-bgsave-error", "", "persistence", K::kBool, "yes", 0, 0, {}, 0},
    {"sanitize-dump-payload", "", "persistence", K::kEnum, "no", 0, 0, kSanitize, kN},
    {"appendonly", "", "persistence", K::kBool, "no", 0, 0, {}, 0},
    {"appendfilename", "", "persistence", K::kString, "appendonly.aof", 0, 0, {}, kImmutable},
    {"appenddirname", "", "persistence", K::kString, "appendonlydir", 0, 0, {}, kImmutable},
    {"appendfsync", "", "persistence", K::kEnum, "everysec", 0, 0, kFsync, 0},
    {"no-appendfsync-on-rewrite", "", "persistence", K::kBool, "no", 0, 0, {}, kN},
    {"auto-aof-rewrite-percentage", "", "persistence", K::kInteger, "100", 0, kIntMax, {}, 0},
    {"auto-aof-rewrite-min-size", "", "persistence", K::kMemory, "67108864", 0, kLongMax, {}, 0},
    {"aof-load-truncated", "", "persistence", K::kBool, "yes", 0, 0, {}, 0},
    {"aof-use-rdb-preamble", "", "persistence", K::kBool, "yes", 0, 0, {}, kN},
    {"aof-rewrite-incremental-fsync", "", "persistence", K::kBool, "yes", 0, 0, {}, kN},
    {"aof-timestamp-enabled", "", "persistence", K::kBool, "no", 0, 0, {}, kN},
    {"aof-disable-auto-gc", "", "persistence", K::kBool, "no", 0, 0, {}, kN},
    // [security]
    {"protected-mode", "", "security", K::kBool, "yes"},
    {"requirepass", "", "security", K::kString, "", 0, 0, {}, kSensitive},
    {"aclfile", "", "security", K::kString, "", 0, 0, {}, kImmutable},
    {"acllog-max-len", "", "security", K::kInteger, "128", 0, kLongMax},
    {"acl-pubsub-default", "", "security", K::kEnum, "resetchannels", 0, 0, kPubsubDefault},
    {"enable-protected-configs", "", "security", K::kEnum, "no", 0, 0, kYesNoLocal, kImmutable},
    // [tls]: tls-port listens beside port (or alone with port 0); CONFIG SET of the others
    // rebuilds the TLS context for new connections. Replication and cluster TLS have no effect.
    {"tls-port", "", "tls", K::kInteger, "0", 0, 65535, {}, kImmutable},
    {"tls-cert-file", "", "tls", K::kString, ""},
    {"tls-key-file", "", "tls", K::kString, ""},
    {"tls-key-file-pass", "", "tls", K::kString, "", 0, 0, {}, kSensitive},
    {"tls-client-cert-file", "", "tls", K::kString, "", 0, 0, {}, kN},
    {"tls-client-key-file", "", "tls", K::kString, "", 0, 0, {}, kN},
    {"tls-client-key-file-pass", "", "tls", K::kString, "", 0, 0, {}, kSensitive | kN},
    {"tls-dh-params-file", "", "tls", K::kString, ""},
    {"tls-ca-cert-file", "", "tls", K::kString, ""},
    {"tls-ca-cert-dir", "", "tls", K::kString, ""},
    {"tls-auth-clients", "", "tls", K::kEnum, "yes", 0, 0, kTlsAuth},
    {"tls-protocols", "", "tls", K::kString, ""},
    {"tls-ciphers", "", "tls", K::kString, ""},
    {"tls-ciphersuites", "", "tls", K::kString, ""},
    {"tls-prefer-server-ciphers", "", "tls", K::kBool, "no"},
    {"tls-session-caching", "", "tls", K::kBool, "yes"},
    {"tls-session-cache-size", "", "tls", K::kInteger, "20480", 0, kIntMax},
    {"tls-session-cache-timeout", "", "tls", K::kInteger, "300", 0, kIntMax},
    {"tls-replication", "", "tls", K::kBool, "no", 0, 0, {}, kN},
    {"tls-cluster", "", "tls", K::kBool, "no", 0, 0, {}, kN},
    // [replication]: host/repl (docs/replication.md); the rows marked kN are accepted only.
    {"replicaof", "slaveof", "replication", K::kString, "", 0, 0, {}, kImmutable},
    {"masterauth", "", "replication", K::kString, "", 0, 0, {}, kSensitive},
    {"masteruser", "", "replication", K::kString, "", 0, 0, {}, kSensitive},
    {"replica-serve-stale-data",
     "slave-serve-stale-data",
     "replication",
     K::kBool,
     "yes",
     0,
     0,
     {},
     0},
    {"replica-read-only", "slave-read-only", "replication", K::kBool, "yes", 0, 0, {}, 0},
    {"replica-ignore-maxmemory",
     "slave-ignore-maxmemory",
     "replication",
     K::kBool,
     "yes",
     0,
     0,
     {},
     kN},
    {"replica-lazy-flush", "slave-lazy-flush", "replication", K::kBool, "no", 0, 0, {}, kN},
    {"replica-priority", "slave-priority", "replication", K::kInteger, "100", 0, kIntMax, {}, 0},
    {"replica-announce-ip", "slave-announce-ip", "replication", K::kString, "", 0, 0, {}, 0},
    {"replica-announce-port",
     "slave-announce-port",
     "replication",
     K::kInteger,
     "0",
     0,
     65535,
     {},
     0},
    {"replica-announced", "", "replication", K::kBool, "yes", 0, 0, {}, 0},
    {"replica-ignore-disk-write-errors", "", "replication", K::kBool, "no", 0, 0, {}, kN},
    {"repl-diskless-sync", "", "replication", K::kBool, "yes", 0, 0, {}, kN},
    {"repl-diskless-sync-delay", "", "replication", K::kInteger, "5", 0, kIntMax, {}, kN},
    {"repl-diskless-sync-max-replicas", "", "replication", K::kInteger, "0", 0, kIntMax, {}, kN},
    {"repl-diskless-load", "", "replication", K::kEnum, "disabled", 0, 0, kDisklessLoad, kN},
    {"repl-ping-replica-period",
     "repl-ping-slave-period",
     "replication",
     K::kInteger,
     "10",
     1,
     kIntMax,
     {},
     0},
    {"repl-timeout", "", "replication", K::kInteger, "60", 1, kIntMax, {}, 0},
    {"repl-disable-tcp-nodelay", "", "replication", K::kBool, "no", 0, 0, {}, kN},
    {"repl-backlog-size", "", "replication", K::kMemory, "1048576", 1, kLongMax, {}, 0},
    {"repl-backlog-ttl", "", "replication", K::kInteger, "3600", 0, kLongMax, {}, 0},
    {"min-replicas-to-write",
     "min-slaves-to-write",
     "replication",
     K::kInteger,
     "0",
     0,
     kIntMax,
     {},
     0},
    {"min-replicas-max-lag",
     "min-slaves-max-lag",
     "replication",
     K::kInteger,
     "10",
     0,
     kIntMax,
     {},
     0},
    {"propagation-error-behavior", "", "replication", K::kEnum, "ignore", 0, 0, kPropagation, kN},
    // [cluster]: read when the server starts (host/cluster); the rest are accepted without effect.
    {"cluster-enabled", "", "cluster", K::kBool, "no", 0, 0, {}, kImmutable},
    {"cluster-config-file", "", "cluster", K::kString, "nodes.conf", 0, 0, {}, kImmutable},
    {"cluster-port", "", "cluster", K::kInteger, "0", 0, 65535, {}, kImmutable},
    {"cluster-node-timeout", "", "cluster", K::kInteger, "15000", 0, kLongMax, {}, 0},
    {"cluster-announce-ip", "", "cluster", K::kString, "", 0, 0, {}, 0},
    {"cluster-announce-hostname", "", "cluster", K::kString, "", 0, 0, {}, 0},
    {"cluster-announce-port", "", "cluster", K::kInteger, "0", 0, 65535, {}, 0},
    {"cluster-announce-bus-port", "", "cluster", K::kInteger, "0", 0, 65535, {}, 0},
    {"cluster-announce-tls-port", "", "cluster", K::kInteger, "0", 0, 65535, {}, kN},
    {"cluster-require-full-coverage", "", "cluster", K::kBool, "yes", 0, 0, {}, 0},
    {"cluster-replica-no-failover",
     "cluster-slave-no-failover",
     "cluster",
     K::kBool,
     "no",
     0,
     0,
     {},
     kN},
    {"cluster-replica-validity-factor",
     "cluster-slave-validity-factor",
     "cluster",
     K::kInteger,
     "10",
     0,
     kIntMax,
     {},
     kN},
    {"cluster-migration-barrier", "", "cluster", K::kInteger, "1", 0, kIntMax, {}, kN},
    {"cluster-allow-replica-migration", "", "cluster", K::kBool, "yes", 0, 0, {}, kN},
    {"cluster-allow-reads-when-down", "", "cluster", K::kBool, "no", 0, 0, {}, 0},
    {"cluster-allow-pubsubshard-when-down", "", "cluster", K::kBool, "yes", 0, 0, {}, kN},
    {"cluster-link-sendbuf-limit", "", "cluster", K::kMemory, "0", 0, kLongMax, {}, kN},
    {"cluster-preferred-endpoint-type", "", "cluster", K::kEnum, "ip", 0, 0, kEndpoint, kN},
    // [log]: syslog is not supported; the log goes to log.file or stderr.
    {"syslog-enabled", "", "log", K::kBool, "no", 0, 0, {}, kImmutable | kN},
    {"syslog-ident", "", "log", K::kString, "redis", 0, 0, {}, kImmutable | kN},
    {"syslog-facility", "", "log", K::kEnum, "local0", 0, 0, kFacility, kImmutable | kN},
};

bool EqualsNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool ParseInteger(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

// Calls fn on each space-separated word of text until it returns false; false when it did.
template <class F>
bool ForEachWord(std::string_view text, F&& fn) {
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    size_t j = i;
    while (j < text.size() && text[j] != ' ') ++j;
    if (j > i && !fn(text.substr(i, j - i))) return false;
    i = j;
  }
  return true;
}

// notify-keyspace-events: Redis's keyspaceEventsStringToFlags (-1 on an unknown letter) and
// keyspaceEventsFlagsToString. The bits are engine/messaging.h's kNotify*.
constexpr int kNotifyAll = 0x27fc;  // g $ l s h z x e t d
int64_t KeyspaceEventsFlags(std::string_view s) {
  static constexpr std::pair<char, int> kLetters[] = {
      {'A', kNotifyAll}, {'g', 1 << 2},  {'$', 1 << 3},  {'l', 1 << 4},  {'s', 1 << 5},
      {'h', 1 << 6},     {'z', 1 << 7},  {'x', 1 << 8},  {'e', 1 << 9},  {'K', 1 << 0},
      {'E', 1 << 1},     {'t', 1 << 10}, {'m', 1 << 11}, {'d', 1 << 13}, {'n', 1 << 14}};
  int flags = 0;
  for (char c : s) {
    const auto* it = std::find_if(std::begin(kLetters), std::end(kLetters),
                                  [c](const auto& l) { return l.first == c; });
    if (it == std::end(kLetters)) return -1;
    flags |= it->second;
  }
  return flags;
}
std::string KeyspaceEventsText(int64_t flags) {
  std::string out;
  if ((flags & kNotifyAll) == kNotifyAll) {
    out = "A";
    // Redis prints "A" alone and so loses 'n' on a round trip: Vessel keeps it (after the A).
    if (flags & (1 << 14)) out += 'n';
  } else {
    static constexpr std::pair<char, int> kOrder[] = {
        {'g', 1 << 2}, {'$', 1 << 3}, {'l', 1 << 4},  {'s', 1 << 5},  {'h', 1 << 6}, {'z', 1 << 7},
        {'x', 1 << 8}, {'e', 1 << 9}, {'t', 1 << 10}, {'d', 1 << 13}, {'n', 1 << 14}};
    for (auto [c, bit] : kOrder)
      if (flags & bit) out += c;
  }
  if (flags & (1 << 0)) out += 'K';
  if (flags & (1 << 1)) out += 'E';
  if (flags & (1 << 11)) out += 'm';
  return out;
}

std::string OneOf(std::span<const std::string_view> choices) {
  std::string out = "argument(s) must be one of the following: ";
  for (size_t i = 0; i < choices.size(); ++i) {
    if (i > 0) out += ", ";
    out += choices[i];
  }
  return out;
}

}  // namespace

std::string ParamDef::toml_key() const {
  std::string key(name);
  std::replace(key.begin(), key.end(), '-', '_');
  return key;
}

std::span<const ParamDef> GenericParams() { return kParams; }

const ParamDef* FindGenericParam(std::string_view name) {
  for (const ParamDef& p : kParams) {
    if (EqualsNoCase(p.name, name) || (!p.alias.empty() && EqualsNoCase(p.alias, name))) return &p;
  }
  return nullptr;
}

const ParamDef* FindGenericParamToml(std::string_view section, std::string_view key) {
  for (const ParamDef& p : kParams) {
    if (p.section == section && p.toml_key() == key) return &p;
  }
  return nullptr;
}

bool NormalizeParam(const ParamDef& p, std::string_view text, std::string* normalized,
                    std::string* why) {
  switch (p.kind) {
    case ParamKind::kBool:
      if (EqualsNoCase(text, "yes") || EqualsNoCase(text, "no")) {
        *normalized = Lower(text);
        return true;
      }
      *why = "argument must be 'yes' or 'no'";
      return false;
    case ParamKind::kInteger:
    case ParamKind::kMemory: {
      int64_t v = 0;
      const bool ok = p.kind == ParamKind::kInteger
                          ? ParseInteger(text, &v)
                          : (ParseInteger(text, &v) || ParseMemory(text, &v));
      if (!ok) {
        *why = p.kind == ParamKind::kInteger ? "argument couldn't be parsed into an integer"
                                             : "argument must be a memory value";
        return false;
      }
      if (v < p.min || v > p.max) {
        *why = "argument must be between " + std::to_string(p.min) + " and " +
               std::to_string(p.max) + " inclusive";
        return false;
      }
      *normalized = std::to_string(v);
      return true;
    }
    case ParamKind::kEnum:
      for (std::string_view c : p.choices) {
        if (EqualsNoCase(c, text)) {
          *normalized = std::string(c);
          return true;
        }
      }
      *why = OneOf(p.choices);
      return false;
    case ParamKind::kWords: {
      std::string out;
      const bool ok = ForEachWord(text, [&](std::string_view word) {
        const auto it = std::find_if(p.choices.begin(), p.choices.end(),
                                     [&](std::string_view c) { return EqualsNoCase(c, word); });
        if (it == p.choices.end()) return false;
        if (!out.empty()) out += ' ';
        out += *it;
        return true;
      });
      if (!ok || out.empty()) {
        *why = OneOf(p.choices);
        return false;
      }
      *normalized = out;
      return true;
    }
    case ParamKind::kPercentiles: {
      std::string out;
      const bool ok = ForEachWord(text, [&](std::string_view w) {
        const std::string word(w);
        char* end = nullptr;
        const double v = std::strtod(word.c_str(), &end);
        if (end != word.c_str() + word.size()) {
          *why = "Invalid latency-tracking-info-percentiles parameters";
          return false;
        }
        if (!(v >= 0.0 && v <= 100.0)) {
          *why = "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]";
          return false;
        }
        char buf[64];
        std::snprintf(buf, sizeof(buf), "%f", v);
        std::string shown = buf;
        while (shown.back() == '0') shown.pop_back();
        if (shown.back() == '.') shown.pop_back();
        if (!out.empty()) out += ' ';
        out += shown;
        return true;
      });
      if (!ok) return false;
      *normalized = out;
      return true;
    }
    case ParamKind::kString:
      *normalized = std::string(text);
      return true;
    case ParamKind::kKeyspaceEvents: {
      const int64_t flags = KeyspaceEventsFlags(text);
      if (flags < 0) {
        *why = "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.";
        return false;
      }
      *normalized = KeyspaceEventsText(flags);
      return true;
    }
  }
  return false;
}

int64_t ParamInteger(const ParamDef& p, std::string_view normalized) {
  switch (p.kind) {
    case ParamKind::kBool:
      return normalized == "yes" ? 1 : 0;
    case ParamKind::kInteger:
    case ParamKind::kMemory: {
      int64_t v = 0;
      ParseInteger(normalized, &v);
      return v;
    }
    case ParamKind::kEnum:
      for (size_t i = 0; i < p.choices.size(); ++i)
        if (p.choices[i] == normalized) return static_cast<int64_t>(i);
      return 0;
    case ParamKind::kKeyspaceEvents:
      return std::max<int64_t>(0, KeyspaceEventsFlags(normalized));
    case ParamKind::kWords:
    case ParamKind::kPercentiles:
    case ParamKind::kString:
      return 0;
  }
  return 0;
}

}  // namespace vessel::config
