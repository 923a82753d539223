// The runner protocol in one include: what the server, the worker and the MCP tools agree on
// (runner/protocol/PROTOCOL.md). Header-only and free of JSON libraries: names, kinds, bounds.
#pragma once

#include "kiln/runner/protocol/gates.h"
#include "kiln/runner/protocol/job_fields.h"
#include "kiln/runner/protocol/job_kind.h"
#include "kiln/runner/protocol/job_limits.h"
#include "kiln/runner/protocol/sanitize_tools.h"
#include "kiln/runner/protocol/worker_events.h"
