#include "kiln/runner/token.h"

#include <random>

#include "kiln/base/file.h"

namespace kiln::runner {

Result<std::string> read_token_file(const std::filesystem::path& path) {
  auto text = read_file(path);
  if (!text) return make_error("token file: " + text.error().message);
  std::string token = *text;
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ' ||
                            token.back() == '\t'))
    token.pop_back();
  if (token.size() < 16)
    return make_error("token file " + path.string() + " holds " +
                      (token.empty() ? "nothing" : "a token under 16 characters") +
                      "; put a random secret in it, e.g. `openssl rand -hex 32 > " + path.string() +
                      "`");
  return token;
}

std::string random_token() {
  std::random_device device;
  std::uniform_int_distribution<unsigned> nibble(0, 15);
  std::string out;
  for (int i = 0; i < 32; ++i) out.push_back("0123456789abcdef"[nibble(device)]);
  return out;
}

}  // namespace kiln::runner
