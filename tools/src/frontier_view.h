// The frontier as list_frontier, kiln://frontier and `kiln frontier show` present it: JSON
// and compact text from one listing, kept under 10 KB.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "kiln/base/result.h"
#include "kiln/frontier/run_frontier.h"
#include "kiln/tools/frontier_source.h"

namespace kiln::tools {

nlohmann::json member_json(const frontier::Member& member);

// {task, budget, best, members, recent, offset, next_offset?}
nlohmann::json listing_json(const frontier::RunFrontier& run,
                            const frontier::FrontierListing& listing);
std::string listing_text(const nlohmann::json& listing);

// What a default answer may weigh: under 10 KB, as JSON and as text.
inline constexpr size_t kFrontierListingBytes = 9500;

// The run's listing as JSON with at most `limit` recent results from `offset`, fewer when it
// would not fit `max_bytes`; `next_offset` is set when there are more.
Result<nlohmann::json> frontier_listing(FrontierSource& source, size_t limit, size_t offset,
                                        size_t max_bytes);

}  // namespace kiln::tools
