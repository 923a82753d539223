#include "kiln/mcp/protocol_version.h"

#include <algorithm>
#include <array>

namespace kiln::mcp {
namespace {
constexpr std::array<std::string_view, 3> kVersions = {"2025-11-25", "2025-06-18", "2025-03-26"};
constexpr std::array<std::string_view, 1> kStatelessVersions = {"2026-07-28"};
}  // namespace

std::span<const std::string_view> supported_protocol_versions() { return kVersions; }

std::string_view newest_protocol_version() { return kVersions.front(); }

bool is_supported_protocol_version(std::string_view version) {
  return std::find(kVersions.begin(), kVersions.end(), version) != kVersions.end();
}

std::string negotiate_protocol_version(std::string_view client_version) {
  return std::string(is_supported_protocol_version(client_version) ? client_version
                                                                   : newest_protocol_version());
}

std::span<const std::string_view> stateless_protocol_versions() { return kStatelessVersions; }

bool is_stateless_protocol_version(std::string_view version) {
  return std::find(kStatelessVersions.begin(), kStatelessVersions.end(), version) !=
         kStatelessVersions.end();
}

bool protocol_allows_batches(std::string_view version) { return version == "2025-03-26"; }

}  // namespace kiln::mcp
