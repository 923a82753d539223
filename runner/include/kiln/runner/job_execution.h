// Runs one job's worker to its end and turns whatever happened into a RESULT: the
// worker's own (checked by check_result), or an error result that names the stage it
// reached and why it ended (timeout, cancelled, crash, exit code, bad output). The server's
// half of a job; the worker's half is kiln-worker's drive_job (kiln/worker/job_driver.h).
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "kiln/runner/result_check.h"

namespace kiln::runner {

struct JobLaunch {
  std::string id;
  std::filesystem::path worker;   // kiln-worker
  std::filesystem::path job_dir;  // holds job.json; the worker's working directory
  int gpu = 0;
  double job_seconds = 600;
  ResultExpectations expect;
};

struct JobOutcome {
  nlohmann::json result;   // RESULT (runner/protocol/PROTOCOL.md)
  bool cancelled = false;  // ended by cancel, not by itself
  std::string last_stage;
};

// Events (stage, progress, log) reach `on_event` as the worker reports them.
JobOutcome execute_job(const JobLaunch& launch, const std::atomic<bool>& cancel,
                       const std::function<void(nlohmann::json event)>& on_event);

}  // namespace kiln::runner
