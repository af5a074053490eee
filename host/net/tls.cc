// The TLS context of the listeners, configured as Redis 7.0's tlsConfigure does: protocols,
// certificate chain and key (with its passphrase), CA file or directory, ciphers and TLS 1.3
// ciphersuites, server cipher preference, session cache, DH parameters.
#include "host/net/tls.h"

#include <openssl/decoder.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <cstdio>
#include <cstring>

#include "host/engine/strutil.h"
#include "spdlog/spdlog.h"

namespace vessel::net {
namespace {

std::string OpenSslError() {
  char buf[256];
  ERR_error_string_n(ERR_get_error(), buf, sizeof(buf));
  ERR_clear_error();
  return buf;
}

// tls-protocols: words among TLSv1, TLSv1.1, TLSv1.2, TLSv1.3; empty = TLSv1.2 and TLSv1.3.
bool ProtocolOptions(std::string_view text, long* no_options) {
  bool v1 = false, v11 = false, v12 = false, v13 = false;
  const auto words = engine::SplitWords(text);
  if (words.empty()) {
    v12 = v13 = true;
  }
  for (const std::string& w : words) {
    if (engine::EqualsIgnoreCase(w, "tlsv1")) {
      v1 = true;
    } else if (engine::EqualsIgnoreCase(w, "tlsv1.1")) {
      v11 = true;
    } else if (engine::EqualsIgnoreCase(w, "tlsv1.2")) {
      v12 = true;
    } else if (engine::EqualsIgnoreCase(w, "tlsv1.3")) {
      v13 = true;
    } else {
      return false;
    }
  }
  *no_options = (v1 ? 0 : SSL_OP_NO_TLSv1) | (v11 ? 0 : SSL_OP_NO_TLSv1_1) |
                (v12 ? 0 : SSL_OP_NO_TLSv1_2) | (v13 ? 0 : SSL_OP_NO_TLSv1_3);
  return true;
}

bool LoadDhParams(SSL_CTX* ctx, const std::string& file, std::string* error) {
  std::FILE* f = std::fopen(file.c_str(), "r");
  if (f == nullptr) {
    *error = engine::Cat("Failed to load ", file, ": ", std::strerror(errno));
    return false;
  }
  EVP_PKEY* pkey = nullptr;
  OSSL_DECODER_CTX* dctx = OSSL_DECODER_CTX_new_for_pkey(
      &pkey, "PEM", nullptr, "DH", OSSL_KEYMGMT_SELECT_DOMAIN_PARAMETERS, nullptr, nullptr);
  const bool read = dctx != nullptr && OSSL_DECODER_from_fp(dctx, f);
  if (dctx != nullptr) OSSL_DECODER_CTX_free(dctx);
  std::fclose(f);
  if (!read) {
    *error = engine::Cat(file, ": failed to read DH params.");
    return false;
  }
  if (SSL_CTX_set0_tmp_dh_pkey(ctx, pkey) <= 0) {
    *error = engine::Cat("Failed to load DH params file: ", file, ": ", OpenSslError());
    EVP_PKEY_free(pkey);
    return false;
  }
  return true;
}

std::shared_ptr<asio::ssl::context> Build(engine::Engine& e, std::string* error) {
  auto text = [&](const char* name) {
    return e.settings().params.Text(engine::ParamValues::Find(name));
  };
  const std::string cert = text("tls-cert-file"), key = text("tls-key-file");
  const std::string ca_file = text("tls-ca-cert-file"), ca_dir = text("tls-ca-cert-dir");
  if (cert.empty()) {
    *error = "No tls-cert-file configured!";
    return nullptr;
  }
  if (key.empty()) {
    *error = "No tls-key-file configured!";
    return nullptr;
  }
  if (text("tls-auth-clients") != "no" && ca_file.empty() && ca_dir.empty()) {
    *error =
        "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, "
        "tls-replication or tls-auth-clients are enabled!";
    return nullptr;
  }
  long no_protocols = 0;
  if (!ProtocolOptions(text("tls-protocols"), &no_protocols)) {
    *error =
        "Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and "
        "'TLSv1.3'.";
    return nullptr;
  }
  auto ctx = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_server);
  SSL_CTX* c = ctx->native_handle();
  SSL_CTX_set_options(c, SSL_OP_NO_SSLv2 | SSL_OP_NO_SSLv3 | SSL_OP_DONT_INSERT_EMPTY_FRAGMENTS |
                             SSL_OP_NO_COMPRESSION | SSL_OP_SINGLE_DH_USE | no_protocols);
#ifdef SSL_OP_NO_CLIENT_RENEGOTIATION  // OpenSSL 3.0 refuses client renegotiation by default
  SSL_CTX_set_options(c, SSL_OP_NO_CLIENT_RENEGOTIATION);
#endif
  if (text("tls-prefer-server-ciphers") == "yes")
    SSL_CTX_set_options(c, SSL_OP_CIPHER_SERVER_PREFERENCE);
  SSL_CTX_set_mode(c, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  const std::string pass = text("tls-key-file-pass");
  ctx->set_password_callback([pass](size_t, asio::ssl::context::password_purpose) { return pass; });
  if (SSL_CTX_use_certificate_chain_file(c, cert.c_str()) <= 0) {
    *error = engine::Cat("Failed to load certificate: ", cert, ": ", OpenSslError());
    return nullptr;
  }
  if (SSL_CTX_use_PrivateKey_file(c, key.c_str(), SSL_FILETYPE_PEM) <= 0) {
    *error = engine::Cat("Failed to load private key: ", key, ": ", OpenSslError());
    return nullptr;
  }
  if ((!ca_file.empty() || !ca_dir.empty()) &&
      SSL_CTX_load_verify_locations(c, ca_file.empty() ? nullptr : ca_file.c_str(),
                                    ca_dir.empty() ? nullptr : ca_dir.c_str()) <= 0) {
    *error = engine::Cat("Failed to configure CA certificate(s) file/directory: ", OpenSslError());
    return nullptr;
  }
  const std::string ciphers = text("tls-ciphers"), suites = text("tls-ciphersuites");
  if (!ciphers.empty() && !SSL_CTX_set_cipher_list(c, ciphers.c_str())) {
    *error = engine::Cat("Failed to configure ciphers: ", ciphers);
    return nullptr;
  }
  if (!suites.empty() && !SSL_CTX_set_ciphersuites(c, suites.c_str())) {
    *error = engine::Cat("Failed to configure ciphersuites: ", suites);
    return nullptr;
  }
  if (text("tls-session-caching") == "yes") {
    SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_SERVER);
    SSL_CTX_sess_set_cache_size(c, std::stol(text("tls-session-cache-size")));
    SSL_CTX_set_timeout(c, std::stol(text("tls-session-cache-timeout")));
    SSL_CTX_set_session_id_context(c, reinterpret_cast<const unsigned char*>("vessel"), 6);
  } else {
    SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_OFF);
  }
  const std::string dh = text("tls-dh-params-file");
  if (!dh.empty()) {
    if (!LoadDhParams(c, dh, error)) return nullptr;
  } else {
    SSL_CTX_set_dh_auto(c, 1);
  }
  return ctx;
}

}  // namespace

bool TlsContexts::Reload(std::string* error) {
  auto ctx = Build(*engine_, error);
  if (ctx == nullptr) {
    spdlog::warn("tls configuration failed: {}", *error);
    return false;
  }
  std::lock_guard l(mu_);
  ctx_ = std::move(ctx);
  return true;
}

asio::ssl::verify_mode TlsContexts::VerifyMode() const {
  const std::string mode =
      engine_->settings().params.Text(engine::ParamValues::Find("tls-auth-clients"));
  if (mode == "no") return asio::ssl::verify_none;
  if (mode == "optional") return asio::ssl::verify_peer;
  return asio::ssl::verify_peer | asio::ssl::verify_fail_if_no_peer_cert;
}

}  // namespace vessel::net
