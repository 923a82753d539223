#include "kiln/taskcheck/scaffold.h"

#include <nlohmann/json.hpp>
#include <regex>

#include "kiln/base/file.h"
#include "kiln/tasks/task.h"
#include "scaffold_templates.h"

namespace kiln::taskcheck {

namespace fs = std::filesystem;
using ordered = nlohmann::ordered_json;

namespace {

std::string with_name(std::string text, const std::string& name) {
  for (size_t at = text.find("NAME"); at != std::string::npos; at = text.find("NAME", at)) {
    text.replace(at, 4, name);
    at += name.size();
  }
  return text;
}

// The generic example's task.json: loads as it is; title and description say TODO.
ordered example_task_json(const std::string& name) {
  ordered task;
  task["name"] = name;
  task["title"] = "TODO: one line saying what the kernel computes";
  task["description"] =
      "TODO: the computation, layouts and precision, in a paragraph. (The example: y[N] = "
      "alpha * x[N] in f32, contiguous, alpha = 2 as a scalar argument.)";
  task["arch"] = "sm_90a";
  task["dims"] = {"N"};
  task["signature"] = {
      {"inputs", ordered::array({{{"name", "x"}, {"dtype", "f32"}, {"shape", {"N"}}}})},
      {"outputs", ordered::array({{{"name", "y"}, {"dtype", "f32"}, {"shape", {"N"}}}})},
      {"scalars", ordered::array({{{"name", "alpha"}, {"dtype", "f64"}, {"value", 2.0}}})}};
  task["input_distribution"] = {{"x", {{"kind", "uniform"}, {"low", -1}, {"high", 1}}}};
  task["workloads"] = ordered::array();
  for (const auto& [label, n] : std::vector<std::pair<std::string, int64_t>>{
           {"1M", 1 << 20}, {"16M", 1 << 24}, {"64M", 1 << 26}})
    task["workloads"].push_back({{"name", label}, {"N", n}});
  task["sim_workloads"] =
      ordered::array({{{"name", "1000"}, {"N", 1000}}, {{"name", "4097"}, {"N", 4097}}});
  task["tolerance"] = {{"atol", 1e-6}, {"rtol", 1e-6}, {"max_mismatch_fraction", 0}};
  task["max_cv"] = 0.05;
  task["flops"] = "N";
  task["bytes"] = "8*N";
  task["baseline"] = {
      {"name", "one thread per element"}, {"file", "baseline.cu"}, {"libraries", ordered::array()}};
  task["banned_symbols"] = {"cublas", "cublasLt", "cudnn", "cutlass"};
  task["rules"] = {
      "Enqueue all GPU work on the stream passed to kiln_launch; use no other stream or thread.",
      "Do not synchronize with the host inside kiln_launch.",
      "Write only the outputs, and only their elements; never modify an input.",
      "Do not cache inputs, outputs or results across calls.",
      "Return a nonzero kiln_status for shapes you do not handle instead of computing a wrong "
      "answer."};
  task["files"] = {{"reference", "reference.cpp"},
                   {"baseline", "baseline.cu"},
                   {"starter", "starter.cu"},
                   {"readme", "README.md"}};
  return task;
}

Status write_all(const fs::path& dir,
                 const std::vector<std::pair<std::string, std::string>>& files) {
  for (const auto& [name, text] : files) {
    std::error_code error;
    fs::create_directories((dir / name).parent_path(), error);
    if (auto written = write_file(dir / name, text); !written) return written;
  }
  return Ok{};
}

// The bundle at `like`, renamed: task.json's name and a TODO title; the README marked.
Result<std::vector<std::pair<std::string, std::string>>> copied_files(const fs::path& like,
                                                                      const std::string& name) {
  auto task = tasks::load_task(like);
  if (!task) return make_error("--like " + like.string() + ": " + task.error().message);
  std::vector<std::pair<std::string, std::string>> out;
  for (const fs::path& file : tasks::bundle_files(*task)) {
    auto text = read_file(file);
    if (!text) return text.error();
    out.emplace_back(fs::relative(file, task->dir).string(), *text);
  }
  for (auto& [file, text] : out) {
    if (file == "task.json") {
      ordered json = ordered::parse(text, nullptr, false);
      if (json.is_discarded()) return make_error(like.string() + "/task.json is not JSON");
      json["name"] = name;
      json["title"] = "TODO (copied from " + task->name + "): " + task->title;
      text = json.dump(2) + "\n";
    } else if (task->readme_path.filename() == fs::path(file).filename()) {
      text = "TODO: this README was copied from task " + task->name + "; rewrite it for " + name +
             " and delete this line.\n\n" + text;
    }
  }
  return out;
}

}  // namespace

Result<fs::path> scaffold_task(const ScaffoldOptions& options) {
  static const std::regex kName("[a-z0-9_]+");
  if (!std::regex_match(options.name, kName))
    return make_error("task name `" + options.name +
                      "` is not [a-z0-9_]+; use lower-case letters, digits and _ (it is also the "
                      "folder's name)");
  const fs::path dir = fs::absolute(options.parent / options.name).lexically_normal();
  std::error_code error;
  if (fs::exists(dir, error))
    return make_error(dir.string() +
                      " already exists; kiln task new never overwrites: choose another name or "
                      "--dir, or remove it yourself");

  std::vector<std::pair<std::string, std::string>> files;
  if (!options.like.empty()) {
    auto copied = copied_files(options.like, options.name);
    if (!copied) return copied.error();
    files = std::move(*copied);
  } else {
    const std::string head = with_name(templates::kKernelHead, options.name);
    files = {{"task.json", example_task_json(options.name).dump(2) + "\n"},
             {"reference.cpp", with_name(templates::kReference, options.name)},
             {"baseline.cu", "// The baseline of task " + options.name +
                                 ": the speed to beat. Replace it with the vendor library call "
                                 "or the best kernel you have.\n" +
                                 head + with_name(templates::kBaselineTail, options.name)},
             {"starter.cu", "// The starter of task " + options.name +
                                ": a correct, simple kernel the agent starts from.\n" + head +
                                with_name(templates::kStarterTail, options.name)},
             {"README.md", with_name(templates::kReadme, options.name)}};
  }
  if (!options.from.empty()) {
    auto kernel = read_file(options.from);
    if (!kernel) return make_error("--from: " + kernel.error().message);
    if (kernel->find("kiln_launch") == std::string::npos)
      return make_error("--from " + options.from.string() +
                        " defines no kiln_launch; a starter exports extern \"C\" int "
                        "kiln_launch(const kiln_tensor*, int, const kiln_scalar*, int, "
                        "cudaStream_t) from kiln/abi.h (tasks/FORMAT.md, \"The ABI\")");
    // The starter's file name: from task.json's files.starter in a copy, else starter.cu.
    std::string starter = "starter.cu";
    for (const auto& [name, text] : files) {
      if (name != "task.json") continue;
      ordered json = ordered::parse(text, nullptr, false);
      if (json.contains("files") && json["files"].contains("starter"))
        starter = json["files"]["starter"].get<std::string>();
    }
    bool replaced = false;
    for (auto& [name, text] : files)
      if (name == starter) text = *kernel, replaced = true;
    if (!replaced) files.emplace_back(starter, *kernel);
  }
  fs::create_directories(dir, error);
  if (error) return make_error("cannot make " + dir.string() + ": " + error.message());
  if (auto written = write_all(dir, files); !written) return written.error();
  return dir;
}

}  // namespace kiln::taskcheck
