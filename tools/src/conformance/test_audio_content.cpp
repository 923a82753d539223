// test_audio_content: an audio content block (scenario tools-call-audio).
#include "fixtures.h"

namespace kiln::tools::conformance {

mcp::Tool make_test_audio_content_tool() {
  return fixture_tool("test_audio_content", "Audio content (conformance)",
                      "returns a short silent WAV audio content block.", [](mcp::CallContext&) {
                        auto result = text_result("1 ms of silence, WAV");
                        result.extra_content.push_back(
                            {{"type", "audio"}, {"data", kWavBase64}, {"mimeType", "audio/wav"}});
                        return result;
                      });
}

}  // namespace kiln::tools::conformance
