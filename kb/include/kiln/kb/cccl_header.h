// PTX instruction forms from the CUDA toolkit's generated CCCL headers
// (cccl/cuda/__ptx/instructions/generated/*.h). Each wrapper there is preceded by a
// comment block:
//
//   /*
//   // mbarrier.try_wait.parity.shared::cta.b64  waitComplete, [addr], phaseParity;  // 7a.
//   PTX ISA 78, SM_90 template <typename = void>
//   __device__ static inline bool mbarrier_try_wait_parity(
//     uint64_t* addr,
//     const uint32_t& phaseParity);
//   */
//
// The syntax line may wrap, the "PTX ISA nn, SM_xx" requirement may sit after the
// syntax on the same line or on the next, and `// .name = { ... }` lines list the
// values of placeholder modifiers.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::kb {

struct InstructionForm {
  std::string opcode;      // first token of the syntax: mbarrier.try_wait.parity.shared::cta.b64
  std::string syntax;      // the PTX line, whitespace collapsed, ending in ';'
  std::string ptx_isa;     // "7.8"; empty when the header does not say
  int ptx_isa_number = 0;  // 78
  std::vector<std::string> sms;  // {"sm_90"}, {"sm_100a", "sm_101a"}; empty: any
  std::string min_sm;            // the lowest of sms; empty when sms is
  std::string modifiers;         // ".sem = { .acquire }; .scope = { .cta, .cluster }"
  std::string wrapper;           // cuda::ptx::mbarrier_try_wait_parity
  std::string
      signature;       // bool mbarrier_try_wait_parity(uint64_t* addr, const uint32_t& phaseParity)
  std::string header;  // mbarrier_try_wait_parity.h
  std::string notes;   // other comment lines of the block ("Marked volatile ...")
};

// Every instruction form documented in one header's text. Blocks that do not look
// like a wrapper's documentation are skipped, never an error.
std::vector<InstructionForm> parse_cccl_header(std::string_view text,
                                               const std::string& header_name);

// "7.8" for 78.
std::string ptx_isa_text(int number);

}  // namespace kiln::kb
