// Request ids between a recording and its replay. A client request keeps its recorded id (so
// what is replayed is what was sent, string ids and all) unless that id is still in flight on
// the live connection, when it gets a fresh "replay-N"; an answer's id is turned back before
// the comparison, and a notifications/cancelled names the live id. A request the server sends
// gets whatever id the live server chose: the recorded client's answer to it is sent with that
// id.
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace kiln::replay {

class IdMap {
 public:
  // The live id for a client request recorded with `recorded`; `ticket` comes back with its
  // answer (the replay passes the request's record).
  nlohmann::json client_request(const nlohmann::json& recorded, size_t ticket);
  struct Answered {
    nlohmann::json recorded;  // the id the recording has
    size_t ticket;
  };
  // What a live answer with id `live` answers, forgotten from then on (an id may be used again
  // once answered); nullopt when no request in flight has that id.
  std::optional<Answered> client_answer(const nlohmann::json& live);
  // The live id of the recorded client request `recorded` while it is in flight.
  std::optional<nlohmann::json> live_client_id(const nlohmann::json& recorded) const;

  // The server asked: its request recorded as `recorded` is the live request `live`.
  void server_request(const nlohmann::json& recorded, const nlohmann::json& live);
  // The live id for the client's recorded answer to the server's request `recorded`.
  std::optional<nlohmann::json> server_answer(const nlohmann::json& recorded);

 private:
  static std::string key(const nlohmann::json& id);

  std::map<std::string, Answered> in_flight_;         // live id -> the request
  std::map<std::string, nlohmann::json> recorded_;    // recorded id -> live id (in flight)
  std::map<std::string, nlohmann::json> server_ids_;  // recorded id -> live id
  size_t fresh_ = 0;
};

}  // namespace kiln::replay
