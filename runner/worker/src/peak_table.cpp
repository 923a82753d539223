#include "kiln/worker/peak_table.h"

#include <algorithm>
#include <cctype>
#include <fstream>

namespace kiln::worker {

namespace {

std::string normalize(std::string name) {
  std::string out;
  for (char c : name) {
    if (c == ' ' || c == '-' || c == '_') continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (out.rfind("nvidia", 0) == 0) out = out.substr(6);
  return out;
}

// Task dtype names for a kb/hw key (fp16 -> f16, fp8 -> e4m3 and e5m2).
std::vector<std::string> task_dtypes(const std::string& key) {
  if (key == "fp16") return {"f16"};
  if (key == "bf16") return {"bf16"};
  if (key == "fp8") return {"e4m3", "e5m2"};
  if (key == "tf32") return {"tf32"};
  if (key == "fp64") return {"f64"};
  return {key};
}

}  // namespace

double PeakRates::tflops_for(const std::string& dtype) const {
  auto it = tensor_tflops.find(dtype);
  return it == tensor_tflops.end() ? 0 : it->second;
}

nlohmann::json Throughput::to_json() const {
  return {{"tflops", tflops},
          {"gbps", gbps},
          {"pct_of_peak", pct_of_peak},
          {"pct_of_peak_flops", pct_of_peak_flops},
          {"pct_of_peak_bandwidth", pct_of_peak_bandwidth}};
}

std::optional<PeakRates> PeakTable::built_in(const std::string& gpu_name) {
  const std::string name = normalize(gpu_name);
  // NVIDIA H200 SXM datasheet / H100 SXM5 whitepaper, dense (no sparsity).
  if (name.rfind("h200", 0) == 0) {
    PeakRates rates;
    rates.gpu = "NVIDIA H200 SXM";
    rates.source =
        "built-in datasheet table (NVIDIA H200 SXM: dense fp16/bf16 989 TFLOP/s, HBM3e 4.8 TB/s)";
    rates.hbm_gbps = 4800;
    rates.tensor_tflops = {{"f16", 989.4},  {"bf16", 989.4}, {"e4m3", 1978.9}, {"e5m2", 1978.9},
                           {"tf32", 494.7}, {"f32", 66.9},   {"f64", 66.9},    {"i8", 1978.9}};
    return rates;
  }
  return std::nullopt;
}

std::optional<PeakRates> PeakTable::from_hw_dir(const std::filesystem::path& dir,
                                                const std::string& gpu_name) {
  std::error_code ec;
  if (dir.empty() || !std::filesystem::is_directory(dir, ec)) return std::nullopt;
  const std::string wanted = normalize(gpu_name);
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    std::ifstream in(path);
    const nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) continue;
    std::vector<std::string> names = {path.stem().string()};
    if (doc.contains("name") && doc["name"].is_string())
      names.push_back(doc["name"].get<std::string>());
    if (doc.contains("aliases") && doc["aliases"].is_array()) {
      for (const auto& alias : doc["aliases"]) {
        if (alias.is_string()) names.push_back(alias.get<std::string>());
      }
    }
    const bool match = std::any_of(names.begin(), names.end(),
                                   [&](const std::string& n) { return normalize(n) == wanted; });
    if (!match) continue;
    PeakRates rates;
    rates.gpu = doc.value("name", path.stem().string());
    rates.source = path.string();
    const auto value_of = [](const nlohmann::json& node) -> double {
      if (node.is_object() && node.contains("value") && node["value"].is_number())
        return node["value"].get<double>();
      return 0;
    };
    if (doc.contains("specs") && doc["specs"].is_object()) {
      const auto& specs = doc["specs"];
      if (specs.contains("hbm_bandwidth_gbps"))
        rates.hbm_gbps = value_of(specs["hbm_bandwidth_gbps"]);
      if (specs.contains("fp32_tflops"))
        rates.tensor_tflops["f32"] = value_of(specs["fp32_tflops"]);
    }
    if (doc.contains("tensor_dense_tflops") && doc["tensor_dense_tflops"].is_object()) {
      for (const auto& [key, node] : doc["tensor_dense_tflops"].items()) {
        for (const auto& dtype : task_dtypes(key)) rates.tensor_tflops[dtype] = value_of(node);
      }
    }
    if (rates.hbm_gbps <= 0) continue;
    return rates;
  }
  return std::nullopt;
}

std::optional<PeakRates> PeakTable::lookup(const std::string& gpu_name,
                                           const std::filesystem::path& hw_dir) {
  if (auto rates = from_hw_dir(hw_dir, gpu_name)) return rates;
  return built_in(gpu_name);
}

Throughput PeakTable::throughput(double flops, double bytes, double seconds,
                                 const std::string& dtype, const std::optional<PeakRates>& peak) {
  Throughput t;
  if (seconds <= 0) return t;
  t.tflops = flops / seconds / 1e12;
  t.gbps = bytes / seconds / 1e9;
  if (peak) {
    const double peak_tflops = peak->tflops_for(dtype);
    if (peak_tflops > 0 && flops > 0) t.pct_of_peak_flops = 100 * t.tflops / peak_tflops;
    if (peak->hbm_gbps > 0 && bytes > 0) t.pct_of_peak_bandwidth = 100 * t.gbps / peak->hbm_gbps;
    t.pct_of_peak = std::max(t.pct_of_peak_flops, t.pct_of_peak_bandwidth);
  }
  return t;
}

}  // namespace kiln::worker
