// The worker's job drivers: verify and benchmark (build, load, gates, timing), profile
// (ncu over the run-once mode) and sanitize (compute-sanitizer over the run-once mode).
// Each writes events and exactly one result to `out` and returns the exit code.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>

#include "kiln/compiler/toolchain.h"
#include "kiln/worker/job_spec.h"

namespace kiln::worker {

// How the worker was started. The program fills it from its command line and, where that
// says nothing, from the environment (apps/kiln-worker/main.cpp); the library reads no
// environment variable itself.
struct WorkerOptions {
  std::filesystem::path job_path;    // JOB_DIR/job.json
  std::filesystem::path executable;  // this program, re-run by ncu and compute-sanitizer
  int gpu = 0;
  std::filesystem::path hw_dir;             // kb/hw specs for % of peak (optional)
  bool build_only = false;                  // stop after the build step (no GPU needed)
  compiler::Toolchain toolchain;            // builds the candidate, baseline and reference
  std::filesystem::path ncu;                // empty: the toolkit's, else ncu on PATH
  std::filesystem::path compute_sanitizer;  // empty: the toolkit's, else on PATH
};

// Runs a job of any kind. Returns 0 when a result line was written; `fatal` is set when the
// CUDA context is unusable, so the caller should leave without tearing anything down.
int drive_job(const JobSpec& spec, const WorkerOptions& options, std::ostream& out, bool* fatal);

}  // namespace kiln::worker
