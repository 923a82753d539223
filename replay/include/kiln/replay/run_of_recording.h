// What `kiln replay` infers from where a recording lies: the run it belongs to (a recording in
// RUN/sessions/, where `kiln mcp --run-dir RUN` writes them, of a RUN with a manifest.json, as
// `kiln setup` makes it), and whether a replay can send GPU calls to a runner.
#pragma once

#include <filesystem>
#include <optional>

namespace kiln::replay {

// RUN for RUN/sessions/NAME.jsonl when RUN/manifest.json exists; nullopt otherwise.
std::optional<std::filesystem::path> run_of_recording(const std::filesystem::path& recording);

// A runner is configured for the server a replay starts: KILN_RUNNER is set (it wins in
// `kiln mcp` too), or `run` (the run directory that server gets) has a manifest naming one
// (`kiln setup --remote URL`). A manifest that cannot be read names none.
bool runner_configured(const std::optional<std::filesystem::path>& run);

}  // namespace kiln::replay
