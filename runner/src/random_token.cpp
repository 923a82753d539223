#include "kiln/runner/random_token.h"

#include <random>

namespace kiln::runner {

std::string random_token() {
  std::random_device device;
  std::uniform_int_distribution<unsigned> nibble(0, 15);
  std::string out;
  for (int i = 0; i < 32; ++i) out.push_back("0123456789abcdef"[nibble(device)]);
  return out;
}

}  // namespace kiln::runner
