#include "frontier_view.h"

#include <cstdio>
#include <sstream>

#include "kiln/frontier/score.h"
#include "kiln/tasks/task.h"

namespace kiln::tools {

using json = nlohmann::json;

namespace {

constexpr size_t kMaxReasonChars = 240;

std::string clip(const std::string& text, size_t max) {
  return text.size() <= max ? text : text.substr(0, max) + "…";
}

std::string times(const json& value) {
  if (!value.is_number()) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.3fx", value.get<double>());
  return text;
}

}  // namespace

json member_json(const frontier::Member& m) {
  json speedups = json::object();
  for (const auto& w : m.score.workloads) speedups[w.name] = w.speedup;
  return {
      {"name", m.name},
      {"approach", m.approach},
      {"family", m.family},
      {"best", m.best},
      {"geomean", m.score.geomean},
      {"revalidated_geomean", m.revalidated_geomean ? json(*m.revalidated_geomean) : json(nullptr)},
      {"passed", m.score.passed},
      {"total", m.score.total},
      {"speedups", speedups},
      {"result_id", m.result_id},
      {"revalidation_id", m.revalidation_id},
      {"recorded", frontier::format_utc(m.created_ms)},
      {"hypothesis", clip(m.hypothesis, kMaxReasonChars)},
      {"reason", clip(m.reason, kMaxReasonChars)}};
}

json listing_json(const frontier::RunFrontier& run, const frontier::FrontierListing& listing) {
  json members = json::array();
  std::string best;  // "" while the frontier is empty
  for (const auto& m : listing.members) {
    if (m.best) best = m.name;
    members.push_back(member_json(m));
  }
  json recent = json::array();
  for (const auto& row : listing.recent) {
    const auto& r = row.result;
    const json summary = r.result.value("summary", json::object());
    json item = {{"result_id", r.id},
                 {"when", frontier::format_utc(r.created_ms)},
                 {"candidate", r.source_path},
                 {"status", r.status},
                 {"scored", r.scored},
                 {"geomean", r.geomean_speedup ? json(*r.geomean_speedup) : json(nullptr)},
                 {"passed", summary.value("passed", 0)},
                 {"total", summary.value("total", 0)},
                 {"failing_gate", frontier::failing_gate(r.result)}};
    if (row.decision)
      item["decision"] = {{"verdict", row.decision->verdict},
                          {"name", row.decision->name},
                          {"reason", clip(row.decision->reason, kMaxReasonChars)}};
    recent.push_back(std::move(item));
  }
  json out = {{"task", {{"name", run.task().name}, {"sha256", run.task().sha256}}},
              {"budget", frontier::to_json(run.config().budget)},
              {"best", best},
              {"members", members},
              {"recent", recent},
              {"offset", listing.offset}};
  return out;
}

std::string listing_text(const json& listing) {
  std::ostringstream out;
  const json& members = listing["members"];
  out << "frontier of " << listing["task"].value("name", "?") << " (" << members.size()
      << (members.size() == 1 ? " member" : " members") << "):\n";
  if (members.empty())
    out << "  (empty: benchmark a candidate on every workload, then record_candidate with its "
           "result_id)\n";
  for (const auto& m : members) {
    out << "  " << (m.value("best", false) ? "* " : "  ") << m.value("name", "") << "  "
        << times(m["geomean"]);
    if (m["revalidated_geomean"].is_number())
      out << " (revalidated " << times(m["revalidated_geomean"]) << ")";
    out << "  " << m.value("passed", 0) << "/" << m.value("total", 0) << "  "
        << m.value("family", "") << "  " << m.value("result_id", "") << "  "
        << m.value("recorded", "") << "\n    speedups:";
    for (const auto& [name, speedup] : m["speedups"].items())
      out << " " << name << " " << times(speedup);
    out << "\n    approach: " << m.value("approach", "") << "\n";
  }
  const json& recent = listing["recent"];
  out << "recent results (" << recent.size() << ", newest first, from offset "
      << listing.value("offset", 0) << "):\n";
  for (const auto& r : recent) {
    out << "  " << r.value("result_id", "") << "  " << r.value("when", "") << "  "
        << r.value("status", "") << "  " << times(r["geomean"]) << "  " << r.value("passed", 0)
        << "/" << r.value("total", 0);
    if (!r.value("failing_gate", "").empty()) out << "  gate " << r.value("failing_gate", "");
    if (r.contains("decision"))
      out << "\n    " << r["decision"].value("verdict", "") << " `"
          << r["decision"].value("name", "") << "`: " << r["decision"].value("reason", "");
    out << "\n";
  }
  if (listing.contains("next_offset"))
    out << "more: list_frontier with offset " << listing["next_offset"].get<size_t>() << "\n";
  return out.str();
}

// The listing as JSON, with fewer recent rows until it fits `max_bytes`.
Result<json> frontier_listing(FrontierSource& source, size_t limit, size_t offset,
                              size_t max_bytes) {
  auto run = source.get();
  if (!run) return run.error();
  auto listing = (*run)->listing(limit + 1, offset);
  if (!listing) return listing.error();
  bool more = listing->recent.size() > limit;
  if (more) listing->recent.resize(limit);
  json out = listing_json(**run, *listing);
  while (out["recent"].size() > 0 &&
         (out.dump().size() > max_bytes || listing_text(out).size() > max_bytes)) {
    out["recent"].erase(out["recent"].size() - 1);
    more = true;
  }
  if (more) out["next_offset"] = offset + out["recent"].size();
  return out;
}

}  // namespace kiln::tools
