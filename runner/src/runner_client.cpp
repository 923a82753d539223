#include "kiln/runner/runner_client.h"

#include <httplib.h>

#include <thread>

#include "kiln/runner/listen_address.h"

namespace kiln::runner {

using json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

constexpr int kRetries = 3;  // transient network failures while following a job

std::string seconds_query(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", seconds);
  return text;
}

}  // namespace

RunnerClient::RunnerClient(RunnerEndpoint endpoint) : endpoint_(std::move(endpoint)) {
  while (!endpoint_.url.empty() && endpoint_.url.back() == '/') endpoint_.url.pop_back();
}

Result<json> RunnerClient::call(Method method, const std::string& path, const std::string& body,
                                std::chrono::milliseconds read_timeout, int expected_status) const {
  auto address = parse_runner_url(endpoint_.url);
  if (!address) return address.error();
  httplib::Client client(address->host, address->port);
  client.set_connection_timeout(5, 0);
  client.set_read_timeout(
      std::chrono::duration_cast<std::chrono::seconds>(read_timeout).count() + 1, 0);
  client.set_write_timeout(60, 0);
  client.set_tcp_nodelay(true);
  if (!endpoint_.token.empty()) client.set_bearer_token_auth(endpoint_.token);
  httplib::Result response = method == Method::kGet    ? client.Get(path)
                             : method == Method::kPost ? client.Post(path, body, "application/json")
                                                       : client.Delete(path);
  const std::string where = "runner " + endpoint_.url;
  if (!response)
    return make_error(where + " did not answer " + path + " (" +
                      httplib::to_string(response.error()) +
                      "); check it is running (`kiln runner` on the GPU machine) and reachable");
  json reply = json::parse(response->body, nullptr, /*allow_exceptions=*/false);
  if (response->status == expected_status && reply.is_object()) return reply;
  std::string message = reply.is_object() && reply.contains("error") && reply["error"].is_string()
                            ? reply["error"].get<std::string>()
                            : response->body.substr(0, 300);
  std::string hint;
  if (response->status == 401)
    hint = "; set KILN_RUNNER_TOKEN to the runner's token (its --token-file)";
  if (response->status == 429)
    hint = "; the runner is busy: retry later or add another runner to KILN_RUNNER";
  return make_error(where + " answered " + std::to_string(response->status) + " to " + path + ": " +
                    message + hint);
}

Result<json> RunnerClient::health(std::chrono::seconds timeout) const {
  return call(Method::kGet, "/v1/health", "", timeout, 200);
}

Result<SubmitReply> RunnerClient::submit(const json& body) const {
  auto reply = call(Method::kPost, "/v1/jobs", body.dump(), 60s, 201);
  if (!reply) return reply.error();
  if (!reply->contains("id") || !(*reply)["id"].is_string())
    return make_error("runner " + endpoint_.url + " accepted the job but sent no id");
  return SubmitReply{(*reply)["id"].get<std::string>(), reply->value("position", size_t{0})};
}

Result<json> RunnerClient::job(const std::string& id, double wait_seconds) const {
  return call(Method::kGet, "/v1/jobs/" + id + "?wait=" + seconds_query(wait_seconds), "",
              std::chrono::milliseconds(static_cast<int64_t>(wait_seconds * 1000)) + 10s, 200);
}

Result<EventsPage> RunnerClient::events(const std::string& id, int64_t after,
                                        double wait_seconds) const {
  auto reply =
      call(Method::kGet,
           "/v1/jobs/" + id + "/events?after=" + std::to_string(after) +
               "&wait=" + seconds_query(wait_seconds),
           "", std::chrono::milliseconds(static_cast<int64_t>(wait_seconds * 1000)) + 10s, 200);
  if (!reply) return reply.error();
  EventsPage page;
  if (reply->contains("events") && (*reply)["events"].is_array())
    for (auto& event : (*reply)["events"]) page.events.push_back(event);
  page.next = reply->value("next", after);
  page.more = reply->value("more", false);
  page.state = reply->value("state", "");
  return page;
}

Result<json> RunnerClient::cancel(const std::string& id) const {
  return call(Method::kDelete, "/v1/jobs/" + id, "", 30s, 200);
}

Result<RunOutcome> RunnerClient::run(const json& body, const RunCallbacks& callbacks) const {
  auto submitted = submit(body);
  if (!submitted) return submitted.error();
  const std::string id = submitted->id;
  auto cancelled = [&] { return callbacks.cancelled && callbacks.cancelled(); };
  int64_t after = 0;
  int failures = 0;
  while (true) {
    if (cancelled()) {
      auto reply = cancel(id);
      RunOutcome outcome{id, "cancelled", json::object()};
      if (reply && reply->contains("result")) outcome.result = (*reply)["result"];
      outcome.state = reply ? reply->value("state", "cancelled") : "cancelled";
      return outcome;
    }
    auto page = events(id, after, poll_seconds_);
    if (!page) {
      if (++failures > kRetries)
        return make_error(page.error().message + " (job " + id + " may still be running there)");
      std::this_thread::sleep_for(500ms * failures);
      continue;
    }
    failures = 0;
    for (const auto& event : page->events)
      if (callbacks.on_event) callbacks.on_event(event);
    after = page->next;
    if (page->more) continue;
    if (page->state == "finished" || page->state == "cancelled") break;
  }
  auto final_state = job(id, 0);
  if (!final_state) return final_state.error();
  RunOutcome outcome{id, final_state->value("state", ""),
                     final_state->value("result", json::object())};
  if (!outcome.result.is_object() || !outcome.result.contains("status"))
    return make_error("runner " + endpoint_.url + " ended job " + id + " without a result");
  return outcome;
}

}  // namespace kiln::runner
