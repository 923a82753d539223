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

size_t invalid_utf8_at(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    size_t length = 0;
    unsigned low = 0x80;  // the range the second byte must fall in, for this lead byte
    unsigned high = 0xbf;
    if (lead < 0x80) {
      length = 1;
    } else if (lead >= 0xc2 && lead <= 0xdf) {
      length = 2;
    } else if (lead >= 0xe0 && lead <= 0xef) {
      length = 3;
      if (lead == 0xe0) low = 0xa0;   // no overlong forms
      if (lead == 0xed) high = 0x9f;  // no surrogates
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      length = 4;
      if (lead == 0xf0) low = 0x90;   // no overlong forms
      if (lead == 0xf4) high = 0x8f;  // nothing past U+10FFFF
    } else {
      return i;
    }
    if (i + length > text.size()) return i;
    for (size_t k = 1; k < length; ++k) {
      const auto byte = static_cast<unsigned char>(text[i + k]);
      const unsigned from = k == 1 ? low : 0x80;
      const unsigned to = k == 1 ? high : 0xbf;
      if (byte < from || byte > to) return i;
    }
    i += length;
  }
  return std::string_view::npos;
}

}  // namespace kiln
