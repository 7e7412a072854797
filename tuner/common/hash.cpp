#include "tuner/common/hash.hpp"

#include <openssl/evp.h>

#include <cstdint>

#include "tuner/common/error.hpp"

namespace tunefuzz {

namespace {
EVP_MD_CTX* as_context(void* p) {
  return static_cast<EVP_MD_CTX*>(p);
}

std::string to_hex(const unsigned char* digest, unsigned int length) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out += digits[digest[i] >> 4];
    out += digits[digest[i] & 15];
  }
  return out;
}
}  // namespace

Hasher::Hasher() : context_(EVP_MD_CTX_new()) {
  if (!context_ || EVP_DigestInit_ex(as_context(context_), EVP_sha256(), nullptr) != 1)
    throw Error(ErrorKind::internal, "OpenSSL could not initialise SHA-256");
}

Hasher::~Hasher() {
  EVP_MD_CTX_free(as_context(context_));
}

Hasher& Hasher::field(std::string_view data) {
  const uint64_t size = data.size();
  EVP_DigestUpdate(as_context(context_), &size, sizeof size);
  EVP_DigestUpdate(as_context(context_), data.data(), data.size());
  return *this;
}

std::string Hasher::hex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(as_context(context_), digest, &length);
  return to_hex(digest, length);
}

std::string sha256_hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr) != 1)
    throw Error(ErrorKind::internal, "OpenSSL SHA-256 failed");
  return to_hex(digest, length);
}

}  // namespace tunefuzz
