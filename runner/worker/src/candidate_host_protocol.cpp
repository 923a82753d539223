#include "kiln/worker/candidate_host_protocol.h"

#include "kiln/base/json_field.h"

namespace kiln::worker::host {

namespace {

using nlohmann::json;

constexpr std::string_view kGuide = "runner/worker/README.md";
// Bounds on what the host may send, so a hostile one cannot make the verifier keep
// megabytes of its text: a list's entries and each entry's length.
constexpr size_t kMaxListEntries = 64;
constexpr size_t kMaxTextBytes = 2000;

bool boolean(const JsonField& field) {
  if (!field.json().is_boolean()) field.fail("must be true or false");
  return field.json().get<bool>();
}

std::string bounded(std::string text) {
  if (text.size() > kMaxTextBytes) text = text.substr(0, kMaxTextBytes) + "...";
  return text;
}

std::string text_member(const JsonField& message, std::string_view key) {
  auto field = message.find(key);
  return field ? bounded(field->string()) : std::string();
}

std::vector<std::string> list_member(const JsonField& message, std::string_view key) {
  auto field = message.find(key);
  if (!field) return {};
  std::vector<std::string> out;
  for (const auto& item : field->elements()) {
    if (out.size() == kMaxListEntries) break;
    out.push_back(bounded(item.string()));
  }
  return out;
}

// The message's op must be `expected`; a reading error becomes the Result's error.
template <typename T, typename Read>
Result<T> read(const json& message, const char* expected, Read&& body) {
  try {
    const JsonField root(message, "", kGuide);
    root.object();
    const std::string got = root.at("op").string();
    if (got != expected)
      return make_error("expected a \"" + std::string(expected) + "\" message, got \"" +
                        bounded(got) + "\"");
    return body(root);
  } catch (const JsonFieldError& e) {
    return make_error("a malformed \"" + std::string(expected) + "\" message: " + e.text());
  }
}

}  // namespace

json LoadRequest::to_json() const {
  json paths = json::array();
  for (const auto& p : readable) paths.push_back(p.string());
  return {{"op", op::kPrepare},
          {"task_dir", task_dir.string()},
          {"library", library.string()},
          {"cuda_root", cuda_root.string()},
          {"gpu", gpu},
          {"hang_timeout_seconds", hang_timeout_seconds},
          {"readable", paths}};
}

Result<LoadRequest> LoadRequest::from_json(const json& message) {
  return read<LoadRequest>(message, op::kPrepare, [](const JsonField& m) {
    LoadRequest r;
    r.task_dir = m.at("task_dir").nonempty_string();
    r.library = m.at("library").nonempty_string();
    r.cuda_root = m.at("cuda_root").string();
    r.gpu = static_cast<int>(m.at("gpu").integer_between(0, 1023));
    r.hang_timeout_seconds = m.at("hang_timeout_seconds").number_above(0, 3600);
    for (const auto& p : m.at("readable").string_list()) r.readable.emplace_back(p);
    return Result<LoadRequest>(std::move(r));
  });
}

json LoadReply::to_json(const char* op_name) const {
  return {{"op", op_name},
          {"ok", ok},
          {"error", error},
          {"harness_error", harness_error},
          {"load_changes", load_changes},
          {"activity", activity},
          {"activity_note", activity_note},
          {"confinement", confinement.is_null() ? json::object() : confinement},
          {"libraries", libraries}};
}

Result<LoadReply> LoadReply::from_json(const json& message, const char* op_name) {
  return read<LoadReply>(message, op_name, [](const JsonField& m) {
    LoadReply r;
    r.ok = boolean(m.at("ok"));
    r.error = text_member(m, "error");
    r.harness_error = text_member(m, "harness_error");
    r.load_changes = list_member(m, "load_changes");
    r.activity = boolean(m.at("activity"));
    r.activity_note = text_member(m, "activity_note");
    r.libraries = list_member(m, "libraries");
    if (auto c = m.find("confinement");
        c && c->json().is_object() && c->json().dump().size() < 4096)
      r.confinement = c->json();
    return Result<LoadReply>(std::move(r));
  });
}

json ShareRequest::to_json() const {
  json list = json::array();
  for (const auto& b : buffers)
    list.push_back({{"id", b.id}, {"handle", b.handle}, {"offset", b.offset}, {"bytes", b.bytes}});
  return {{"op", op::kShare}, {"buffers", list}};
}

Result<ShareRequest> ShareRequest::from_json(const json& message) {
  return read<ShareRequest>(message, op::kShare, [](const JsonField& m) {
    ShareRequest r;
    for (const auto& b : m.at("buffers").elements()) {
      SharedBuffer buffer;
      buffer.id = b.at("id").integer_between(1, INT64_MAX);
      buffer.handle = b.at("handle").string();
      buffer.offset = b.at("offset").integer_between(0, INT64_MAX);
      buffer.bytes = b.at("bytes").integer_between(0, INT64_MAX);
      r.buffers.push_back(std::move(buffer));
    }
    return Result<ShareRequest>(std::move(r));
  });
}

json CallRequest::to_json() const {
  return {{"op", op::kCall},    {"seq", seq},     {"nonce", nonce}, {"workload", workload},
          {"buffers", buffers}, {"timed", timed}, {"probe", probe}};
}

Result<CallRequest> CallRequest::from_json(const json& message) {
  return read<CallRequest>(message, op::kCall, [](const JsonField& m) {
    CallRequest r;
    r.seq = m.at("seq").integer_between(0, INT64_MAX);
    r.nonce = m.at("nonce").string();
    if (auto probe = m.find("probe")) r.probe = boolean(*probe);
    r.workload = r.probe ? m.at("workload").string() : m.at("workload").nonempty_string();
    for (const auto& b : m.at("buffers").elements())
      r.buffers.push_back(b.integer_between(-1, INT64_MAX));
    if (r.probe && !r.buffers.empty()) m.at("buffers").fail("a probe call names no buffers");
    r.timed = boolean(m.at("timed"));
    return Result<CallRequest>(std::move(r));
  });
}

json CallReply::to_json() const {
  return {{"op", op::kCalled},
          {"seq", seq},
          {"nonce", nonce},
          {"status", status},
          {"cuda_error", cuda_error},
          {"fatal", fatal},
          {"hung", hung},
          {"event_us", event_us},
          {"span_us", span_us},
          {"tail_us", tail_us},
          {"kernels", kernels},
          {"hidden", hidden},
          {"notes", notes},
          {"host_syncs", host_syncs},
          {"waited", waited},
          {"device_state_changes", device_state_changes},
          {"activity", activity},
          {"activity_problem", activity_problem},
          {"dropped", dropped},
          {"harness_error", harness_error},
          {"libraries", libraries},
          {"memory", memory},
          {"memory_leak", memory_leak},
          {"outstanding_bytes", outstanding_bytes}};
}

Result<CallReply> CallReply::from_json(const json& message) {
  return read<CallReply>(message, op::kCalled, [](const JsonField& m) {
    CallReply r;
    r.seq = m.at("seq").integer_between(0, INT64_MAX);
    r.nonce = bounded(m.at("nonce").string());
    r.status = static_cast<int>(m.at("status").integer_between(INT32_MIN, INT32_MAX));
    r.cuda_error = text_member(m, "cuda_error");
    r.fatal = boolean(m.at("fatal"));
    r.hung = boolean(m.at("hung"));
    r.event_us = m.at("event_us").nonnegative_number();
    r.span_us = m.at("span_us").nonnegative_number();
    r.tail_us = m.at("tail_us").nonnegative_number();
    r.kernels = static_cast<int>(m.at("kernels").integer_between(0, INT32_MAX));
    r.hidden = list_member(m, "hidden");
    r.notes = list_member(m, "notes");
    r.host_syncs = list_member(m, "host_syncs");
    r.waited = boolean(m.at("waited"));
    r.device_state_changes = list_member(m, "device_state_changes");
    r.activity = boolean(m.at("activity"));
    r.activity_problem = text_member(m, "activity_problem");
    r.dropped = m.at("dropped").unsigned_integer();
    r.harness_error = text_member(m, "harness_error");
    r.libraries = list_member(m, "libraries");
    r.memory = boolean(m.at("memory"));
    r.memory_leak = text_member(m, "memory_leak");
    r.outstanding_bytes = m.at("outstanding_bytes").integer_between(INT64_MIN, INT64_MAX);
    return Result<CallReply>(std::move(r));
  });
}

Result<std::string> share_error(const json& message) {
  return read<std::string>(message, op::kShared, [](const JsonField& m) {
    return Result<std::string>(text_member(m, "error"));
  });
}

Result<std::vector<std::string>> after_calls_findings(const json& message) {
  return read<std::vector<std::string>>(message, op::kAfterCalls, [](const JsonField& m) {
    return Result<std::vector<std::string>>(list_member(m, "hidden"));
  });
}

std::string to_hex(const void* data, size_t bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const auto* p = static_cast<const unsigned char*>(data);
  std::string out;
  out.reserve(2 * bytes);
  for (size_t i = 0; i < bytes; ++i) {
    out += kDigits[p[i] >> 4];
    out += kDigits[p[i] & 15];
  }
  return out;
}

bool from_hex(const std::string& hex, void* data, size_t bytes) {
  if (hex.size() != 2 * bytes) return false;
  auto nibble = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  auto* p = static_cast<unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) {
    const int hi = nibble(hex[2 * i]);
    const int lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    p[i] = static_cast<unsigned char>(hi * 16 + lo);
  }
  return true;
}

}  // namespace kiln::worker::host
