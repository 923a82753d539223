#include "kiln/kb/ptx_document.h"

#include <unistd.h>

#include <cctype>
#include <map>
#include <regex>
#include <set>

#include "kiln/base/file.h"
#include "kiln/base/text.h"
#include "kiln/kb/ptx_note.h"

namespace kiln::kb {

namespace fs = std::filesystem;

namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Gives ids to sections in order: "<document>:<number>" when numbered, else a slug;
// repeats get "-2", "-3".
void assign_ids(std::vector<DocumentSection>& sections, const std::string& document) {
  static const std::regex kNumber(R"(^(\d+(?:\.\d+)*)\.?\s+(.*)$)");
  std::set<std::string> used;
  for (auto& section : sections) {
    std::smatch match;
    std::string base;
    if (std::regex_match(section.title, match, kNumber)) {
      section.number = match[1].str();
      base = section.number;
    } else {
      base = slugify(section.title);
    }
    std::string id = document + ":" + base;
    for (int n = 2; !used.insert(id).second; ++n)
      id = document + ":" + base + "-" + std::to_string(n);
    section.id = id;
    section.instructions = heading_instructions(section.title);
  }
}

std::string collapse_blank_lines(const std::string& text) {
  std::string out;
  int newlines = 0;
  for (char c : text) {
    if (c == '\n') {
      if (++newlines > 2) continue;
    } else if (c != ' ' && c != '\t' && c != '\r') {
      newlines = 0;
    }
    out += c;
  }
  return std::string(trim(out));
}

// &lt; &#62; &#x3e; &nbsp; ... in `text`.
std::string decode_entities(std::string_view text) {
  static const std::map<std::string, std::string> kNamed = {
      {"lt", "<"},     {"gt", ">"},    {"amp", "&"},   {"quot", "\""}, {"apos", "'"},
      {"nbsp", " "},   {"#39", "'"},   {"para", "¶"},  {"ndash", "–"}, {"mdash", "—"},
      {"hellip", "…"}, {"times", "×"}, {"rsquo", "’"}, {"lsquo", "‘"}, {"rdquo", "”"},
      {"ldquo", "“"},  {"le", "≤"},    {"ge", "≥"}};
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '&') {
      out += text[i];
      continue;
    }
    size_t semi = text.find(';', i);
    if (semi == std::string_view::npos || semi - i > 10) {
      out += '&';
      continue;
    }
    std::string name(text.substr(i + 1, semi - i - 1));
    if (auto it = kNamed.find(name); it != kNamed.end()) {
      out += it->second;
    } else if (name.size() > 1 && name[0] == '#') {
      unsigned long code = 0;
      try {
        code = (name[1] == 'x' || name[1] == 'X') ? std::stoul(name.substr(2), nullptr, 16)
                                                  : std::stoul(name.substr(1));
      } catch (const std::exception&) {
        out += '&';
        continue;
      }
      // UTF-8 encoding of the code point.
      if (code < 0x80) {
        out += static_cast<char>(code);
      } else if (code < 0x800) {
        out += static_cast<char>(0xC0 | (code >> 6));
        out += static_cast<char>(0x80 | (code & 0x3F));
      } else if (code < 0x10000) {
        out += static_cast<char>(0xE0 | (code >> 12));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
      } else {
        out += static_cast<char>(0xF0 | (code >> 18));
        out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
      }
    } else {
      out += '&';
      continue;
    }
    i = semi;
  }
  return out;
}

// Where `</name` starts at or after `from`, in any letter case.
size_t find_closing_tag(std::string_view html, const std::string& name, size_t from) {
  for (size_t at = html.find("</", from); at != std::string_view::npos;
       at = html.find("</", at + 2)) {
    if (lower(html.substr(at + 2, name.size())) == name) return at;
  }
  return std::string_view::npos;
}

// `html` without the named elements and their contents (any letter case).
std::string strip_elements(std::string_view html, const std::vector<std::string>& names) {
  std::string out;
  out.reserve(html.size());
  size_t at = 0;
  while (at < html.size()) {
    size_t open = html.find('<', at);
    if (open == std::string_view::npos) break;
    std::string matched;
    for (const auto& name : names) {
      std::string_view candidate = html.substr(open + 1, name.size() + 1);
      if (candidate.size() == name.size() + 1 && lower(candidate.substr(0, name.size())) == name &&
          (candidate.back() == '>' || std::isspace(static_cast<unsigned char>(candidate.back())))) {
        matched = name;
        break;
      }
    }
    if (matched.empty()) {
      out.append(html, at, open + 1 - at);
      at = open + 1;
      continue;
    }
    out.append(html, at, open - at);
    size_t close = find_closing_tag(html, matched, open + 1);
    if (close == std::string_view::npos) return out;
    size_t end = html.find('>', close);
    at = end == std::string_view::npos ? html.size() : end + 1;
  }
  out.append(html.substr(std::min(at, html.size())));
  return out;
}

// HTML to plain text: tags dropped, block ends as newlines, table cells separated
// by " | ", <pre> kept verbatim, script/style removed.
std::string html_to_text(std::string_view html) {
  std::string out;
  out.reserve(html.size() / 2);
  bool pre = false;
  for (size_t i = 0; i < html.size();) {
    char c = html[i];
    if (c != '<') {
      if (!pre && (c == '\n' || c == '\r' || c == '\t')) c = ' ';
      if (!pre && c == ' ' && !out.empty() && (out.back() == ' ' || out.back() == '\n')) {
        ++i;
        continue;
      }
      out += c;
      ++i;
      continue;
    }
    if (html.substr(i, 4) == "<!--") {
      size_t end = html.find("-->", i);
      i = end == std::string_view::npos ? html.size() : end + 3;
      continue;
    }
    size_t end = html.find('>', i);
    if (end == std::string_view::npos) break;
    std::string tag = lower(html.substr(i + 1, end - i - 1));
    i = end + 1;
    bool closing = !tag.empty() && tag[0] == '/';
    std::string name = tag.substr(
        closing ? 1 : 0, tag.find_first_of(" \t\n/>", closing ? 1 : 0) - (closing ? 1 : 0));
    if (!closing && (name == "script" || name == "style")) {
      size_t close = find_closing_tag(html, name, i);
      i = close == std::string_view::npos ? html.size() : close;
      continue;
    }
    if (name == "pre") {
      pre = !closing;
      out += "\n";
    } else if (name == "br" || name == "p" || name == "div" || name == "li" || name == "tr" ||
               name == "table" || name == "ul" || name == "ol" || name == "dt" || name == "dd" ||
               name == "section" || name == "h5" || name == "h6" || name == "blockquote") {
      if (!out.empty() && out.back() != '\n') out += "\n";
      if (!closing && name == "li") out += "- ";
    } else if ((name == "td" || name == "th") && !closing) {
      if (!out.empty() && out.back() != '\n') out += " | ";
    }
  }
  return decode_entities(out);
}

bool looks_like_html(std::string_view text) {
  std::string head = lower(text.substr(0, 4096));
  static const std::regex kHeading("<h[1-4][\\s>]");
  return head.find("<html") != std::string::npos ||
         head.find("<!doctype html") != std::string::npos ||
         head.find("<body") != std::string::npos || std::regex_search(head, kHeading);
}

}  // namespace

std::vector<std::string> heading_instructions(std::string_view heading) {
  static const std::regex kOpcode(R"([a-z][a-z0-9_]*(?:\.[a-z0-9_:]+)+)");
  std::vector<std::string> found;
  std::string text(heading);
  size_t colon = text.find("Instructions:");
  std::set<std::string> seen;
  auto add = [&](const std::string& op) {
    if (seen.insert(op).second) found.push_back(op);
  };
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kOpcode);
       it != std::sregex_iterator(); ++it)
    add(it->str());
  if (colon != std::string::npos) {
    static const std::regex kWord(R"([a-z][a-z0-9_.:]*)");
    std::string tail = text.substr(colon + 13);
    for (auto it = std::sregex_iterator(tail.begin(), tail.end(), kWord);
         it != std::sregex_iterator(); ++it)
      add(it->str());
  }
  return found;
}

std::vector<DocumentSection> split_markdown_document(std::string_view text,
                                                     const std::string& document) {
  std::vector<DocumentSection> sections;
  bool fenced = false;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string line(text.substr(start, end - start));
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("```", 0) == 0 || line.rfind("~~~", 0) == 0) fenced = !fenced;
    int level = 0;
    while (!fenced && level < static_cast<int>(line.size()) && line[level] == '#') ++level;
    if (level >= 1 && level <= 4 && static_cast<int>(line.size()) > level && line[level] == ' ') {
      DocumentSection section;
      section.level = level;
      section.title = trim(line.substr(level + 1));
      sections.push_back(std::move(section));
      continue;
    }
    if (sections.empty()) {
      if (trim(line).empty()) continue;
      DocumentSection preamble;  // text before any heading
      preamble.title = "Preamble";
      sections.push_back(std::move(preamble));
    }
    sections.back().text += line + "\n";
  }
  for (auto& section : sections) section.text = collapse_blank_lines(section.text);
  assign_ids(sections, document);
  return sections;
}

std::vector<DocumentSection> split_html_document(std::string_view original,
                                                 const std::string& document) {
  // Headings inside scripts, styles or the head are not sections.
  const std::string cleaned = strip_elements(original, {"head", "script", "style"});
  const std::string_view html = cleaned;
  std::vector<DocumentSection> sections;
  size_t at = 0;
  auto append_text = [&](std::string_view chunk) {
    std::string text = html_to_text(chunk);
    if (trim(text).empty()) return;
    if (sections.empty()) {
      DocumentSection preamble;
      preamble.title = "Preamble";
      sections.push_back(std::move(preamble));
    }
    sections.back().text += text;
  };
  std::string lowered = lower(html);
  while (true) {
    size_t found = std::string::npos;
    int level = 0;
    for (size_t pos = lowered.find("<h", at); pos != std::string::npos;
         pos = lowered.find("<h", pos + 2)) {
      char digit = pos + 2 < lowered.size() ? lowered[pos + 2] : '\0';
      char after = pos + 3 < lowered.size() ? lowered[pos + 3] : '\0';
      if (digit >= '1' && digit <= '4' &&
          (after == '>' || std::isspace(static_cast<unsigned char>(after)))) {
        found = pos;
        level = digit - '0';
        break;
      }
    }
    if (found == std::string::npos) {
      append_text(html.substr(at));
      break;
    }
    append_text(html.substr(at, found - at));
    std::string close = "</h" + std::to_string(level);
    size_t end = lowered.find(close, found);
    if (end == std::string::npos) break;
    DocumentSection section;
    section.level = level;
    std::string title(trim(html_to_text(html.substr(found, end - found))));
    for (const char* mark : {"¶", "#"}) {  // Sphinx/Doxygen header links
      std::string m(mark);
      while (title.size() >= m.size() && title.compare(title.size() - m.size(), m.size(), m) == 0)
        title = trim(title.substr(0, title.size() - m.size()));
    }
    section.title = title;
    sections.push_back(std::move(section));
    size_t tag_end = lowered.find('>', end);
    at = tag_end == std::string::npos ? html.size() : tag_end + 1;
  }
  for (auto& section : sections) section.text = collapse_blank_lines(section.text);
  std::erase_if(sections,
                [](const DocumentSection& s) { return s.title.empty() && s.text.empty(); });
  assign_ids(sections, document);
  return sections;
}

std::vector<DocumentSection> split_ptx_document(std::string_view text,
                                                const std::string& document) {
  return looks_like_html(text) ? split_html_document(text, document)
                               : split_markdown_document(text, document);
}

std::string document_name(const fs::path& stored_file) { return stored_file.stem().string(); }

Result<size_t> store_ptx_document(const KbPaths& paths, const fs::path& file,
                                  const std::string& name) {
  std::string doc = slugify(name);
  auto text = read_file(file);
  if (!text) return text.error();
  auto sections = split_ptx_document(*text, doc);
  size_t headed = 0;
  for (const auto& s : sections) headed += s.title != "Preamble";
  if (headed == 0) {
    return make_error(
        file.string() +
        " has no h1-h4 (HTML) or #-#### (Markdown) headings; give the PTX ISA "
        "document as HTML (docs.nvidia.com/cuda/parallel-thread-execution) or Markdown");
  }
  const bool html = looks_like_html(*text);
  std::error_code error;
  fs::create_directories(paths.documents_dir(), error);
  if (error)
    return make_error("cannot create " + paths.documents_dir().string() + ": " + error.message());
  // Only one stored copy per name, whatever its format.
  for (const char* ext : {".html", ".md"}) fs::remove(paths.documents_dir() / (doc + ext), error);
  fs::path target = paths.documents_dir() / (doc + (html ? ".html" : ".md"));
  fs::path temp = target;
  temp += ".tmp." + std::to_string(getpid());
  if (auto status = write_file(temp, *text); !status) return status.error();
  fs::rename(temp, target, error);
  if (error) {
    fs::remove(temp, error);
    return make_error("cannot store " + target.string() + ": " + error.message());
  }
  return sections.size();
}

}  // namespace kiln::kb
