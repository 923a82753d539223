#include "kiln/base/text.h"

namespace kiln {

namespace {

constexpr std::string_view kWhitespace = " \t\n\v\f\r";

}  // namespace

std::string_view trim(std::string_view text) {
  const size_t first = text.find_first_not_of(kWhitespace);
  if (first == std::string_view::npos) return text.substr(text.size());
  const size_t last = text.find_last_not_of(kWhitespace);
  return text.substr(first, last - first + 1);
}

std::string_view trim_end(std::string_view text) {
  const size_t last = text.find_last_not_of(kWhitespace);
  return text.substr(0, last == std::string_view::npos ? 0 : last + 1);
}

std::string_view utf8_prefix(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t end = max_bytes;
  // Back up over continuation bytes (10xxxxxx) to the start of the character cut in two.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

}  // namespace kiln
