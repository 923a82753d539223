#include "kiln/runner/gpu_discovery.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <sstream>

#include "kiln/base/env.h"
#include "kiln/base/text.h"

namespace kiln::runner {

namespace fs = std::filesystem;

namespace {

bool on_path(const std::string& program) {
  std::stringstream dirs(env_or("PATH", ""));
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && access((fs::path(dir) / program).c_str(), X_OK) == 0) return true;
  return false;
}

std::string run_and_read(const std::string& command) {
  std::string out;
  std::FILE* pipe = popen(command.c_str(), "re");
  if (!pipe) return out;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  if (pclose(pipe) != 0) return "";
  return out;
}

}  // namespace

Result<std::vector<int>> parse_gpu_list(const std::string& text) {
  std::vector<int> out;
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    item = std::string(trim(item));
    if (item.empty() || item.size() > 3 || !std::all_of(item.begin(), item.end(), ::isdigit))
      return make_error("--gpus: '" + item + "' is not a GPU index; write e.g. --gpus 0,1");
    int index = std::stoi(item);
    if (std::find(out.begin(), out.end(), index) != out.end())
      return make_error("--gpus: GPU " + item + " is listed twice");
    out.push_back(index);
  }
  if (out.empty()) return make_error("--gpus: name at least one GPU, e.g. --gpus 0");
  return out;
}

GpuDiscovery discover_gpus(const std::vector<int>& indices) {
  GpuDiscovery out;
  for (int index : indices) out.gpus.push_back({index, ""});
  if (!on_path("nvidia-smi")) return out;
  std::stringstream lines(run_and_read(
      "nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader 2>/dev/null"));
  for (std::string line; std::getline(lines, line);) {
    std::stringstream fields(line);
    std::string index, name, driver;
    if (!std::getline(fields, index, ',') || !std::getline(fields, name, ',') ||
        !std::getline(fields, driver))
      continue;
    index = std::string(trim(index));
    if (index.empty() || !std::all_of(index.begin(), index.end(), ::isdigit)) continue;
    for (auto& gpu : out.gpus)
      if (gpu.index == std::stoi(index)) gpu.name = trim(name);
    out.driver = trim(driver);
  }
  std::smatch match;
  std::string banner = run_and_read("nvidia-smi 2>/dev/null");
  if (std::regex_search(banner, match, std::regex(R"(CUDA Version:\s*([0-9.]+))")))
    out.cuda = match[1];
  return out;
}

std::vector<int> local_gpu_indices() {
  std::vector<int> out;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/dev", error)) {
    std::string name = entry.path().filename().string();
    if (name.size() > 6 && name.rfind("nvidia", 0) == 0 &&
        std::all_of(name.begin() + 6, name.end(), ::isdigit))
      out.push_back(std::stoi(name.substr(6)));
  }
  std::sort(out.begin(), out.end());
  // Ordinals, not minor numbers: CUDA counts the visible devices from 0.
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int>(i);
  return out;
}

}  // namespace kiln::runner
