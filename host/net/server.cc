// The network layer: one asio io_context per worker thread, a SO_REUSEPORT listener per worker,
// connections that feed engine Sessions and write each batch of replies with one syscall.
//
// Threads: everything of a Worker (acceptors, connections, timers) runs on its own thread; the
// only cross-thread entry points are Post/PostAfter (asio::post is thread safe) and Stop.
#include "host/net/server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <asio.hpp>
#include <chrono>
#include <cstring>
#include <thread>
#include <unordered_set>

#include "host/net/tls.h"
#include "spdlog/spdlog.h"

namespace vessel::net {
namespace {

constexpr size_t kReadBufferSize = 16 * 1024;
constexpr size_t kShrinkAbove = 256 * 1024;

std::string Endpoint(const asio::ip::tcp::endpoint& ep) {
  const auto addr = ep.address();
  if (addr.is_v6()) return "[" + addr.to_string() + "]:" + std::to_string(ep.port());
  return addr.to_string() + ":" + std::to_string(ep.port());
}

std::vector<std::string> SplitSpaces(const std::string& s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

}  // namespace

// What a worker knows of its connections, plain or TLS.
class ConnectionBase : public engine::SessionIo {
 public:
  // Closes immediately (server stop); the session is destroyed on this thread.
  virtual void Finish() = 0;
  // The append-only file has the records of the writes this connection's replies acknowledge:
  // sends what Worker::DeferUntilDurable held back.
  virtual void FlushDurable() = 0;
};

class Worker : public engine::WorkerExecutor {
 public:
  Worker(engine::Engine* engine, int index)
      : engine_(engine),
        index_(index),
        io_(ASIO_CONCURRENCY_HINT_UNSAFE_IO),
        guard_(io_.get_executor()),
        cron_(io_) {}

  void Post(absl::AnyInvocable<void() &&> fn) override {
    asio::post(io_, [f = std::move(fn)]() mutable { std::move(f)(); });
  }

  void PostAfter(int64_t delay_ms, absl::AnyInvocable<void() &&> fn) override {
    auto timer = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(delay_ms));
    timer->async_wait([timer, f = std::move(fn)](const asio::error_code& ec) mutable {
      if (!ec) std::move(f)();
    });
  }

  // Binds address:port (port 0 picks one, returned in *port); `tls` listeners hand their
  // connections to TLS sessions with the context of `tls_contexts`.
  bool Listen(const std::string& address, int* port, bool tls, std::string* error);
  void set_tls(TlsContexts* tls) { tls_ = tls; }
  void Start() {
    for (auto& [a, tls] : acceptors_) Accept(*a, tls);
    ScheduleCron();
    thread_ = std::thread([this] { io_.run(); });
  }
  void Stop();
  void Join() {
    if (thread_.joinable()) thread_.join();
  }
  void Remove(ConnectionBase* c);
  // Connections this worker serves (its own thread only).
  size_t connection_count() const { return connections_.size(); }

  engine::Engine* engine() const { return engine_; }
  int index() const { return index_; }
  asio::io_context& io() { return io_; }

  // Replies leave only once the append-only file has the writes they acknowledge, as Redis's
  // beforeSleep orders it: while records are pending, a connection about to send is queued (true)
  // and one handler, run after the other ready handlers of this loop turn, makes the records
  // durable once (one write, one fsync with `always`) and sends every queued connection's output.
  bool DeferUntilDurable(std::shared_ptr<ConnectionBase> c) {
    engine::PersistHooks* p = engine_->persist();
    if (p == nullptr || !p->DurabilityPending()) return false;
    durable_waiters_.push_back(std::move(c));
    if (!durable_posted_) {
      durable_posted_ = true;
      asio::post(io_, [this] { RunDurable(); });
    }
    return true;
  }

 private:
  void RunDurable() {
    durable_posted_ = false;
    engine_->persist()->MakeDurable();
    std::vector<std::shared_ptr<ConnectionBase>> waiters;
    waiters.swap(durable_waiters_);
    for (auto& c : waiters) c->FlushDurable();
  }

  void Accept(asio::ip::tcp::acceptor& acceptor, bool tls);
  void OnAccept(asio::ip::tcp::socket socket, bool tls);
  void ScheduleCron() {
    const int64_t hz = std::max<int64_t>(1, engine_->settings().hz.load());
    cron_.expires_after(std::chrono::milliseconds(1000 / hz));
    cron_.async_wait([this](const asio::error_code& ec) {
      if (ec) return;
      engine_->Cron(index_);
      ScheduleCron();
    });
  }

  engine::Engine* engine_;
  const int index_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_;
  asio::steady_timer cron_;
  std::vector<std::pair<std::unique_ptr<asio::ip::tcp::acceptor>, bool>> acceptors_;  // tls?
  std::unordered_set<std::shared_ptr<ConnectionBase>> connections_;
  std::vector<std::shared_ptr<ConnectionBase>> durable_waiters_;  // see DeferUntilDurable
  bool durable_posted_ = false;
  TlsContexts* tls_ = nullptr;
  std::thread thread_;
};

// One client connection: reads into its buffer, runs every complete command through the
// session, writes the batch of replies at once. Stream is the plain socket or a TLS stream over
// it; the plain path keeps its direct write (one write_some, no reactor round trip), while TLS
// always writes asynchronously (a non-blocking SSL_write may take the bytes and not finish).
template <typename Stream>
class Connection : public std::enable_shared_from_this<Connection<Stream>>, public ConnectionBase {
 public:
  static constexpr bool kTls = !std::is_same_v<Stream, asio::ip::tcp::socket>;

  Connection(Worker* worker, asio::ip::tcp::socket socket) requires(!kTls)
      : worker_(worker), socket_(std::move(socket)) {}
  Connection(Worker* worker, asio::ip::tcp::socket socket, asio::ssl::context& ctx) requires(kTls)
      : worker_(worker), socket_(std::move(socket), ctx) {}

  // The TLS context outlives every stream made from it.
  void KeepContext(std::shared_ptr<asio::ssl::context> ctx) { ctx_ = std::move(ctx); }

  // TLS: the handshake first (with the peer verification tls-auth-clients asks for).
  void Handshake(asio::ssl::verify_mode mode) requires(kTls) {
    asio::error_code ec;
    socket_.set_verify_mode(mode, ec);
    socket_.async_handshake(asio::ssl::stream_base::server,
                            [self = this->shared_from_this()](const asio::error_code& ec) {
                              if (ec) {
                                SPDLOG_DEBUG("tls handshake failed error={}", ec.message());
                                return self->Finish();
                              }
                              self->Start();
                            });
  }

  void Start() {
    asio::error_code ec;
    auto& sock = Socket();
    const std::string peer = Endpoint(sock.remote_endpoint(ec));
    const std::string local = Endpoint(sock.local_endpoint(ec));
    if constexpr (kTls) {
      // Protected mode answers a TLS client over TLS, after the handshake, as Redis does.
      engine::AccessControl* ac = worker_->engine()->access();
      if (ac != nullptr && ac->RefusesPeer(peer)) {
        auto& st = worker_->engine()->stats(worker_->index());
        st.Add(st.rejected_connections);
        auto msg = std::make_shared<std::string>(engine::kProtectedModeDenied);
        asio::async_write(socket_, asio::buffer(*msg),
                          [self = this->shared_from_this(), msg](const asio::error_code&, size_t) {
                            self->Finish();
                          });
        return;
      }
    } else {
      sock.non_blocking(true, ec);
    }
    session_ = std::make_unique<engine::Session>(worker_->engine(), worker_->index(), this, peer,
                                                 local, sock.native_handle());
    in_.resize(kReadBufferSize);
    Read();
  }

  // Output appeared outside a read (a blocked client was served): write it, then run any
  // commands the client pipelined while it was blocked.
  void Wake() override {
    if (closed_ || session_ == nullptr) return;
    Flush();
    ProcessInput();
    Flush();
    MaybeFinish();
    if (!closed_ && !continue_pending_ && session_->yielded()) ScheduleContinue();
  }

  size_t PendingOutput() const override { return writing_ ? wbuf_.size() : 0; }
  size_t ReadBufferCapacity() const override { return in_.size(); }

  void Close() override {
    if (closed_) return;
    asio::post(worker_->io(), [self = this->shared_from_this()] { self->Finish(); });
  }

  void Finish() override {
    if (closed_) return;
    closed_ = true;
    // The session leaves the client list before the peer can see the connection close.
    session_.reset();
    asio::error_code ec;
    Socket().close(ec);
    worker_->Remove(this);
  }

 private:
  asio::ip::tcp::socket& Socket() {
    if constexpr (kTls) {
      return socket_.next_layer();
    } else {
      return socket_;
    }
  }

  void Read() {
    if (reading_ || closed_) return;
    if (in_end_ == in_.size()) {
      if (in_begin_ > 0) {
        std::memmove(in_.data(), in_.data() + in_begin_, in_end_ - in_begin_);
        in_end_ -= in_begin_;
        in_begin_ = 0;
      } else {
        // Grow to hold the bulk being received in one piece (the parser knows its size).
        in_.resize(std::max(in_.size() * 2, session_->bytes_hint() + 2));
      }
    }
    reading_ = true;
    socket_.async_read_some(asio::buffer(in_.data() + in_end_, in_.size() - in_end_),
                            [self = this->shared_from_this()](const asio::error_code& ec,
                                                              size_t n) { self->OnRead(ec, n); });
  }

  void OnRead(const asio::error_code& ec, size_t n) {
    reading_ = false;
    if (closed_) return;
    if (ec) return Finish();  // EOF or reset: nothing more to send to this client
    in_end_ += n;
    AfterInput();
  }

  // Runs what the input holds, writes the replies, and reads more, or, when the session yielded
  // after its turn's budget, continues on a later turn of the event loop (other clients of this
  // worker run in between; reading waits until the pipelined commands are done).
  void AfterInput() {
    ProcessInput();
    Flush();
    if (closed_) return;
    if (session_->closing()) return MaybeFinish();  // QUIT, protocol error: stop reading
    const auto limit = worker_->engine()->settings().query_buffer_limit.load();
    if (static_cast<int64_t>(in_end_ - in_begin_) > limit) {
      spdlog::warn("closing client that reached max query buffer length addr={}", session_->peer());
      return Finish();
    }
    if (session_->yielded()) return ScheduleContinue();
    // With other connections on this worker, the next read waits for their ready handlers: tried
    // at once, right after the replies went out, it mostly finds nothing yet (EAGAIN, a wasted
    // system call). A lone connection has nobody to wait for, and the post would cost a turn of
    // the event loop.
    if (worker_->connection_count() <= 1) return Read();
    asio::post(worker_->io(), [self = this->shared_from_this()] { self->Read(); });
  }

  void ScheduleContinue() {
    continue_pending_ = true;
    asio::post(worker_->io(), [self = this->shared_from_this()] {
      self->continue_pending_ = false;
      if (!self->closed_) self->AfterInput();
    });
  }

  void ProcessInput() {
    if (closed_ || in_begin_ == in_end_) return;
    in_begin_ += session_->Process({in_.data() + in_begin_, in_end_ - in_begin_});
    if (session_->overflowed()) return Finish();  // nothing more is sent to it
    if (in_begin_ == in_end_) {
      in_begin_ = in_end_ = 0;
      if (in_.size() > kShrinkAbove && !reading_) {
        in_.resize(kReadBufferSize);
        in_.shrink_to_fit();
      }
    }
  }

  void FlushDurable() override {
    awaiting_durable_ = false;
    Flush(/*durable=*/true);
    MaybeFinish();
  }

  // Sends the session's output; `durable`: the append-only file already has what it
  // acknowledges (else the worker may hold it back until it does).
  void Flush(bool durable = false) {
    if (closed_ || writing_ || awaiting_durable_) return;
    std::string& out = session_->output();
    if (out.empty()) return;
    if (OverOutputLimit(out.size())) return;
    if (!durable && worker_->DeferUntilDurable(this->shared_from_this())) {
      awaiting_durable_ = true;
      return;
    }
    size_t n = 0;
    if constexpr (!kTls) {
      // Most batches fit the socket buffer: write directly and skip the reactor round trip.
      asio::error_code ec;
      n = socket_.write_some(asio::buffer(out), ec);
      if (ec && ec != asio::error::would_block && ec != asio::error::try_again) return Finish();
      Count(n);
      if (n == out.size()) {
        out.clear();
        if (out.capacity() > kShrinkAbove) std::string().swap(out);
        session_->OutputWritten();
        return;
      }
    }
    std::swap(wbuf_, out);
    out.clear();
    writing_ = true;
    session_->OutputWritten();
    asio::async_write(
        socket_, asio::buffer(wbuf_.data() + n, wbuf_.size() - n),
        [self = this->shared_from_this()](const asio::error_code& ec, size_t written) {
          self->OnWrite(ec, written);
        });
  }

  void OnWrite(const asio::error_code& ec, size_t n) {
    writing_ = false;
    if (closed_) return;
    if (ec) return Finish();
    Count(n);
    wbuf_.clear();
    if (wbuf_.capacity() > kShrinkAbove) std::string().swap(wbuf_);
    session_->OutputWritten();
    Flush();
    MaybeFinish();
  }

  // A client that does not read its replies is disconnected before its output grows unbounded.
  bool OverOutputLimit(size_t pending) {
    if (!session_->OverOutputLimit(pending + wbuf_.size())) return false;
    spdlog::warn("closing client over the output buffer limit addr={} pending={}", session_->peer(),
                 pending + wbuf_.size());
    Finish();
    return true;
  }

  void MaybeFinish() {
    if (!closed_ && session_->closing() && !writing_ && session_->output().empty()) Finish();
  }

  void Count(size_t n) {
    auto& st = worker_->engine()->stats(worker_->index());
    st.Add(st.net_output_bytes, n);
  }

  std::shared_ptr<asio::ssl::context> ctx_;  // TLS: declared first, destroyed after socket_
  Worker* worker_;
  Stream socket_;
  std::unique_ptr<engine::Session> session_;
  std::vector<char> in_;
  size_t in_begin_ = 0, in_end_ = 0;
  std::string wbuf_;  // the batch being written asynchronously
  bool reading_ = false, writing_ = false, closed_ = false;
  bool awaiting_durable_ = false;  // queued by Worker::DeferUntilDurable
  bool continue_pending_ = false;  // an AfterInput is posted (the session yielded)
};

// Binds address:port without SO_REUSEPORT and releases it: fails when anything listens there.
bool PortIsFree(const std::string& address, int port, std::string* error) {
  asio::error_code ec;
  const auto addr = asio::ip::make_address(address, ec);
  if (ec) return true;  // Listen reports the bad address
  asio::io_context io;
  asio::ip::tcp::acceptor probe(io);
  const asio::ip::tcp::endpoint ep(addr, static_cast<uint16_t>(port));
  probe.open(ep.protocol(), ec);
  if (!ec) probe.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec && addr.is_v6()) probe.set_option(asio::ip::v6_only(true), ec);
  if (!ec) probe.bind(ep, ec);
  if (ec) {
    *error = "cannot listen on " + Endpoint(ep) + ": " + ec.message();
    errno = ec.value();
    return false;
  }
  return true;
}

bool Worker::Listen(const std::string& address, int* port, bool tls, std::string* error) {
  asio::error_code ec;
  const auto addr = asio::ip::make_address(address, ec);
  if (ec) {
    *error = "invalid bind address '" + address + "'";
    return false;
  }
  const asio::ip::tcp::endpoint ep(addr, static_cast<uint16_t>(*port));
  auto acceptor = std::make_unique<asio::ip::tcp::acceptor>(io_);
  acceptor->open(ep.protocol(), ec);
  if (!ec) acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) {
    int one = 1;
    if (setsockopt(acceptor->native_handle(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0)
      ec = asio::error_code(errno, asio::system_category());
  }
  if (!ec && addr.is_v6()) acceptor->set_option(asio::ip::v6_only(true), ec);
  if (!ec) acceptor->bind(ep, ec);
  if (!ec) acceptor->listen(static_cast<int>(engine_->config().server.tcp_backlog), ec);
  if (ec) {
    *error = "cannot listen on " + Endpoint(ep) + ": " + ec.message();
    errno = ec.value();
    return false;
  }
  *port = acceptor->local_endpoint().port();
  acceptors_.emplace_back(std::move(acceptor), tls);
  return true;
}

void Worker::Accept(asio::ip::tcp::acceptor& acceptor, bool tls) {
  acceptor.async_accept(
      io_, [this, &acceptor, tls](const asio::error_code& ec, asio::ip::tcp::socket socket) {
        if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
        if (!ec) OnAccept(std::move(socket), tls);
        Accept(acceptor, tls);
      });
}

void Worker::OnAccept(asio::ip::tcp::socket socket, bool tls) {
  asio::error_code ec;
  auto& st = engine_->stats(index_);
  if (engine_->connected_clients().load() >= engine_->settings().maxclients.load()) {
    static constexpr char kMsg[] = "-ERR max number of clients reached\r\n";
    if (!tls) socket.write_some(asio::buffer(kMsg, sizeof(kMsg) - 1), ec);
    st.Add(st.rejected_connections);
    return;
  }
  // Protected mode: no password for the default user, and a peer that is not loopback (a TLS
  // client is answered after its handshake).
  if (engine::AccessControl* ac = engine_->access(); ac != nullptr && !tls) {
    const auto peer = socket.remote_endpoint(ec);
    if (!ec && ac->RefusesPeer(Endpoint(peer))) {
      socket.write_some(
          asio::buffer(engine::kProtectedModeDenied, std::strlen(engine::kProtectedModeDenied)),
          ec);
      st.Add(st.rejected_connections);
      return;
    }
  }
  socket.set_option(asio::ip::tcp::no_delay(true), ec);
  const int64_t keepalive = engine_->config().server.tcp_keepalive;
  if (keepalive > 0) {
    socket.set_option(asio::socket_base::keep_alive(true), ec);
    int idle = static_cast<int>(keepalive);
    setsockopt(socket.native_handle(), IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
  }
  if (tls) {
    auto ctx = tls_->current();
    auto conn = std::make_shared<Connection<asio::ssl::stream<asio::ip::tcp::socket>>>(
        this, std::move(socket), *ctx);
    conn->KeepContext(std::move(ctx));
    connections_.insert(conn);
    conn->Handshake(tls_->VerifyMode());
    return;
  }
  auto conn = std::make_shared<Connection<asio::ip::tcp::socket>>(this, std::move(socket));
  connections_.insert(conn);
  conn->Start();
}

void Worker::Remove(ConnectionBase* c) {
  for (auto it = connections_.begin(); it != connections_.end(); ++it) {
    if (it->get() == c) {
      // Keep the connection alive until the current handler returns.
      asio::post(io_, [keep = *it] {});
      connections_.erase(it);
      return;
    }
  }
}

void Worker::Stop() {
  asio::post(io_, [this] {
    asio::error_code ec;
    for (auto& [a, tls] : acceptors_) a->close(ec);
    cron_.cancel();
    std::vector<std::shared_ptr<ConnectionBase>> all(connections_.begin(), connections_.end());
    for (auto& c : all) c->Finish();
    guard_.reset();
    io_.stop();
  });
}

NetServer::NetServer(engine::Engine* engine) : engine_(engine) {}

NetServer::~NetServer() { Stop(); }

namespace {

// One entry of `bind`: "-addr" may fail to bind (it is optional), "*" is every IPv4 address and
// "::*" every IPv6 address, as in Redis.
struct BindAddress {
  std::string address;
  bool optional;
};

std::vector<BindAddress> BindAddresses(const std::string& bind) {
  std::vector<BindAddress> out;
  for (std::string a : SplitSpaces(bind)) {
    const bool optional = a[0] == '-';
    if (optional) a.erase(0, 1);
    if (a == "*") a = "0.0.0.0";
    if (a == "::*") a = "::";
    out.push_back({a, optional});
  }
  if (out.empty()) out.push_back({"127.0.0.1", false});
  return out;
}

// Redis goes on without an address it cannot assign when the address is optional, and without
// a protocol the system lacks (no IPv6).
bool Skippable(int err, bool optional) {
  if (err == EADDRNOTAVAIL && optional) return true;
  return err == ENOPROTOOPT || err == EPROTONOSUPPORT || err == ESOCKTNOSUPPORT ||
         err == EPFNOSUPPORT || err == EAFNOSUPPORT;
}

}  // namespace

bool NetServer::Listen(std::string* error) {
  const auto& cfg = engine_->config().server;
  int threads = cfg.threads;
  if (threads <= 0) threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<engine::WorkerExecutor*> executors;
  for (int i = 0; i < threads; ++i) {
    workers_.push_back(std::make_unique<Worker>(engine_, i));
    executors.push_back(workers_.back().get());
  }
  const std::vector<BindAddress> addresses = BindAddresses(cfg.bind);
  const int tls_port = static_cast<int>(engine_->ParamInt(engine::ParamValues::Find("tls-port")));
  if (tls_port != 0) {
    tls_ = std::make_unique<TlsContexts>(engine_);
    if (!tls_->Reload(error)) {
      *error = "Failed to configure TLS: " + *error;
      return false;
    }
    for (auto& w : workers_) w->set_tls(tls_.get());
    // CONFIG SET of any TLS parameter rebuilds the context (new connections use it).
    auto apply = std::make_shared<engine::Engine::ParamApply>([this] {
      std::string why;
      return tls_->Reload(&why) ? std::string()
                                : std::string(
                                      "Unable to update TLS configuration. Check server "
                                      "logs.");
    });
    for (const char* p :
         {"tls-cert-file", "tls-key-file", "tls-key-file-pass", "tls-dh-params-file",
          "tls-ca-cert-file", "tls-ca-cert-dir", "tls-protocols", "tls-ciphers", "tls-ciphersuites",
          "tls-prefer-server-ciphers", "tls-session-caching", "tls-session-cache-size",
          "tls-session-cache-timeout", "tls-auth-clients"})
      engine_->OnParamSet(p, apply);
  }
  // With a TLS port, port 0 means no plain listener (Redis's `port 0`); without one, port 0
  // picks a free port (tests).
  const bool plain = cfg.port != 0 || tls_port == 0;
  int port = cfg.port;
  int bound = 0;
  for (const bool tls : {false, true}) {
    if (tls ? tls_port == 0 : !plain) continue;
    int p = tls ? tls_port : port;
    // SO_REUSEPORT would let this server share a port another process already listens on (each
    // then gets part of the connections): bind once without it first, as a plain server would.
    std::vector<BindAddress> usable;
    for (const auto& a : addresses) {
      if (p == 0 || PortIsFree(a.address, p, error)) {
        usable.push_back(a);
      } else if (!Skippable(errno, a.optional)) {
        return false;
      } else {
        spdlog::warn("could not listen, skipped: {}", *error);
      }
    }
    for (const auto& a : usable) {
      bool ok = true;
      // The first bind may pick a free port (port 0); every other listener shares it.
      for (auto& w : workers_) ok = ok && w->Listen(a.address, &p, tls, error);
      if (ok) ++bound;
      if (!ok) return false;
    }
    if (!tls) port = p;
  }
  if (bound == 0) {
    *error = "Configured to not listen anywhere, exiting.";
    return false;
  }
  port_ = plain ? port : tls_port;
  tls_port_ = tls_port;
  engine_->set_port(port_);
  engine_->AttachWorkers(std::move(executors));
  return true;
}

void NetServer::Start() {
  for (auto& w : workers_) w->Start();
  started_ = true;
}

void NetServer::Stop() {
  if (stopped_ || !started_) return;
  stopped_ = true;
  for (auto& w : workers_) w->Stop();
  for (auto& w : workers_) w->Join();
}

}  // namespace vessel::net
