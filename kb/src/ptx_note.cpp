#include "kiln/kb/ptx_note.h"

#include <cctype>
#include <set>

#include "kiln/base/text.h"

namespace kiln::kb {

namespace {

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string line(text.substr(start, end - start));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    start = end + 1;
  }
  return lines;
}

// A front-matter line: `key: value` with a lowercase key.
bool front_matter_line(const std::string& line, std::string& key, std::string& value) {
  size_t colon = line.find(':');
  if (colon == std::string::npos || colon == 0) return false;
  for (size_t i = 0; i < colon; ++i) {
    char c = line[i];
    if (!(std::islower(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  }
  key = line.substr(0, colon);
  value = trim(line.substr(colon + 1));
  return true;
}

std::vector<std::string> split_list(const std::string& value) {
  std::vector<std::string> items;
  std::string item;
  for (char c : value + ",") {
    if (c == ',' || c == ';') {
      item = std::string(trim(item));
      if (!item.empty() && item.front() == '`' && item.back() == '`' && item.size() > 1)
        item = item.substr(1, item.size() - 2);
      if (!item.empty()) items.push_back(item);
      item.clear();
    } else {
      item += c;
    }
  }
  return items;
}

}  // namespace

std::string slugify(std::string_view text) {
  std::string slug;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      slug += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (c == '.' && !slug.empty() && std::isdigit(static_cast<unsigned char>(slug.back()))) {
      slug += '.';  // keep section numbers such as 9.7.13 readable
    } else if (!slug.empty() && slug.back() != '-') {
      if (slug.back() == '.') slug.pop_back();
      slug += '-';
    }
  }
  while (!slug.empty() && (slug.back() == '-' || slug.back() == '.')) slug.pop_back();
  if (slug.size() > 80) slug.resize(80);
  return slug.empty() ? "section" : slug;
}

Result<PtxNote> parse_ptx_note(std::string_view text, const std::string& id) {
  std::vector<std::string> lines = split_lines(text);
  size_t i = 0;
  while (i < lines.size() && trim(lines[i]).empty()) ++i;
  if (i == lines.size() || lines[i].rfind("# ", 0) != 0) {
    return make_error("PTX note `" + id +
                      "`: the first line must be `# Title`, then `instructions: a, b, c`");
  }
  PtxNote note;
  note.id = id;
  note.text = std::string(text);
  note.title = trim(lines[i].substr(2));
  ++i;
  std::string key, value;
  while (i < lines.size() && front_matter_line(lines[i], key, value)) {
    note.front_matter[key] = value;
    if (key == "instructions") note.instructions = split_list(value);
    ++i;
  }

  std::set<std::string> slugs;
  auto add_section = [&](NoteSection section) {
    std::string base = section.slug;
    for (int n = 2; !slugs.insert(section.slug).second; ++n)
      section.slug = base + "-" + std::to_string(n);
    note.sections.push_back(std::move(section));
  };
  NoteSection current{"overview", "Overview", "", static_cast<int>(i) + 1};
  bool fenced = false;
  for (; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.rfind("```", 0) == 0 || line.rfind("~~~", 0) == 0) fenced = !fenced;
    if (!fenced && line.rfind("## ", 0) == 0) {
      if (!trim(current.text).empty()) add_section(std::move(current));
      std::string heading(trim(line.substr(3)));
      current = NoteSection{slugify(heading), heading, "", static_cast<int>(i) + 1};
    }
    current.text += line + "\n";
  }
  if (!trim(current.text).empty()) add_section(std::move(current));
  return note;
}

}  // namespace kiln::kb
