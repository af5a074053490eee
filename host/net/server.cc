// The network layer's listeners and lifecycle: NetServer binds every address of `bind` on every
// worker (one SO_REUSEPORT listener each) and starts and stops the workers (worker.h), whose
// connections are in connection.cc.
#include "host/net/server.h"

#include <sys/socket.h>

#include <algorithm>
#include <asio.hpp>
#include <cerrno>
#include <string>
#include <thread>
#include <vector>

#include "host/engine/strutil.h"
#include "host/net/tls.h"
#include "host/net/worker.h"
#include "spdlog/spdlog.h"

namespace vessel::net {

std::string Endpoint(const asio::ip::tcp::endpoint& ep) {
  const auto addr = ep.address();
  if (addr.is_v6()) return "[" + addr.to_string() + "]:" + std::to_string(ep.port());
  return addr.to_string() + ":" + std::to_string(ep.port());
}

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
