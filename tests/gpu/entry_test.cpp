#include "entry_test.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <set>

#include "child_process.h"
#include "zoo_paths.h"

namespace kiln::zoo {
namespace {

void append_result_line(const std::string& path, const nlohmann::ordered_json& line) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0) << "cannot open " << path << " for appending";
  const std::string text = line.dump() + "\n";
  const ssize_t written = ::write(fd, text.data(), text.size());  // one write: lines stay whole
  ::close(fd);
  EXPECT_EQ(written, static_cast<ssize_t>(text.size())) << "short write to " << path;
}

}  // namespace

std::vector<std::string> zoo_kernel_ids() {
  std::vector<std::string> ids;
  const auto dir = zoo_source_dir();
  if (dir.empty()) return ids;
  for (const auto& entry : find_zoo_entries(dir)) {
    if (std::filesystem::exists(entry / "kernel.cu")) ids.push_back(entry.filename().string());
  }
  return ids;
}

std::string entry_test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

void run_entry_test(const std::string& id, const EntryTest& test) {
  const auto zoo_dir = zoo_source_dir();
  ASSERT_FALSE(zoo_dir.empty()) << "kb/zoo not found; set KILN_ZOO_DIR";
  std::vector<std::string> setup_problems;
  const auto techniques = load_techniques(zoo_dir, setup_problems);
  ASSERT_TRUE(setup_problems.empty()) << setup_problems.front();
  std::set<std::string> ids;
  for (const auto& entry : find_zoo_entries(zoo_dir)) ids.insert(entry.filename().string());
  const MetaCheck check = check_zoo_entry(zoo_dir / id, techniques, ids);
  if (!check.problems.empty()) {
    std::string all;
    for (const auto& problem : check.problems) all += "\n  kb/zoo/" + id + "/" + problem;
    FAIL() << "the entry is not valid, so it is not run:" << all;
  }
  const ZooMeta& meta = *check.meta;
  const auto library_dir = zoo_library_dir();
  ASSERT_FALSE(library_dir.empty())
      << "the built kernels (BUILD/zoo/) were not found; set KILN_ZOO_LIB_DIR";
  const auto library = library_dir / (test.library_prefix + id + ".so");
  ASSERT_TRUE(std::filesystem::exists(library))
      << library << " is missing: build it (cmake --build BUILD --target zoo_kernels, or "
      << "zoo_sim_kernels for the simulator; an entry whose meta.json lacks a valid arch is "
      << "skipped at configure time)";

  const auto report_path = std::filesystem::temp_directory_path() /
                           ("kiln_zoo_" + id + "_" + std::to_string(::getpid()) + ".jsonl");
  std::filesystem::remove(report_path);
  const ChildOutcome outcome = run_in_child(
      [&] {
        Report report(report_path, id);
        test.make_run(meta, test.options, report)->run(library);
        report.done();
        return report.failures() > 0 ? 1 : 0;
      },
      test.timeout_s);
  const ReportContents contents = read_report(report_path);
  std::filesystem::remove(report_path);

  for (const auto& failure : contents.failures) ADD_FAILURE() << "kb/zoo/" << id << ": " << failure;
  for (const auto& line : contents.measurements) {
    std::cout << "[zoo " << id << "] measurement: " << line.dump() << "\n";
    if (!test.results_path.empty()) append_result_line(test.results_path, line);
  }
  if (!outcome.exited || !contents.done || !contents.read_error.empty()) {
    std::string last;
    const size_t from = contents.logs.size() > 5 ? contents.logs.size() - 5 : 0;
    for (size_t i = from; i < contents.logs.size(); ++i) last += "\n  " + contents.logs[i];
    ADD_FAILURE() << "kb/zoo/" << id << ": the child process running the entry ended abnormally: "
                  << outcome.describe()
                  << (contents.read_error.empty() ? "" : "; " + contents.read_error)
                  << (last.empty() ? std::string("; it reported nothing")
                                   : "; its last steps:" + last);
  } else if (outcome.exit_code != 0 && contents.failures.empty()) {
    ADD_FAILURE() << "kb/zoo/" << id << ": the child exited with " << outcome.exit_code
                  << " without reporting a failure";
  }
  if (!contents.skips.empty() && contents.failures.empty()) GTEST_SKIP() << contents.skips.front();
}

}  // namespace kiln::zoo
