// Consumers for run_supervised's output chunks (kiln/base/process.h): a stdout split into
// lines, and the tail of a stream kept in memory.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace kiln {

// Splits a stdout into lines (without "\n" or "\r\n") for a handler that may refuse one;
// an unterminated last line is still a line. As ProcessOutput::on_stdout:
//   [&](std::string_view chunk) { return lines.feed(chunk); }
class LineSplitter {
 public:
  using Handler = std::function<bool(std::string_view line)>;
  LineSplitter(Handler handler, size_t max_line_bytes);

  // Hands on each complete line; an empty chunk ends the stream. false once refused: the
  // handler returned false, or a line grew past max_line_bytes (problem() says so).
  bool feed(std::string_view chunk);

  bool refused() const { return refused_; }
  // "a stdout line longer than N bytes" when a line was too long; empty otherwise.
  const std::string& problem() const { return problem_; }

 private:
  bool deliver(std::string_view line);
  void refuse_overlong();

  Handler handler_;
  size_t max_line_;
  std::string buffer_;
  bool refused_ = false;
  std::string problem_;
};

// The last `limit` bytes of a stream (a program's stderr for an error message).
class OutputTail {
 public:
  explicit OutputTail(size_t limit) : limit_(limit) {}
  void append(std::string_view chunk);
  std::string text() const;

 private:
  size_t limit_;
  std::string buffer_;  // up to twice the limit, so that trimming is rare
};

}  // namespace kiln
