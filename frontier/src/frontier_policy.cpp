#include "kiln/frontier/frontier_policy.h"

#include <cmath>
#include <cstdio>

namespace kiln::frontier {

using json = nlohmann::json;

namespace {

std::string times(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4gx", value);
  return text;
}

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g%%", fraction * 100);
  return text;
}

Plan refuse(std::string reason, json numbers, std::string incumbent = "") {
  Plan plan;
  plan.verdict = Verdict::kRefused;
  plan.reason = std::move(reason);
  plan.numbers = std::move(numbers);
  plan.incumbent = std::move(incumbent);
  return plan;
}

}  // namespace

std::string_view verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::kRefused:
      return "refused";
    case Verdict::kNeedsRevalidation:
      return "needs_revalidation";
    case Verdict::kAcceptedBest:
      return "accepted_best";
    case Verdict::kAcceptedApproach:
      return "accepted_approach";
  }
  return "refused";
}

Plan plan_admission(const std::vector<Member>& members, const Proposal& p, const Budget& budget,
                    const Revalidation* revalidation) {
  json numbers = {{"geomean", p.score.geomean},
                  {"passed", p.score.passed},
                  {"total", p.score.total},
                  {"max_cv", p.score.max_cv},
                  {"budget", to_json(budget)}};
  const Member* best = nullptr;
  const Member* family_best = nullptr;
  for (const auto& m : members) {
    if (m.name == p.name)
      return refuse("the name `" + p.name + "` is taken by a " +
                        std::string(m.active ? "" : "former ") + "frontier member (result " +
                        m.result_id + "); choose another name",
                    numbers, m.name);
    if (!m.active) continue;
    if (m.candidate_sha256 == p.candidate_sha256)
      return refuse("the same source is already on the frontier as `" + m.name + "` (result " +
                        m.result_id + ")",
                    numbers, m.name);
    if (!p.ptx_sha256.empty() && m.ptx_sha256 == p.ptx_sha256)
      return refuse("the source compiles to the same PTX as frontier member `" + m.name +
                        "` (result " + m.result_id +
                        "): it is the same kernel; change the code, not its comments or names",
                    numbers, m.name);
    if (m.best) best = &m;
    if (m.family == p.family &&
        (!family_best || m.reference_geomean() > family_best->reference_geomean()))
      family_best = &m;
  }
  if (p.score.max_cv > budget.max_cv)
    return refuse("its timings are too noisy: a workload's CV is " + percent(p.score.max_cv) +
                      ", over the run's budget of " + percent(budget.max_cv) +
                      "; benchmark it again on a quieter GPU",
                  numbers);
  const double factor = 1 + budget.promotion_margin;
  if (best) {
    numbers["incumbent"] = {{"name", best->name}, {"geomean", best->reference_geomean()}};
    numbers["required_geomean"] = best->reference_geomean() * factor;
  }
  const bool would_be_best = !best || p.score.geomean > best->reference_geomean() * factor;
  if (would_be_best) {
    if (!revalidation) {
      Plan plan;
      plan.verdict = Verdict::kNeedsRevalidation;
      plan.reason = best ? "beats the best, `" + best->name + "` (" +
                               times(best->reference_geomean()) + "), by more than " +
                               percent(budget.promotion_margin) + ": revalidating"
                         : "the first candidate of the frontier: revalidating";
      plan.incumbent = best ? best->name : "";
      plan.numbers = numbers;
      return plan;
    }
    const Revalidation& r = *revalidation;
    numbers["revalidation"] = {
        {"result_id", r.result_id}, {"geomean", r.score.geomean}, {"max_cv", r.score.max_cv}};
    if (!r.problem.empty())
      return refuse("revalidation " + r.result_id + " did not pass: " + r.problem, numbers,
                    best ? best->name : "");
    const double drift = std::abs(r.score.geomean / p.score.geomean - 1);
    numbers["revalidation"]["drift"] = drift;
    if (drift > budget.revalidation_tolerance)
      return refuse("revalidation " + r.result_id + " measured " + times(r.score.geomean) +
                        " against the first " + times(p.score.geomean) + ": " + percent(drift) +
                        " apart, more than the run's tolerance of " +
                        percent(budget.revalidation_tolerance) + "; the speedup did not reproduce",
                    numbers, best ? best->name : "");
    if (r.score.max_cv > budget.max_cv)
      return refuse("revalidation " + r.result_id + " was too noisy: a workload's CV is " +
                        percent(r.score.max_cv) + ", over the budget of " + percent(budget.max_cv),
                    numbers, best ? best->name : "");
    const bool side_by_side =
        best && r.vs_incumbent && r.incumbent_sha256 == best->candidate_sha256;
    if (side_by_side) {
      numbers["revalidation"]["speedup_vs_incumbent"] = *r.vs_incumbent;
      if (*r.vs_incumbent <= factor)
        return refuse("revalidation " + r.result_id + " timed it beside the best, `" + best->name +
                          "`, in every sample: it ran " + times(*r.vs_incumbent) +
                          " as fast, which does not beat it by the " +
                          percent(budget.promotion_margin) + " margin",
                      numbers, best->name);
    } else if (best && r.score.geomean <= best->reference_geomean() * factor)
      return refuse("revalidation " + r.result_id + " measured " + times(r.score.geomean) +
                        ", which does not beat the best, `" + best->name + "` (" +
                        times(best->reference_geomean()) + "), by the " +
                        percent(budget.promotion_margin) + " margin",
                    numbers, best->name);
    Plan plan;
    plan.verdict = Verdict::kAcceptedBest;
    plan.incumbent = best ? best->name : "";
    plan.reason =
        best ? "the new best: " + times(p.score.geomean) + " (revalidated " +
                   times(r.score.geomean) + ") over `" + best->name + "` at " +
                   times(best->reference_geomean()) +
                   (side_by_side ? "; timed beside it, " + times(*r.vs_incumbent) + " as fast" : "")
             : "the first member and best: " + times(p.score.geomean) + " (revalidated " +
                   times(r.score.geomean) + ")";
    if (best) {
      plan.loses_best = best->name;
      if (best->family == p.family) plan.retired.push_back(best->name);
    }
    if (family_best && family_best != best) plan.retired.push_back(family_best->name);
    plan.numbers = numbers;
    return plan;
  }
  // Not the best overall: it may still be the best of its family.
  if (family_best) {
    numbers["family_incumbent"] = {{"name", family_best->name},
                                   {"geomean", family_best->reference_geomean()}};
    if (family_best->best || p.score.geomean <= family_best->reference_geomean() * factor)
      return refuse(times(p.score.geomean) + " does not beat `" + family_best->name + "` (" +
                        times(family_best->reference_geomean()) + "), the best of approach " +
                        p.family + ", by the " + percent(budget.promotion_margin) +
                        " margin (it needs more than " +
                        times(family_best->reference_geomean() * factor) + ")",
                    numbers, family_best->name);
  }
  Plan plan;
  plan.verdict = Verdict::kAcceptedApproach;
  plan.incumbent = family_best ? family_best->name : "";
  plan.reason =
      "the best of approach " + p.family + ": " + times(p.score.geomean) +
      (family_best
           ? " over `" + family_best->name + "` at " + times(family_best->reference_geomean())
           : " (the first of its approach)") +
      "; the best overall stays `" + best->name + "` (" + times(best->reference_geomean()) + ")";
  if (family_best) plan.retired.push_back(family_best->name);
  plan.numbers = numbers;
  return plan;
}

}  // namespace kiln::frontier
