#include "kiln/compiler/compile_flags.h"

#include <regex>

namespace kiln::compiler {

namespace {

constexpr const char* kAllowed =
    "allowed: -DNAME[=VALUE], -maxrregcount=N (16..255), --use_fast_math, -Xptxas -O0..-O3";

Result<std::string> checked_define(const std::string& define) {
  static const std::regex kDefine(R"([A-Za-z_][A-Za-z0-9_]*(=[A-Za-z0-9_.+\-]*)?)");
  if (!std::regex_match(define, kDefine))
    return make_error("define `" + define +
                      "` is not NAME or NAME=VALUE (VALUE of letters, digits, _ . + -); "
                      "put anything more complex in the source");
  return "-D" + define;
}

}  // namespace

Result<std::vector<std::string>> checked_flags(const std::vector<std::string>& defines,
                                               const std::vector<std::string>& flags) {
  static const std::regex kMaxRegs(R"(--?maxrregcount[= ](\d{1,3}))");
  static const std::regex kPtxasOpt(R"(-Xptxas[= ](-O[0-3]))");
  static const std::regex kPtxasAlone(R"(-O[0-3])");
  std::vector<std::string> out;
  for (const std::string& define : defines) {
    auto flag = checked_define(define);
    if (!flag) return flag.error();
    out.push_back(*flag);
  }
  for (size_t i = 0; i < flags.size(); ++i) {
    const std::string& flag = flags[i];
    std::smatch m;
    if (flag.rfind("-D", 0) == 0) {
      auto define = checked_define(flag.substr(2));
      if (!define) return define.error();
      out.push_back(*define);
    } else if (std::regex_match(flag, m, kMaxRegs)) {
      const int registers = std::stoi(m[1]);
      if (registers < 16 || registers > 255)
        return make_error("-maxrregcount=" + std::to_string(registers) +
                          " is out of range; give 16..255");
      out.push_back("-maxrregcount=" + std::to_string(registers));
    } else if (flag == "--use_fast_math" || flag == "-use_fast_math") {
      out.push_back("--use_fast_math");
    } else if (std::regex_match(flag, m, kPtxasOpt)) {
      out.insert(out.end(), {"-Xptxas", m[1]});
    } else if (flag == "-Xptxas" && i + 1 < flags.size() &&
               std::regex_match(flags[i + 1], kPtxasAlone)) {
      out.insert(out.end(), {"-Xptxas", flags[++i]});
    } else {
      return make_error("flag `" + flag + "` is not allowed (" + kAllowed +
                        "); the arch, -lineinfo and -O3 are set by kiln");
    }
  }
  return out;
}

}  // namespace kiln::compiler
