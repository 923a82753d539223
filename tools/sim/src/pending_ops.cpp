// Areas not implemented yet: every form decodes to the unsupported handler.
#include "decoder.h"

namespace kiln::sim {

bool decode_half(Decoder&, const ptx::Instruction&, Inst&) { return false; }
bool decode_convert(Decoder&, const ptx::Instruction&, Inst&) { return false; }
bool decode_atomic(Decoder&, const ptx::Instruction&, Inst&) { return false; }
bool decode_warp(Decoder&, const ptx::Instruction&, Inst&) { return false; }
bool decode_matrix(Decoder&, const ptx::Instruction&, Inst&) { return false; }
bool decode_async(Decoder&, const ptx::Instruction&, Inst&) { return false; }

}  // namespace kiln::sim
