// TLS for the listeners: an OpenSSL context (through asio::ssl) built from Redis's tls-*
// parameters, and rebuilt whole when CONFIG SET changes one of them; connections keep the
// context they were accepted with. Only host/net includes this header (it pulls in asio).
//
// Thread safety: current() and Reload() may run on any thread; mu_ guards the pointer swap. An
// asio::ssl::context is shared by the streams of every worker (SSL_CTX is thread safe for that).
#ifndef VESSEL_HOST_NET_TLS_H_
#define VESSEL_HOST_NET_TLS_H_

#include <asio.hpp>
#include <asio/ssl.hpp>
#include <memory>
#include <mutex>
#include <string>

#include "host/engine/engine.h"

namespace vessel::net {

class TlsContexts {
 public:
  explicit TlsContexts(engine::Engine* engine) : engine_(engine) {}

  // Builds a context from the current tls-* parameters; on failure keeps the previous one and
  // returns false with the reason (also logged).
  bool Reload(std::string* error);
  std::shared_ptr<asio::ssl::context> current() const {
    std::lock_guard l(mu_);
    return ctx_;
  }
  // What tls-auth-clients asks of a new connection's peer certificate.
  asio::ssl::verify_mode VerifyMode() const;

 private:
  engine::Engine* engine_;
  mutable std::mutex mu_;
  std::shared_ptr<asio::ssl::context> ctx_;
};

}  // namespace vessel::net

#endif  // VESSEL_HOST_NET_TLS_H_
