// The states of a runner job on the server (runner/protocol/PROTOCOL.md).
// JobKind and its names are the protocol's (kiln/runner/protocol/job_kind.h), shared with the
// worker; the states are the server's own.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kiln/runner/protocol/job_kind.h"

namespace kiln::runner {

using protocol::JobKind;
using protocol::kind_name;
using protocol::parse_kind;

// A job is queued, then running, then finished (with a RESULT, whatever its status) or
// cancelled (by DELETE, or because the server stopped).
enum class JobState { kQueued, kRunning, kFinished, kCancelled };

std::string_view state_name(JobState state);
bool is_final(JobState state);

}  // namespace kiln::runner
