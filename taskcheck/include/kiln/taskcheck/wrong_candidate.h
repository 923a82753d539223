// The negative tests of `kiln task check`: candidates kiln writes itself that a frozen task must
// refuse. Each wrong candidate is the task's own starter, included as text with its kiln_launch
// renamed, wrapped by a kiln_launch that calls it and then spoils its output on the same stream
// with a tiny kernel: one element moved beyond the tolerance (or just more than the task's
// mismatch fraction), the last row left as the harness left it (poison), or nothing written. The
// wrapper reads only the ABI (dtypes, shapes, strides), so it works for any task without
// understanding its computation. The broken candidate is the starter plus a call to a function that
// does not exist.
#pragma once

#include <string>
#include <vector>

#include "kiln/tasks/task.h"

namespace kiln::taskcheck {

enum class WrongKind {
  kPerturbOne,       // one element of one output moved beyond the tolerance (beyond the
                     // near-miss bound when the task forgives a mismatch fraction)
  kPerturbFraction,  // one element more than max_mismatch_fraction moved beyond it
  kDropTail,         // the last row in the contract of one output not written (left as it
                     // was before the call)
  kUnwritten,        // kiln_launch returns KILN_OK and writes nothing
};

struct WrongCandidate {
  WrongKind kind;
  std::string name;    // "perturb_one[C]", "drop_tail[C]", "unwritten"
  std::string what;    // one sentence: what is wrong with it
  std::string source;  // the kernel.cu text
};

// "perturb_one", "perturb_fraction", "drop_tail", "unwritten".
std::string kind_name(WrongKind kind);

// Every wrong candidate for `task` made from `starter` (the starter's text): perturb_one for
// each output, perturb_fraction for each when the task has a max_mismatch_fraction, drop_tail
// for each, then unwritten. Rows outside the contract (ignore_rows_where) are never the ones
// spoiled.
std::vector<WrongCandidate> wrong_candidates(const tasks::Task& task, const std::string& starter);

// One wrong candidate of `kind` on output number `output` (0 = the first output).
WrongCandidate wrong_candidate(const tasks::Task& task, const std::string& starter, WrongKind kind,
                               size_t output);

// The starter with one line appended that calls an undeclared function: must not compile.
// `line` receives the 1-based line of the error.
std::string broken_candidate(const std::string& starter, int* line = nullptr);

}  // namespace kiln::taskcheck
