// Numbers as messages quote them.
#pragma once

#include <cstdint>
#include <string>

namespace kiln {

// `value` in lower-case hexadecimal with a 0x prefix ("0x7f3a00"): addresses, magic numbers.
std::string hex(uint64_t value);

}  // namespace kiln
