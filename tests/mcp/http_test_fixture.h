// The Streamable HTTP tests' fixture: kiln's HttpTransport on 127.0.0.1 at a port the kernel
// picks, serving the test server, and the requests and headers of an MCP client
// (http_transport_test.cpp, stateless_http_test.cpp, client_requests_test.cpp).
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "kiln/mcp/http_transport.h"
#include "kiln/mcp/json_rpc.h"
#include "test_server.h"

namespace kiln::mcp::http_test {

using namespace std::chrono_literals;

inline constexpr const char* kVersion = "2025-06-18";

inline json request(const json& id, const std::string& method, json params = json::object()) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

inline json initialize_request(const std::string& version = kVersion) {
  return request(0, "initialize",
                 {{"protocolVersion", version},
                  {"capabilities", json::object()},
                  {"clientInfo", {{"name", "http-test"}, {"version", "1"}}}});
}

inline json tool_call(const json& id, const std::string& name, json arguments = json::object(),
                      json progress = nullptr) {
  json params{{"name", name}, {"arguments", std::move(arguments)}};
  if (!progress.is_null()) params["_meta"] = {{"progressToken", progress}};
  return request(id, "tools/call", std::move(params));
}

// The data of each SSE event in `body`, parsed as JSON.
inline std::vector<json> sse_events(const std::string& body) {
  std::vector<json> events;
  std::istringstream in(body);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("data: ", 0) != 0) continue;
    events.push_back(json::parse(line.substr(6), nullptr, false));
  }
  return events;
}

class HttpTransportTest : public ::testing::Test {
 protected:
  // Binds 127.0.0.1 on a free port and serves on a thread; true once it answers.
  bool start(HttpOptions options = {}) {
    options.host = "127.0.0.1";
    options.port = 0;
    transport_ = std::make_unique<HttpTransport>(*server_, options);
    auto bound = transport_->bind();
    if (!bound) {
      ADD_FAILURE() << bound.error().message;
      transport_.reset();
      return false;
    }
    port_ = *bound;
    serving_ = std::thread([this] { transport_->serve(); });
    // stop() before the server listens would be lost; wait until it answers.
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (std::chrono::steady_clock::now() < deadline) {
      if (client()->Get("/")) return true;
      std::this_thread::sleep_for(10ms);
    }
    ADD_FAILURE() << "the server never answered on port " << port_;
    return false;
  }

  void TearDown() override {
    if (!transport_) return;
    transport_->stop();
    if (serving_.joinable()) serving_.join();
  }

  std::unique_ptr<httplib::Client> client() {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", port_);
    c->set_connection_timeout(5);
    c->set_read_timeout(20);
    c->set_write_timeout(5);
    return c;
  }

  // The headers of an MCP client in a session (none when `session` is empty).
  static httplib::Headers headers(
      const std::string& session = "",
      const std::string& accept = "application/json, text/event-stream") {
    httplib::Headers h{{"Accept", accept}};
    if (!session.empty()) {
      h.emplace("Mcp-Session-Id", session);
      h.emplace("MCP-Protocol-Version", kVersion);
    }
    return h;
  }

  httplib::Result post(const json& body, const httplib::Headers& h) {
    return client()->Post("/mcp", h, body.dump(), "application/json");
  }

  // Initializes a session and returns its id ("" on failure, with a test failure).
  std::string open_session(const std::string& version = kVersion, httplib::Headers extra = {}) {
    httplib::Headers h = headers();
    for (auto& header : extra) h.insert(header);
    auto response = post(initialize_request(version), h);
    if (!response || response->status != 200) {
      ADD_FAILURE() << "initialize failed: "
                    << (response ? std::to_string(response->status) + " " + response->body
                                 : httplib::to_string(response.error()));
      return "";
    }
    std::string session = response->get_header_value("Mcp-Session-Id");
    httplib::Headers next = headers();
    next.emplace("Mcp-Session-Id", session);
    next.emplace("MCP-Protocol-Version", version);
    for (auto& header : extra) next.insert(header);
    auto initialized = post(make_notification("notifications/initialized", nullptr), next);
    EXPECT_TRUE(initialized && initialized->status == 202);
    return session;
  }

  std::shared_ptr<testing::SlowProbe> probe_ = std::make_shared<testing::SlowProbe>();
  std::unique_ptr<Server> server_ = testing::make_test_server(probe_);
  std::unique_ptr<HttpTransport> transport_;
  std::thread serving_;
  int port_ = 0;
};

}  // namespace kiln::mcp::http_test
