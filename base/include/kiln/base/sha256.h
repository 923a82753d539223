// SHA-256 over bytes and files, as lowercase hex (OpenSSL's EVP interface).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "kiln/base/result.h"

namespace kiln {

// Incremental hashing, for digests over several pieces (a task bundle's files).
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(std::string_view bytes);
  std::string hex_digest();  // finishes the hash; call once

 private:
  void* ctx_;  // EVP_MD_CTX*, kept opaque so OpenSSL headers stay out of includers
};

std::string sha256_hex(std::string_view bytes);
Result<std::string> sha256_file(const std::filesystem::path& path);

}  // namespace kiln
