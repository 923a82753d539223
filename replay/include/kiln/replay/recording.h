// A recorded session read back: the JSONL that `kiln mcp --record` writes (mcp/recorder.h), one
// line per message, {"ts", "dir": "in"|"out", "session"?, "message"}, text that was not JSON as
// {"raw": text}. Batches are split into their messages (each keeps its line and a batch
// number), and every request is paired with the recorded answer to it, so the replay and the
// trace read one structure instead of parsing twice.
//
// Reading for a replay is strict: a line cut short, a line that is not a record, an answer
// recorded before its request, or a session on a protocol revision this kiln does not speak is
// an error naming the line. Reading for a trace is lenient: the same problems become warnings
// and the rest of the session is still read (a crashed session is what one wants to read).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/base/result.h"

namespace kiln::replay {

// What a recorded message is, from its shape (JSON-RPC 2.0).
enum class MessageKind {
  kRequest,       // has a method and an id
  kNotification,  // has a method, no id
  kResponse,      // no method, an id and a result or an error
  kInvalid,       // anything else that was JSON (the server answers it with an error)
  kRaw,           // text that was not JSON, recorded as {"raw": text}
};

struct Record {
  size_t line = 0;        // 1-based line of the file
  std::string ts;         // as recorded ("" when missing)
  int64_t ts_ms = 0;      // Unix milliseconds; 0 when ts is missing or not the recorder's form
  bool incoming = false;  // "in": from the client to the server
  std::string session;    // Mcp-Session-Id of an HTTP session; "" for stdio and stateless HTTP
  MessageKind kind = MessageKind::kInvalid;
  nlohmann::json message;  // one JSON-RPC message (a batch's element); null for raw text
  std::string raw;         // the text, for kRaw
  size_t batch = 0;        // records from one batch share a number (1, 2, ...); 0: not a batch
  // For a request (either direction), or a message the answer to which has no usable id (raw
  // text, an invalid message): the index of the record that answers it, when recorded.
  std::optional<size_t> answer;
  // For a response: the index of the record it answers, when known.
  std::optional<size_t> answers;
};

struct Recording {
  std::string name;  // the file, for messages
  std::vector<Record> records;
  std::vector<std::string> warnings;  // lenient reading: "FILE:LINE: ..." for what was skipped
  // The recorded sessions in order of their first record (stdio and stateless HTTP: "").
  std::vector<std::string> sessions() const;
};

enum class ReadMode {
  kStrict,   // for a replay: any problem is an error
  kLenient,  // for a trace: problems are warnings
};

Result<Recording> read_recording(const std::filesystem::path& path, ReadMode mode);
// `name` names the text in messages (a file name).
Result<Recording> parse_recording(std::string_view text, const std::string& name, ReadMode mode);

MessageKind message_kind(const nlohmann::json& message);

// "tools/call compile", "initialize", "raw text", "a response": what a record is, for a person.
std::string describe(const Record& record);

// An answer that failed: a JSON-RPC error, or a tool result with isError.
bool is_error_answer(const nlohmann::json& response);

}  // namespace kiln::replay
