// PTX numeric literals: decimal, hex (0x), octal (0...), binary (0b), with an optional U suffix;
// 0f/0d hexadecimal floats (exact IEEE bits); decimal floats (1.5, 2e-3).
#include <bit>
#include <charconv>
#include <cstdlib>
#include <string>

#include "parser_internal.h"

namespace kiln::ptx::detail {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Accumulates digits of `base`; false on a bad digit or overflow past 64 bits.
bool accumulate(std::string_view digits, int base, uint64_t& value, std::string& error) {
  value = 0;
  if (digits.empty()) {
    error = "no digits";
    return false;
  }
  for (char c : digits) {
    const int d = hex_value(c);
    if (d < 0 || d >= base) {
      error = std::string("'") + c + "' is not a base-" + std::to_string(base) + " digit";
      return false;
    }
    if (value > (UINT64_MAX - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base)) {
      error = "does not fit in 64 bits";
      return false;
    }
    value = value * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
  }
  return true;
}

}  // namespace

std::optional<Number> parse_number(std::string_view text, std::string& error) {
  Number n;
  const std::string quoted = "'" + std::string(text) + "'";
  if (text.size() >= 2 && text[0] == '0' && (text[1] == 'f' || text[1] == 'F')) {
    std::string_view hex = text.substr(2);
    uint64_t bits = 0;
    if (hex.size() != 8 || !accumulate(hex, 16, bits, error)) {
      error = "malformed float literal " + quoted + ": 0f takes exactly 8 hex digits";
      return std::nullopt;
    }
    n.bits = bits;
    n.format = NumberFormat::HexF32;
    return n;
  }
  if (text.size() >= 2 && text[0] == '0' && (text[1] == 'd' || text[1] == 'D')) {
    std::string_view hex = text.substr(2);
    uint64_t bits = 0;
    if (hex.size() != 16 || !accumulate(hex, 16, bits, error)) {
      error = "malformed double literal " + quoted + ": 0d takes exactly 16 hex digits";
      return std::nullopt;
    }
    n.bits = bits;
    n.format = NumberFormat::HexF64;
    return n;
  }
  const bool looks_float =
      text.find('.') != std::string_view::npos ||
      (!(text.size() > 1 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) &&
       text.find_first_of("eE") != std::string_view::npos);
  if (looks_float) {
    // strtod needs a NUL-terminated string; the literal is short.
    const std::string copy(text);
    char* end = nullptr;
    const double value = std::strtod(copy.c_str(), &end);
    if (end != copy.c_str() + copy.size()) {
      error = "malformed number " + quoted;
      return std::nullopt;
    }
    n.bits = std::bit_cast<uint64_t>(value);
    n.format = NumberFormat::DecimalFloat;
    return n;
  }
  std::string_view body = text;
  if (!body.empty() && (body.back() == 'U' || body.back() == 'u')) {
    n.unsigned_suffix = true;
    body.remove_suffix(1);
  }
  std::string why;
  bool ok = false;
  if (body.size() > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')) {
    n.format = NumberFormat::Hex;
    ok = accumulate(body.substr(2), 16, n.bits, why);
  } else if (body.size() > 2 && body[0] == '0' && (body[1] == 'b' || body[1] == 'B')) {
    n.format = NumberFormat::Binary;
    ok = accumulate(body.substr(2), 2, n.bits, why);
  } else if (body.size() > 1 && body[0] == '0') {
    n.format = NumberFormat::Octal;
    ok = accumulate(body.substr(1), 8, n.bits, why);
  } else {
    n.format = NumberFormat::Decimal;
    ok = accumulate(body, 10, n.bits, why);
    if (ok && n.bits > static_cast<uint64_t>(INT64_MAX)) n.format = NumberFormat::DecimalUnsigned;
  }
  if (!ok) {
    error = "malformed integer " + quoted + ": " + why;
    return std::nullopt;
  }
  return n;
}

std::vector<std::string_view> split_directive(std::string_view text) {
  std::vector<std::string_view> parts;
  size_t start = 1;  // past the leading dot
  for (size_t i = 1; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '.') {
      if (i > start) parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

}  // namespace kiln::ptx::detail
