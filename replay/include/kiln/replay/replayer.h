// Replays a recording: each recorded session on a connection of its own, the client's messages
// re-sent in the recorded order, each one only once every answer recorded before it has come
// back (so a cancellation still overtakes its call, and nothing runs ahead of what the client
// had seen). Ids go through an IdMap; a request the server sends is answered with the client's
// recorded answer, or, when the recording has none, `ping` with {}, `roots/list` with no roots
// and anything else with -32601. Each answer is then compared with the recorded one (json_diff.h).
//
// Calls that need a GPU (needs_gpu) are not sent when no runner is configured: their verdict is
// "not replayed (no GPU)", neither a difference nor a pass. With one (ReplayOptions::gpu) they
// are sent and compared on their verdict only (Compare::kVerdictsOnly: what they measured
// differs by nature), and a later call naming a recorded job id (wait_job) names the job the
// replay started instead. Notifications from the server (progress, logs) depend on timing and
// are never compared.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kiln/replay/connection.h"
#include "kiln/replay/gpu_calls.h"
#include "kiln/replay/recording.h"
#include "kiln/replay/replay_report.h"
#include "kiln/replay/volatile_fields.h"

namespace kiln::replay {

struct ReplayOptions {
  IgnoreList ignore = IgnoreList::defaults();
  std::vector<std::string> only;  // tool names whose calls are replayed; empty: every tool
  bool gpu = false;  // a runner is configured (run_of_recording.h): GPU calls are replayed too
  std::chrono::seconds answer_timeout{300};
  // Text replaced in every string of the recording before it is replayed (what is sent and
  // what is compared): a path the recording has (FROM) and where that is here (TO), as a
  // golden session recorded on another machine needs.
  std::vector<std::pair<std::string, std::string>> map;
  std::function<void(const Verdict&)> on_verdict;  // each verdict, once its session ended
};

// One fresh connection per recorded session (a new child, or a new HTTP session).
using ConnectionFactory = std::function<Result<std::unique_ptr<Connection>>()>;

Result<ReplayReport> replay_recording(const Recording& recording, const ReplayOptions& options,
                                      const ConnectionFactory& connect);

}  // namespace kiln::replay
