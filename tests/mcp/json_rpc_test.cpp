#include "kiln/mcp/json_rpc.h"

#include <gtest/gtest.h>

namespace kiln::mcp {
namespace {

// The rejection of `value`; fails the test when it was accepted.
RejectedMessage rejected(const json& value) {
  auto parsed = parse_message(value);
  if (std::holds_alternative<Message>(parsed)) {
    ADD_FAILURE() << "accepted " << value.dump();
    return RejectedMessage{};
  }
  return std::get<RejectedMessage>(parsed);
}

// The message parsed from `value`; fails the test when it was rejected.
Message accepted(const json& value) {
  auto parsed = parse_message(value);
  if (auto* rejection = std::get_if<RejectedMessage>(&parsed)) {
    ADD_FAILURE() << "rejected " << value.dump() << ": " << rejection->error.message;
    return Message{};
  }
  return std::get<Message>(parsed);
}

TEST(ParseJsonText, MalformedJsonIsParseErrorWithNullId) {
  auto parsed = parse_json_text("{\"jsonrpc\": \"2.0\", \"id\": 1, ");
  ASSERT_TRUE(std::holds_alternative<RejectedMessage>(parsed));
  const auto& rejection = std::get<RejectedMessage>(parsed);
  EXPECT_EQ(rejection.error.code, error_code::kParseError);
  EXPECT_EQ(rejection.error.code, -32700);
  EXPECT_TRUE(rejection.id.is_null());
  EXPECT_NE(rejection.error.message.find("not valid JSON"), std::string::npos);
}

// A session copies what it parsed, one stack frame per level: 200,000 levels crashed kiln mcp.
TEST(ParseJsonText, NestingDeeperThanTheLimitIsParseError) {
  const std::string deep = R"({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"a": )" +
                           std::string(200000, '[') + std::string(200000, ']') + "}}";
  auto parsed = parse_json_text(deep);
  ASSERT_TRUE(std::holds_alternative<RejectedMessage>(parsed));
  const auto& rejection = std::get<RejectedMessage>(parsed);
  EXPECT_EQ(rejection.error.code, error_code::kParseError);
  EXPECT_TRUE(rejection.id.is_null());
  EXPECT_NE(rejection.error.message.find("nests arrays and objects deeper than 128 levels"),
            std::string::npos);
}

TEST(ParseJsonText, EmptyTextIsParseError) {
  auto parsed = parse_json_text("");
  ASSERT_TRUE(std::holds_alternative<RejectedMessage>(parsed));
  EXPECT_EQ(std::get<RejectedMessage>(parsed).error.code, error_code::kParseError);
}

TEST(ParseJsonText, ArrayIsReturnedForTheCallerToJudge) {
  auto parsed = parse_json_text(R"([{"jsonrpc":"2.0","method":"ping","id":1}])");
  ASSERT_TRUE(std::holds_alternative<json>(parsed));
  EXPECT_TRUE(std::get<json>(parsed).is_array());
}

TEST(ParseMessage, NonObjectIsInvalidRequest) {
  for (const json& value : {json(42), json("ping"), json::array(), json(nullptr)}) {
    RejectedMessage rejection = rejected(value);
    EXPECT_EQ(rejection.error.code, error_code::kInvalidRequest) << value.dump();
    EXPECT_TRUE(rejection.id.is_null()) << value.dump();
    EXPECT_NE(rejection.error.message.find("JSON object"), std::string::npos);
  }
}

TEST(ParseMessage, WrongJsonrpcVersionIsInvalidRequestKeepingTheId) {
  RejectedMessage rejection = rejected(json{{"jsonrpc", "1.0"}, {"id", 7}, {"method", "ping"}});
  EXPECT_EQ(rejection.error.code, error_code::kInvalidRequest);
  EXPECT_EQ(rejection.id, json(7));
  EXPECT_NE(rejection.error.message.find("\"jsonrpc\" must be \"2.0\""), std::string::npos);
}

TEST(ParseMessage, MissingOrNumericJsonrpcIsInvalidRequest) {
  EXPECT_EQ(rejected(json{{"id", 1}, {"method", "ping"}}).error.code, error_code::kInvalidRequest);
  EXPECT_EQ(rejected(json{{"jsonrpc", 2.0}, {"id", 1}, {"method", "ping"}}).error.code,
            error_code::kInvalidRequest);
}

TEST(ParseMessage, NullIdIsInvalidRequest) {
  RejectedMessage rejection =
      rejected(json{{"jsonrpc", "2.0"}, {"id", nullptr}, {"method", "ping"}});
  EXPECT_EQ(rejection.error.code, error_code::kInvalidRequest);
  EXPECT_TRUE(rejection.id.is_null());
  EXPECT_NE(rejection.error.message.find("\"id\""), std::string::npos);
}

TEST(ParseMessage, FloatIdIsInvalidRequest) {
  RejectedMessage rejection = rejected(json{{"jsonrpc", "2.0"}, {"id", 1.5}, {"method", "ping"}});
  EXPECT_EQ(rejection.error.code, error_code::kInvalidRequest);
  EXPECT_TRUE(rejection.id.is_null());
}

TEST(ParseMessage, ObjectArrayAndBooleanIdsAreInvalidRequests) {
  for (const json& id : {json{{"a", 1}}, json::array({1}), json(true)}) {
    RejectedMessage rejection = rejected(json{{"jsonrpc", "2.0"}, {"id", id}, {"method", "ping"}});
    EXPECT_EQ(rejection.error.code, error_code::kInvalidRequest) << id.dump();
    EXPECT_TRUE(rejection.id.is_null()) << id.dump();
  }
}

TEST(ParseMessage, MethodThatIsNotAStringIsInvalidRequest) {
  RejectedMessage rejection = rejected(json{{"jsonrpc", "2.0"}, {"id", "a"}, {"method", 5}});
  EXPECT_EQ(rejection.error.code, error_code::kInvalidRequest);
  EXPECT_EQ(rejection.id, json("a"));
  EXPECT_NE(rejection.error.message.find("\"method\" must be a string"), std::string::npos);
}

TEST(ParseMessage, ParamsThatAreNeitherObjectNorArrayAreInvalidRequest) {
  for (const json& params : {json("x"), json(3), json(true), json(nullptr)}) {
    RejectedMessage rejection =
        rejected(json{{"jsonrpc", "2.0"}, {"id", 2}, {"method", "ping"}, {"params", params}});
    EXPECT_EQ(rejection.error.code, error_code::kInvalidRequest) << params.dump();
    EXPECT_EQ(rejection.id, json(2));
    EXPECT_NE(rejection.error.message.find("\"params\""), std::string::npos);
  }
}

TEST(ParseMessage, ObjectAndArrayParamsAreAccepted) {
  Message object =
      accepted(json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "m"}, {"params", {{"a", 1}}}});
  EXPECT_EQ(object.params, json({{"a", 1}}));
  Message array =
      accepted(json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "m"}, {"params", {1, 2}}});
  EXPECT_EQ(array.params, json({1, 2}));
}

TEST(ParseMessage, AbsentParamsAreNull) {
  Message message = accepted(json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "ping"}});
  EXPECT_TRUE(message.params.is_null());
}

TEST(ParseMessage, ResponseWithBothResultAndErrorIsInvalidRequest) {
  RejectedMessage rejection = rejected(json{{"jsonrpc", "2.0"},
                                            {"id", 3},
                                            {"result", json::object()},
                                            {"error", {{"code", 1}, {"message", "x"}}}});
  EXPECT_EQ(rejection.error.code, error_code::kInvalidRequest);
  EXPECT_EQ(rejection.id, json(3));
  EXPECT_NE(rejection.error.message.find("exactly one"), std::string::npos);
}

TEST(ParseMessage, MessageWithNeitherMethodNorResultNorErrorIsInvalidRequest) {
  RejectedMessage rejection = rejected(json{{"jsonrpc", "2.0"}, {"id", 3}});
  EXPECT_EQ(rejection.error.code, error_code::kInvalidRequest);
  EXPECT_EQ(rejection.id, json(3));
}

TEST(ParseMessage, ResponseWithoutIdIsInvalidRequest) {
  RejectedMessage rejection = rejected(json{{"jsonrpc", "2.0"}, {"result", json::object()}});
  EXPECT_EQ(rejection.error.code, error_code::kInvalidRequest);
  EXPECT_NE(rejection.error.message.find("\"id\""), std::string::npos);
}

TEST(ParseMessage, MalformedErrorObjectIsInvalidRequest) {
  const json bad_errors[] = {
      json("boom"),
      json{{"message", "no code"}},
      json{{"code", "1"}, {"message", "string code"}},
      json{{"code", 1.5}, {"message", "float code"}},
      json{{"code", 1}},
      json{{"code", 1}, {"message", 2}},
  };
  for (const json& error : bad_errors) {
    RejectedMessage rejection = rejected(json{{"jsonrpc", "2.0"}, {"id", 4}, {"error", error}});
    EXPECT_EQ(rejection.error.code, error_code::kInvalidRequest) << error.dump();
    EXPECT_EQ(rejection.id, json(4)) << error.dump();
  }
}

TEST(ParseMessage, ErrorResponseKeepsCodeMessageAndData) {
  Message message =
      accepted(json{{"jsonrpc", "2.0"},
                    {"id", "r1"},
                    {"error", {{"code", -32001}, {"message", "nope"}, {"data", {{"k", 1}}}}}});
  EXPECT_TRUE(message.is_response());
  ASSERT_TRUE(message.error.has_value());
  EXPECT_EQ(message.error->code, -32001);
  EXPECT_EQ(message.error->message, "nope");
  EXPECT_EQ(message.error->data, json({{"k", 1}}));
}

TEST(ParseMessage, ResultResponseIsAResponseWithoutError) {
  Message message = accepted(json{{"jsonrpc", "2.0"}, {"id", 9}, {"result", {{"ok", true}}}});
  EXPECT_TRUE(message.is_response());
  EXPECT_FALSE(message.error.has_value());
  EXPECT_EQ(message.result, json({{"ok", true}}));
  EXPECT_EQ(message.id, json(9));
}

TEST(ParseMessage, MethodWithIdIsARequest) {
  Message message = accepted(json{{"jsonrpc", "2.0"}, {"id", "abc"}, {"method", "tools/list"}});
  EXPECT_TRUE(message.is_request());
  EXPECT_FALSE(message.is_notification());
  EXPECT_FALSE(message.is_response());
  EXPECT_EQ(message.method, "tools/list");
  EXPECT_EQ(message.id, json("abc"));
}

TEST(ParseMessage, MethodWithoutIdIsANotification) {
  Message message = accepted(json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
  EXPECT_TRUE(message.is_notification());
  EXPECT_FALSE(message.is_request());
  EXPECT_TRUE(message.id.is_null());
}

TEST(ParseMessage, IntegerAndStringIdsAreKeptAsSent) {
  EXPECT_EQ(accepted(json{{"jsonrpc", "2.0"}, {"id", 0}, {"method", "m"}}).id, json(0));
  EXPECT_EQ(accepted(json{{"jsonrpc", "2.0"}, {"id", -5}, {"method", "m"}}).id, json(-5));
  EXPECT_EQ(accepted(json{{"jsonrpc", "2.0"}, {"id", ""}, {"method", "m"}}).id, json(""));
}

TEST(IdKey, StringAndNumberIdsAreDistinct) {
  EXPECT_NE(id_key(json(1)), id_key(json("1")));
  EXPECT_EQ(id_key(json(1)), id_key(json(1)));
  EXPECT_EQ(id_key(json("x")), id_key(json("x")));
  EXPECT_NE(id_key(json(1)), id_key(json(2)));
}

TEST(Builders, MakeResultHasVersionIdAndResult) {
  json response = make_result(json("q"), json{{"a", 1}});
  EXPECT_EQ(response, (json{{"jsonrpc", "2.0"}, {"id", "q"}, {"result", {{"a", 1}}}}));
}

TEST(Builders, MakeErrorResponseOmitsNullData) {
  json response = make_error_response(json(5), RpcError{-32601, "method not found: x", nullptr});
  EXPECT_EQ(response, (json{{"jsonrpc", "2.0"},
                            {"id", 5},
                            {"error", {{"code", -32601}, {"message", "method not found: x"}}}}));
}

TEST(Builders, MakeErrorResponseCarriesDataAndNullId) {
  json response =
      make_error_response(nullptr, RpcError{-32002, "unknown", json{{"uri", "kiln://x"}}});
  EXPECT_TRUE(response["id"].is_null());
  EXPECT_EQ(response["error"]["data"], json({{"uri", "kiln://x"}}));
  EXPECT_EQ(response["jsonrpc"], "2.0");
}

TEST(Builders, MakeNotificationHasNoIdAndOmitsNullParams) {
  json bare = make_notification("notifications/initialized", nullptr);
  EXPECT_EQ(bare, (json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}));
  json with_params = make_notification("notifications/progress", json{{"progress", 1}});
  EXPECT_FALSE(with_params.contains("id"));
  EXPECT_EQ(with_params["params"], json({{"progress", 1}}));
}

TEST(Builders, BuiltMessagesParseBack) {
  EXPECT_TRUE(accepted(make_result(json(1), json::object())).is_response());
  EXPECT_TRUE(accepted(make_error_response(json(1), RpcError{-1, "x", nullptr})).is_response());
  EXPECT_TRUE(accepted(make_notification("n", json::object())).is_notification());
}

}  // namespace
}  // namespace kiln::mcp
