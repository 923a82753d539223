// PROMPT.md of a run: the task's contract, the run's paths and runner, the workflow with
// kiln's tools and the rules, written by `kiln setup` (and served by the `optimize` prompt).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kiln/frontier/run_manifest.h"
#include "kiln/tasks/task.h"

namespace kiln::cli {

std::string run_prompt(const tasks::Task& task, const std::string& readme,
                       const std::filesystem::path& run_dir, const frontier::RunManifest& manifest);

}  // namespace kiln::cli
