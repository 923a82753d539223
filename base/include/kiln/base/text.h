// Small string helpers that several libraries wrote for themselves. Whitespace means the ASCII
// whitespace of std::isspace in the "C" locale: space, \t, \n, \v, \f, \r.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kiln {

// `text` without leading and trailing whitespace (a view into `text`).
std::string_view trim(std::string_view text);
// `text` without trailing whitespace (a view into `text`).
std::string_view trim_end(std::string_view text);

// The longest prefix of `text` of at most `max_bytes` that does not end inside a UTF-8
// character, for cutting a message that quotes a value (a view into `text`).
std::string_view utf8_prefix(std::string_view text, size_t max_bytes);

// The offset of the first byte of `text` that is not part of well-formed UTF-8 (an overlong
// form, a surrogate, a value past U+10FFFF, a cut or stray byte), or std::string_view::npos
// when the whole text is UTF-8. JSON carries only UTF-8, so text bound for JSON is checked.
size_t invalid_utf8_at(std::string_view text);

// The items with `separator` between each two: join({"a", "b"}, ", ") == "a, b". Takes any
// range of things a std::string can append (std::string, std::string_view, const char*).
template <typename Strings>
std::string join(const Strings& items, std::string_view separator) {
  std::string out;
  bool first = true;
  for (const auto& item : items) {
    if (!first) out += separator;
    out += item;
    first = false;
  }
  return out;
}

}  // namespace kiln
