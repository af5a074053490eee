// One client connection, plain TCP or TLS: reads into its worker's shared buffer or its own,
// runs every complete command through its engine Session, and writes each batch of replies with
// one syscall; and Worker::OnAccept, which makes connections.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <asio.hpp>
#include <asio/ssl.hpp>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string_view>
#include <type_traits>

#include "host/net/tls.h"
#include "host/net/worker.h"
#include "spdlog/spdlog.h"

namespace vessel::net {
namespace {

// The longest a TLS handshake may take (shorter when `timeout` is): Redis leaves a silent one
// open forever with timeout 0, holding a descriptor and about 85 KB.
constexpr int64_t kHandshakeSeconds = 10;

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

}  // namespace

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

}  // namespace vessel::net
