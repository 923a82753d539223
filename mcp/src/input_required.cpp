#include "kiln/mcp/input_required.h"

#include <random>

#include "kiln/base/sha256.h"

namespace kiln::mcp {
namespace {

constexpr char kSeparator = '.';

std::string random_key() {
  std::random_device device;
  std::string key;
  for (int i = 0; i < 32; ++i) key.push_back(static_cast<char>(device() & 0xFF));
  return key;
}

// Request state travels as "<tag>.<state>"; base64 is not needed because the state
// is JSON text the handler chose and the whole value is a JSON string.

}  // namespace

RequestStateSeal::RequestStateSeal() : key_(random_key()) {}
RequestStateSeal::RequestStateSeal(std::string key) : key_(std::move(key)) {}

std::string RequestStateSeal::tag(const std::string& state) const {
  std::string inner_key = key_;
  std::string outer_key = key_;
  for (auto& c : inner_key) c = static_cast<char>(c ^ 0x36);
  for (auto& c : outer_key) c = static_cast<char>(c ^ 0x5c);
  return sha256_hex(outer_key + sha256_hex(inner_key + state));
}

std::string RequestStateSeal::seal(const std::string& state) const {
  return tag(state) + kSeparator + state;
}

std::optional<std::string> RequestStateSeal::open(const std::string& sealed) const {
  auto dot = sealed.find(kSeparator);
  if (dot == std::string::npos) return std::nullopt;
  std::string state = sealed.substr(dot + 1);
  std::string expected = tag(state);
  std::string given = sealed.substr(0, dot);
  if (given.size() != expected.size()) return std::nullopt;
  unsigned char difference = 0;  // compare in constant time
  for (std::size_t i = 0; i < given.size(); ++i)
    difference |= static_cast<unsigned char>(given[i] ^ expected[i]);
  if (difference != 0) return std::nullopt;
  return state;
}

nlohmann::json input_required_result(const InputRequired& input, const RequestStateSeal& seal) {
  nlohmann::json result{{"resultType", "input_required"}, {"inputRequests", input.input_requests}};
  if (!input.request_state.empty()) result["requestState"] = seal.seal(input.request_state);
  return result;
}

}  // namespace kiln::mcp
