// kiln setup --task NAME: prepare a run directory (PROMPT.md, manifest.json, the agents'
// configurations, a git worktree with the starter) and print how to start an agent in it.
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <iostream>

#include "commands.h"
#include "kiln/base/env.h"
#include "kiln/base/file.h"
#include "kiln/frontier/result_store.h"
#include "kiln/frontier/run_manifest.h"
#include "kiln/frontier/worktree.h"
#include "kiln/runner/gpu_discovery.h"
#include "kiln/runner/runner_client.h"
#include "kiln/runner/runner_selector.h"
#include "kiln/tasks/task.h"
#include "run_prompt.h"

namespace kiln::cli {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

struct SetupOptions {
  std::string task;
  std::string remotes;
  std::string out = "runs";
  std::string name;
  std::string budget_file;
};

// The tools a run offers, for the manifest.
const std::vector<std::string> kRunTools = {
    "get_task", "search_zoo",       "read_zoo_entry", "read_ptx_spec", "compile",
    "simulate", "synccheck",        "racecheck",      "benchmark",     "profile",
    "wait_job", "record_candidate", "list_frontier"};

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string default_run_name(const std::string& task) {
  std::time_t now = std::time(nullptr);
  std::tm parts{};
  gmtime_r(&now, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%d-%H%M%S", &parts);
  return task + "-" + text;
}

// JSON string for a TOML basic string (the same escapes cover what paths hold).
std::string toml_string(const std::string& text) { return json(text).dump(); }

Result<frontier::RunnerRecord> check_runner(const std::string& url) {
  runner::RunnerEndpoint endpoint{url, env_value("KILN_RUNNER_TOKEN").value_or("")};
  auto health = runner::RunnerClient(endpoint).health(std::chrono::seconds(5));
  if (!health)
    return make_error("runner " + url + " did not answer GET /v1/health (" +
                      health.error().message +
                      "); start it there with `kiln runner`, check the "
                      "URL and KILN_RUNNER_TOKEN, or leave --remote out to prepare an offline run");
  frontier::RunnerRecord record;
  record.url = url;
  if (health->contains("gpus") && (*health)["gpus"].is_array())
    for (const auto& gpu : (*health)["gpus"])
      record.gpus.push_back(gpu.contains("name") && gpu["name"].is_string()
                                ? gpu["name"].get<std::string>()
                                : "unknown GPU");
  record.driver =
      health->value("driver", json()).is_string() ? (*health)["driver"].get<std::string>() : "";
  record.cuda =
      health->value("cuda", json()).is_string() ? (*health)["cuda"].get<std::string>() : "";
  return record;
}

int fail(const std::string& message) {
  std::cerr << "kiln setup: " << message << "\n";
  return 1;
}

int setup(const SetupOptions& options, const GlobalOptions& global) {
  const fs::path tasks_dir = resolve_tasks_dir(global);
  const std::string task_name = options.task.empty() ? global.task : options.task;
  if (task_name.empty()) return fail("--task NAME is required (see `kiln tasks list`)");
  fs::path bundle =
      fs::exists(fs::path(task_name) / "task.json") ? fs::path(task_name) : tasks_dir / task_name;
  // A folder outside kiln's tasks is recorded as an absolute, normal path (no "..", no "/").
  bundle = fs::absolute(bundle).lexically_normal();
  if (bundle.filename().empty()) bundle = bundle.parent_path();
  auto task = tasks::load_task(bundle);
  if (!task) return fail(task.error().message + " (see `kiln tasks list`)");

  frontier::Budget budget;
  if (!options.budget_file.empty()) {
    auto text = read_file(options.budget_file);
    if (!text) return fail(text.error().message);
    auto parsed = frontier::budget_from_json(json::parse(*text, nullptr, false));
    if (!parsed) return fail(options.budget_file + ": " + parsed.error().message);
    budget = *parsed;
  }

  const std::string name = options.name.empty() ? default_run_name(task->name) : options.name;
  if (name.find('/') != std::string::npos || name == "." || name == "..")
    return fail("--name must be a plain folder name, not `" + name + "`");
  const fs::path run_dir = fs::absolute(fs::path(options.out) / name).lexically_normal();
  std::error_code error;
  if (fs::exists(run_dir, error))
    return fail(run_dir.string() +
                " already exists; kiln never overwrites a run: choose another --name or --out, "
                "or remove it yourself");

  // Every runner must answer before anything is written.
  frontier::RunManifest manifest;
  for (const auto& url : runner::split_runner_urls(options.remotes)) {
    auto record = check_runner(url);
    if (!record) return fail(record.error().message);
    manifest.runners.push_back(*record);
  }

  auto files = frontier::task_file_hashes(*task);
  if (!files) return fail(files.error().message);
  manifest.run_id = name;
  manifest.created = frontier::format_utc(now_ms());
  manifest.task_name = task->name;
  manifest.task_sha256 = task->sha256;
  manifest.task_dir = task->dir;
  manifest.task_files = *files;
  manifest.kiln_version = version();
  manifest.kiln_commit = KILN_GIT_COMMIT;
  manifest.budget = budget;
  manifest.tools = kRunTools;

  const fs::path kiln = program_path();
  const fs::path worktree = run_dir / "worktree";
  const fs::path candidates = worktree / "candidates" / task->name;
  fs::create_directories(candidates / "scratch", error);
  fs::create_directories(candidates / "frontier", error);
  fs::create_directories(run_dir / "sessions", error);
  fs::create_directories(run_dir / ".codex", error);
  if (error) return fail("cannot create " + run_dir.string() + ": " + error.message());

  auto readme = read_file(task->readme_path);
  auto starter = read_file(task->starter_path);
  if (!readme || !starter) return fail((readme ? starter : readme).error().message);
  const json args = {"mcp", "--run-dir", run_dir.string(), "--record",
                     (run_dir / "sessions").string() + "/"};
  const json mcp_json = {{"mcpServers", {{"kiln", {{"command", kiln.string()}, {"args", args}}}}}};
  std::string codex = "# Codex: CODEX_HOME=" + (run_dir / ".codex").string() +
                      " codex  (written by kiln setup)\n[mcp_servers.kiln]\ncommand = " +
                      toml_string(kiln.string()) + "\nargs = [";
  for (size_t i = 0; i < args.size(); ++i)
    codex += (i ? ", " : "") + toml_string(args[i].get<std::string>());
  codex +=
      "]\nstartup_timeout_sec = 60\n# benchmarks and revalidations take minutes\n"
      "tool_timeout_sec = 1800\n";
  for (const auto& [path, text] : std::vector<std::pair<fs::path, std::string>>{
           {run_dir / "PROMPT.md", run_prompt(*task, *readme, run_dir, manifest)},
           {run_dir / ".mcp.json", mcp_json.dump(2) + "\n"},
           {worktree / ".mcp.json", mcp_json.dump(2) + "\n"},
           {run_dir / ".codex" / "config.toml", codex},
           {candidates / "scratch" / "kernel.cu", *starter},
           {candidates / "frontier" / "README.md",
            "kiln writes this folder: each frontier member's exact measured source and result, "
            "and index.json (schema: frontier/index.schema.json in kiln's source). Do not edit "
            "it; use record_candidate.\n"}}) {
    if (auto written = write_file(path, text); !written) return fail(written.error().message);
  }
  if (auto written = frontier::write_manifest(run_dir, manifest); !written)
    return fail(written.error().message);
  if (auto status = frontier::Worktree(worktree).init(
          "run " + name + ": " + task->name + " starter (task sha256 " + task->sha256 + ")");
      !status)
    return fail(status.error().message);

  std::cout << "prepared run " << name << " in " << run_dir.string() << "\n"
            << "  task " << task->name << " sha256 " << task->sha256.substr(0, 12) << "…, "
            << task->workloads.size() << " workloads; starter in "
            << (candidates / "scratch" / "kernel.cu").string() << "\n"
            << "  bundle " << task->dir.string() << " (frozen: the run refuses to start if it "
            << "changes)\n";
  if (manifest.runners.empty() && !runner::local_gpu_indices().empty()) {
    std::cout << "  no --remote runner: the GPU tools will use this machine's GPU (a runner kiln "
                 "starts in the MCP server), or KILN_RUNNER=URL when starting the agent.\n";
  } else if (manifest.runners.empty()) {
    std::cout << "  no runner: this run works offline, and only the CPU tools work (get_task, "
                 "search_zoo, read_zoo_entry, read_ptx_spec, compile, simulate, synccheck, "
                 "racecheck on the simulator). benchmark, profile and record_candidate need a GPU "
                 "runner: prepare the run with --remote URL, or start the agent with "
                 "KILN_RUNNER=URL.\n";
  } else {
    for (const auto& r : manifest.runners) {
      std::cout << "  runner " << r.url << ":";
      for (const auto& gpu : r.gpus) std::cout << " " << gpu << ";";
      std::cout << "\n";
    }
  }
  const std::string goal =
      "/goal Read ../PROMPT.md and reach at least 1.1x aggregate speedup over the baseline "
      "while passing correctness checks for every workload";
  std::cout << "\nnext:\n"
            << "  1. trust the project once: cd " << worktree.string()
            << " && claude   (accept the trust prompt and the kiln MCP server, then exit)\n"
            << "  2. Claude Code: cd " << worktree.string()
            << " && MCP_TOOL_TIMEOUT=1800000 claude\n"
            << "     then type: " << goal << "\n"
            << "  3. or Codex: cd " << worktree.string()
            << " && CODEX_HOME=" << (run_dir / ".codex").string()
            << " codex   (log in once with that CODEX_HOME: codex login)\n"
            << "     then type: " << goal << "\n"
            << "  watch: tail -f " << (run_dir / "live.log").string()
            << "; the frontier: kiln frontier show " << run_dir.string()
            << "; the report: kiln report " << run_dir.string() << "\n";
  return 0;
}

}  // namespace

fs::path program_path() {
  std::error_code error;
  fs::path self = fs::read_symlink("/proc/self/exe", error);
  return error ? fs::path("kiln") : self;
}

Runner add_setup_command(CLI::App& app, const GlobalOptions& global) {
  auto options = std::make_shared<SetupOptions>();
  auto* command = app.add_subcommand(
      "setup",
      "Prepare a run directory for an agent: PROMPT.md, manifest.json, .mcp.json, "
      ".codex/config.toml and a git worktree with the starter");
  command->add_option("--task", options->task, "the task bundle (a name or a folder)");
  command->add_option("--remote", options->remotes,
                      "GPU runner URLs, comma-separated (each must answer /v1/health)");
  command->add_option("--out", options->out, "where runs are made")->capture_default_str();
  command->add_option("--name", options->name, "the run's folder name (default: TASK-UTCTIME)");
  command
      ->add_option("--budget", options->budget_file,
                   "a JSON file with promotion_margin, max_cv, revalidation_tolerance")
      ->check(CLI::ExistingFile);
  return [options, &global]() -> int { return setup(*options, global); };
}

}  // namespace kiln::cli
