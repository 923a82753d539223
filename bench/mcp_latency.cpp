// Measures the MCP server's responsiveness from a client's side:
//   - process start to the initialize response (stdio), over fresh processes
//   - get_task round trips over stdio and over Streamable HTTP (p50, p99)
//   - resident memory of an idle server after initialize and after the calls
//   - the 2026-07-28 path (server/discover, a stateless get_task) beside a 2025-11-25
//     session's get_task, interleaved in one run
// Usage: kiln_bench_mcp_latency KILN_BINARY [calls=1000] [starts=30]
// Prints one JSON object; the numbers go into the issue notes, never into tests.
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

struct Child {
  pid_t pid = -1;
  FILE* in = nullptr;   // the child's stdin
  FILE* out = nullptr;  // the child's stdout
  FILE* err = nullptr;  // the child's stderr
};

Child spawn(const std::vector<std::string>& argv) {
  int to_child[2], from_child[2], errors[2];
  if (pipe(to_child) || pipe(from_child) || pipe(errors)) throw std::runtime_error("pipe failed");
  Child child;
  child.pid = fork();
  if (child.pid == 0) {
    dup2(to_child[0], 0);
    dup2(from_child[1], 1);
    dup2(errors[1], 2);
    for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1], errors[0], errors[1]})
      close(fd);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(to_child[0]);
  close(from_child[1]);
  close(errors[1]);
  child.in = fdopen(to_child[1], "w");
  child.out = fdopen(from_child[0], "r");
  child.err = fdopen(errors[0], "r");
  return child;
}

void finish(Child& child) {
  if (child.in) fclose(child.in);
  kill(child.pid, SIGTERM);
  waitpid(child.pid, nullptr, 0);
  if (child.out) fclose(child.out);
  if (child.err) fclose(child.err);
}

std::string read_line(FILE* f) {
  std::string line;
  int c;
  while ((c = fgetc(f)) != EOF && c != '\n') line.push_back(static_cast<char>(c));
  return line;
}

json round_trip(Child& child, const json& request) {
  std::string text = request.dump() + "\n";
  fwrite(text.data(), 1, text.size(), child.in);
  fflush(child.in);
  for (;;) {
    std::string line = read_line(child.out);
    if (line.empty()) throw std::runtime_error("server closed stdout");
    json reply = json::parse(line);
    if (reply.contains("id") && reply["id"] == request["id"]) return reply;
  }
}

json initialize_request(int id) {
  return {{"jsonrpc", "2.0"},
          {"id", id},
          {"method", "initialize"},
          {"params",
           {{"protocolVersion", "2025-11-25"},
            {"capabilities", json::object()},
            {"clientInfo", {{"name", "bench"}, {"version", "1"}}}}}};
}

json get_task_request(int id) {
  return {{"jsonrpc", "2.0"},
          {"id", id},
          {"method", "tools/call"},
          {"params", {{"name", "get_task"}, {"arguments", json::object()}}}};
}

json get_task_params() { return {{"name", "get_task"}, {"arguments", json::object()}}; }

// A request of the stateless 2026-07-28 revision: no session, the version and the client's
// capabilities in every request's _meta.
json stateless_request(int id, const std::string& method, json params) {
  if (!params.is_object()) params = json::object();
  params["_meta"] = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                     {"io.modelcontextprotocol/clientCapabilities", json::object()}};
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}};
}

double micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

json stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
  };
  return {{"n", v.size()},
          {"p50_us", at(0.5)},
          {"p99_us", at(0.99)},
          {"min_us", v.front()},
          {"max_us", v.back()}};
}

long rss_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string key;
  while (status >> key) {
    if (key == "VmRSS:") {
      long kib = 0;
      status >> kib;
      return kib;
    }
    status.ignore(1 << 12, '\n');
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " KILN_BINARY [calls=1000] [starts=30]\n";
    return 2;
  }
  const std::string kiln = argv[1];
  const int calls = argc > 2 ? std::stoi(argv[2]) : 1000;
  const int starts = argc > 3 ? std::stoi(argv[3]) : 30;
  json report;

  // 1. Process start to initialize response.
  std::vector<double> start_times;
  for (int i = 0; i < starts; ++i) {
    auto t0 = Clock::now();
    Child child = spawn({kiln, "--log-level", "warn", "mcp"});
    round_trip(child, initialize_request(1));
    start_times.push_back(micros(Clock::now() - t0));
    finish(child);
  }
  report["start_to_initialize"] = stats(start_times);

  // 2. get_task over stdio, and resident memory.
  {
    Child child = spawn({kiln, "--log-level", "warn", "mcp"});
    round_trip(child, initialize_request(1));
    usleep(200 * 1000);
    report["rss_idle_after_initialize_kib"] = rss_kib(child.pid);
    round_trip(child, get_task_request(2));  // first call loads and hashes the task
    std::vector<double> times;
    for (int i = 0; i < calls; ++i) {
      auto t0 = Clock::now();
      json reply = round_trip(child, get_task_request(100 + i));
      times.push_back(micros(Clock::now() - t0));
      if (reply["result"].value("isError", true))
        throw std::runtime_error("get_task failed: " + reply.dump());
    }
    report["get_task_stdio"] = stats(times);
    report["rss_idle_after_calls_kib"] = rss_kib(child.pid);
    finish(child);
  }

  // 3. get_task over Streamable HTTP (one keep-alive connection).
  {
    Child child = spawn({kiln, "--log-level", "warn", "mcp", "--http", "127.0.0.1:0"});
    std::string line = read_line(child.err);
    auto at = line.find("127.0.0.1:");
    if (at == std::string::npos) throw std::runtime_error("no listening line from kiln: " + line);
    int port = std::stoi(line.substr(at + 10));
    httplib::Client client("127.0.0.1", port);
    client.set_keep_alive(true);
    client.set_tcp_nodelay(true);
    httplib::Headers headers = {{"Accept", "application/json, text/event-stream"}};
    auto init = client.Post("/mcp", headers, initialize_request(1).dump(), "application/json");
    if (!init || init->status != 200) throw std::runtime_error("HTTP initialize failed");
    headers.emplace("Mcp-Session-Id", init->get_header_value("Mcp-Session-Id"));
    headers.emplace("MCP-Protocol-Version", "2025-11-25");
    client.Post("/mcp", headers, get_task_request(2).dump(), "application/json");
    std::vector<double> times;
    for (int i = 0; i < calls; ++i) {
      auto t0 = Clock::now();
      auto reply =
          client.Post("/mcp", headers, get_task_request(100 + i).dump(), "application/json");
      times.push_back(micros(Clock::now() - t0));
      if (!reply || reply->status != 200) throw std::runtime_error("HTTP get_task failed");
    }
    report["get_task_http"] = stats(times);
    finish(child);
  }

  // 4. The 2026-07-28 path beside the 2025 one, interleaved in one run over stdio: a stateless
  //    server/discover and a stateless get_task on one server, a get_task in an initialized
  //    2025-11-25 session on another.
  {
    Child stateless = spawn({kiln, "--log-level", "warn", "mcp"});
    Child session = spawn({kiln, "--log-level", "warn", "mcp"});
    round_trip(session, initialize_request(1));
    round_trip(session, get_task_request(2));
    round_trip(stateless, stateless_request(2, "tools/call", get_task_params()));
    std::vector<double> discover, call_2026, call_2025;
    for (int i = 0; i < calls; ++i) {
      auto t0 = Clock::now();
      json found = round_trip(stateless, stateless_request(100 + 3 * i, "server/discover", {}));
      discover.push_back(micros(Clock::now() - t0));
      if (!found.contains("result")) throw std::runtime_error("discover failed: " + found.dump());
      t0 = Clock::now();
      json reply =
          round_trip(stateless, stateless_request(101 + 3 * i, "tools/call", get_task_params()));
      call_2026.push_back(micros(Clock::now() - t0));
      if (!reply.contains("result") || reply["result"].value("isError", true))
        throw std::runtime_error("stateless get_task failed: " + reply.dump());
      t0 = Clock::now();
      round_trip(session, get_task_request(102 + 3 * i));
      call_2025.push_back(micros(Clock::now() - t0));
    }
    report["discover_2026_stdio"] = stats(discover);
    report["get_task_2026_stdio"] = stats(call_2026);
    report["get_task_2025_stdio_interleaved"] = stats(call_2025);
    finish(stateless);
    finish(session);
  }
  std::cout << report.dump(2) << std::endl;
  return 0;
}
