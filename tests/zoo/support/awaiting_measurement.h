// kb/zoo/awaiting_h200.json: the entries that are written and pass every CPU check but have
// not been measured on an H200 yet. kiln_zoo_meta_check accepts an entry with an empty
// "measured" only when it is listed here (search_zoo shows such an entry as "measured: not
// yet"), and refuses a listed entry that already has an H200 measurement, so the list never
// claims less than meta.json says. kiln_zoo_record drops an id from the list when it records
// that entry's H200 measurement.
//
//   {"why": "one sentence", "entries": ["gemv_decode_splitk", ...]}
#pragma once

#include <filesystem>
#include <set>
#include <string>

#include "kiln/base/result.h"

namespace kiln::zoo {

inline constexpr const char* kAwaitingFile = "awaiting_h200.json";

// The listed ids; an absent file is an empty list. Fails on a malformed file.
Result<std::set<std::string>> load_awaiting(const std::filesystem::path& zoo_dir);

// The file's text with `ids` removed from "entries" (the rest of the object unchanged);
// the same text when none of them is listed.
Result<std::string> without_awaiting(const std::string& text, const std::set<std::string>& ids);

}  // namespace kiln::zoo
