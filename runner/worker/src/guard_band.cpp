#include "kiln/worker/guard_band.h"

#include <algorithm>

#include "kiln/tasks/hash_mix.h"

namespace kiln::worker {

GuardLayout GuardBand::layout_for(int64_t data_bytes) {
  constexpr int64_t kMin = int64_t{64} << 10;
  constexpr int64_t kMax = int64_t{4} << 20;
  constexpr int64_t kAlign = 256;
  int64_t band = std::clamp(data_bytes / 16, kMin, kMax);
  band = (band + kAlign - 1) / kAlign * kAlign;
  GuardLayout layout;
  layout.band_bytes = band;
  layout.data_offset = band;
  layout.data_bytes = data_bytes;
  layout.total_bytes = band + data_bytes + band;
  return layout;
}

void GuardBand::fill_host(unsigned char* band_start, int64_t bytes, uint64_t seed, uint64_t band) {
  for (int64_t i = 0; i < bytes; ++i)
    band_start[i] = tasks::guard_byte(seed, band, static_cast<uint64_t>(i));
}

int64_t GuardBand::count_changed_host(const unsigned char* band_start, int64_t bytes, uint64_t seed,
                                      uint64_t band, int64_t* first_offset) {
  int64_t changed = 0;
  if (first_offset != nullptr) *first_offset = -1;
  for (int64_t i = 0; i < bytes; ++i) {
    if (band_start[i] != tasks::guard_byte(seed, band, static_cast<uint64_t>(i))) {
      if (changed == 0 && first_offset != nullptr) *first_offset = i;
      ++changed;
    }
  }
  return changed;
}

std::string GuardBand::describe(const GuardDamage& damage, const std::string& tensor) {
  if (damage.intact()) return "guard bands around " + tensor + " intact";
  std::string where;
  if (damage.before) {
    where = std::to_string(damage.first_offset) + " bytes before the start of " + tensor;
  } else {
    where = std::to_string(damage.first_offset) + " bytes after the end of " + tensor;
  }
  return std::to_string(damage.bytes_changed) + " guard-band bytes around " + tensor +
         " were overwritten (the first " + where + ")";
}

}  // namespace kiln::worker
