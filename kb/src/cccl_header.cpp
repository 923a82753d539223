#include "kiln/kb/cccl_header.h"

#include <algorithm>
#include <cctype>
#include <regex>

#include "kiln/base/text.h"

namespace kiln::kb {

namespace {

std::string collapse_spaces(std::string_view text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

// Lines of a comment block, with its trailing spaces dropped.
std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string line(trim_end(text.substr(start, end - start)));
    lines.push_back(std::move(line));
    start = end + 1;
  }
  return lines;
}

// The number of an "sm_100a"-style name, for ordering.
int sm_number(const std::string& sm) {
  int value = 0;
  for (char c : sm)
    if (std::isdigit(static_cast<unsigned char>(c))) value = value * 10 + (c - '0');
  return value;
}

// "bool mbarrier_try_wait_parity(uint64_t* addr, ...)" from the declaration text, with
// the namespace noise dropped; sets `name`.
std::string compact_signature(const std::string& declaration, std::string& name) {
  std::string text = collapse_spaces(declaration);
  size_t device = text.find("__device__");
  if (device == std::string::npos) return "";
  std::string prefix = text.substr(0, device);  // the template line
  std::string rest = text.substr(device + std::string("__device__").size());
  size_t open = rest.find('(');
  size_t close = rest.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return "";
  std::string head = collapse_spaces(rest.substr(0, open));
  size_t name_start = head.find_last_of(' ');
  name = name_start == std::string::npos ? head : head.substr(name_start + 1);
  std::string return_type = name_start == std::string::npos ? "" : head.substr(0, name_start);
  for (const char* word : {"static ", "inline "}) {
    for (size_t at; (at = return_type.find(word)) != std::string::npos;)
      return_type.erase(at, std::string(word).size());
  }
  std::string params = rest.substr(open + 1, close - open - 1);
  std::string signature =
      collapse_spaces(return_type) + " " + name + "(" + collapse_spaces(params) + ")";
  std::string templ = collapse_spaces(prefix);
  if (!templ.empty() && templ != "template <typename = void>") signature = templ + " " + signature;
  for (size_t at; (at = signature.find("cuda::ptx::")) != std::string::npos;)
    signature.erase(at, 11);
  for (size_t at; (at = signature.find("( ")) != std::string::npos;) signature.erase(at + 1, 1);
  for (size_t at; (at = signature.find(" )")) != std::string::npos;) signature.erase(at, 1);
  return signature;
}

// One comment block's form; false when the block is not a wrapper's documentation.
bool parse_block(std::string_view block, const std::string& header_name, InstructionForm& form) {
  std::vector<std::string> lines = split_lines(block);
  while (!lines.empty() && lines.front().empty()) lines.erase(lines.begin());
  if (lines.empty() || !lines.front().starts_with("// ")) return false;

  std::string head = lines.front().substr(3);  // syntax, maybe with its requirement
  std::vector<std::string> modifiers;
  std::vector<std::string> notes;
  std::string declaration;
  bool in_declaration = false;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (in_declaration) {
      declaration += line + "\n";
    } else if (line.starts_with("template") || line.starts_with("__device__")) {
      in_declaration = true;
      declaration += line + "\n";
    } else if (line.starts_with("// .")) {
      modifiers.push_back(collapse_spaces(line.substr(3)));
    } else if (line.starts_with("//") && line.find("PTX ISA") != std::string::npos) {
      head += " " + line.substr(2);  // the requirement on a line of its own
    } else if (line.starts_with("//")) {
      notes.push_back(collapse_spaces(line.substr(2)));
    } else {
      // A wrapped continuation of the syntax line; the declaration may start on it.
      size_t at = std::min(line.find("template"), line.find("__device__"));
      head += " " + line.substr(0, at);
      if (at != std::string::npos) {
        in_declaration = true;
        declaration += line.substr(at) + "\n";
      }
    }
  }
  size_t semicolon = head.find(';');
  if (semicolon == std::string::npos) return false;
  form.syntax = collapse_spaces(head.substr(0, semicolon + 1));
  std::string requirement = head.substr(semicolon + 1);
  form.opcode = form.syntax.substr(0, form.syntax.find_first_of(" ;"));
  if (form.opcode.empty() || !std::isalpha(static_cast<unsigned char>(form.opcode[0])))
    return false;

  static const std::regex kIsa(R"(PTX\s+ISA\s+(\d+))");
  static const std::regex kSm(R"(SM_(\d+[a-z]?))");
  std::smatch match;
  if (std::regex_search(requirement, match, kIsa)) {
    form.ptx_isa_number = std::stoi(match[1].str());
    form.ptx_isa = ptx_isa_text(form.ptx_isa_number);
  }
  for (auto it = std::sregex_iterator(requirement.begin(), requirement.end(), kSm);
       it != std::sregex_iterator(); ++it)
    form.sms.push_back("sm_" + (*it)[1].str());
  if (!form.sms.empty()) {
    form.min_sm =
        *std::min_element(form.sms.begin(), form.sms.end(),
                          [](const auto& a, const auto& b) { return sm_number(a) < sm_number(b); });
  }
  for (size_t i = 0; i < modifiers.size(); ++i) form.modifiers += (i ? "; " : "") + modifiers[i];
  for (size_t i = 0; i < notes.size(); ++i) form.notes += (i ? "; " : "") + notes[i];
  std::string name;
  form.signature = compact_signature(declaration, name);
  if (!name.empty()) form.wrapper = "cuda::ptx::" + name;
  form.header = header_name;
  return true;
}

}  // namespace

std::string ptx_isa_text(int number) {
  return std::to_string(number / 10) + "." + std::to_string(number % 10);
}

std::vector<InstructionForm> parse_cccl_header(std::string_view text,
                                               const std::string& header_name) {
  std::vector<InstructionForm> forms;
  size_t at = 0;
  while ((at = text.find("/*", at)) != std::string_view::npos) {
    size_t end = text.find("*/", at + 2);
    if (end == std::string_view::npos) break;
    InstructionForm form;
    if (parse_block(text.substr(at + 2, end - at - 2), header_name, form))
      forms.push_back(std::move(form));
    at = end + 2;
  }
  return forms;
}

}  // namespace kiln::kb
