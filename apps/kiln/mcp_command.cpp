// kiln mcp: serve MCP over stdio (default) or Streamable HTTP.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>

#include "commands.h"
#include "kiln/base/stop_signals.h"
#include "kiln/http/token_file.h"
#include "kiln/mcp/http_transport.h"
#include "kiln/mcp/stdio_transport.h"

namespace kiln::cli {
namespace {

struct McpOptions {
  std::string http;  // HOST:PORT; empty serves stdio
  std::string record;
  std::string run_dir;
  std::string token_file;
  std::vector<std::string> allowed_origins;
  std::size_t max_request_bytes = 4u << 20;
  bool test_tools = false;
  bool conformance_fixtures = false;
};

Result<std::pair<std::string, int>> parse_host_port(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0)
    return make_error("--http wants HOST:PORT, e.g. 127.0.0.1:8765");
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  try {
    size_t used = 0;
    int port = std::stoi(text.substr(colon + 1), &used);
    if (used != text.size() - colon - 1 || port < 0 || port > 65535)
      throw std::out_of_range("port");
    return std::make_pair(host, port);
  } catch (const std::exception&) {
    return make_error("--http: `" + text.substr(colon + 1) + "` is not a port (0-65535)");
  }
}

int serve_http(const mcp::Server& server, const McpOptions& options, mcp::Recorder* recorder) {
  auto address = parse_host_port(options.http);
  if (!address) {
    spdlog::error("{}", address.error().message);
    return 2;
  }
  mcp::HttpOptions http;
  http.host = address->first;
  http.port = address->second;
  http.recorder = recorder;
  http.max_request_bytes = options.max_request_bytes;
  http.guard.allowed_origins = options.allowed_origins;
  if (!options.token_file.empty()) {
    auto token = http::read_token_file(options.token_file);
    if (!token) {
      spdlog::error("{}", token.error().message);
      return 2;
    }
    http.guard.bearer_token = *token;
  }
  StopSignals signals;  // before anything listens: a signal from here on stops the server

  mcp::HttpTransport transport(server, http);
  auto port = transport.bind();
  if (!port) {
    spdlog::error("{}", port.error().message);
    return 1;
  }
  std::string host = http.host.find(':') != std::string::npos ? "[" + http.host + "]" : http.host;
  // Tests and scripts wait for this line; it is the one thing printed when ready.
  std::fprintf(stderr, "kiln: listening on http://%s:%d/mcp\n", host.c_str(), *port);
  std::fflush(stderr);

  signals.watch([&](int received) {
    spdlog::info("signal {} received; stopping", received);
    transport.stop();
  });
  transport.serve();
  signals.finish();
  return 0;
}

// --record FILE appends to FILE; --record DIR/ (a trailing slash, or an existing folder) makes
// one file per server process there, DIR/YYYYMMDDTHHMMSSZ-PID.jsonl, so every session that a
// client starts from one configuration (`kiln setup`'s) is kept apart.
std::filesystem::path record_path(const std::string& given) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (!given.empty() && given.back() != '/' && !fs::is_directory(given, error)) return given;
  fs::create_directories(given, error);
  std::time_t now = std::time(nullptr);
  std::tm parts{};
  gmtime_r(&now, &parts);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &parts);
  return fs::path(given) / (std::string(stamp) + "-" + std::to_string(::getpid()) + ".jsonl");
}

}  // namespace

Runner add_mcp_command(CLI::App& app, const GlobalOptions& global) {
  auto* command =
      app.add_subcommand("mcp", "Serve MCP: stdio by default, Streamable HTTP with --http");
  auto options = std::make_shared<McpOptions>();
  command->add_option("--http", options->http,
                      "serve Streamable HTTP at HOST:PORT/mcp (port 0 picks a free one)");
  command->add_option("--record", options->record,
                      "append every message in and out to FILE as JSONL; DIR/ (or an existing "
                      "folder) gets one DIR/UTCTIME-PID.jsonl per server process");
  command->add_option("--run-dir", options->run_dir,
                      "the run directory of `kiln setup` (PROMPT.md, manifest.json): its task, "
                      "frozen; refuses to start when the task bundle changed");
  command->add_option("--token-file", options->token_file,
                      "require Authorization: Bearer <contents of FILE> (HTTP)");
  command->add_option("--allow-origin", options->allowed_origins,
                      "an Origin allowed besides loopback pages (HTTP; repeatable)");
  command->add_option("--max-request-bytes", options->max_request_bytes, "largest message accepted")
      ->check(CLI::Range(std::size_t{1024}, std::size_t{1} << 30));
  command->add_flag("--test-tools", options->test_tools,
                    "also offer diagnostic tools for client tests (test_wait)");
  command->add_flag("--conformance-fixtures", options->conformance_fixtures,
                    "also offer the fixture tools, resources and prompts (test_simple_text, "
                    "test://static-text, ...) that the MCP conformance suite calls; for testing "
                    "kiln's protocol machinery only");
  return [options, &global]() -> int {
    auto server =
        make_server(global, options->run_dir, options->test_tools, options->conformance_fixtures);
    if (!server) {
      spdlog::error("{}", server.error().message);
      return 1;
    }
    std::unique_ptr<mcp::Recorder> recorder;
    if (!options->record.empty()) {
      auto opened = mcp::Recorder::open(record_path(options->record));
      if (!opened) {
        spdlog::error("{}", opened.error().message);
        return 1;
      }
      recorder = std::move(opened).value();
    }
    if (!options->http.empty()) return serve_http(**server, *options, recorder.get());
    mcp::StdioOptions stdio;
    stdio.recorder = recorder.get();
    stdio.max_message_bytes = options->max_request_bytes;
    return mcp::serve_stdio(**server, stdin, stdout, stdio);
  };
}

}  // namespace kiln::cli
