// A candidate's approach: its technique family, named with the zoo's technique vocabulary
// (kb/zoo/techniques.json), plus free text. "wgmma+tma+warp_specialization: 128x256 tiles,
// 4 stages" is the family {tma, warp_specialization, wgmma} and a description. The frontier
// keeps the best candidate of each distinct family, so the family is canonical: the
// techniques sorted and without repeats, whatever order the agent wrote them in.
#pragma once

#include <string>
#include <vector>

#include "kiln/base/result.h"

namespace kiln::frontier {

struct Approach {
  std::string family;       // "tma+warp_specialization+wgmma"
  std::string description;  // the free text after ':' (may be empty)
};

// Parses "TECHNIQUE[+TECHNIQUE...][: free text]". Techniques are separated by '+', ',' or
// spaces; each must be in `vocabulary` (an empty vocabulary accepts any [a-z0-9_]+ name).
// Errors list the vocabulary and say how to write the approach.
Result<Approach> parse_approach(const std::string& text,
                                const std::vector<std::string>& vocabulary);

// A fingerprint of PTX that two builds of the same code share: the SHA-256 of its lines with
// comments, .loc/.file directives and debug sections removed (they move with source lines and
// file names, not with the code), and blank lines dropped.
std::string ptx_fingerprint(const std::string& ptx);

}  // namespace kiln::frontier
