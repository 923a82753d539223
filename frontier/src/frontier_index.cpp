#include "kiln/frontier/frontier_index.h"

#include <algorithm>

#include "kiln/frontier/result_store.h"

namespace kiln::frontier {

using json = nlohmann::json;

json frontier_index(const std::string& task_name, const std::string& task_sha256,
                    const std::vector<Member>& members, const Budget& budget,
                    int64_t generated_ms) {
  std::vector<const Member*> active;
  for (const auto& m : members)
    if (m.active) active.push_back(&m);
  std::stable_sort(active.begin(), active.end(), [](const Member* a, const Member* b) {
    if (a->best != b->best) return a->best;
    return a->reference_geomean() > b->reference_geomean();
  });
  json list = json::array();
  json best = nullptr;
  for (const Member* m : active) {
    if (m->best) best = m->name;
    json workloads = json::array();
    for (const auto& w : m->score.workloads)
      workloads.push_back(
          {{"name", w.name}, {"speedup", w.speedup}, {"median_us", w.median_us}, {"cv", w.cv}});
    list.push_back({{"name", m->name},
                    {"path", m->name + "/kernel.cu"},
                    {"best", m->best},
                    {"approach", m->approach},
                    {"family", m->family},
                    {"geomean", m->score.geomean},
                    {"revalidated_geomean",
                     m->revalidated_geomean ? json(*m->revalidated_geomean) : json(nullptr)},
                    {"passed", m->score.passed},
                    {"total", m->score.total},
                    {"result_id", m->result_id},
                    {"revalidation_id", m->revalidation_id},
                    {"candidate_sha256", m->candidate_sha256},
                    {"ptx_sha256", m->ptx_sha256},
                    {"hypothesis", m->hypothesis},
                    {"reason", m->reason},
                    {"recorded", format_utc(m->created_ms)},
                    {"workloads", workloads}});
  }
  return {{"schema", kIndexSchemaId},
          {"generated", format_utc(generated_ms)},
          {"task", {{"name", task_name}, {"sha256", task_sha256}}},
          {"budget", to_json(budget)},
          {"best", best},
          {"members", list}};
}

}  // namespace kiln::frontier
