// A worker of the network layer (its thread, io_context, listeners and cron, the read buffer its
// plain connections share, and what it knows of its connections), for host/net only: it pulls in
// asio.
//
// Threads: everything of a Worker (acceptors, connections, timers) runs on its own thread; the
// only cross-thread entry points are Post/PostAfter (asio::post is thread safe) and Stop.
#ifndef VESSEL_HOST_NET_WORKER_H_
#define VESSEL_HOST_NET_WORKER_H_

#include <algorithm>
#include <asio.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

#include "host/engine/engine.h"
#include "host/engine/session.h"

namespace vessel::net {

class TlsContexts;

inline constexpr size_t kReadBufferSize = 16 * 1024;
inline constexpr size_t kShrinkAbove = 256 * 1024;

// "address:port", IPv6 addresses in brackets.
std::string Endpoint(const asio::ip::tcp::endpoint& ep);

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
  // Admits the socket (maxclients, protected mode) and starts its connection (connection.cc).
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

}  // namespace vessel::net

#endif  // VESSEL_HOST_NET_WORKER_H_
