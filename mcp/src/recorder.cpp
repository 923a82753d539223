#include "kiln/mcp/recorder.h"

#include <chrono>
#include <ctime>

namespace kiln::mcp {

std::string utc_timestamp_now() {
  using namespace std::chrono;
  auto now = system_clock::now();
  auto millis = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::time_t seconds = system_clock::to_time_t(now);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[40];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%S", &utc);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", buffer, static_cast<int>(millis));
  return out;
}

Result<std::unique_ptr<Recorder>> Recorder::open(const std::filesystem::path& path) {
  std::FILE* file = std::fopen(path.c_str(), "a");
  if (!file)
    return make_error("cannot open " + path.string() +
                      " to record the session; check the folder exists and is writable");
  return std::unique_ptr<Recorder>(new Recorder(file));
}

Recorder::~Recorder() { std::fclose(file_); }

void Recorder::incoming(const nlohmann::json& message, const std::string& session) {
  write("in", message, session);
}

void Recorder::incoming_raw(const std::string& text, const std::string& session) {
  write("in", nlohmann::json{{"raw", text}}, session);
}

void Recorder::outgoing(const nlohmann::json& message, const std::string& session) {
  write("out", message, session);
}

void Recorder::write(const char* direction, const nlohmann::json& message,
                     const std::string& session) {
  nlohmann::json line{{"ts", utc_timestamp_now()}, {"dir", direction}};
  if (!session.empty()) line["session"] = session;
  line["message"] = message;
  std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::lock_guard lock(mutex_);
  std::fwrite(text.data(), 1, text.size(), file_);
  std::fflush(file_);  // a session can end at any moment; lose nothing
}

}  // namespace kiln::mcp
