// The H200's answers, pinned: `kiln_sim_differential --record FILE` (on a GPU) writes, per case,
// a SHA-256 of the GPU's output bits (masked by the case's `care` bits) for bit-exact cases and
// the output values themselves for bounded ones; `--sim-only --pinned FILE` (on any CPU) checks
// the simulator against them with the same rule the differential run uses. So CI catches a
// simulator change that would disagree with the H200 without a GPU.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness.h"

namespace kiln::simdiff {

// What to keep of one case's GPU output.
nlohmann::json pin_case(const Case& c, const std::vector<uint64_t>& gpu);

// "" when the simulator's output agrees with the pinned GPU output; else why not.
std::string check_pinned(const Case& c, const nlohmann::json& pinned,
                         const std::vector<uint64_t>& sim);

}  // namespace kiln::simdiff
