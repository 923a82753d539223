#include "kiln/mcp/stdio_transport.h"

#include <spdlog/spdlog.h>

#include <mutex>
#include <string>

#include "kiln/base/json_text.h"
#include "kiln/mcp/session.h"

namespace kiln::mcp {
namespace {

// Writes each message whole, one line, under a lock shared by all threads.
class StdioOutbox : public Outbox {
 public:
  StdioOutbox(std::FILE* out, Recorder* recorder) : out_(out), recorder_(recorder) {}

  void notify(const json& message, const json& /*about*/) override { write(message); }
  void respond(const json& /*id*/, std::optional<json> response) override {
    if (response) write(*response);
  }

 private:
  void write(const json& message) {
    std::string line = json_text(message);
    line.push_back('\n');
    std::lock_guard lock(mutex_);
    if (recorder_) recorder_->outgoing(message);
    std::fwrite(line.data(), 1, line.size(), out_);
    std::fflush(out_);
  }

  std::FILE* out_;
  Recorder* recorder_;
  std::mutex mutex_;
};

// Reads lines of at most `limit` bytes; longer lines are consumed and reported.
class LineReader {
 public:
  LineReader(std::FILE* in, std::size_t limit) : in_(in), limit_(limit) {}

  enum class Status { kLine, kTooLong, kEnd };

  Status next(std::string& line) {
    line.clear();
    bool too_long = false;
    for (;;) {
      int c = getc_unlocked(in_);  // one reader thread
      if (c == EOF) {
        if (line.empty() && !too_long) return Status::kEnd;
        return too_long ? Status::kTooLong : Status::kLine;
      }
      if (c == '\n') return too_long ? Status::kTooLong : Status::kLine;
      if (too_long) continue;
      if (line.size() >= limit_) {
        too_long = true;
        line.clear();
        line.shrink_to_fit();
        continue;
      }
      line.push_back(static_cast<char>(c));
    }
  }

 private:
  std::FILE* in_;
  std::size_t limit_;
};

bool blank(const std::string& line) { return line.find_first_not_of(" \t\r") == std::string::npos; }

}  // namespace

int serve_stdio(const Server& server, std::FILE* in, std::FILE* out, const StdioOptions& options) {
  StdioOutbox outbox(out, options.recorder);
  Session session(server, outbox);
  LineReader reader(in, options.max_message_bytes);
  std::string line;
  for (;;) {
    auto status = reader.next(line);
    if (status == LineReader::Status::kEnd) break;
    if (status == LineReader::Status::kTooLong) {
      spdlog::warn("refused a message over {} bytes", options.max_message_bytes);
      if (options.recorder) options.recorder->incoming_raw("<message over the size limit>");
      outbox.respond(nullptr,
                     make_error_response(
                         nullptr, RpcError{error_code::kInvalidRequest,
                                           "message too large: the limit is " +
                                               std::to_string(options.max_message_bytes) + " bytes",
                                           nullptr}));
      continue;
    }
    if (blank(line)) continue;
    auto parsed = parse_json_text(line);
    if (auto* rejected = std::get_if<RejectedMessage>(&parsed)) {
      if (options.recorder) options.recorder->incoming_raw(line);
      outbox.respond(rejected->id, make_error_response(rejected->id, rejected->error));
      continue;
    }
    const json& value = std::get<json>(parsed);
    if (options.recorder) options.recorder->incoming(value);
    session.handle(value);
  }
  // A script may pipe requests and close stdin at once: finish what is in
  // flight and write its answers before exiting, so no answer is lost.
  spdlog::info("stdin closed; finishing the requests in flight, then exiting");
  session.drain();
  session.shutdown();
  return 0;
}

}  // namespace kiln::mcp
