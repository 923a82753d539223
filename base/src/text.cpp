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

}  // namespace kiln
