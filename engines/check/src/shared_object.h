// Which variable an address points into: the mbarrier an instruction names, traced from its
// address operand back through mov/cvta/cvt/add to a .shared symbol. nvcc materializes
// `&bar` as `mov.u32 %r, bar;` (or mov.u64 + cvta.shared.u64), and `&bars[i]` as an add.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "function_context.h"

namespace kiln::check {

struct SharedObject {
  std::string symbol;             // empty: not traced to a variable
  std::optional<int64_t> offset;  // bytes from the symbol; nullopt: unknown (an indexed array)

  bool known() const { return !symbol.empty(); }
  // Two references may name the same object: same symbol, and offsets equal or unknown.
  bool may_alias(const SharedObject& other) const;
  // "bar", "bars+16", "bars[?]"
  std::string to_string() const;
};

// Traces `address` (an Address operand of instruction `at`) to the object it points into.
SharedObject trace_address(const FunctionContext& context, ptx::InstructionId at,
                           const ptx::Operand& address);

}  // namespace kiln::check
