// candidate_host_protocol.h: the verifier reads what its candidate host says strictly, since the
// candidate's code runs in the host and may have written any of it.
#include "kiln/worker/candidate_host_protocol.h"

#include <gtest/gtest.h>

#include <string>

namespace kiln::worker::host {
namespace {

using nlohmann::json;

CallReply sample_reply() {
  CallReply r;
  r.seq = 12;
  r.status = 0;
  r.event_us = 20.5;
  r.span_us = 18.25;
  r.kernels = 2;
  r.hidden = {"kernel `k` on stream 9 ran after the candidate's call had returned"};
  r.notes = {"a note"};
  r.device_state_changes = {"the persisting-L2 carve-out"};
  r.activity = true;
  r.dropped = 3;
  return r;
}

TEST(CandidateHostProtocol, ACallReplyRoundTrips) {
  auto back = CallReply::from_json(sample_reply().to_json());
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->seq, 12);
  EXPECT_DOUBLE_EQ(back->span_us, 18.25);
  EXPECT_EQ(back->kernels, 2);
  ASSERT_EQ(back->hidden.size(), 1u);
  EXPECT_EQ(back->device_state_changes[0], "the persisting-L2 carve-out");
  EXPECT_TRUE(back->activity);
  EXPECT_EQ(back->dropped, 3u);
}

TEST(CandidateHostProtocol, AReplyOfTheWrongKindOrTypeIsRefusedNamingTheField) {
  json wrong_op = sample_reply().to_json();
  wrong_op["op"] = "loaded";
  auto a = CallReply::from_json(wrong_op);
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().message.find("expected a \"called\""), std::string::npos);

  json negative = sample_reply().to_json();
  negative["span_us"] = -1.0;
  auto b = CallReply::from_json(negative);
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("span_us"), std::string::npos);

  json text_status = sample_reply().to_json();
  text_status["status"] = "0";
  EXPECT_FALSE(CallReply::from_json(text_status));

  json missing = sample_reply().to_json();
  missing.erase("fatal");
  auto c = CallReply::from_json(missing);
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("fatal"), std::string::npos);

  EXPECT_FALSE(CallReply::from_json(json::array({1, 2})));
}

TEST(CandidateHostProtocol, AFloodOfTextIsCutToBounds) {
  json flood = sample_reply().to_json();
  flood["hidden"] = json::array();
  for (int i = 0; i < 1000; ++i) flood["hidden"].push_back(std::string(5000, 'x'));
  auto back = CallReply::from_json(flood);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->hidden.size(), 64u);
  EXPECT_LT(back->hidden[0].size(), 2100u);
}

TEST(CandidateHostProtocol, TheLoadRequestCarriesNoSeedAndRoundTrips) {
  LoadRequest r;
  r.task_dir = "/tasks/fp16_gemm";
  r.library = "/builds/candidate-ab/kernel.so";
  r.cuda_root = "/usr/local/cuda";
  r.gpu = 1;
  r.hang_timeout_seconds = 30;
  r.readable = {"/builds/candidate-ab"};
  const json message = r.to_json();
  EXPECT_FALSE(message.contains("seed"));
  auto back = LoadRequest::from_json(message);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->library, r.library);
  EXPECT_EQ(back->gpu, 1);
  EXPECT_EQ(back->readable.size(), 1u);
}

TEST(CandidateHostProtocol, ACallRequestRoundTrips) {
  CallRequest r;
  r.seq = 4;
  r.workload = "m16_n4096_k4096";
  r.buffers = {1, 2, -1, 3};
  r.timed = true;
  auto back = CallRequest::from_json(r.to_json());
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->buffers, r.buffers);
  EXPECT_TRUE(back->timed);
  EXPECT_FALSE(back->probe);
}

TEST(CandidateHostProtocol, AProbeCallNamesNoWorkloadAndNoBuffers) {
  CallRequest r;
  r.seq = 1;
  r.timed = true;
  r.probe = true;
  auto back = CallRequest::from_json(r.to_json());
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_TRUE(back->probe);
  EXPECT_TRUE(back->workload.empty());
  json with_buffers = r.to_json();
  with_buffers["buffers"] = {1};
  EXPECT_FALSE(CallRequest::from_json(with_buffers));
  json no_workload = r.to_json();
  no_workload["probe"] = false;
  EXPECT_FALSE(CallRequest::from_json(no_workload));  // a real call names its workload
}

TEST(CandidateHostProtocol, ThePreparedAndLoadedAnswersAreToldApart) {
  LoadReply r;
  r.ok = true;
  const json prepared = r.to_json(op::kPrepared);
  EXPECT_TRUE(LoadReply::from_json(prepared, op::kPrepared));
  EXPECT_FALSE(LoadReply::from_json(prepared));  // not the "loaded" answer
  EXPECT_TRUE(LoadReply::from_json(r.to_json()));
}

TEST(CandidateHostProtocol, HexRoundTripsAndRefusesBadText) {
  const unsigned char bytes[4] = {0x00, 0x7f, 0xa0, 0xff};
  const std::string hex = to_hex(bytes, sizeof bytes);
  EXPECT_EQ(hex, "007fa0ff");
  unsigned char back[4] = {};
  ASSERT_TRUE(from_hex(hex, back, sizeof back));
  EXPECT_EQ(back[3], 0xff);
  EXPECT_FALSE(from_hex("007fa0f", back, sizeof back));
  EXPECT_FALSE(from_hex("007fa0fg", back, sizeof back));
}

TEST(CandidateHostProtocol, TheSharedAndAfterCallsAnswersAreReadStrictly) {
  auto fine = share_error({{"op", "shared"}, {"error", ""}});
  ASSERT_TRUE(fine);
  EXPECT_TRUE(fine->empty());
  auto failed = share_error({{"op", "shared"}, {"error", "cudaIpcOpenMemHandle failed"}});
  ASSERT_TRUE(failed);
  EXPECT_EQ(*failed, "cudaIpcOpenMemHandle failed");
  EXPECT_FALSE(share_error({{"op", "shared"}, {"error", 3}}));

  auto hidden = after_calls_findings({{"op", "after_calls"}, {"hidden", {"kernel k late"}}});
  ASSERT_TRUE(hidden);
  EXPECT_EQ(*hidden, std::vector<std::string>{"kernel k late"});
  EXPECT_FALSE(after_calls_findings({{"op", "after_calls"}, {"hidden", "not a list"}}));
  EXPECT_FALSE(after_calls_findings({{"op", "shared"}}));
}

}  // namespace
}  // namespace kiln::worker::host
