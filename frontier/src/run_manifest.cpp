#include "kiln/frontier/run_manifest.h"

#include <cmath>

#include "kiln/base/file.h"
#include "kiln/base/sha256.h"
#include "kiln/tasks/task.h"

namespace kiln::frontier {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string text_at(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

std::vector<std::string> strings_at(const json& object, const char* key) {
  std::vector<std::string> out;
  auto it = object.find(key);
  if (it == object.end() || !it->is_array()) return out;
  for (const auto& item : *it)
    if (item.is_string()) out.push_back(item.get<std::string>());
  return out;
}

}  // namespace

Result<Budget> budget_from_json(const json& object, const Budget& defaults) {
  if (!object.is_object())
    return make_error("the budget must be a JSON object, e.g. {\"promotion_margin\": 0.01}");
  Budget budget = defaults;
  const std::map<std::string, double*> fields = {
      {"promotion_margin", &budget.promotion_margin},
      {"max_cv", &budget.max_cv},
      {"revalidation_tolerance", &budget.revalidation_tolerance}};
  for (const auto& [key, value] : object.items()) {
    auto field = fields.find(key);
    if (field == fields.end())
      return make_error("budget: unknown field `" + key +
                        "`; the fields are promotion_margin, max_cv, revalidation_tolerance");
    if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0 ||
        value.get<double>() >= 1)
      return make_error("budget: `" + key + "` must be a number in [0, 1) (0.01 means 1%), got " +
                        value.dump());
    *field->second = value.get<double>();
  }
  return budget;
}

json to_json(const Budget& budget) {
  return {{"promotion_margin", budget.promotion_margin},
          {"max_cv", budget.max_cv},
          {"revalidation_tolerance", budget.revalidation_tolerance}};
}

json to_json(const RunManifest& m) {
  json runners = json::array();
  for (const auto& r : m.runners)
    runners.push_back({{"url", r.url}, {"gpus", r.gpus}, {"driver", r.driver}, {"cuda", r.cuda}});
  return {{"run_id", m.run_id},
          {"created", m.created},
          {"task",
           {{"name", m.task_name},
            {"sha256", m.task_sha256},
            {"dir", m.task_dir.string()},
            {"files", m.task_files}}},
          {"kiln", {{"version", m.kiln_version}, {"commit", m.kiln_commit}}},
          {"runners", runners},
          {"budget", to_json(m.budget)},
          {"tools", m.tools}};
}

Result<RunManifest> read_manifest(const fs::path& run_dir) {
  const fs::path file = run_dir / kManifestFile;
  auto text = read_file(file);
  if (!text)
    return make_error(file.string() + " cannot be read (" + text.error().message +
                      "); prepare the run with `kiln setup --task NAME`");
  json doc = json::parse(*text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object())
    return make_error(file.string() + " is not a JSON object; restore it or prepare a new run");
  RunManifest m;
  m.run_id = text_at(doc, "run_id");
  m.created = text_at(doc, "created");
  const json task = doc.value("task", json::object());
  m.task_name = text_at(task, "name");
  m.task_sha256 = text_at(task, "sha256");
  m.task_dir = text_at(task, "dir");
  if (m.task_name.empty() || m.task_sha256.empty() || m.task_dir.empty())
    return make_error(file.string() +
                      ": task.name, task.sha256 and task.dir are required; the manifest was "
                      "edited or is not kiln's");
  if (auto files = task.find("files"); files != task.end() && files->is_object())
    for (const auto& [name, hash] : files->items())
      if (hash.is_string()) m.task_files[name] = hash.get<std::string>();
  const json kiln = doc.value("kiln", json::object());
  m.kiln_version = text_at(kiln, "version");
  m.kiln_commit = text_at(kiln, "commit");
  if (auto runners = doc.find("runners"); runners != doc.end() && runners->is_array())
    for (const auto& r : *runners) {
      if (!r.is_object()) continue;
      m.runners.push_back(
          {text_at(r, "url"), strings_at(r, "gpus"), text_at(r, "driver"), text_at(r, "cuda")});
    }
  if (doc.contains("budget")) {
    auto budget = budget_from_json(doc["budget"]);
    if (!budget) return make_error(file.string() + ": " + budget.error().message);
    m.budget = *budget;
  }
  m.tools = strings_at(doc, "tools");
  return m;
}

Status write_manifest(const fs::path& run_dir, const RunManifest& manifest) {
  return write_file(run_dir / kManifestFile, to_json(manifest).dump(2) + "\n");
}

Result<std::map<std::string, std::string>> task_file_hashes(const tasks::Task& task) {
  std::map<std::string, std::string> out;
  // The files load_task hashes (tasks/src/task_loader.cpp), in any order: they are compared by
  // name.
  std::vector<fs::path> files = {task.dir / "task.json", task.reference_path, task.baseline_path,
                                 task.starter_path, task.readme_path};
  if (!task.gpu_reference_path.empty()) files.push_back(task.gpu_reference_path);
  for (const fs::path& path : files) {
    auto contents = read_file(path);
    if (!contents) return contents.error();
    out[path.lexically_relative(task.dir).generic_string()] = sha256_hex(*contents);
  }
  return out;
}

Status check_frozen(const RunManifest& manifest, const tasks::Task& task) {
  if (task.sha256 == manifest.task_sha256) return Ok{};
  std::string changed;
  auto add = [&changed](const std::string& item) {
    changed += (changed.empty() ? "" : ", ") + item;
  };
  auto now = task_file_hashes(task);
  if (now) {
    for (const auto& [name, hash] : *now) {
      auto then = manifest.task_files.find(name);
      if (then == manifest.task_files.end())
        add((task.dir / name).string() + " (new)");
      else if (then->second != hash)
        add((task.dir / name).string() + " (changed)");
    }
    for (const auto& [name, hash] : manifest.task_files)
      if (!now->count(name)) add((task.dir / name).string() + " (no longer part of the bundle)");
  }
  if (changed.empty()) changed = "the manifest does not list the files, so kiln cannot say which";
  return make_error("the task bundle of this run changed since `kiln setup`: task " +
                    manifest.task_name + " hashed " + manifest.task_sha256.substr(0, 12) +
                    "… then and " + task.sha256.substr(0, 12) + "… now; " + changed +
                    ". The contract of a run is frozen: restore those files (git checkout them), "
                    "or prepare a new run with `kiln setup --task " +
                    manifest.task_name + "`");
}

}  // namespace kiln::frontier
