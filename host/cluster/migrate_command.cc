// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE] [AUTH password]
// [AUTH2 username password] [KEYS key ...], with Redis 7.0's replies (cluster.c migrateCommand).
//
// The keys are dumped under their locks; the network I/O (connect, the pipelined AUTH, SELECT and
// RESTORE or RESTORE-ASKING commands, their replies, each step bounded by the timeout) runs on a
// thread of its own while the client waits, parked as a blocked client, so the worker's other
// clients go on. The thread wakes the client (Engine::WakeBlocked); the command then runs again
// under its key locks, reads the outcome and deletes (unless COPY) the keys the target accepted,
// each only if its value is still the one sent (a key written meanwhile stays). Inside MULTI or a
// script, where a client cannot wait, the I/O runs on the worker itself, bounded by the timeout,
// as Redis does it. Connections are cached per target as Redis caches them (10 seconds idle, at
// most 64), with the database their last SELECT chose.
//
// Locking: `g_jobs_mu` guards the job table, the socket cache and g_stopping; a job's result fields
// are written by its thread before `done` is set (release) and read by the worker after it sees
// `done` (acquire).
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "host/cluster/node.h"
#include "host/engine/builtins.h"
#include "host/engine/engine.h"
#include "host/engine/keyspace.h"
#include "host/engine/persist_hooks.h"
#include "host/engine/session.h"

namespace vessel::cluster {

using engine::Arg;
using engine::CommandCtx;
using engine::W;

namespace {

struct MigrateJob {
  // Input, fixed before the thread starts.
  std::string host, port;
  int64_t timeout_ms = 1000;
  int64_t dbid = 0;
  std::string auth_cmd, select_cmd, restores;  // the pipelined commands, in this order
  bool auth = false;                           // an AUTH reply comes first
  std::vector<std::string> keys, payloads;     // what each RESTORE carries
  std::vector<int64_t> expires;                // and each key's expiry then (0: none)
  // Output.
  enum class Failure { kNone, kConnect, kWrite };
  Failure failure = Failure::kNone;
  bool select = false;             // SELECT was sent (not on a cached socket in that db already)
  std::vector<std::string> lines;  // the reply lines read, in order (AUTH, SELECT, RESTOREs)
  std::atomic<bool> done{false};
  std::atomic<int> fd{-1};  // the socket while connected (StopMigrations shuts it down)
  int64_t finished_ms = 0;
};

std::mutex g_jobs_mu;
std::map<uint64_t, std::shared_ptr<MigrateJob>> g_jobs;  // parked MIGRATEs by job id
uint64_t g_next_job = 0;
bool g_stopping = false;  // the server stops: threads wake no client (the engine goes away)

// Redis's migrate_cached_sockets: an idle connection per target ("host:port" as given), with the
// database its last SELECT chose (-1: unknown), closed after 10 seconds unused; at most 64. A
// MIGRATE takes its target's socket out while it uses it (another one meanwhile connects anew).
struct CachedSocket {
  int fd = -1;
  int64_t last_dbid = -1;
  int64_t last_use_ms = 0;
};
constexpr int64_t kSocketTtlMs = 10000;
constexpr size_t kMaxSockets = 64;
std::map<std::string, CachedSocket> g_sockets;  // under g_jobs_mu
bool g_reaper = false;                          // a thread closes idle sockets (under g_jobs_mu)

int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Waits up to timeout_ms for fd to be ready for `events`.
bool WaitFd(int fd, short events, int64_t timeout_ms) {
  const int64_t deadline = SteadyMs() + timeout_ms;
  for (;;) {
    pollfd p{fd, events, 0};
    const int64_t left = deadline - SteadyMs();
    if (left <= 0) return false;
    const int rc = poll(&p, 1, static_cast<int>(left));
    if (rc > 0) return true;
    if (rc == 0 || errno != EINTR) return false;
  }
}

// A connected socket; -1 when the address cannot be resolved or the connection times out; -2 when
// the connection is refused once under way (Redis waits for the socket to be writable only, and
// then fails to write: its error speaks of writing).
int Connect(const std::string& host, const std::string& port, int64_t timeout_ms) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &res) != 0) return -1;
  int fd = -1;
  bool refused = false;
  for (addrinfo* a = res; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int rc = connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS && WaitFd(fd, POLLOUT, timeout_ms)) {
      int err = 0;
      socklen_t len = sizeof(err);
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      rc = err == 0 ? 0 : -1;
      refused |= rc != 0;
    } else if (rc != 0 && errno != EINPROGRESS) {
      refused = true;
    }
    if (rc != 0) {
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(res);
  if (fd < 0 && refused) return -2;
  if (fd >= 0) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  return fd;
}

// Closes the job's socket where StopMigrations cannot shut down a reused descriptor.
void CloseJobFd(MigrateJob* job, int fd) {
  std::lock_guard l(g_jobs_mu);
  job->fd.store(-1);
  close(fd);
}

// Closes the cached sockets unused for 10 seconds, every second while there are any.
void StartReaperLocked() {
  if (g_reaper) return;
  g_reaper = true;
  std::thread([] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      std::lock_guard l(g_jobs_mu);
      const int64_t now = SteadyMs();
      std::erase_if(g_sockets, [&](auto& kv) {
        if (!g_stopping && now - kv.second.last_use_ms <= kSocketTtlMs) return false;
        close(kv.second.fd);
        return true;
      });
      if (g_sockets.empty()) {
        g_reaper = false;
        return;
      }
    }
  }).detach();
}

// The idle socket cached for `name`, taken out of the cache (fd -1: none).
CachedSocket TakeSocket(const std::string& name) {
  std::lock_guard l(g_jobs_mu);
  auto it = g_sockets.find(name);
  if (it == g_sockets.end()) return {};
  CachedSocket cs = it->second;
  g_sockets.erase(it);
  return cs;
}

// Puts the job's socket back in the cache once its MIGRATE is done with it.
void PutSocket(MigrateJob* job, const std::string& name, CachedSocket cs) {
  std::lock_guard l(g_jobs_mu);
  job->fd.store(-1);
  if (g_stopping) {
    close(cs.fd);
    return;
  }
  if (auto it = g_sockets.find(name); it != g_sockets.end()) {
    close(it->second.fd);  // another MIGRATE's, to the same target: the newest one stays
    g_sockets.erase(it);
  } else if (g_sockets.size() >= kMaxSockets) {
    close(g_sockets.begin()->second.fd);  // Redis closes a random one
    g_sockets.erase(g_sockets.begin());
  }
  cs.last_use_ms = SteadyMs();
  g_sockets[name] = cs;
  StartReaperLocked();
}

// Writes all of `data`; false on an error or the timeout (*timed_out).
bool WriteAll(int fd, std::string_view data, int64_t timeout_ms, bool* timed_out) {
  size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n > 0) {
      off += static_cast<size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!WaitFd(fd, POLLOUT, timeout_ms)) {
        *timed_out = true;
        return false;
      }
    } else {
      return false;
    }
  }
  return true;
}

// Reads reply lines until `expected` were read; stops early on an error, the end of the stream or
// the timeout of one read (*timed_out).
void ReadLines(int fd, size_t expected, int64_t timeout_ms, std::vector<std::string>* lines,
               bool* timed_out) {
  std::string in;
  char buf[4096];
  while (lines->size() < expected) {
    const size_t eol = in.find("\r\n");
    if (eol != std::string::npos) {
      lines->push_back(in.substr(0, eol));
      in.erase(0, eol + 2);
      continue;
    }
    if (!WaitFd(fd, POLLIN, timeout_ms)) {
      *timed_out = true;
      return;
    }
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n > 0) {
      in.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      return;
    }
  }
}

// The MIGRATE's network part, as Redis's: the target's cached socket or a new connection, the
// commands written, the replies read (each step within the timeout: connSyncWrite,
// connSyncReadLine). A socket error before any RESTORE reply, not a timeout, is tried once more on
// a new connection (a cached socket the target closed); a socket that served is cached again.
void RunJob(MigrateJob* job) {
  const std::string name = job->host + ":" + job->port;
  bool may_retry = true;
  for (;;) {
    job->lines.clear();
    job->failure = MigrateJob::Failure::kNone;
    CachedSocket cs = TakeSocket(name);
    if (cs.fd < 0) {
      const int fd = Connect(job->host, job->port, job->timeout_ms);
      if (fd < 0) {
        job->failure = fd == -2 ? MigrateJob::Failure::kWrite : MigrateJob::Failure::kConnect;
        return;
      }
      cs.fd = fd;
    }
    job->fd.store(cs.fd);
    job->select = cs.last_dbid != job->dbid;
    const size_t header = (job->auth ? 1 : 0) + (job->select ? 1 : 0);
    const std::string request =
        job->auth_cmd + (job->select ? job->select_cmd : std::string()) + job->restores;
    bool timed_out = false;
    const bool written = WriteAll(cs.fd, request, job->timeout_ms, &timed_out);
    if (written)
      ReadLines(cs.fd, header + job->keys.size(), job->timeout_ms, &job->lines, &timed_out);
    if (written && job->lines.size() == header + job->keys.size()) {
      bool target_error = false;
      for (const std::string& l : job->lines) target_error |= l.starts_with('-');
      cs.last_dbid = target_error ? -1 : job->dbid;  // on an error the db is not known
      PutSocket(job, name, cs);
      return;
    }
    CloseJobFd(job, cs.fd);
    if (may_retry && !timed_out && job->lines.size() <= header) {
      may_retry = false;
      continue;
    }
    if (!written) job->failure = MigrateJob::Failure::kWrite;
    return;
  }
}

void AppendBulk(std::string* out, std::string_view s) {
  *out += '$';
  *out += std::to_string(s.size());
  *out += "\r\n";
  *out += s;
  *out += "\r\n";
}

void AppendCommand(std::string* out, const std::vector<std::string_view>& args) {
  *out += '*';
  *out += std::to_string(args.size());
  *out += "\r\n";
  for (std::string_view a : args) AppendBulk(out, a);
}

// The index in ctx->keys of the key named `name`, or -1.
int KeyIndex(CommandCtx* ctx, std::string_view name) {
  for (size_t i = 0; i < ctx->keys.size(); ++i)
    if (ctx->keys[i].name == name) return static_cast<int>(i);
  return -1;
}

// The DUMP payload of a live entry, or false with *error.
bool DumpEntry(CommandCtx* ctx, const engine::Entry* e, std::string* payload, std::string* error) {
  engine::PersistHooks* p = ctx->engine->persist();
  const vsl_type* t = ctx->engine->registry().TypeById(e->type_id());
  if (p == nullptr || !t->persisted) {
    *error = engine::Cat("ERR MIGRATE is not supported for type ", t->name);
    return false;
  }
  return p->DumpValue(t, e->value, ctx->now_ms, payload, error);
}

struct Options {
  bool copy = false, replace = false;
  std::string_view user, password;
  bool auth = false, auth2 = false;
  int first_key = 3, num_keys = 1;
  int64_t timeout = 0, dbid = 0;
};

// Redis's argument checks, in its order; false once the error is written.
bool ParseOptions(CommandCtx* ctx, Options* o) {
  for (int j = 6; j < ctx->argc; ++j) {
    const int more = ctx->argc - 1 - j;
    const std::string_view a = Arg(ctx, j);
    if (engine::EqualsIgnoreCase(a, "copy")) {
      o->copy = true;
    } else if (engine::EqualsIgnoreCase(a, "replace")) {
      o->replace = true;
    } else if (engine::EqualsIgnoreCase(a, "auth")) {
      if (more < 1) return engine::ReplySyntaxError(ctx), false;
      o->password = Arg(ctx, ++j);
      o->auth = true;
    } else if (engine::EqualsIgnoreCase(a, "auth2")) {
      if (more < 2) return engine::ReplySyntaxError(ctx), false;
      o->user = Arg(ctx, ++j);
      o->password = Arg(ctx, ++j);
      o->auth = o->auth2 = true;
    } else if (engine::EqualsIgnoreCase(a, "keys")) {
      if (!Arg(ctx, 3).empty()) {
        W(ctx).ErrorLine(
            "ERR When using MIGRATE KEYS option, the key argument must be set to the empty "
            "string");
        return false;
      }
      o->first_key = j + 1;
      o->num_keys = ctx->argc - j - 1;
      break;
    } else {
      return engine::ReplySyntaxError(ctx), false;
    }
  }
  if (!engine::IntArg(ctx, 5, &o->timeout) || !engine::IntArg(ctx, 4, &o->dbid)) return false;
  if (o->timeout <= 0) o->timeout = 1000;
  return true;
}

// The job's outcome, under the keys' locks: the reply, and the keys the target took deleted.
void Finish(CommandCtx* ctx, const Options& o, const MigrateJob& job) {
  if (job.failure == MigrateJob::Failure::kConnect)
    return W(ctx).ErrorLine("IOERR error or timeout connecting to the client");
  if (job.failure == MigrateJob::Failure::kWrite)
    return W(ctx).ErrorLine("IOERR error or timeout writing to target instance");
  size_t at = 0;
  auto line = [&](std::string* out) {
    if (at >= job.lines.size()) return false;
    *out = job.lines[at++];
    return true;
  };
  std::string auth_line, select_line;
  if (job.auth && !line(&auth_line))
    return W(ctx).ErrorLine("IOERR error or timeout reading to target instance");
  if (job.select && !line(&select_line))
    return W(ctx).ErrorLine("IOERR error or timeout reading to target instance");
  bool error_from_target = false, socket_error = false;
  std::vector<std::string> deleted;
  for (size_t j = 0; j < job.keys.size(); ++j) {
    std::string restore_line;
    if (!line(&restore_line)) {
      socket_error = true;
      break;
    }
    const bool auth_err = job.auth && auth_line.starts_with('-');
    const bool select_err = job.select && select_line.starts_with('-');
    if (auth_err || select_err || restore_line.starts_with('-')) {
      if (!error_from_target) {
        error_from_target = true;
        const std::string& err = auth_err ? auth_line : select_err ? select_line : restore_line;
        W(ctx).ErrorLine(engine::Cat("ERR Target instance replied with error: ",
                                     std::string_view(err).substr(1)));
      }
      continue;
    }
    if (o.copy) continue;
    // Delete the local key, unless it changed since it was dumped (it then stays here).
    const int i = KeyIndex(ctx, job.keys[j]);
    if (i < 0) continue;
    engine::Entry* e = engine::LookupKey(ctx, i);
    if (e == nullptr) continue;
    std::string now, error;
    if (e->expire_ms != job.expires[j] || !DumpEntry(ctx, e, &now, &error) ||
        now != job.payloads[j])
      continue;
    engine::CommandKey& k = ctx->keys[i];
    ctx->engine->Remove(*k.db, *k.shard, e, k.hash);
    ctx->engine->NotifyKeyspaceEvent(engine::kNotifyGeneric, "del", k.name, k.db->index());
    deleted.push_back(job.keys[j]);
  }
  if (!o.copy) {
    // Recorded as the DEL of the keys the target took, as Redis rewrites MIGRATE.
    ctx->propagate_set = true;
    if (!deleted.empty()) {
      std::vector<std::string> del{"DEL"};
      del.insert(del.end(), deleted.begin(), deleted.end());
      ctx->propagated.push_back(std::move(del));
      ctx->AddChanges(deleted.size());
    }
  }
  if (error_from_target) return;
  if (socket_error) return W(ctx).ErrorLine("IOERR error or timeout reading to target instance");
  engine::ReplyOk(ctx);
}

// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE] [AUTH password]
// [AUTH2 username password] [KEYS key [key ...]]
void CmdMigrate(CommandCtx* ctx) {
  Options o;
  if (!ParseOptions(ctx, &o)) return;
  // A re-run: the thread has finished (or the client was woken early: it waits again).
  const std::string* state = ctx->session != nullptr ? ctx->session->BlockedState() : nullptr;
  if (state != nullptr && !state->empty()) {
    const uint64_t id = std::stoull(*state);
    std::shared_ptr<MigrateJob> job;
    {
      std::lock_guard l(g_jobs_mu);
      auto it = g_jobs.find(id);
      if (it != g_jobs.end()) job = it->second;
    }
    if (job == nullptr)
      return W(ctx).ErrorLine("IOERR error or timeout reading to target instance");
    if (!job->done.load(std::memory_order_acquire)) {
      ctx->blocked = true;  // still under way
      ctx->block_state = *state;
      return;
    }
    {
      std::lock_guard l(g_jobs_mu);
      g_jobs.erase(id);
    }
    return Finish(ctx, o, *job);
  }

  auto job = std::make_shared<MigrateJob>();
  job->host = std::string(Arg(ctx, 1));
  job->port = std::string(Arg(ctx, 2));
  job->timeout_ms = o.timeout;
  job->auth = o.auth;
  if (o.auth) {
    if (o.auth2) {
      AppendCommand(&job->auth_cmd, {"AUTH", o.user, o.password});
    } else {
      AppendCommand(&job->auth_cmd, {"AUTH", o.password});
    }
  }
  job->dbid = o.dbid;
  AppendCommand(&job->select_cmd, {"SELECT", std::to_string(o.dbid)});
  const bool cluster = ctx->engine->cluster() != nullptr;
  int found = 0;
  for (int j = 0; j < o.num_keys; ++j) {
    const std::string_view name = Arg(ctx, o.first_key + j);
    const int i = KeyIndex(ctx, name);
    if (i < 0) continue;
    const engine::Entry* e = engine::LookupKey(ctx, i);
    if (e == nullptr) continue;
    ++found;
    int64_t ttl = 0;
    if (e->expire_ms != 0) {
      ttl = e->expire_ms - ctx->now_ms;
      if (ttl < 0) continue;
      if (ttl < 1) ttl = 1;
    }
    std::string payload, error;
    if (!DumpEntry(ctx, e, &payload, &error)) return W(ctx).ErrorLine(error);
    const std::string ttl_text = std::to_string(ttl);
    std::vector<std::string_view> args{cluster ? "RESTORE-ASKING" : "RESTORE", name, ttl_text,
                                       payload};
    if (o.replace) args.push_back("REPLACE");
    AppendCommand(&job->restores, args);
    job->keys.emplace_back(name);
    job->payloads.push_back(std::move(payload));
    job->expires.push_back(e->expire_ms);
  }
  if (found == 0) return W(ctx).Simple("NOKEY");

  if (!ctx->can_block || ctx->session == nullptr) {
    // Inside MULTI or a script: on this thread, bounded by the timeout, as Redis.
    RunJob(job.get());
    return Finish(ctx, o, *job);
  }
  uint64_t id;
  {
    std::lock_guard l(g_jobs_mu);
    // Jobs of clients that left before their MIGRATE ended are dropped after a minute.
    const int64_t now = SteadyMs();
    std::erase_if(g_jobs, [&](const auto& kv) {
      return kv.second->done.load(std::memory_order_acquire) &&
             now - kv.second->finished_ms > 60000;
    });
    id = ++g_next_job;
    g_jobs[id] = job;
  }
  engine::Engine* eng = ctx->engine;
  const int worker = ctx->session->worker();
  const uint64_t session_id = ctx->session->id();
  std::thread([job, eng, worker, session_id] {
    RunJob(job.get());
    job->finished_ms = SteadyMs();
    job->done.store(true, std::memory_order_release);
    std::lock_guard l(g_jobs_mu);
    if (!g_stopping) eng->WakeBlocked(worker, session_id);
  }).detach();
  // Park without waiting on the keys (a write to one must not wake this client, nor make it the
  // head waiter of a blocked list): the thread wakes it.
  ctx->keys.clear();
  ctx->blocked = true;
  ctx->block_timeout_ms = 0;
  ctx->block_state = std::to_string(id);
}

// Redis's migrateGetKeys: the key argument, or the keys after KEYS when it is "".
void MigrateKeys(const std::string_view* argv, int argc, engine::KeyRefs* out) {
  constexpr uint32_t kFlags = VSL_KS_RW | VSL_KS_ACCESS | VSL_KS_DELETE;
  int first = 3, num = 1;
  for (int i = 6; i < argc; ++i) {
    if (engine::EqualsIgnoreCase(argv[i], "keys")) {
      if (!argv[3].empty()) {
        num = 0;  // a syntax error MIGRATE reports
      } else {
        first = i + 1;
        num = argc - first;
      }
      break;
    }
    if (engine::EqualsIgnoreCase(argv[i], "auth")) {
      i += 1;
    } else if (engine::EqualsIgnoreCase(argv[i], "auth2")) {
      i += 2;
    }
  }
  for (int j = 0; j < num && first + j < argc; ++j)
    out->push_back({static_cast<uint32_t>(first + j), kFlags});
}

}  // namespace

void StopMigrations() {
  std::lock_guard l(g_jobs_mu);
  g_stopping = true;
  for (auto& [name, cs] : g_sockets) close(cs.fd);
  g_sockets.clear();
  for (auto& [id, job] : g_jobs)
    if (const int fd = job->fd.load(); fd >= 0) shutdown(fd, SHUT_RDWR);  // end its wait now
}

void RegisterMigrateCommand(engine::Registry& r) {
  constexpr uint32_t kKs = VSL_KS_RW | VSL_KS_ACCESS | VSL_KS_DELETE;
  engine::KeySpec after_keys = engine::KeyAt(-2, kKs | VSL_KS_INCOMPLETE, -1);
  after_keys.begin_keyword = "KEYS";
  // clang-format off
  engine::AddBuiltins(r, {
      {.name = "MIGRATE", .arity = -6, .flags = VSL_CMD_WRITE,
       // Redis's specs; being incomplete, the keys are found by MigrateKeys (ExtractKeys).
       .keys = {engine::KeyAt(3, kKs), after_keys},
       .fn = CmdMigrate, .group = "generic", .since = "2.6.0",
       .summary = "Atomically transfer a key from one Redis instance to another.",
       .syntax = "host port key|\"\" destination-db timeout [COPY] [REPLACE] [AUTH password] "
         "[AUTH2 username password] [KEYS key [key ...]]",
       .complexity = "This command actually executes a DUMP+DEL in the source instance, and a "
         "RESTORE in the target instance. See the pages of these commands for time complexity. "
         "Also an O(N) data transfer between the two instances is performed.",
       .tips = "nondeterministic_output", .acl = "keyspace dangerous",
       .getkeys = MigrateKeys},
  });
  // clang-format on
}

}  // namespace vessel::cluster
