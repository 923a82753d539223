#include "kiln/worker/job_spec.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "kiln/base/file.h"
#include "kiln/base/json_field.h"
#include "kiln/runner/protocol/job_fields.h"
#include "kiln/runner/protocol/limits_reader.h"
#include "kiln/runner/protocol/sanitize_tools.h"

namespace kiln::worker {

namespace protocol = runner::protocol;
namespace field = protocol::job_field;
namespace limit = protocol::limit_field;

namespace {

constexpr std::string_view kGuide = "runner/protocol/PROTOCOL.md";

std::string optional_string(const JsonField& object, std::string_view key) {
  auto value = object.find(key);
  return value ? value->string() : std::string();
}

// Below 2^53 as the server draws it; a decimal string is taken too, for hand-written jobs.
uint64_t read_seed(const JsonField& job) {
  auto seed = job.find(field::kSeed);
  if (!seed) {
    throw JsonFieldError{std::string(field::kSeed),
                         "is missing; the server must draw a fresh hidden seed per job"};
  }
  if (!seed->json().is_string()) return seed->unsigned_integer();
  const std::string text = seed->string();
  if (text.empty() || text.size() > 20 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    seed->fail("must be a whole number >= 0, got \"" + text + "\"");
  try {
    return std::stoull(text);
  } catch (const std::out_of_range&) {
    seed->fail("must be below 2^64, got \"" + text + "\"");
  }
}

void read_sanitize(const JsonField& sanitize, JobSpec& spec) {
  if (auto tools = sanitize.find(field::kTools)) {
    spec.sanitize_tools = tools->distinct_string_list(protocol::kSanitizeTools.size());
    const auto entries = tools->elements();
    for (size_t i = 0; i < entries.size(); ++i)
      if (!protocol::is_sanitize_tool(spec.sanitize_tools[i]))
        entries[i].fail("'" + spec.sanitize_tools[i] + "' is not " +
                        std::string(protocol::kSanitizeToolChoices));
  }
  spec.sanitize_workload = optional_string(sanitize, field::kWorkload);
}

// Fields beyond the protocol's are ignored, so a newer server's job.json still runs.
JobSpec read_spec(const JsonField& job) {
  JobSpec spec;
  spec.id = optional_string(job, field::kId);
  const JsonField kind = job.at(field::kKind);
  const std::string kind_text = kind.string();
  const auto parsed = parse_kind(kind_text);
  if (!parsed) {
    kind.fail("'" + kind_text + "' is not a job kind; use " +
              std::string(protocol::kJobKindChoices));
  }
  spec.kind = *parsed;
  spec.task_dir = job.at(field::kTaskDir).string();
  spec.candidate = job.at(field::kCandidate).string();
  spec.build_dir = job.at(field::kBuildDir).string();
  if (auto workloads = job.find(field::kWorkloads))
    spec.workloads = workloads->distinct_string_list(protocol::kMaxJobWorkloads);
  spec.seed = read_seed(job);
  if (auto limits = job.find(field::kLimits)) protocol::read_limits(*limits, spec.limits);
  if (auto profile = job.find(field::kProfile))
    spec.profile_workload = optional_string(*profile, field::kWorkload);
  if (auto sanitize = job.find(field::kSanitize)) read_sanitize(*sanitize, spec);
  if (auto incumbent = job.find(field::kIncumbent)) {
    if (spec.kind != JobKind::kBenchmark) incumbent->fail("is only for kind benchmark");
    spec.incumbent = incumbent->string();
    spec.incumbent_sha256 = job.at(field::kIncumbentSha256).string();
  }
  if (spec.kind == JobKind::kSanitize && spec.sanitize_tools.empty())
    spec.sanitize_tools = protocol::all_sanitize_tools();
  return spec;
}

}  // namespace

Result<JobSpec> JobSpec::parse(const std::string& text) {
  const std::string label(protocol::kJobFileName);
  const nlohmann::json document = nlohmann::json::parse(text, nullptr, false);
  if (document.is_discarded() || !document.is_object())
    return make_error(label + ": not a JSON object; the server writes one (see " +
                      std::string(kGuide) + ")");
  try {
    return read_spec(JsonField(document, "", kGuide));
  } catch (const JsonFieldError& e) {
    return make_error(label + ": " + e.text());
  }
}

Result<JobSpec> JobSpec::load(const std::filesystem::path& path) {
  auto text = read_file(path);
  if (!text) return text.error();
  return parse(*text);
}

}  // namespace kiln::worker
