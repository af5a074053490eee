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
#include <cstdlib>
#include <cstring>
#include <list>
#include <new>
#include <string_view>
#include <thread>
#include <unordered_set>

#include "host/engine/strutil.h"
#include "host/net/tls.h"
#include "spdlog/spdlog.h"

namespace vessel::net {
namespace {

constexpr size_t kReadBufferSize = 16 * 1024;
constexpr size_t kShrinkAbove = 256 * 1024;
// The longest a TLS handshake may take (shorter when `timeout` is): Redis leaves a silent one
// open forever with timeout 0, holding a descriptor and about 85 KB.
constexpr int64_t kHandshakeSeconds = 10;

std::string Endpoint(const asio::ip::tcp::endpoint& ep) {
  const auto addr = ep.address();
  if (addr.is_v6()) return "[" + addr.to_string() + "]:" + std::to_string(ep.port());
  return addr.to_string() + ":" + std::to_string(ep.port());
}

// A connection's own input storage: the bytes of a command not complete yet (a plain connection
// reads into its worker's shared buffer otherwise), or the read buffer of a TLS connection. It
// grows with the bytes that arrive, never to a length a client only announces: a declared bulk
// of 512 MB commits memory as its bytes come, as in Redis. Malloc'ed, never zero-filled.
class InputBuffer {
 public:
  InputBuffer() = default;
  ~InputBuffer() { std::free(data_); }
  InputBuffer(const InputBuffer&) = delete;
  InputBuffer& operator=(const InputBuffer&) = delete;

  std::string_view pending() const { return {data_ + begin_, end_ - begin_}; }
  size_t size() const { return end_ - begin_; }
  bool empty() const { return begin_ == end_; }
  size_t capacity() const { return capacity_; }
  void Consume(size_t n) { begin_ += n; }

  // Room for the next read at tail(): moves the pending bytes to the front; when full, grows to
  // twice the capacity (kReadBufferSize at least), but not past `needed` (the bytes the command
  // in progress needs in all, from the first pending byte; 0 when unknown) when it is larger than
  // kReadBufferSize, so a large bulk ends in a buffer of exactly its size.
  void MakeRoom(size_t needed) {
    if (begin_ > 0) {
      std::memmove(data_, data_ + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (end_ < capacity_) return;
    size_t next = std::max(capacity_ * 2, kReadBufferSize);
    if (needed > end_) next = std::min(next, std::max(needed, kReadBufferSize));
    Resize(next);
  }
  char* tail() { return data_ + end_; }
  size_t room() const { return capacity_ - end_; }
  void Commit(size_t n) { end_ += n; }

  // Keeps bytes that were read elsewhere (the worker's shared buffer).
  void Append(std::string_view bytes) {
    MakeRoom(0);
    if (room() < bytes.size()) Resize(std::max(end_ + bytes.size(), kReadBufferSize));
    std::memcpy(tail(), bytes.data(), bytes.size());
    end_ += bytes.size();
  }

  // Empty: back to the start, and the storage given back (`keep`: up to kReadBufferSize of it
  // stays, for a TLS connection that reads into it again).
  void Reset(bool keep) {
    begin_ = end_ = 0;
    if (keep && capacity_ <= kShrinkAbove) return;
    std::free(data_);
    data_ = nullptr;
    capacity_ = 0;
    if (keep) Resize(kReadBufferSize);
  }

 private:
  void Resize(size_t capacity) {
    void* p = std::realloc(data_, capacity);
    if (p == nullptr) throw std::bad_alloc();
    data_ = static_cast<char*>(p);
    capacity_ = capacity;
  }

  char* data_ = nullptr;
  size_t begin_ = 0, end_ = 0, capacity_ = 0;
};

}  // namespace

// What a worker knows of its connections, plain or TLS.
class ConnectionBase : public engine::SessionIo {
 public:
  // Closes immediately (server stop); the session is destroyed on this thread.
  virtual void Finish() = 0;
  // The append-only file has the records of the writes this connection's replies acknowledge:
  // sends what Worker::DeferUntilDurable held back.
  virtual void FlushDurable() = 0;
  // The worker's cron, for a connection in its list of busy readers (Worker::busy_readers):
  // kReleased when the connection had nothing to read for a whole tick and gave its read buffer
  // back (or is closed), kBusy when it read during the last tick, kMoved when it moved itself
  // to the end of the list instead (a write is in flight).
  enum class Idleness { kReleased, kBusy, kMoved };
  virtual Idleness ReleaseIdleReadBuffer(uint64_t tick) = 0;
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
    asio::post(io_, [this, f = std::move(fn)]() mutable { RunOrHold(std::move(f)); });
  }

  void PostAfter(int64_t delay_ms, absl::AnyInvocable<void() &&> fn) override {
    auto timer = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(delay_ms));
    timer->async_wait([this, timer, f = std::move(fn)](const asio::error_code& ec) mutable {
      if (!ec) RunOrHold(std::move(f));
    });
  }

  // A script of this worker runs past busy-reply-threshold: its hook runs the handlers that are
  // ready (asio supports a nested poll from inside a handler). Connections are read and answered
  // (BUSY, or SCRIPT KILL and the other allow-busy commands); everything else that would touch
  // the keyspace or the sessions (posted work, timers, connection teardown) is held back until
  // EndPump, because the script holds locks on this very thread.
  void Pump() override {
    held_back_ = true;
    io_.poll();
  }

  void EndPump() override {
    held_back_ = false;
    std::vector<absl::AnyInvocable<void() &&>> held;
    held.swap(held_);
    for (auto& f : held) Post(std::move(f));
  }

  // Runs fn now, or after the script when a pump holds work back (see Pump).
  void RunOrHold(absl::AnyInvocable<void() &&> fn) {
    if (held_back_) {
      held_.push_back(std::move(fn));
      return;
    }
    std::move(fn)();
  }
  bool holding_back() const { return held_back_; }

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

  // The read buffer (kReadBufferSize) that this worker's plain connections share, so an idle
  // connection holds none: a connection takes it for one read and the commands it completes,
  // and gives it back before its handler returns. Null while another holds it (a handler run
  // from inside a command): that one reads into its own storage.
  char* TakeReadBuffer() {
    if (read_buffer_busy_) return nullptr;
    if (read_buffer_ == nullptr) read_buffer_ = std::make_unique<char[]>(kReadBufferSize);
    read_buffer_busy_ = true;
    return read_buffer_.get();
  }
  void GiveBackReadBuffer() { read_buffer_busy_ = false; }

  // Plain connections that read into a buffer of their own because they are busy (an async read
  // costs no epoll_ctl, a wait for readability does), least recently read first; the cron takes
  // the buffer back from those that read nothing for a whole tick. Entries of connections gone
  // meanwhile are dropped when they come first.
  using BusyReaders = std::list<std::weak_ptr<ConnectionBase>>;
  BusyReaders& busy_readers() { return busy_readers_; }
  // Cron ticks so far (engine `hz` a second).
  uint64_t tick() const { return tick_; }

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
    if (held_back_) {  // inside a busy script (Pump): the script's output is not complete yet
      held_.push_back([this] { RunDurable(); });
      return;
    }
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
      ++tick_;
      if (!held_back_) {  // inside a busy script (Pump): the next tick
        ReleaseIdleReadBuffers();
        engine_->Cron(index_);
      }
      ScheduleCron();
    });
  }

  void ReleaseIdleReadBuffers() {
    while (!busy_readers_.empty()) {
      const std::shared_ptr<ConnectionBase> c = busy_readers_.front().lock();
      const ConnectionBase::Idleness idle =
          c == nullptr ? ConnectionBase::Idleness::kReleased : c->ReleaseIdleReadBuffer(tick_);
      if (idle == ConnectionBase::Idleness::kBusy) break;  // the rest read even later
      if (idle == ConnectionBase::Idleness::kReleased) busy_readers_.pop_front();
    }
  }

  engine::Engine* engine_;
  const int index_;
  BusyReaders busy_readers_;  // before io_: outlives the handlers that hold connections
  uint64_t tick_ = 0;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_;
  asio::steady_timer cron_;
  std::vector<std::pair<std::unique_ptr<asio::ip::tcp::acceptor>, bool>> acceptors_;  // tls?
  std::unordered_set<std::shared_ptr<ConnectionBase>> connections_;
  std::vector<std::shared_ptr<ConnectionBase>> durable_waiters_;  // see DeferUntilDurable
  bool durable_posted_ = false;
  bool held_back_ = false;                           // inside Pump, until EndPump
  std::vector<absl::AnyInvocable<void() &&>> held_;  // work held back by Pump
  std::unique_ptr<char[]> read_buffer_;              // see TakeReadBuffer
  bool read_buffer_busy_ = false;
  TlsContexts* tls_ = nullptr;
  std::thread thread_;
};

// One client connection: reads, runs every complete command through the session, writes the
// batch of replies at once. Stream is the plain socket or a TLS stream over it; the plain path
// keeps its direct write (one write_some, no reactor round trip), while TLS always writes
// asynchronously (a non-blocking SSL_write may take the bytes and not finish).
//
// Input: a plain connection that is not busy waits for readability without a buffer, then reads
// into its worker's shared buffer and keeps only what is left of it (a command not complete yet,
// or commands held back while it is blocked, paused or yielded) in its own InputBuffer, into
// which it reads until that is consumed. One that reads again within a cron tick is busy: it
// reads into a buffer of its own, as asio's async reads need (a wait for readability costs an
// epoll_ctl a batch), until it reads nothing for a whole tick and the worker takes the buffer
// back (Worker::busy_readers). An idle plain connection holds no input storage. A TLS connection
// always reads into its own buffer (asio's stream holds the buffer for the whole wait).
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

  // TLS: the handshake first (with the peer verification tls-auth-clients asks for). The
  // worker counted the connection as a client at accept, as Redis does, so handshakes count
  // against maxclients; the count passes to the session once it is done. A handshake that has not
  // finished after `timeout` (kHandshakeSeconds at most) is closed.
  void Handshake(asio::ssl::verify_mode mode) requires(kTls) {
    handshaking_ = true;
    asio::error_code ec;
    socket_.set_verify_mode(mode, ec);
    const int64_t timeout = worker_->engine()->settings().timeout.load(std::memory_order_relaxed);
    handshake_timer_ = std::make_unique<asio::steady_timer>(
        worker_->io(), std::chrono::seconds(timeout > 0 ? std::min(timeout, kHandshakeSeconds)
                                                        : kHandshakeSeconds));
    handshake_timer_->async_wait([weak = this->weak_from_this()](const asio::error_code& ec) {
      auto self = weak.lock();
      if (ec || self == nullptr || !self->handshaking_) return;
      SPDLOG_DEBUG("tls handshake timed out");
      self->Finish();  // the handshake's handler then runs, aborted
    });
    socket_.async_handshake(asio::ssl::stream_base::server,
                            [self = this->shared_from_this()](const asio::error_code& ec) {
                              self->EndHandshake();
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
    worker_->Post([self = this->shared_from_this()] { self->Finish(); });
  }

  void Finish() override {
    if (closed_) return;
    if (worker_->holding_back() || in_process_) {
      // Inside a busy script's pump (Worker::Pump), or this connection's session is running a
      // command: the session is destroyed after the script, when it may take its shards.
      if (!finish_held_) {
        finish_held_ = true;
        worker_->Post([self = this->shared_from_this()] {
          self->finish_held_ = false;
          self->Finish();
        });
      }
      return;
    }
    closed_ = true;
    // The session leaves the client list before the peer can see the connection close.
    session_.reset();
    asio::error_code ec;
    Socket().close(ec);
    worker_->Remove(this);
  }

  // ConnectionBase: see Worker::busy_readers.
  Idleness ReleaseIdleReadBuffer(uint64_t tick) override {
    if (closed_ || !busy_) {
      busy_ = false;
      return Idleness::kReleased;
    }
    if (last_read_tick_ + 1 >= tick) return Idleness::kBusy;
    if (writing_) {  // a cancel would abort the write too: look again a tick later
      last_read_tick_ = tick;
      auto& list = worker_->busy_readers();
      list.splice(list.end(), list, busy_pos_);
      return Idleness::kMoved;
    }
    busy_ = false;
    asio::error_code ec;
    if (read_into_in_) {
      Socket().cancel(ec);  // OnRead then waits without the buffer
    } else if (in_.empty()) {
      in_.Reset(/*keep=*/false);
    }
    return Idleness::kReleased;
  }

 private:
  asio::ip::tcp::socket& Socket() {
    if constexpr (kTls) {
      return socket_.next_layer();
    } else {
      return socket_;
    }
  }

  void EndHandshake() requires(kTls) {
    if (!handshaking_) return;
    handshaking_ = false;
    handshake_timer_.reset();  // cancels its wait
    worker_->engine()->connected_clients().fetch_sub(1, std::memory_order_relaxed);
  }

  void Read() {
    if (reading_ || closed_) return;
    reading_ = true;
    if constexpr (!kTls) {
      if (!busy_) {
        socket_.async_wait(asio::socket_base::wait_read,
                           [self = this->shared_from_this()](const asio::error_code& ec) {
                             self->OnReadable(ec);
                           });
        return;
      }
    }
    in_.MakeRoom(session_->bytes_hint());
    read_into_in_ = true;
    socket_.async_read_some(asio::buffer(in_.tail(), in_.room()),
                            [self = this->shared_from_this()](const asio::error_code& ec,
                                                              size_t n) { self->OnRead(ec, n); });
  }

  void OnRead(const asio::error_code& ec, size_t n) {
    reading_ = read_into_in_ = false;
    if (closed_) return;
    if (ec == asio::error::operation_aborted && !kTls && !busy_) {
      // Idle: the worker took the buffer back (ReleaseIdleReadBuffer).
      if (in_process_) {  // not while the running command's arguments are in it (AfterInput)
        input_while_processing_ = true;
        return;
      }
      if (in_.empty()) in_.Reset(/*keep=*/false);
      return Read();
    }
    if (ec) return Finish();  // EOF or reset: nothing more to send to this client
    in_.Commit(n);
    if (busy_) {
      last_read_tick_ = worker_->tick();
      auto& list = worker_->busy_readers();
      list.splice(list.end(), list, busy_pos_);
    }
    AfterInput();
  }

  // Reads what has arrived: into the worker's shared buffer when nothing is pending here, else
  // after the pending bytes (the command they start needs them in one piece).
  void OnReadable(const asio::error_code& ec) requires(!kTls) {
    reading_ = false;
    if (closed_) return;
    if (ec) return Finish();
    if (in_process_) {  // from a busy script's pump: in_ holds the running command (AfterInput)
      input_while_processing_ = true;
      return;
    }
    char* shared = in_.empty() ? worker_->TakeReadBuffer() : nullptr;
    if (shared == nullptr) in_.MakeRoom(session_->bytes_hint());
    asio::error_code rec;
    const size_t n = socket_.read_some(shared != nullptr ? asio::buffer(shared, kReadBufferSize)
                                                         : asio::buffer(in_.tail(), in_.room()),
                                       rec);
    if (rec) {
      if (shared != nullptr) worker_->GiveBackReadBuffer();
      if (rec == asio::error::would_block || rec == asio::error::try_again) return Read();
      return Finish();  // EOF or reset: nothing more to send to this client
    }
    if (shared != nullptr) {
      shared_ = {shared, n};
    } else {
      in_.Commit(n);
    }
    // Read again within a tick: busy from now on.
    const uint64_t tick = worker_->tick();
    if (last_read_tick_ != kNoRead && last_read_tick_ + 1 >= tick && !busy_) {
      busy_ = true;
      auto& list = worker_->busy_readers();
      busy_pos_ = list.insert(list.end(), this->weak_from_this());
    }
    last_read_tick_ = tick;
    AfterInput();
  }

  // Runs what the input holds, writes the replies, and reads more, or, when the session yielded
  // after its turn's budget, continues on a later turn of the event loop (other clients of this
  // worker run in between; reading waits until the pipelined commands are done).
  void AfterInput() {
    if (in_process_) {
      // A read completed from inside a busy script's pump while this connection's session runs
      // that script: its arguments point into the buffer, which must not move or be parsed now.
      // The input is processed once the running command returns (ProcessInput).
      input_while_processing_ = true;
      return;
    }
    ProcessInput();
    KeepRest();
    Flush();
    if (closed_) return;
    if (session_->closing()) return MaybeFinish();  // QUIT, protocol error: stop reading
    const auto limit = worker_->engine()->settings().query_buffer_limit.load();
    if (static_cast<int64_t>(in_.size()) > limit) {
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
    if (closed_ || finish_held_) return;
    // While the session runs a command this connection's handlers may run again from a busy
    // script's pump (Worker::Pump): they must not read into, move, send or drop what the running
    // command uses (its arguments, its output) meanwhile.
    in_process_ = true;
    if (shared_.data() != nullptr) {
      if (!shared_.empty()) shared_.remove_prefix(session_->Process(shared_));
    } else if (!in_.empty()) {
      in_.Consume(session_->Process(in_.pending()));
      // Consumed: the storage goes back, except the read buffer of a TLS or busy connection, kept
      // (and while a read is pending into it, at its current end).
      if (in_.empty() && !read_into_in_) in_.Reset(/*keep=*/kTls || busy_);
    }
    in_process_ = false;
    if (input_while_processing_) {  // see AfterInput: reading resumes from there
      input_while_processing_ = false;
      if (!continue_pending_) ScheduleContinue();
    }
    if (session_->overflowed()) return Finish();  // nothing more is sent to it
  }

  // Done with the worker's shared buffer: what is left of it (a partial command, or commands
  // held back) moves to this connection's own storage.
  void KeepRest() {
    if (shared_.data() == nullptr) return;
    if (!closed_ && !shared_.empty()) in_.Append(shared_);
    shared_ = {};
    worker_->GiveBackReadBuffer();
  }

  void FlushDurable() override {
    awaiting_durable_ = false;
    Flush(/*durable=*/true);
    MaybeFinish();
  }

  // Sends the session's output; `durable`: the append-only file already has what it
  // acknowledges (else the worker may hold it back until it does).
  void Flush(bool durable = false) {
    if (closed_ || writing_ || awaiting_durable_ || in_process_) return;
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
  InputBuffer in_;
  std::string_view shared_;  // unconsumed input in the worker's shared buffer (during a read)
  std::unique_ptr<asio::steady_timer> handshake_timer_;  // TLS: the handshake's deadline
  bool handshaking_ = false;  // TLS: counted in connected_clients by the worker, not a session
  // Plain: reads into in_ (see Worker::busy_readers, where busy_pos_ is its entry); the cron tick
  // of its last read.
  bool busy_ = false;
  Worker::BusyReaders::iterator busy_pos_;
  static constexpr uint64_t kNoRead = UINT64_MAX;
  uint64_t last_read_tick_ = kNoRead;
  std::string wbuf_;  // the batch being written asynchronously
  bool reading_ = false, writing_ = false, closed_ = false;
  bool read_into_in_ = false;      // the pending read writes at in_.tail(): in_ stays where it is
  bool awaiting_durable_ = false;  // queued by Worker::DeferUntilDurable
  bool continue_pending_ = false;  // an AfterInput is posted (the session yielded)
  bool in_process_ = false;        // the session is running commands (ProcessInput)
  bool input_while_processing_ = false;  // a read completed meanwhile (a busy script's pump)
  bool finish_held_ = false;             // Finish waits for a busy script's end (Worker::Pump)
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
    engine_->connected_clients().fetch_add(1, std::memory_order_relaxed);  // see Handshake
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
  Post([this] {
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
  for (std::string a : engine::SplitWords(bind)) {
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
