#include "kiln/replay/id_map.h"

#include "kiln/base/json_text.h"

namespace kiln::replay {

using json = nlohmann::json;

std::string IdMap::key(const json& id) { return json_text(id); }

json IdMap::client_request(const json& recorded, size_t ticket) {
  json live = recorded;
  while (in_flight_.count(key(live))) live = "replay-" + std::to_string(++fresh_);
  in_flight_[key(live)] = Answered{recorded, ticket};
  recorded_[key(recorded)] = live;
  return live;
}

std::optional<IdMap::Answered> IdMap::client_answer(const json& live) {
  auto it = in_flight_.find(key(live));
  if (it == in_flight_.end()) return std::nullopt;
  Answered answered = it->second;
  in_flight_.erase(it);
  auto back = recorded_.find(key(answered.recorded));
  if (back != recorded_.end() && back->second == live) recorded_.erase(back);
  return answered;
}

std::optional<json> IdMap::live_client_id(const json& recorded) const {
  auto it = recorded_.find(key(recorded));
  if (it == recorded_.end()) return std::nullopt;
  return it->second;
}

void IdMap::server_request(const json& recorded, const json& live) {
  server_ids_[key(recorded)] = live;
}

std::optional<json> IdMap::server_answer(const json& recorded) {
  auto it = server_ids_.find(key(recorded));
  if (it == server_ids_.end()) return std::nullopt;
  json live = it->second;
  server_ids_.erase(it);
  return live;
}

}  // namespace kiln::replay
