// Module level: header directives, globals, function headers, .file, .section; the entry point.
#include "kiln/ptx/parser.h"

#include <exception>
#include <new>
#include <string>
#include <utility>

#include "kiln/ptx/lexer.h"
#include "parser_internal.h"

namespace kiln::ptx {
namespace detail {
namespace {

bool is_performance_directive(std::string_view name) {
  return name == "maxntid" || name == "reqntid" || name == "minnctapersm" || name == "maxnreg" ||
         name == "explicitcluster" || name == "reqnctapercluster" || name == "maxclusterrank" ||
         name == "noreturn" || name == "blocksareclusters" || name == "abi_preserve" ||
         name == "abi_preserve_control" || name == "maxnctapersm" || name == "pragma";
}

class ModuleParser {
 public:
  ModuleParser(TokenCursor& cursor, Module& module) : cursor_(cursor), m_(module) {}

  void run() {
    while (!cursor_.at_end()) item();
  }

 private:
  void add_item(ItemKind kind, size_t index) {
    m_.items.push_back(ModuleItem{kind, static_cast<uint32_t>(index)});
  }

  void item() {
    const Token& t = cursor_.peek();
    if (t.kind != TokenKind::Directive) {
      if (t.is_punct('}')) cursor_.fail(t, "unexpected '}' outside any function body");
      cursor_.fail_expected(
          "a directive (.version, .target, .entry, .func, a variable declaration, ...)");
    }
    const std::vector<std::string_view> words = split_directive(t.text);
    const std::string_view head = words.empty() ? std::string_view() : words.front();
    if (head == "version") {
      version();
    } else if (head == "target") {
      target();
    } else if (head == "address_size") {
      cursor_.next();
      const Token& v = cursor_.peek();
      const uint64_t size = cursor_.expect_unsigned("32 or 64 after .address_size");
      if (size != 32 && size != 64) cursor_.fail(v, ".address_size must be 32 or 64");
      m_.address_size = static_cast<uint32_t>(size);
      m_.has_address_size = true;
    } else if (head == "file") {
      file();
    } else if (head == "section") {
      section();
    } else if (head == "pragma") {
      cursor_.next();
      const Token& s = cursor_.peek();
      if (s.kind != TokenKind::String) cursor_.fail_expected("a string after .pragma");
      cursor_.next();
      cursor_.expect_punct(';', "after the .pragma string");
      add_item(ItemKind::Pragma, m_.pragmas.size());
      m_.pragmas.emplace_back(s.text);
    } else if (declaration_is_function()) {
      function();
    } else if (head == "global" || head == "const" || head == "shared" || head == "local" ||
               head == "tex" || head == "extern" || head == "visible" || head == "weak" ||
               head == "common" || head.starts_with("shared::") || head == "align") {
      Variable var = parse_variable(cursor_);
      cursor_.expect_punct(';', "after the declaration of '" + var.name + "'");
      add_item(ItemKind::Variable, m_.variables.size());
      m_.variables.push_back(std::move(var));
    } else {
      const bool known = head == "alias";
      if (!known) {
        cursor_.warn(t, "unknown directive " + TokenCursor::describe(t) + "; kept as text");
      }
      Directive d;
      d.location = t.location;
      d.text = skip_directive(cursor_);
      add_item(ItemKind::Directive, m_.directives.size());
      m_.directives.push_back(std::move(d));
    }
  }

  // Linkage qualifiers followed by .entry or .func.
  bool declaration_is_function() const {
    for (size_t i = 0;; ++i) {
      const Token& t = cursor_.peek(i);
      if (t.kind != TokenKind::Directive) return false;
      if (t.text == ".entry" || t.text == ".func") return true;
      if (!linkage_from_name(t.text.substr(1))) return false;
    }
  }

  void version() {
    cursor_.next();
    const Token& v = cursor_.peek();
    if (v.kind != TokenKind::Float && v.kind != TokenKind::Integer) {
      cursor_.fail_expected("a version such as 9.0 after .version");
    }
    std::string_view text = v.text;
    const size_t dot = text.find('.');
    auto digits = [](std::string_view s, uint32_t& out) {
      if (s.empty() || s.size() > 4) return false;
      out = 0;
      for (char c : s) {
        if (c < '0' || c > '9') return false;
        out = out * 10 + static_cast<uint32_t>(c - '0');
      }
      return true;
    };
    if (dot == std::string_view::npos || !digits(text.substr(0, dot), m_.version_major) ||
        !digits(text.substr(dot + 1), m_.version_minor)) {
      cursor_.fail(v, "malformed .version " + TokenCursor::describe(v) +
                          " (expected major.minor, such as 9.0)");
    }
    cursor_.next();
  }

  void target() {
    cursor_.next();
    do {
      m_.targets.emplace_back(
          cursor_.expect_identifier("a target such as sm_90a after .target").text);
    } while (cursor_.accept_punct(','));
  }

  void file() {
    FileEntry entry;
    entry.location = cursor_.next().location;
    const Token& index = cursor_.peek();
    const uint64_t value = cursor_.expect_unsigned("a file number after .file");
    if (value > UINT32_MAX) cursor_.fail(index, "file number too large");
    entry.index = static_cast<uint32_t>(value);
    const Token& path = cursor_.peek();
    if (path.kind != TokenKind::String)
      cursor_.fail_expected("a quoted path after the file number");
    cursor_.next();
    entry.path = unquote(path.text);
    while (cursor_.accept_punct(',')) entry.extra.push_back(cursor_.expect_unsigned("an integer"));
    add_item(ItemKind::File, m_.files.size());
    m_.files.push_back(std::move(entry));
  }

  static std::string unquote(std::string_view quoted) {
    std::string out;
    for (size_t i = 1; i + 1 < quoted.size(); ++i) {
      if (quoted[i] == '\\' && i + 2 < quoted.size()) ++i;
      out += quoted[i];
    }
    return out;
  }

  void section() {
    Section s;
    const Token& start = cursor_.next();
    s.location = start.location;
    const Token& name = cursor_.peek();
    if (name.kind != TokenKind::Directive && name.kind != TokenKind::Identifier) {
      cursor_.fail_expected("a section name such as .debug_str after .section");
    }
    cursor_.next();
    s.name = std::string(name.text);
    const Token& open = cursor_.expect_punct('{', "to open the section contents");
    int depth = 1;
    size_t first_inner = cursor_.position();
    while (true) {
      const Token& t = cursor_.peek();
      if (t.kind == TokenKind::End) {
        cursor_.fail(t, "expected '}' to close .section " + s.name + " (opened at line " +
                            std::to_string(open.location.line) + "), found end of input");
      }
      if (t.is_punct('{')) ++depth;
      if (t.is_punct('}') && --depth == 0) break;
      cursor_.next();
    }
    const Token& close = cursor_.peek();
    const size_t from = open.offset + 1;
    s.text = std::string(cursor_.text().substr(from, close.offset - from));
    if (s.name == ".debug_str") decode_strings(s, first_inner, cursor_.position());
    cursor_.next();
    add_item(ItemKind::Section, m_.sections.size());
    m_.sections.push_back(std::move(s));
  }

  // label: .b8 104,105,0  ->  {label, "hi"}. Anything else in the section is ignored.
  void decode_strings(Section& s, size_t first, size_t last) {
    DebugString* current = nullptr;
    bool ended = false;
    for (size_t i = first; i < last; ++i) {
      const Token& t = cursor_.at(i);
      if (t.kind == TokenKind::Identifier && i + 1 < last && cursor_.at(i + 1).is_punct(':')) {
        s.strings.push_back(DebugString{std::string(t.text), {}});
        current = &s.strings.back();
        ended = false;
        ++i;
      } else if (t.kind == TokenKind::Integer && current != nullptr && !ended) {
        std::string error;
        std::optional<Number> n = parse_number(t.text, error);
        if (!n || n->bits > 255) continue;
        if (n->bits == 0) {
          ended = true;
        } else {
          current->value += static_cast<char>(n->bits);
        }
      }
    }
  }

  void function() {
    Function f;
    f.location = cursor_.peek().location;
    while (true) {
      const Token& t = cursor_.next();
      if (t.text == ".entry") {
        f.kind = FunctionKind::Entry;
        break;
      }
      if (t.text == ".func") {
        f.kind = FunctionKind::Func;
        break;
      }
      f.linkage = *linkage_from_name(t.text.substr(1));
    }
    if (f.kind == FunctionKind::Func && cursor_.peek().is_punct('(')) {
      f.returns = params("the return value list");
    }
    const Token& name = cursor_.expect_identifier("the function name");
    f.name = std::string(name.text);
    if (cursor_.peek().is_punct('(')) f.params = params("the parameter list of '" + f.name + "'");
    while (cursor_.peek().kind == TokenKind::Directive) attribute(f);
    if (cursor_.accept_punct(';')) {
      f.has_body = false;
    } else if (cursor_.peek().is_punct('{')) {
      const Token& open = cursor_.next();
      f.has_body = true;
      parse_body(cursor_, f, open);
    } else {
      cursor_.fail_expected("'{' to open the body of '" + f.name +
                            "' or ';' to end its declaration");
    }
    add_item(ItemKind::Function, m_.functions.size());
    m_.functions.push_back(std::move(f));
  }

  std::vector<Variable> params(const std::string& what) {
    std::vector<Variable> out;
    const Token& open = cursor_.next();  // '('
    if (cursor_.accept_punct(')')) return out;
    do {
      if (cursor_.peek().kind != TokenKind::Directive) {
        cursor_.fail_expected("a parameter declaration (.param .b32 name) in " + what);
      }
      out.push_back(parse_variable(cursor_));
    } while (cursor_.accept_punct(','));
    if (!cursor_.peek().is_punct(')')) {
      cursor_.fail_expected("',' or ')' in " + what + " opened at line " +
                            std::to_string(open.location.line));
    }
    cursor_.next();
    return out;
  }

  void attribute(Function& f) {
    const Token& t = cursor_.next();
    FunctionAttribute a;
    a.name = std::string(t.text.substr(1));
    if (!is_performance_directive(a.name)) {
      cursor_.warn(t, "unknown directive " + TokenCursor::describe(t) + " before the body of '" +
                          f.name + "'; kept");
    }
    if (a.name == "pragma") {
      const Token& s = cursor_.peek();
      if (s.kind != TokenKind::String) cursor_.fail_expected("a string after .pragma");
      cursor_.next();
      a.text = std::string(s.text);
      cursor_.accept_punct(';');
    } else if (cursor_.peek().kind == TokenKind::Integer) {
      do {
        a.values.push_back(cursor_.expect_unsigned("an integer in ." + a.name));
      } while (cursor_.accept_punct(','));
    }
    f.attributes.push_back(std::move(a));
  }

  TokenCursor& cursor_;
  Module& m_;
};

}  // namespace
}  // namespace detail

ParseOutcome parse_ptx_with_diagnostics(std::string_view text, const ParseOptions& options) {
  (void)options;
  ParseOutcome outcome;
  try {
    LexOutput lexed = tokenize(text);
    std::vector<Diagnostic> warnings;
    detail::TokenCursor cursor(lexed.tokens, text, warnings);
    Module module;
    try {
      detail::ModuleParser(cursor, module).run();
    } catch (const detail::ParseError& error) {
      outcome.diagnostics = std::move(warnings);
      // A lexing error is the root cause when the parser ran into the truncated token stream.
      if (lexed.error && error.diagnostic.location.line >= lexed.error->location.line) {
        outcome.diagnostics.push_back(*lexed.error);
      } else {
        outcome.diagnostics.push_back(error.diagnostic);
      }
      return outcome;
    }
    outcome.diagnostics = std::move(warnings);
    if (lexed.error) {
      outcome.diagnostics.push_back(*lexed.error);
      return outcome;
    }
    outcome.module = std::move(module);
  } catch (const std::bad_alloc&) {
    outcome.module.reset();
    outcome.diagnostics.push_back({Severity::Error, {}, "out of memory while parsing PTX"});
  } catch (const std::exception& e) {
    outcome.module.reset();
    outcome.diagnostics.push_back(
        {Severity::Error, {}, std::string("internal error while parsing PTX: ") + e.what()});
  }
  return outcome;
}

Result<ParsedModule> parse_ptx(std::string_view text, const ParseOptions& options) {
  ParseOutcome outcome = parse_ptx_with_diagnostics(text, options);
  if (!outcome.module) {
    const Diagnostic& error = outcome.diagnostics.back();
    return make_error(error.to_string(options.source_name));
  }
  ParsedModule parsed{std::move(*outcome.module), std::move(outcome.diagnostics)};
  return parsed;
}

}  // namespace kiln::ptx
