// Calls to .func: arguments copied from the caller's call-block .param variables to the
// callee's parameters (both in per-thread local memory), a frame on the warp's call stack, and
// results copied back when every lane that entered has returned. A recursive call saves the
// callee's registers (all 32 lanes) and restores them when it returns.
#include <algorithm>
#include <bit>
#include <cstring>

#include "decoder.h"
#include "exec.h"

namespace kiln::sim {

namespace {

void copy(Exec& x, const std::vector<ParamCopy>& copies, uint32_t mask) {
  for (uint32_t m = mask; m != 0; m &= m - 1) {
    uint8_t* local = x.local_of(static_cast<uint32_t>(std::countr_zero(m)));
    for (const ParamCopy& c : copies) std::memmove(local + c.to, local + c.from, c.bytes);
  }
}

// Completes the innermost frame: results to the caller, registers restored, back at the
// instruction after the call.
void complete_frame(Exec& x) {
  Warp& w = *x.warp;
  CallFrame& f = w.calls.back();
  const CallSite& site = x.program->call_sites[f.site];
  copy(x, site.results, f.returned & w.live);
  if (!f.saved_regs.empty()) {
    const FunctionRange& fn = x.program->functions[site.function];
    std::copy(f.saved_regs.begin(), f.saved_regs.end(), w.regs + size_t{fn.slot_begin} * 32);
    std::copy(f.saved_preds.begin(), f.saved_preds.end(), w.preds + fn.pred_begin);
  }
  w.calls.pop_back();
  if (!w.stack.empty()) w.pc = w.stack.back().pc;
}

}  // namespace

void call_handler(Exec& x, const Inst& in, uint32_t mask) {
  if (mask == 0) return;
  Warp& w = *x.warp;
  const CallSite& site = x.program->call_sites[in.target];
  if (w.calls.size() >= 1024) {
    x.fault(in, static_cast<uint32_t>(std::countr_zero(mask)), "budget", 0,
            "call depth passed 1024 frames; the recursion into '" + site.callee +
                "' may not end (check its base case)");
    return;
  }
  CallFrame frame;
  frame.site = in.target;
  frame.depth = static_cast<uint32_t>(w.stack.size()) + 1;
  bool recursive = std::any_of(w.calls.begin(), w.calls.end(), [&](const CallFrame& f) {
    return x.program->call_sites[f.site].function == site.function;
  });
  if (recursive) {
    const FunctionRange& fn = x.program->functions[site.function];
    frame.saved_regs.assign(w.regs + size_t{fn.slot_begin} * 32, w.regs + size_t{fn.slot_end} * 32);
    frame.saved_preds.assign(w.preds + fn.pred_begin, w.preds + fn.pred_end);
  }
  copy(x, site.arguments, mask);
  // The caller's entry resumes after the call once the callee's entries are gone; lanes that
  // did not call wait there.
  w.stack.back().pc = w.pc;
  w.calls.push_back(std::move(frame));
  w.stack.push_back({site.entry, kNoReconverge, mask});
  w.pc = site.entry;
}

void return_handler(Exec& x, const Inst& in, uint32_t mask) {
  if (mask == 0) return;
  Warp& w = *x.warp;
  if (w.calls.empty()) {  // a .func entered without a call cannot happen; end the lanes
    exit_handler(x, in, mask);
    return;
  }
  CallFrame& f = w.calls.back();
  f.returned |= mask;
  for (size_t i = f.depth - 1; i < w.stack.size(); ++i) w.stack[i].mask &= ~mask;
  while (w.stack.size() >= f.depth && w.stack.back().mask == 0) w.stack.pop_back();
  if (w.stack.size() < f.depth) {
    complete_frame(x);
  } else {
    w.pc = w.stack.back().pc;
  }
  x.event |= kEventExit;  // the runner re-checks reconvergence and barriers
}

void finish_calls(Exec& x) {
  Warp& w = *x.warp;
  while (!w.calls.empty() && w.stack.size() < w.calls.back().depth) complete_frame(x);
}

}  // namespace kiln::sim
