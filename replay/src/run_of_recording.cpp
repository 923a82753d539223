#include "kiln/replay/run_of_recording.h"

#include "kiln/base/env.h"
#include "kiln/frontier/run_manifest.h"

namespace kiln::replay {

namespace fs = std::filesystem;

std::optional<fs::path> run_of_recording(const fs::path& recording) {
  std::error_code error;
  const fs::path absolute = fs::absolute(recording, error);
  if (error || absolute.parent_path().filename() != "sessions") return std::nullopt;
  const fs::path run = absolute.parent_path().parent_path();
  if (!fs::exists(run / "manifest.json", error)) return std::nullopt;
  return run;
}

bool runner_configured(const std::optional<fs::path>& run) {
  if (env_value("KILN_RUNNER")) return true;
  if (!run) return false;
  auto manifest = frontier::read_manifest(*run);
  return manifest && !manifest->runners.empty();
}

}  // namespace kiln::replay
