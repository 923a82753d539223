// JSON text in and out where the other side is not trusted: parsing with a nesting limit, and
// writing that never throws.
//
// nlohmann's parser is iterative, but copying, comparing and dumping a value recurse once per
// level, so a few hundred KB of nested brackets ([[[[...]]]]) overflow the stack of whatever
// copies or prints the value later. Every parser of bytes a client sent (MCP messages, the
// runner's job body, a task.json) goes through parse_json_bounded, which refuses such text.
//
// nlohmann's dump() throws on a string that is not UTF-8, and such strings reach replies: a
// header or a PTX line quoted in a message, a parse error that quotes the bad byte, a message
// cut in the middle of a character. json_text writes U+FFFD for those bytes instead.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "kiln/base/result.h"

namespace kiln {

// Far deeper than any document kiln reads nests (MCP messages, job bodies and task.json stay
// under ten levels); shallow enough that recursion over the value is harmless.
inline constexpr int kMaxJsonDepth = 128;

// The value of `text`, or an error whose message completes a sentence about the text, for the
// caller to begin with its subject ("task.json: " + message): "is not valid JSON: " and
// nlohmann's reason (cut after 200 bytes), or "nests arrays and objects deeper than N levels".
inline Result<nlohmann::json> parse_json_bounded(std::string_view text,
                                                 int max_depth = kMaxJsonDepth) {
  using json = nlohmann::json;
  constexpr size_t kMaxMessageBytes = 200;
  bool too_deep = false;
  // `depth` counts the arrays and objects around the one that starts: 0 at the top.
  auto limit = [&too_deep, max_depth](int depth, json::parse_event_t event, json&) {
    if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
        depth >= max_depth)
      too_deep = true;
    return !too_deep;  // once too deep, keep nothing: the text is refused
  };
  json value;
  try {
    value = json::parse(text.begin(), text.end(), limit);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for 1e400
    std::string what = e.what();
    const auto end = what.find("] ");
    if (what.rfind("[json.exception.", 0) == 0 && end != std::string::npos)
      what = what.substr(end + 2);
    // The message quotes the token it stopped in, which can be most of the text.
    if (what.size() > kMaxMessageBytes) what = what.substr(0, kMaxMessageBytes) + "...";
    return make_error("is not valid JSON: " + what);
  }
  if (too_deep)
    return make_error("nests arrays and objects deeper than " + std::to_string(max_depth) +
                      " levels");
  return value;
}

// Compact JSON text of `value`; bytes of its strings that are not UTF-8 become U+FFFD.
inline std::string json_text(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace kiln
