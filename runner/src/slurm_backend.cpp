#include "kiln/runner/slurm_backend.h"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace kiln::runner {

namespace {

std::string trim(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  size_t end = text.find_last_not_of(" \t\r\n");
  return text.substr(begin, end + 1 - begin);
}

// The last non-empty line of a tool's stderr (Slurm puts its reason there).
std::string last_line(const std::string& text) {
  std::string line, last;
  std::istringstream in(text);
  while (std::getline(in, line))
    if (!trim(line).empty()) last = trim(line);
  return last.size() > 300 ? last.substr(0, 300) : last;
}

std::string failed_text(const std::string& tool, const SlurmCommandResult& ran) {
  if (!ran.ran) return ran.error;
  std::string why = last_line(ran.err);
  return tool + " exited " + std::to_string(ran.exit_code) + (why.empty() ? "" : ": " + why);
}

// "1,2,3"
std::string joined(const std::vector<std::string>& ids) {
  std::string out;
  for (const auto& id : ids) out += (out.empty() ? "" : ",") + id;
  return out;
}

// squeue's and sacct's `a|b|c` lines, split at '|', each field trimmed; blank lines skipped.
std::vector<std::vector<std::string>> split_lines(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (trim(line).empty()) continue;
    std::vector<std::string> fields;
    std::istringstream parts(line);
    std::string field;
    while (std::getline(parts, field, '|')) fields.push_back(trim(field));
    rows.push_back(std::move(fields));
  }
  return rows;
}

// gpu:4, gpu:h100:8, gpu:h100:8(S:0-1), "gpu:2,shard:8": the GPUs.
int gpus_in_gres(const std::string& gres) {
  int total = 0;
  std::istringstream items(gres);
  std::string item;
  while (std::getline(items, item, ',')) {
    if (item.rfind("gpu", 0) != 0) continue;
    std::string head = item.substr(0, item.find('('));
    size_t colon = head.rfind(':');
    if (colon == std::string::npos) continue;
    std::string count = head.substr(colon + 1);
    if (!count.empty() &&
        std::all_of(count.begin(), count.end(), [](unsigned char c) { return std::isdigit(c); }))
      total += std::stoi(count);
  }
  return total;
}

}  // namespace

bool is_ended(SlurmState state) {
  return state != SlurmState::kPending && state != SlurmState::kRunning;
}

SlurmJobStatus parse_slurm_state(const std::string& word) {
  SlurmJobStatus status;
  std::string name = trim(word);
  name = name.substr(0, name.find(' '));                        // sacct: "CANCELLED by 1000"
  while (!name.empty() && name.back() == '+') name.pop_back();  // sacct truncation mark
  status.name = name;
  if (name == "PENDING" || name == "REQUEUED" || name == "REQUEUE_HOLD" || name == "RESV_DEL_HOLD")
    status.state = SlurmState::kPending;
  else if (name == "RUNNING" || name == "CONFIGURING" || name == "COMPLETING" ||
           name == "SUSPENDED" || name == "STOPPED" || name == "RESIZING" || name == "SIGNALING" ||
           name == "STAGE_OUT")
    status.state = SlurmState::kRunning;
  else if (name == "COMPLETED")
    status.state = SlurmState::kCompleted;
  else if (name == "FAILED")
    status.state = SlurmState::kFailed;
  else if (name == "CANCELLED")
    status.state = SlurmState::kCancelled;
  else if (name == "TIMEOUT")
    status.state = SlurmState::kTimeout;
  else if (name == "NODE_FAIL")
    status.state = SlurmState::kNodeFail;
  else if (name == "PREEMPTED")
    status.state = SlurmState::kPreempted;
  else if (name == "OUT_OF_MEMORY")
    status.state = SlurmState::kOutOfMemory;
  else
    status.state = SlurmState::kOther;
  return status;
}

SlurmClusterStatus parse_slurm_cluster(const std::string& sinfo_out,
                                       const std::string& squeue_out) {
  SlurmClusterStatus cluster;
  std::istringstream nodes(sinfo_out);
  std::string line;
  while (std::getline(nodes, line)) {
    line = trim(line);
    if (line.empty()) continue;
    size_t first = line.find('|');
    size_t second = first == std::string::npos ? first : line.find('|', first + 1);
    if (second == std::string::npos) continue;
    std::string state = line.substr(first + 1, second - first - 1);
    ++cluster.nodes;
    if (state.rfind("idle", 0) == 0 || state.rfind("mixed", 0) == 0) ++cluster.idle_nodes;
    cluster.gpus += gpus_in_gres(line.substr(second + 1));
  }
  std::istringstream jobs(squeue_out);
  while (std::getline(jobs, line)) {
    SlurmState state = parse_slurm_state(line).state;
    if (trim(line).empty()) continue;
    if (state == SlurmState::kPending) ++cluster.jobs_pending;
    if (state == SlurmState::kRunning) ++cluster.jobs_running;
  }
  return cluster;
}

SlurmBackend::SlurmBackend(SlurmCommandRunner& commands, std::string partition,
                           std::chrono::seconds command_timeout)
    : commands_(commands), partition_(std::move(partition)), timeout_(command_timeout) {}

Result<std::string> SlurmBackend::submit(const std::string& script_path) {
  auto ran = commands_.run({"sbatch", "--parsable", script_path}, timeout_);
  if (!ran.ran || ran.exit_code != 0) {
    std::string text = failed_text("sbatch", ran);
    std::string advice = text.find("partition") != std::string::npos
                             ? "; check --partition (`sinfo -s` lists the partitions)"
                             : "; check the runner's --partition, --gres, --account and "
                               "--time-limit against the cluster (`sinfo -s`, `sacctmgr show "
                               "assoc user=$USER`)";
    return make_error("Slurm refused the job: " + text + advice);
  }
  // --parsable: "ID" or "ID;CLUSTER".
  std::string id = trim(ran.out);
  id = id.substr(0, id.find(';'));
  if (id.empty() || !std::all_of(id.begin(), id.end(),
                                 [](unsigned char c) { return std::isdigit(c) || c == '_'; }))
    return make_error("sbatch answered '" + trim(ran.out).substr(0, 200) +
                      "', not a job id; check that sbatch is Slurm's (`sbatch --version`)");
  return id;
}

Result<SlurmJobStatus> SlurmBackend::status(const std::string& job_id) {
  return statuses({job_id}).at(job_id);
}

std::map<std::string, Result<SlurmJobStatus>> SlurmBackend::statuses(
    const std::vector<std::string>& job_ids) {
  std::map<std::string, Result<SlurmJobStatus>> out;
  if (job_ids.empty()) return out;
  std::map<std::string, SlurmJobStatus> known;
  // squeue knows the jobs slurmctld holds (pending, running, and ended ones for MinJobAge).
  // One id it does not know makes it exit 1 ("Invalid job id specified"); in a list, it skips
  // the ones it does not know.
  auto queue = commands_.run(
      {"squeue", "-h", "--states=all", "-j", joined(job_ids), "-o", "%i|%T|%r"}, timeout_);
  const bool queue_answered =
      queue.ran && (queue.exit_code == 0 || queue.err.find("Invalid job id") != std::string::npos);
  if (queue.ran && queue.exit_code == 0) {
    for (const auto& fields : split_lines(queue.out)) {
      if (fields.size() < 2) continue;
      SlurmJobStatus status = parse_slurm_state(fields[1]);
      if (fields.size() > 2) status.reason = fields[2];
      known.emplace(fields[0], status);
    }
  }
  // Ended long ago (or unknown ids to squeue): the accounting database.
  std::vector<std::string> missing;
  for (const auto& id : job_ids)
    if (!known.count(id)) missing.push_back(id);
  SlurmCommandResult accounting;
  if (!missing.empty()) {
    accounting = commands_.run(
        {"sacct", "-n", "-X", "-P", "-j", joined(missing), "-o", "JobID,State"}, timeout_);
    if (accounting.ran && accounting.exit_code == 0)
      for (const auto& fields : split_lines(accounting.out))
        if (fields.size() >= 2) known.emplace(fields[0], parse_slurm_state(fields[1]));
  }
  for (const auto& id : job_ids) {
    if (auto found = known.find(id); found != known.end())
      out.emplace(id, found->second);
    else if (!queue_answered)
      out.emplace(
          id, make_error("cannot ask Slurm about job " + id + ": " + failed_text("squeue", queue) +
                         "; check slurmctld (`scontrol ping`)"));
    else
      out.emplace(id, make_error("Slurm knows no job " + id +
                                 " (squeue and sacct: " + failed_text("sacct", accounting) + ")"));
  }
  return out;
}

Status SlurmBackend::cancel(const std::string& job_id) {
  auto ran = commands_.run({"scancel", job_id}, timeout_);
  if (!ran.ran || ran.exit_code != 0)
    return make_error("scancel " + job_id + " failed: " + failed_text("scancel", ran) +
                      "; cancel it by hand (`scancel " + job_id + "`)");
  return Ok{};
}

Result<SlurmClusterStatus> SlurmBackend::cluster() {
  std::vector<std::string> sinfo{"sinfo", "-h", "-N", "-o", "%N|%T|%G"};
  std::vector<std::string> squeue{"squeue", "-h", "-o", "%T"};
  if (!partition_.empty()) {
    sinfo.insert(sinfo.begin() + 1, {"-p", partition_});
    squeue.insert(squeue.begin() + 1, {"-p", partition_});
  }
  auto nodes = commands_.run(sinfo, timeout_);
  if (!nodes.ran || nodes.exit_code != 0)
    return make_error("sinfo failed: " + failed_text("sinfo", nodes) +
                      "; check slurmctld (`scontrol ping`) and --partition");
  auto jobs = commands_.run(squeue, timeout_);
  if (!jobs.ran || jobs.exit_code != 0)
    return make_error("squeue failed: " + failed_text("squeue", jobs) +
                      "; check slurmctld (`scontrol ping`)");
  return parse_slurm_cluster(nodes.out, jobs.out);
}

}  // namespace kiln::runner
