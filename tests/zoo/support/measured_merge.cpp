#include "measured_merge.h"

#include <cctype>
#include <iterator>
#include <utility>
#include <vector>

namespace kiln::zoo {
namespace {

using Json = nlohmann::ordered_json;

// Same gpu and the same dims (key order ignored).
bool same_measurement_slot(const Json& a, const Json& b) {
  if (!a.is_object() || !b.is_object()) return false;
  if (a.value("gpu", Json()) != b.value("gpu", Json())) return false;
  return nlohmann::json::parse(a.value("shape", Json()).dump()) ==
         nlohmann::json::parse(b.value("shape", Json()).dump());
}

// JSON on one line with a space after ':' and ',' (as the README writes it).
std::string one_line(const Json& value) {
  if (value.is_object()) {
    std::string out = "{";
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (it != value.begin()) out += ", ";
      out += Json(it.key()).dump() + ": " + one_line(it.value());
    }
    return out + "}";
  }
  if (value.is_array()) {
    std::string out = "[";
    for (size_t i = 0; i < value.size(); ++i) out += (i ? ", " : "") + one_line(value[i]);
    return out + "]";
  }
  return value.dump();
}

// Index just past the JSON string starting at text[pos] == '"'.
size_t skip_string(const std::string& text, size_t pos) {
  for (++pos; pos < text.size(); ++pos) {
    if (text[pos] == '\\') {
      ++pos;
    } else if (text[pos] == '"') {
      return pos + 1;
    }
  }
  return std::string::npos;
}

struct Span {
  size_t key = std::string::npos;  // the opening quote of "measured"
  size_t begin = 0;                // the value's first character
  size_t end = 0;                  // one past its last
};

// Finds the value of the top-level key "measured" in a valid JSON object text.
Span find_measured(const std::string& text) {
  Span span;
  int depth = 0;
  for (size_t pos = 0; pos < text.size();) {
    const char c = text[pos];
    if (c == '"') {
      const size_t end = skip_string(text, pos);
      if (end == std::string::npos) return span;
      size_t after = end;
      while (after < text.size() && std::isspace(static_cast<unsigned char>(text[after]))) ++after;
      if (depth == 1 && after < text.size() && text[after] == ':' &&
          text.compare(pos, end - pos, "\"measured\"") == 0) {
        size_t value = after + 1;
        while (value < text.size() && std::isspace(static_cast<unsigned char>(text[value])))
          ++value;
        // Walk to the end of the value, counting brackets outside strings.
        int inner = 0;
        size_t p = value;
        for (; p < text.size(); ++p) {
          if (text[p] == '"') {
            p = skip_string(text, p) - 1;
          } else if (text[p] == '[' || text[p] == '{') {
            ++inner;
          } else if (text[p] == ']' || text[p] == '}') {
            if (--inner == 0) break;
          }
        }
        span.key = pos;
        span.begin = value;
        span.end = p + 1;
        return span;
      }
      pos = end;
      continue;
    }
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') --depth;
    ++pos;
  }
  return span;
}

// The spans [begin, end) of the elements of the JSON array text[array_begin] == '['.
std::vector<std::pair<size_t, size_t>> element_spans(const std::string& text, size_t array_begin,
                                                     size_t array_end) {
  std::vector<std::pair<size_t, size_t>> spans;
  size_t p = array_begin + 1;
  auto skip_space = [&] {
    while (p < array_end && std::isspace(static_cast<unsigned char>(text[p]))) ++p;
  };
  for (;;) {
    skip_space();
    if (p >= array_end || text[p] == ']') return spans;
    const size_t begin = p;
    int depth = 0;
    for (; p < array_end; ++p) {
      const char c = text[p];
      if (c == '"') {
        p = skip_string(text, p) - 1;
      } else if (c == '[' || c == '{') {
        ++depth;
      } else if (c == ']' || c == '}') {
        if (depth == 0) break;  // the array's own ']'
        --depth;
      } else if (c == ',' && depth == 0) {
        break;
      }
      if (depth == 0 && (c == '}' || c == ']' || c == '"')) {
        ++p;
        break;
      }
    }
    size_t end = p;
    while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
    spans.emplace_back(begin, end);
    skip_space();
    if (p < array_end && text[p] == ',') ++p;
  }
}

// The spaces and tabs that start the line holding text[pos].
std::string line_indent(const std::string& text, size_t pos) {
  const size_t newline = text.rfind('\n', pos);
  const size_t start = newline == std::string::npos ? 0 : newline + 1;
  size_t end = start;
  while (end < pos && (text[end] == ' ' || text[end] == '\t')) ++end;
  return text.substr(start, end - start);
}

// An object with one field per line (values on one line), its closing brace at `indent`.
std::string field_per_line(const Json& value, const std::string& indent) {
  std::string out = "{\n";
  for (auto it = value.begin(); it != value.end(); ++it) {
    out += indent + "  " + Json(it.key()).dump() + ": " + one_line(it.value());
    out += std::next(it) != value.end() ? ",\n" : "\n";
  }
  return out + indent + "}";
}

}  // namespace

Result<Json> measurement_from_line(const Json& line) {
  if (!line.is_object()) return make_error("not a JSON object");
  if (!line.contains("id") || !line["id"].is_string()) return make_error("no \"id\" string");
  if (!line.contains("gpu") || !line["gpu"].is_string()) return make_error("no \"gpu\" string");
  if (!line.contains("date") || !line["date"].is_string()) return make_error("no \"date\" string");
  if (!line.contains("shape") || !line["shape"].is_object())
    return make_error("no \"shape\" object");
  if (!line.contains("time_us") || !line["time_us"].is_number() ||
      line["time_us"].get<double>() <= 0) {
    return make_error("no positive \"time_us\"");
  }
  Json out = Json::object();
  for (const std::string& field : measured_fields()) out[field] = line.value(field, Json());
  return out;
}

Result<std::string> merge_measured(const std::string& meta_text,
                                   const std::vector<Json>& measurements, MergeCount& count) {
  Json meta;
  try {
    meta = Json::parse(meta_text);
  } catch (const nlohmann::json::parse_error& error) {
    return make_error(std::string("meta.json is not valid JSON: ") + error.what());
  }
  if (!meta.is_object() || !meta.contains("measured") || !meta["measured"].is_array()) {
    return make_error("meta.json has no \"measured\" array; add \"measured\": [] first");
  }
  const Span span = find_measured(meta_text);
  if (span.key == std::string::npos) {
    return make_error("cannot locate \"measured\" in meta.json's text");
  }
  // Existing items keep their text; replaced and new ones are written in the style of the
  // existing ones (one line each, or one field per line).
  Json measured = meta["measured"];
  std::vector<std::string> items;
  for (const auto& [begin, end] : element_spans(meta_text, span.begin, span.end)) {
    items.push_back(meta_text.substr(begin, end - begin));
  }
  if (items.size() != measured.size())
    return make_error("cannot split \"measured\" into its items");
  const std::string key_indent = line_indent(meta_text, span.key);
  std::string item_indent = key_indent + "  ";
  bool multi_line = false;
  if (!items.empty()) {
    const size_t first = meta_text.find('{', span.begin);
    const size_t newline = meta_text.rfind('\n', first);
    if (newline != std::string::npos && newline > span.begin)
      item_indent = line_indent(meta_text, first);
    multi_line = items.front().find('\n') != std::string::npos;
  }
  auto format = [&](const Json& m) {
    return multi_line ? field_per_line(m, item_indent) : one_line(m);
  };
  for (const Json& m : measurements) {
    bool replaced = false;
    for (size_t i = 0; i < measured.size(); ++i) {
      if (same_measurement_slot(measured[i], m)) {
        measured[i] = m;
        items[i] = format(m);
        replaced = true;
      }
    }
    if (replaced) {
      ++count.replaced;
    } else {
      measured.push_back(m);
      items.push_back(format(m));
      ++count.added;
    }
  }
  std::string array = "[]";
  if (!items.empty()) {
    array = "[\n";
    for (size_t i = 0; i < items.size(); ++i) {
      array += item_indent + items[i] + (i + 1 < items.size() ? ",\n" : "\n");
    }
    array += key_indent + "]";
  }
  return meta_text.substr(0, span.begin) + array + meta_text.substr(span.end);
}

}  // namespace kiln::zoo
