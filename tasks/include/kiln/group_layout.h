/*
 * kiln/group_layout.h -- the layout behind a "group_index" input (tasks/FORMAT.md): how many
 * rows each group of an M-grouped (mixture-of-experts) problem holds, where each group starts,
 * and which rows are padding.
 *
 * The one generator: the task loader, the GPU worker, the simulator and a task's own
 * baseline.cu or starter.cu (host code, C++17) all call kiln_group_layout, so the layout a
 * kernel computes on the host from the dims is the layout the harness drew.
 *
 * Rows [0, total_rows) are cut into groups in order. Group g holds rows[g] valid rows starting
 * at begin[g], then padding up to the next multiple of `align`; begin[0] = 0 and every begin is
 * a multiple of align. Rows after the last group's padding are padding too. The valid row count
 * of a group is drawn around rows_per_group: floor(rows_per_group * (1 - spread + 2*spread*u))
 * with u uniform in [0, 1) from (seed, g). While the padded groups do not fit in total_rows, the
 * group with the most padded rows (the first such) gives up one alignment unit, so a group may
 * end up with fewer rows than drawn, or none.
 */
#ifndef KILN_GROUP_LAYOUT_H
#define KILN_GROUP_LAYOUT_H

#include <stdint.h>

/* Self-contained (it ships beside kiln/abi.h, so bundles compile against it anywhere): the
 * draws are SplitMix64's finalizer over (seed, group), 53 bits to [0, 1). */
inline uint64_t kiln_group_layout_mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* Fills begin[g] and rows[g] for g < groups. Returns 0, or 1 when an argument is out of range
 * (groups, rows_per_group, align < 1; total_rows < 0; spread outside [0, 1]; a size that
 * overflows int64). */
inline int kiln_group_layout(int64_t groups, int64_t rows_per_group, int64_t align, double spread,
                             uint64_t seed, int64_t total_rows, int64_t* begin, int64_t* rows) {
  if (groups < 1 || rows_per_group < 1 || align < 1 || total_rows < 0) return 1;
  if (!(spread >= 0 && spread <= 1)) return 1;
  if (rows_per_group > (int64_t{1} << 40) || align > (int64_t{1} << 40)) return 1;
  // Alignment units each group's padded rows take; the padded total must fit total_rows.
  const int64_t capacity = total_rows / align;
  int64_t used = 0;
  const uint64_t key = kiln_group_layout_mix(seed ^ 0x67726f757073ull /* "groups" */);
  for (int64_t g = 0; g < groups; ++g) {
    const uint64_t bits =
        kiln_group_layout_mix(key ^ kiln_group_layout_mix(static_cast<uint64_t>(g)));
    const double u = static_cast<double>(bits >> 11) * (1.0 / 9007199254740992.0);
    const double scale = 1.0 - spread + 2.0 * spread * u;
    rows[g] = static_cast<int64_t>(static_cast<double>(rows_per_group) * scale);
    if (rows[g] < 0) rows[g] = 0;
    used += (rows[g] + align - 1) / align;
  }
  while (used > capacity) {
    int64_t widest = 0;
    for (int64_t g = 1; g < groups; ++g) {
      if ((rows[g] + align - 1) / align > (rows[widest] + align - 1) / align) widest = g;
    }
    const int64_t units = (rows[widest] + align - 1) / align;
    rows[widest] = (units - 1) * align < rows[widest] ? (units - 1) * align : rows[widest];
    --used;
  }
  int64_t next = 0;
  for (int64_t g = 0; g < groups; ++g) {
    begin[g] = next;
    next += (rows[g] + align - 1) / align * align;
  }
  return 0;
}

/* The per-row group index of that layout: out[r] = g on group g's valid rows, `padding` on
 * every other row of [0, total_rows). begin and rows as kiln_group_layout filled them. */
inline void kiln_group_index_rows(int64_t groups, const int64_t* begin, const int64_t* rows,
                                  int64_t total_rows, int64_t padding, int64_t* out) {
  for (int64_t r = 0; r < total_rows; ++r) out[r] = padding;
  for (int64_t g = 0; g < groups; ++g) {
    for (int64_t r = begin[g]; r < begin[g] + rows[g] && r < total_rows; ++r) out[r] = g;
  }
}

#endif /* KILN_GROUP_LAYOUT_H */
