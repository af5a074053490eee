// The few cryptographic primitives access control needs, all from OpenSSL's libcrypto: SHA-256
// of passwords, a constant-time comparison, and random bytes for ACL GENPASS.
#ifndef VESSEL_HOST_ACL_CRYPTO_H_
#define VESSEL_HOST_ACL_CRYPTO_H_

#include <string>
#include <string_view>

namespace vessel::acl {

// Initializes libcrypto now (without reading openssl.cnf), so that its exit-time cleanup runs
// after the server's: worker threads that hashed passwords end while OpenSSL can still free their
// per-thread state.
void InitCrypto();
// SHA-256 of data as 64 lowercase hexadecimal characters (Redis's ACLHashPassword).
std::string Sha256Hex(std::string_view data);
// a == b in a time that depends only on the lengths (CRYPTO_memcmp).
bool ConstantTimeEqual(std::string_view a, std::string_view b);
// `chars` random lowercase hexadecimal characters from the OpenSSL CSPRNG.
std::string RandomHex(size_t chars);
// A valid password hash for #/! rules: exactly 64 characters of [0-9a-f].
bool IsPasswordHash(std::string_view hash);

}  // namespace vessel::acl

#endif  // VESSEL_HOST_ACL_CRYPTO_H_
