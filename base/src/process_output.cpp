#include "kiln/base/process_output.h"

#include <utility>

namespace kiln {

LineSplitter::LineSplitter(Handler handler, size_t max_line_bytes)
    : handler_(std::move(handler)), max_line_(max_line_bytes) {}

bool LineSplitter::feed(std::string_view chunk) {
  if (refused_) return false;
  if (chunk.empty()) {  // the end: what is left is the last line
    if (!buffer_.empty()) deliver(std::exchange(buffer_, {}));
    return !refused_;
  }
  buffer_.append(chunk);
  size_t start = 0;
  for (size_t newline; (newline = buffer_.find('\n', start)) != std::string::npos;
       start = newline + 1) {
    if (!deliver(std::string_view(buffer_).substr(start, newline - start))) return false;
  }
  buffer_.erase(0, start);
  if (buffer_.size() > max_line_) refuse_overlong();  // a line that never ends
  return !refused_;
}

bool LineSplitter::deliver(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.size() > max_line_) {
    refuse_overlong();
  } else if (!handler_(line)) {
    refused_ = true;
    buffer_.clear();
  }
  return !refused_;
}

void LineSplitter::refuse_overlong() {
  refused_ = true;
  buffer_.clear();
  problem_ = "a stdout line longer than " + std::to_string(max_line_) + " bytes";
}

void OutputTail::append(std::string_view chunk) {
  buffer_.append(chunk);
  if (buffer_.size() > 2 * limit_) buffer_.erase(0, buffer_.size() - limit_);
}

std::string OutputTail::text() const {
  return buffer_.size() > limit_ ? buffer_.substr(buffer_.size() - limit_) : buffer_;
}

}  // namespace kiln
