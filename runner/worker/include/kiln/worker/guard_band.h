// Guard bands: every tensor the harness allocates sits between two bands of seeded
// pseudo-random bytes, [before | data | after], with `after` starting at the data's
// last byte + 1. A write outside the tensor but near it (the usual off-by-a-tile bug,
// or a deliberate scribble) changes a band byte; the bands are checked after every call.
#pragma once

#include <cstdint>
#include <string>

namespace kiln::worker {

struct GuardLayout {
  int64_t band_bytes = 0;   // size of each band
  int64_t data_offset = 0;  // where the tensor starts in the allocation (a multiple of 256)
  int64_t data_bytes = 0;
  int64_t total_bytes = 0;  // before + data + after

  int64_t after_offset() const { return data_offset + data_bytes; }
};

struct GuardDamage {
  int64_t bytes_changed = 0;
  int64_t first_offset = -1;  // relative to the band's start; -1 when intact
  bool before = false;        // which band holds first_offset

  bool intact() const { return bytes_changed == 0; }
};

class GuardBand {
 public:
  // Bands of 1/16 of the tensor, at least 64 KiB and at most 4 MiB, rounded to 256 bytes:
  // wide enough to catch a whole tile written past the edge of most tensors.
  static GuardLayout layout_for(int64_t data_bytes);

  // The band numbered `band` (two per allocation) under `seed`, byte by byte.
  static void fill_host(unsigned char* band_start, int64_t bytes, uint64_t seed, uint64_t band);
  static int64_t count_changed_host(const unsigned char* band_start, int64_t bytes, uint64_t seed,
                                    uint64_t band, int64_t* first_offset);

  // "2 bytes changed, the first 0 bytes after C" / "... before C".
  static std::string describe(const GuardDamage& damage, const std::string& tensor);
};

}  // namespace kiln::worker
