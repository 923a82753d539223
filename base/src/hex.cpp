#include "kiln/base/hex.h"

#include <cstdio>

namespace kiln {

std::string hex(uint64_t value) {
  char text[24];  // "0x" and at most 16 digits
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace kiln
