// Areas not implemented yet: every form decodes to the unsupported handler.
#include "decoder.h"

namespace kiln::sim {

bool decode_async(Decoder&, const ptx::Instruction&, Inst&) { return false; }

}  // namespace kiln::sim
