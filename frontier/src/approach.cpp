#include "kiln/frontier/approach.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "kiln/base/sha256.h"

namespace kiln::frontier {

namespace {

bool is_name(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

}  // namespace

Result<Approach> parse_approach(const std::string& text,
                                const std::vector<std::string>& vocabulary) {
  const auto colon = text.find(':');
  std::string head = text.substr(0, colon);
  Approach out;
  if (colon != std::string::npos) out.description = trim(text.substr(colon + 1));
  for (char& c : head)
    if (c == '+' || c == ',') c = ' ';
  std::set<std::string> techniques;
  std::istringstream words(head);
  std::string word;
  std::string unknown;
  while (words >> word) {
    std::transform(word.begin(), word.end(), word.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    const bool known = vocabulary.empty() ? is_name(word)
                                          : std::find(vocabulary.begin(), vocabulary.end(), word) !=
                                                vocabulary.end();
    if (!known) unknown += (unknown.empty() ? "`" : ", `") + word + "`";
    techniques.insert(word);
  }
  std::string list;
  for (const auto& name : vocabulary) list += (list.empty() ? "" : ", ") + name;
  const std::string how =
      "write the approach as techniques from the zoo's vocabulary joined by '+', then ':' and "
      "free text, e.g. \"cp_async+multistage_pipeline: 4 stages, 128x128 tiles\"; the "
      "techniques are: " +
      list;
  if (!unknown.empty())
    return make_error("approach: " + unknown + " is not a technique of the vocabulary; " + how);
  if (techniques.empty()) return make_error("approach: no technique named; " + how);
  for (const auto& name : techniques) out.family += (out.family.empty() ? "" : "+") + name;
  return out;
}

std::string ptx_fingerprint(const std::string& ptx) {
  Sha256 hash;
  std::istringstream lines(ptx);
  std::string line;
  bool in_debug_section = false;
  while (std::getline(lines, line)) {
    std::string text = trim(line);
    if (in_debug_section) {
      if (text == "}") in_debug_section = false;
      continue;
    }
    if (text.rfind(".section", 0) == 0 && text.find(".debug") != std::string::npos) {
      in_debug_section = true;  // its body, up to the closing brace, is debug data
      continue;
    }
    if (auto comment = text.find("//"); comment != std::string::npos)
      text = trim(text.substr(0, comment));
    if (text.empty() || text.rfind(".loc", 0) == 0 || text.rfind(".file", 0) == 0) continue;
    hash.update(text);
    hash.update("\n");
  }
  return hash.hex_digest();
}

}  // namespace kiln::frontier
