#include "kiln/ptx/diagnostic.h"

namespace kiln::ptx {

std::string Diagnostic::to_string(std::string_view source_name) const {
  std::string out(source_name);
  out += ':' + std::to_string(location.line) + ':' + std::to_string(location.column) + ": ";
  out += severity == Severity::Error ? "error: " : "warning: ";
  out += message;
  return out;
}

}  // namespace kiln::ptx
