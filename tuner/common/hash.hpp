// Content hashes (SHA-256, via OpenSSL) for cache keys, template source hashes and cache-entry checksums.
#pragma once

#include <string>
#include <string_view>

namespace tunefuzz {

/// Lowercase hex SHA-256 of `data`.
std::string sha256_hex(std::string_view data);

/// Incremental form: feed length-prefixed fields so that ("ab","c") and ("a","bc") hash differently.
class Hasher {
 public:
  Hasher();
  ~Hasher();
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;
  Hasher& field(std::string_view data);
  std::string hex();

 private:
  void* context_;
};

}  // namespace tunefuzz
