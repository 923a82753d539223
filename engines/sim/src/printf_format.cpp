#include "printf_format.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

namespace kiln::sim {

namespace {

// Widths and precisions are capped at the text limit plus this much: enough for the longest
// conversion (a %f of 1e308 has 309 digits; a double's exact digits end before 1100), so the
// text up to the limit is what the uncapped conversion would print.
constexpr int64_t kFieldSlack = 2048;

// One value the device side copied into the FIFO: its bits, and for %s the string.
struct Captured {
  uint64_t bits = 0;
  bool is_string = false;
  bool is_null = false;  // a null %s pointer
  std::string text;
};

bool is_flag(char c) { return c == '-' || c == '+' || c == ' ' || c == '#' || c == '0'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// A NUL-terminated string at `address`, at most `limit` bytes of it.
bool read_string(const PrintfReader& read, uint64_t address, size_t limit, std::string& out) {
  out.clear();
  for (char ch = 0; out.size() < limit; out += ch) {
    if (!read(address + out.size(), &ch, 1)) return false;
    if (ch == '\0') break;
  }
  return true;
}

// The device half: the values vprintf copies, each read from the argument buffer at the next
// offset aligned to its size. False after a failed read.
class Capture {
 public:
  Capture(uint64_t arguments, const PrintfReader& read, size_t max_text)
      : arguments_(arguments), read_(read), max_text_(max_text) {}

  bool run(std::string_view f) {
    for (size_t i = 0; i < f.size(); ++i) {
      if (f[i] != '%') continue;
      ++i;
      while (i < f.size() && is_flag(f[i])) ++i;
      if (i < f.size() && f[i] == '*') {
        if (!take(4, false)) return false;
        ++i;
      }
      while (i < f.size() && is_digit(f[i])) ++i;
      if (i < f.size() && f[i] == '.') {
        ++i;
        while (i < f.size() && is_digit(f[i])) ++i;
      }
      uint32_t size = 4;
      if (i < f.size() && f[i] == 'h') {
        ++i;
      } else if (i < f.size() && f[i] == 'l') {
        size = 8;
        if (++i < f.size() && f[i] == 'l') ++i;
      }
      if (i >= f.size()) break;
      const char c = f[i];  // anything unknown here (h, z, '*', '%', ...) copies nothing
      bool ok = true;
      if (std::strchr("cdiouxX", c) != nullptr) {
        ok = take(size, false);
      } else if (std::strchr("eEfFgGaA", c) != nullptr || c == 'p') {
        ok = take(8, false);
      } else if (c == 's') {
        ok = take(8, true);
      }
      if (!ok) return false;
    }
    return true;
  }
  std::vector<Captured>& values() { return values_; }

 private:
  bool take(uint32_t size, bool string) {
    if (values_.size() == kPrintfMaxArguments || arguments_ == 0) return true;
    offset_ = (offset_ + size - 1) / size * size;
    Captured v;
    if (!read_(arguments_ + offset_, &v.bits, size)) return false;
    offset_ += size;
    if (string) {
      v.is_string = true;
      v.is_null = v.bits == 0;
      if (!v.is_null && !read_string(read_, v.bits, max_text_, v.text)) return false;
    }
    values_.push_back(std::move(v));
    return true;
  }

  uint64_t arguments_;
  const PrintfReader& read_;
  size_t max_text_;
  uint64_t offset_ = 0;
  std::vector<Captured> values_;
};

// Appends what snprintf makes of `spec` and `value`, cut at `max_text` bytes in all.
template <typename T>
void append_formatted(std::string& out, const std::string& spec, T value, size_t max_text) {
  int n = std::snprintf(nullptr, 0, spec.c_str(), value);
  if (n <= 0) return;
  std::string text(static_cast<size_t>(n) + 1, '\0');
  std::snprintf(text.data(), text.size(), spec.c_str(), value);
  text.resize(static_cast<size_t>(n));
  out.append(text, 0, max_text - std::min(max_text, out.size()));
}

// The host half: the C library's reading of the format, taking the captured values in order.
class HostFormat {
 public:
  HostFormat(const std::vector<Captured>& values, size_t max_text)
      : values_(values), max_text_(max_text), cap_(static_cast<int64_t>(max_text) + kFieldSlack) {}

  std::string run(std::string_view f) {
    std::string out;
    size_t i = 0;
    while (i < f.size() && out.size() < max_text_) {
      const size_t percent = f.find('%', i);
      out.append(f.substr(i, std::min(percent, f.size()) - i));
      if (percent == std::string_view::npos) break;
      i = conversion(f, percent, out);
    }
    if (out.size() > max_text_) out.resize(max_text_);
    return out;
  }

 private:
  const Captured* next() { return next_ < values_.size() ? &values_[next_++] : nullptr; }

  int64_t number(std::string_view f, size_t& i) const {
    int64_t n = 0;
    while (i < f.size() && is_digit(f[i])) n = std::min<int64_t>(n * 10 + (f[i++] - '0'), cap_);
    return n;
  }

  // Formats the conversion at f[percent]; returns the index after it.
  size_t conversion(std::string_view f, size_t percent, std::string& out) {
    size_t i = percent + 1;
    std::string flags;
    while (i < f.size() && is_flag(f[i])) flags += f[i++];
    int64_t width = -1, precision = -1;
    bool missing = false;
    if (i < f.size() && f[i] == '*') {
      ++i;
      const Captured* v = next();
      missing |= v == nullptr;
      // A negative width from '*' is the '-' flag and a positive width, as in C.
      int64_t w = v ? static_cast<int32_t>(v->bits) : 0;
      if (w < 0) flags += '-';
      width = std::min<int64_t>(w < 0 ? -w : w, cap_);
    } else if (i < f.size() && is_digit(f[i])) {
      width = number(f, i);
    }
    if (i < f.size() && f[i] == '.') {
      ++i;
      if (i < f.size() && f[i] == '*') {
        ++i;
        const Captured* v = next();
        missing |= v == nullptr;
        const int64_t p = v ? static_cast<int32_t>(v->bits) : 0;
        precision = p < 0 ? -1 : std::min<int64_t>(p, cap_);
      } else {
        precision = number(f, i);
      }
    }
    std::string length;
    for (const char* l : {"hh", "ll", "h", "l", "L", "j", "z", "t", "q"}) {
      if (f.substr(i, std::strlen(l)) == l) {
        length = l;
        i += length.size();
        break;
      }
    }
    if (i >= f.size()) {  // a '%' with no conversion: printed as written
      out.append(f.substr(percent));
      return f.size();
    }
    const char c = f[i++];
    const std::string_view written = f.substr(percent, i - percent);
    if (c == '%') {
      out += '%';
      return i;
    }
    if (std::strchr("diouxXcspeEfFgGaA", c) == nullptr) {  // unknown (n, m too): as written
      out.append(written);
      return i;
    }
    const Captured* v = next();
    if (missing || v == nullptr || (c == 's' && !v->is_string)) {
      out.append(written);  // a GPU prints garbage here
      return i;
    }
    std::string spec = "%" + flags;
    if (width >= 0) spec += std::to_string(width);
    if (precision >= 0) spec += "." + std::to_string(precision);
    const bool wide = !length.empty() && length[0] != 'h';  // l ll L j z t q: 64 bits
    const auto bits = v->bits;
    if (c == 'd' || c == 'i') {
      if (wide) {
        append_formatted(out, spec + "ll" + c, static_cast<long long>(bits), max_text_);
      } else {
        append_formatted(out, spec + length + c, static_cast<int>(static_cast<uint32_t>(bits)),
                         max_text_);
      }
    } else if (c == 'o' || c == 'u' || c == 'x' || c == 'X') {
      if (wide) {
        append_formatted(out, spec + "ll" + c, static_cast<unsigned long long>(bits), max_text_);
      } else {
        append_formatted(out, spec + length + c, static_cast<unsigned>(bits), max_text_);
      }
    } else if (c == 'c') {
      append_formatted(out, spec + 'c', static_cast<int>(static_cast<uint32_t>(bits)), max_text_);
    } else if (c == 's') {
      // glibc prints a null string as "(null)" unless the precision is too short for it.
      std::string text = v->is_null ? (precision >= 0 && precision < 6 ? "" : "(null)") : v->text;
      append_formatted(out, spec + 's', text.c_str(), max_text_);
    } else if (c == 'p') {
      append_formatted(out, spec + 'p', reinterpret_cast<void*>(static_cast<uintptr_t>(bits)),
                       max_text_);
    } else {
      double d = 0;
      std::memcpy(&d, &bits, sizeof d);
      append_formatted(out, spec + c, d, max_text_);
    }
    return i;
  }

  const std::vector<Captured>& values_;
  size_t max_text_;
  int64_t cap_;
  size_t next_ = 0;
};

}  // namespace

PrintfResult format_printf(uint64_t format, uint64_t arguments, const PrintfReader& read,
                           size_t max_text) {
  PrintfResult result;
  if (format == 0) {
    result.value = -1;
    return result;
  }
  std::string f;
  constexpr size_t kMaxFormat = 1 << 20;
  Capture capture(arguments, read, max_text);
  if (!read_string(read, format, kMaxFormat, f) || !capture.run(f)) {
    result.ok = false;
    return result;
  }
  result.value = static_cast<int32_t>(capture.values().size());
  result.text = HostFormat(capture.values(), max_text).run(f);
  return result;
}

}  // namespace kiln::sim
