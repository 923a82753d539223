#include "kiln/http/token_file.h"

#include "kiln/base/file.h"

namespace kiln::http {

Result<std::string> read_token_file(const std::filesystem::path& path) {
  auto text = read_file(path);
  if (!text) return make_error("token file: " + text.error().message);
  std::string token = std::move(text).value();
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ' ||
                            token.back() == '\t'))
    token.pop_back();
  if (token.size() < kMinTokenLength)
    return make_error("token file " + path.string() + " holds " +
                      (token.empty() ? "nothing" : "a token under 16 characters") +
                      "; put a random secret in it, e.g. `openssl rand -hex 32 > " + path.string() +
                      "`");
  return token;
}

}  // namespace kiln::http
