// Recording GPU measurements in an entry's meta.json: the "measured" array gains one
// object per (gpu, shape), replacing an older one for the same pair. Only the text of the
// array changes, so the rest of the hand-written file keeps its layout.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/base/result.h"

namespace kiln::zoo {

// The fields of a "measured" object, in the order they are written.
inline const std::vector<std::string>& measured_fields() {
  static const std::vector<std::string> fields = {"gpu",    "date", "shape",    "time_us",
                                                  "tflops", "gbps", "baseline", "baseline_time_us",
                                                  "command"};
  return fields;
}

// Checks one line of a results file (an object with "id" and the measured fields) and
// returns it as a "measured" object (without "id", fields in measured_fields() order).
Result<nlohmann::ordered_json> measurement_from_line(const nlohmann::ordered_json& line);

struct MergeCount {
  int replaced = 0;
  int added = 0;
};

// Merges `measurements` into the "measured" array of `meta_text` (a meta.json document).
Result<std::string> merge_measured(const std::string& meta_text,
                                   const std::vector<nlohmann::ordered_json>& measurements,
                                   MergeCount& count);

}  // namespace kiln::zoo
