#include "kiln/worker/ncu_report.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace kiln::worker {

namespace {

double time_to_us(double value, const std::string& unit) {
  if (unit == "second" || unit == "s") return value * 1e6;
  if (unit == "msecond" || unit == "ms") return value * 1e3;
  if (unit == "usecond" || unit == "us") return value;
  if (unit == "nsecond" || unit == "ns" || unit.empty()) return value / 1e3;
  return value / 1e3;
}

double bytes_of(double value, const std::string& unit) {
  if (unit == "Kbyte" || unit == "KB") return value * 1e3;
  if (unit == "Mbyte" || unit == "MB") return value * 1e6;
  if (unit == "Kibyte" || unit == "KiB") return value * 1024;
  return value;
}

void summarize(NcuKernel& k, const std::map<std::string, std::string>& units) {
  auto get = [&](const std::string& name, double* out) {
    auto it = k.metrics.find(name);
    if (it == k.metrics.end()) return false;
    *out = it->second;
    return true;
  };
  auto unit_of = [&](const std::string& name) {
    auto it = units.find(name);
    return it == units.end() ? std::string() : it->second;
  };
  double v = 0;
  if (get("gpu__time_duration.sum", &v))
    k.duration_us = time_to_us(v, unit_of("gpu__time_duration.sum"));
  get("sm__warps_active.avg.pct_of_peak_sustained_active", &k.achieved_occupancy_pct);
  get("sm__maximum_warps_per_active_cycle_pct", &k.theoretical_occupancy_pct);
  // ncu 2025 names it gpu__dram_throughput; older versions dram__throughput.
  if (!get("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", &k.dram_pct)) {
    get("dram__throughput.avg.pct_of_peak_sustained_elapsed", &k.dram_pct);
  }
  get("lts__throughput.avg.pct_of_peak_sustained_elapsed", &k.l2_pct);
  get("sm__throughput.avg.pct_of_peak_sustained_elapsed", &k.sm_pct);
  get("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", &k.memory_pct);
  if (get("launch__registers_per_thread", &v)) k.registers = static_cast<int>(v);
  if (get("launch__shared_mem_per_block_static", &v)) {
    k.shared_static_bytes = bytes_of(v, unit_of("launch__shared_mem_per_block_static"));
  }
  if (get("launch__shared_mem_per_block_dynamic", &v)) {
    k.shared_dynamic_bytes = bytes_of(v, unit_of("launch__shared_mem_per_block_dynamic"));
  }
  // Tensor pipes: all of them together when ncu reports that, else the busiest
  // per-pipe average ("...tensor....avg.pct_of_peak_sustained_active").
  const std::string all_tensor = "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active";
  if (get(all_tensor, &k.tensor_pct)) k.tensor_metric = all_tensor;
  for (const auto& [name, value] : k.metrics) {
    if (k.tensor_metric != all_tensor && name.find("tensor") != std::string::npos &&
        name.find(".avg.pct_of_peak_sustained_active") != std::string::npos &&
        value > k.tensor_pct) {
      k.tensor_pct = value;
      k.tensor_metric = name;
    }
    // Stalls: smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio (and the
    // older smsp__average_warp_latency_issue_stalled_<reason>).
    const std::string key = "issue_stalled_";
    const size_t at = name.find(key);
    if (name.rfind("smsp__average_warp", 0) == 0 && at != std::string::npos) {
      std::string reason = name.substr(at + key.size());
      const size_t end = reason.find("_per_");
      reason = reason.substr(0, end != std::string::npos ? end : reason.find('.'));
      if (reason == "not_issued" || reason.empty()) continue;
      bool seen = false;
      for (auto& s : k.top_stalls) {
        if (s.reason == reason) {
          s.value = std::max(s.value, value);
          seen = true;
        }
      }
      if (!seen) k.top_stalls.push_back({reason, value});
    }
  }
  std::sort(k.top_stalls.begin(), k.top_stalls.end(),
            [](const StallReason& a, const StallReason& b) { return a.value > b.value; });
  if (k.top_stalls.size() > 5) k.top_stalls.resize(5);
}

}  // namespace

nlohmann::json NcuKernel::to_json(bool all_metrics) const {
  nlohmann::json stalls = nlohmann::json::array();
  for (const auto& s : top_stalls)
    stalls.push_back({{"reason", s.reason}, {"warps_per_issue", s.value}});
  nlohmann::json j = {{"name", name},
                      {"block", block},
                      {"grid", grid},
                      {"duration_us", duration_us},
                      {"achieved_occupancy_pct", achieved_occupancy_pct},
                      {"theoretical_occupancy_pct", theoretical_occupancy_pct},
                      {"dram_throughput_pct", dram_pct},
                      {"l2_throughput_pct", l2_pct},
                      {"sm_throughput_pct", sm_pct},
                      {"memory_throughput_pct", memory_pct},
                      {"tensor_pipe_pct", tensor_pct},
                      {"tensor_metric", tensor_metric},
                      {"registers", registers},
                      {"shared_static_bytes", shared_static_bytes},
                      {"shared_dynamic_bytes", shared_dynamic_bytes},
                      {"top_stalls", stalls}};
  if (all_metrics) j["metrics"] = metrics;
  return j;
}

std::vector<std::string> NcuReport::split_csv_line(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.push_back(field);
      field.clear();
    } else if (c != '\r') {
      field += c;
    }
  }
  fields.push_back(field);
  return fields;
}

bool NcuReport::parse_number(const std::string& text, double* value) {
  std::string clean;
  for (char c : text) {
    if (c != ',' && c != ' ') clean += c;
  }
  if (clean.empty()) return false;
  char* end = nullptr;
  const double v = std::strtod(clean.c_str(), &end);
  if (end == clean.c_str() || *end != '\0') return false;
  *value = v;
  return true;
}

std::vector<NcuKernel> NcuReport::parse(const std::string& text, std::string* error) {
  std::istringstream lines(text);
  std::string line;
  std::vector<std::string> header;
  while (std::getline(lines, line)) {
    if (line.rfind("\"ID\"", 0) == 0) {
      header = split_csv_line(line);
      break;
    }
  }
  std::vector<NcuKernel> kernels;
  if (header.empty()) {
    if (error != nullptr) *error = "no CSV header (\"ID\",...) in ncu's output";
    return kernels;
  }
  auto column = [&](const std::string& name) -> int {
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == name) return static_cast<int>(i);
    }
    return -1;
  };
  const int id_col = column("ID");
  const int name_col = column("Kernel Name");
  const int block_col = column("Block Size");
  const int grid_col = column("Grid Size");
  const int metric_name_col = column("Metric Name");
  const int metric_unit_col = column("Metric Unit");
  const int metric_value_col = column("Metric Value");
  const bool long_form = metric_name_col >= 0 && metric_value_col >= 0;
  std::map<std::string, std::string> units;
  std::map<std::string, size_t> by_id;  // long form: kernel ID -> index

  auto field = [](const std::vector<std::string>& row, int col) {
    return col >= 0 && col < static_cast<int>(row.size()) ? row[static_cast<size_t>(col)]
                                                          : std::string();
  };
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] != '"') continue;
    const std::vector<std::string> row = split_csv_line(line);
    if (!long_form && field(row, id_col).empty()) {  // the units row
      for (size_t i = 0; i < row.size() && i < header.size(); ++i) {
        if (!row[i].empty()) units[header[i]] = row[i];
      }
      continue;
    }
    NcuKernel* kernel = nullptr;
    const std::string id = field(row, id_col);
    if (long_form && by_id.count(id) != 0) {
      kernel = &kernels[by_id[id]];
    } else {
      kernels.emplace_back();
      kernel = &kernels.back();
      kernel->name = field(row, name_col);
      kernel->block = field(row, block_col);
      kernel->grid = field(row, grid_col);
      if (long_form) by_id[id] = kernels.size() - 1;
    }
    if (long_form) {
      // The details page names metrics for people; map the ones the summary uses.
      static const std::map<std::string, std::string> kAliases = {
          {"Duration", "gpu__time_duration.sum"},
          {"Achieved Occupancy", "sm__warps_active.avg.pct_of_peak_sustained_active"},
          {"Theoretical Occupancy", "sm__maximum_warps_per_active_cycle_pct"},
          {"DRAM Throughput", "dram__throughput.avg.pct_of_peak_sustained_elapsed"},
          {"L2 Cache Throughput", "lts__throughput.avg.pct_of_peak_sustained_elapsed"},
          {"Compute (SM) Throughput", "sm__throughput.avg.pct_of_peak_sustained_elapsed"},
          {"Memory Throughput", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"},
          {"Registers Per Thread", "launch__registers_per_thread"},
          {"Static Shared Memory Per Block", "launch__shared_mem_per_block_static"},
          {"Dynamic Shared Memory Per Block", "launch__shared_mem_per_block_dynamic"}};
      double v = 0;
      std::string name = field(row, metric_name_col);
      if (auto alias = kAliases.find(name); alias != kAliases.end()) name = alias->second;
      if (parse_number(field(row, metric_value_col), &v)) kernel->metrics[name] = v;
      if (metric_unit_col >= 0) units[name] = field(row, metric_unit_col);
      continue;
    }
    for (size_t i = 0; i < row.size() && i < header.size(); ++i) {
      if (static_cast<int>(i) == id_col || static_cast<int>(i) == name_col) continue;
      double v = 0;
      if (header[i].find("__") != std::string::npos && parse_number(row[i], &v))
        kernel->metrics[header[i]] = v;
    }
  }
  for (auto& k : kernels) summarize(k, units);
  return kernels;
}

}  // namespace kiln::worker
