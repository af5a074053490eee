// SHA-256, constant-time comparison and random bytes through OpenSSL's libcrypto.
#include "host/acl/crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <stdexcept>
#include <vector>

namespace vessel::acl {
namespace {

constexpr char kHex[] = "0123456789abcdef";

std::string ToHex(const unsigned char* p, size_t n) {
  std::string out(n * 2, '\0');
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kHex[p[i] >> 4];
    out[2 * i + 1] = kHex[p[i] & 0xF];
  }
  return out;
}

}  // namespace

void InitCrypto() { OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, nullptr); }

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &len, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("SHA-256 failed");
  return ToHex(digest, len);
}

bool ConstantTimeEqual(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string RandomHex(size_t chars) {
  std::vector<unsigned char> bytes((chars + 1) / 2);
  if (!bytes.empty() && RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1)
    throw std::runtime_error("RAND_bytes failed");
  std::string hex = ToHex(bytes.data(), bytes.size());
  hex.resize(chars);
  return hex;
}

bool IsPasswordHash(std::string_view hash) {
  if (hash.size() != 64) return false;
  for (char c : hash)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace vessel::acl
