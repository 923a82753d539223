// kiln call TOOL --json '{...}': call one tool from a shell.
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "commands.h"

namespace kiln::cli {

Runner add_call_command(CLI::App& app, const GlobalOptions& global) {
  auto* command = app.add_subcommand(
      "call", "Call one tool and print its result (exit 1 when the result is an error)");
  auto tool = std::make_shared<std::string>();
  auto arguments = std::make_shared<std::string>("{}");
  auto structured = std::make_shared<bool>(false);
  command->add_option("tool", *tool, "tool name (an unknown name lists the tools)")->required();
  command->add_option("--json", *arguments, "the arguments as a JSON object");
  command->add_flag("--structured", *structured,
                    "print the structured result as JSON instead of text");
  return [&global, tool, arguments, structured]() -> int {
    auto server = make_server(global, "", false);
    if (!server) {
      std::cerr << "kiln: " << server.error().message << "\n";
      return 2;
    }
    auto args = nlohmann::json::parse(*arguments, nullptr, false);
    if (args.is_discarded() || !args.is_object()) {
      std::cerr << "kiln: --json must be a JSON object, e.g. --json '{\"name\": \"fp16_gemm\"}'\n";
      return 2;
    }
    if (!(*server)->tools().contains(*tool)) {
      std::cerr << "kiln: unknown tool `" << *tool << "`; the tools are:";
      const auto listing = (*server)->tools().list();
      for (const auto& t : listing["tools"]) std::cerr << " " << t["name"].get<std::string>();
      std::cerr << "\n";
      return 2;
    }
    // Progress goes to stderr, on one rewritten line when stderr is a terminal.
    const bool tty = isatty(fileno(stderr));
    auto send = [tty](nlohmann::json note) {
      if (note.value("method", "") != "notifications/progress") return;
      const auto& p = note["params"];
      std::fprintf(stderr, tty ? "\r%s: %g/%g %s\033[K" : "%s: %g/%g %s\n", "progress",
                   p.value("progress", 0.0), p.value("total", 0.0), p.value("message", "").c_str());
    };
    mcp::CallContext context(send, "cli", std::make_shared<std::atomic<bool>>(false),
                             std::make_shared<std::atomic<mcp::LogLevel>>(mcp::LogLevel::kInfo));
    mcp::ToolResult result = (*server)->tools().run(*tool, args, context);
    if (tty) std::fputc('\n', stderr);
    if (*structured && !result.is_error) {
      std::cout << result.structured.dump(2) << "\n";
    } else {
      (result.is_error ? std::cerr : std::cout)
          << result.text << (result.text.empty() || result.text.back() != '\n' ? "\n" : "");
    }
    return result.is_error ? 1 : 0;
  };
}

}  // namespace kiln::cli
