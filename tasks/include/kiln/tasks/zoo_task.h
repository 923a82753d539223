// A task made from a zoo entry (kb/zoo/ID/meta.json, its `test` block), named "zoo:ID": the
// contract the zoo's own tests hold the entry to, as a Task the CPU tools take like a bundle.
//
//   signature      test.signature (read and checked as task.json's signature is)
//   dims           the names test.shapes use
//   workloads      every test shape, "shape1", "shape2", ... in order
//   sim_workloads  the first (small) test shape only
//   tolerance      test.tolerance (atol, rtol, and per-output test.tolerance.outputs)
//   inputs         uniform over test.input_range, rounded to the dtype (integers: every integer
//                  in the range), except as the zoo's tests draw them: gemm_tn_fp8's scale_a and
//                  scale_b are 0.5 and 0.25; grouped_gemm_tn's offsets cut M into G contiguous
//                  groups whose sizes are multiples of test.group_sizes_multiple_of (8 when
//                  absent); cross_entropy's targets and rope's positions are uniform indices
//                  in [0, V) and [0, P); grouped_gemm_masked's masked_m uniform counts in
//                  [0, M] (the zoo test also forces one empty and one full group)
//   reference      the op's CPU reference in kb/zoo/references (zoo_op), not a reference.cpp
//   starter        the entry's own kernel.cu; readme: its NOTES.md
//   sha256         of meta.json's text
// There is no baseline: such a task is for compile, simulate, synccheck and racecheck, not for
// benchmark or profile.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/base/result.h"
#include "kiln/tasks/task.h"

namespace kiln::tasks {

inline constexpr std::string_view kZooTaskPrefix = "zoo:";

// Whether `name` names a zoo task ("zoo:ID").
bool is_zoo_task_name(std::string_view name);

// The task of entry `id` (without the prefix) under `zoo_dir`. Errors: no such entry (with the
// entries that have a test block), an entry without a test block, a malformed test block (the
// field and the problem).
Result<Task> load_zoo_task(const std::filesystem::path& zoo_dir, const std::string& id);

// The entries under zoo_dir whose meta.json has a test block, sorted by id.
std::vector<std::string> zoo_task_ids(const std::filesystem::path& zoo_dir);

}  // namespace kiln::tasks
