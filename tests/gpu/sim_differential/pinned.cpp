#include "pinned.h"

#include <cstdio>

#include "kiln/base/sha256.h"

namespace kiln::simdiff {

namespace {

std::string masked_digest(const Case& c, const std::vector<uint64_t>& values) {
  Sha256 hash;
  for (size_t i = 0; i < values.size(); ++i) {
    const uint64_t care = i < c.care.size() ? c.care[i] : ~0ull;
    const uint64_t bits = values[i] & care;
    hash.update(std::string_view(reinterpret_cast<const char*>(&bits), sizeof bits));
  }
  return hash.hex_digest();
}

std::string hex(uint64_t value) {
  char text[19];
  std::snprintf(text, sizeof text, "%llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace

nlohmann::json pin_case(const Case& c, const std::vector<uint64_t>& gpu) {
  nlohmann::json pinned = {{"count", gpu.size()}};
  if (c.exact) {
    pinned["sha256"] = masked_digest(c, gpu);
  } else {
    nlohmann::json values = nlohmann::json::array();
    for (uint64_t v : gpu) values.push_back(hex(v));
    pinned["values"] = values;
  }
  return pinned;
}

std::string check_pinned(const Case& c, const nlohmann::json& pinned,
                         const std::vector<uint64_t>& sim) {
  const size_t count = pinned.value("count", size_t{0});
  if (count != sim.size())
    return "the simulator wrote " + std::to_string(sim.size()) + " values, the H200 " +
           std::to_string(count);
  if (c.exact) {
    if (masked_digest(c, sim) != pinned.value("sha256", ""))
      return "differs from the H200's bits (bit-exact case; run the differential on a GPU to see "
             "which values)";
    return "";
  }
  std::vector<uint64_t> gpu;
  for (const auto& v : pinned.value("values", nlohmann::json::array()))
    gpu.push_back(std::stoull(v.get<std::string>(), nullptr, 16));
  const CaseResult r = compare(c, gpu, sim);
  if (r.passed) return "";
  std::string why =
      "outside the bound against the H200's values (max ulp " + std::to_string(r.max_ulp) + ")";
  for (const std::string& e : r.examples) why += "; " + e;
  return why;
}

}  // namespace kiln::simdiff
