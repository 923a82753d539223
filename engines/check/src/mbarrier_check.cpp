// mbarrier checks.
//   Initialization is a CTA-level fact: one thread initializes, all use. A use is initialized
//   when an init of the same object precedes it for the whole CTA: the init's block dominates
//   the use, or, for an init inside thread-dependent code (if (threadIdx.x == 0)), the branch
//   that opens that code dominates the use from outside it.
//   Along every path, for each object, a small state says whether an init may not yet be
//   published to the other threads (no CTA barrier since) and whether it may not yet be
//   visible to the async proxy (no fence.mbarrier_init / fence.proxy.async since).
#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "barrier_sites.h"
#include "checks.h"
#include "forward_dataflow.h"
#include "shared_object.h"

namespace kiln::check {
namespace {

enum Bits : uint8_t { kUnpublished = 1, kUnfenced = 2 };

struct MbarrierState {
  std::vector<uint8_t> bits;  // per object
  bool merge(const MbarrierState& other) {
    bool changed = false;
    for (size_t i = 0; i < bits.size(); ++i) {
      const uint8_t merged = bits[i] | other.bits[i];
      changed |= merged != bits[i];
      bits[i] = merged;
    }
    return changed;
  }
};

enum class Use : uint8_t { None, Init, Generic, AsyncProxy, ArmsTx };

bool is_bulk_copy_with_complete_tx(const ptx::Instruction& inst) {
  if (inst.opcode != ptx::Opcode::Cp || !inst.has_modifier("bulk")) return false;
  return std::any_of(inst.modifiers.begin(), inst.modifiers.end(),
                     [](const std::string& m) { return m.starts_with("mbarrier::complete_tx"); });
}

// How `inst` uses an mbarrier, and which operand names it.
Use classify(const ptx::Instruction& inst, const ptx::Operand** address) {
  *address = nullptr;
  auto first_address_from = [&](size_t start) {
    for (size_t i = start; i < inst.operands.size(); ++i) {
      if (inst.operands[i].kind == ptx::OperandKind::Address) return &inst.operands[i];
    }
    return static_cast<const ptx::Operand*>(nullptr);
  };
  if (inst.opcode == ptx::Opcode::Mbarrier) {
    *address = first_address_from(0);
    if (*address == nullptr) return Use::None;  // mbarrier.pending_count takes a state
    if (inst.has_modifier("init")) return Use::Init;
    if (inst.has_modifier("expect_tx")) return Use::ArmsTx;
    return Use::Generic;
  }
  if (is_bulk_copy_with_complete_tx(inst)) {
    *address = first_address_from(2);
    return *address != nullptr ? Use::AsyncProxy : Use::None;
  }
  if (inst.opcode == ptx::Opcode::Cp &&
      inst.has_modifier("mbarrier")) {  // cp.async.mbarrier.arrive
    *address = first_address_from(0);
    return *address != nullptr ? Use::Generic : Use::None;
  }
  return Use::None;
}

bool publishes(const ptx::Instruction& inst) {
  const std::optional<BarrierSite> site = barrier_site(inst);
  return site && site->waits;
}

bool fences_async_proxy(const ptx::Instruction& inst) {
  return inst.opcode == ptx::Opcode::Fence &&
         (inst.has_modifier("mbarrier_init") || inst.has_modifier("proxy"));
}

struct Reference {
  ptx::InstructionId at;
  Use use;
  SharedObject object;
};

class MbarrierCheck {
 public:
  explicit MbarrierCheck(FunctionContext& context) : context_(context) {}

  void run() {
    collect();
    if (refs_.empty()) return;
    if (untraced_ > 0) {
      context_.note(std::to_string(untraced_) + " mbarrier reference(s), the first '" +
                    context_.text(first_untraced_) + "' (" + context_.where(first_untraced_) +
                    "), could not be traced to a .shared variable; their init and fences "
                    "were not checked");
    }
    check_expect_tx();
    if (objects_.empty()) return;
    // Nothing to publish or fence before the first init; the paths of threads that skip an
    // init (if (threadIdx.x == 0) ...) carry no debt, the initializing thread's path does.
    MbarrierState entry{std::vector<uint8_t>(objects_.size(), 0)};
    auto transfer = [&](ptx::InstructionId id, MbarrierState& s) { apply(id, s); };
    auto in = forward_dataflow(context_.cfg(), entry, transfer);
    replay_dataflow(context_.cfg(), in, transfer,
                    [&](ptx::InstructionId id, const MbarrierState& s) { visit(id, s); });
  }

 private:
  void collect() {
    const ptx::Function& f = context_.function();
    for (ptx::InstructionId id = 0; id < f.instructions.size(); ++id) {
      const ptx::Operand* address = nullptr;
      const Use use = classify(f.instructions[id], &address);
      if (use == Use::None) continue;
      SharedObject object = trace_address(context_, id, *address);
      if (!object.known()) {
        ++untraced_;
        if (untraced_ == 1) first_untraced_ = id;
      } else {
        intern(object);
      }
      refs_.push_back({id, use, std::move(object)});
      ref_of_[id] = refs_.size() - 1;
    }
  }

  void intern(const SharedObject& object) {
    for (const SharedObject& o : objects_) {
      if (o.symbol == object.symbol && o.offset == object.offset) return;
    }
    objects_.push_back(object);
  }

  // The objects a reference may touch: an unknown offset touches every object of its symbol.
  template <typename Fn>
  void for_each_alias(const SharedObject& object, Fn&& fn) const {
    for (size_t i = 0; i < objects_.size(); ++i) {
      if (objects_[i].may_alias(object)) fn(i);
    }
  }

  void apply(ptx::InstructionId id, MbarrierState& s) const {
    const ptx::Instruction& inst = context_.instruction(id);
    if (publishes(inst)) {
      for (uint8_t& b : s.bits) b &= static_cast<uint8_t>(~kUnpublished);
    }
    if (fences_async_proxy(inst)) {
      for (uint8_t& b : s.bits) b &= static_cast<uint8_t>(~kUnfenced);
    }
    auto it = ref_of_.find(id);
    if (it == ref_of_.end()) return;
    const Reference& ref = refs_[it->second];
    if (ref.use != Use::Init || !ref.object.known()) return;
    // An init of one element of an array (unknown offset) counts for every element: loops
    // that initialize all stages are the common case.
    for_each_alias(ref.object, [&](size_t i) { s.bits[i] = kUnpublished | kUnfenced; });
  }

  bool block_dominates(ptx::InstructionId a, ptx::InstructionId b) const {
    const ptx::ControlFlowGraph& cfg = context_.cfg();
    const ptx::BlockId ba = cfg.block_of(a), bb = cfg.block_of(b);
    return ba == bb ? a < b : context_.analysis().dominators.dominates(ba, bb);
  }

  static bool in_region(const ptx::DivergentBranch& branch, ptx::BlockId block) {
    return std::binary_search(branch.region.begin(), branch.region.end(), block);
  }

  // Whether some init of `object` runs, for the whole CTA, before `use`.
  bool initialized_before(ptx::InstructionId use, const SharedObject& object) const {
    const ptx::BlockId use_block = context_.cfg().block_of(use);
    return any_init_of(object, [&](const Reference& ref, ptx::BlockId init_block) {
      // The outermost thread-dependent branch around the init: every thread reaches it.
      const ptx::DivergentBranch* outer = nullptr;
      for (const ptx::DivergentBranch& b : context_.uniformity().divergent_branches()) {
        if (in_region(b, init_block) &&
            (outer == nullptr || b.region.size() > outer->region.size())) {
          outer = &b;
        }
      }
      if (outer == nullptr || in_region(*outer, use_block)) return block_dominates(ref.at, use);
      return context_.analysis().dominators.dominates(outer->block, use_block);
    });
  }

  // Whether `pred(init_reference, init_block)` holds for some init of an object aliasing
  // `object`.
  template <typename Pred>
  bool any_init_of(const SharedObject& object, Pred&& pred) const {
    for (const Reference& ref : refs_) {
      if (ref.use != Use::Init || !ref.object.may_alias(object)) continue;
      if (pred(ref, context_.cfg().block_of(ref.at))) return true;
    }
    return false;
  }

  // Whether the thread(s) that ran an init reaching `use` are the ones using it now: the use
  // is dominated by an init of the same object under the same divergent branches and guard.
  bool same_threads_as_an_init(ptx::InstructionId use, const SharedObject& object) const {
    const ptx::BlockId use_block = context_.cfg().block_of(use);
    return any_init_of(object, [&](const Reference& ref, ptx::BlockId init_block) {
      if (!block_dominates(ref.at, use)) return false;
      const ptx::Instruction& init = context_.instruction(ref.at);
      const ptx::Instruction& user = context_.instruction(use);
      if (init.guard && init.guard != user.guard) return false;
      const auto& branches = context_.uniformity().divergent_branches();
      return std::none_of(branches.begin(), branches.end(), [&](const ptx::DivergentBranch& b) {
        return in_region(b, init_block) && !in_region(b, use_block);
      });
    });
  }

  void visit(ptx::InstructionId id, const MbarrierState& s) {
    auto it = ref_of_.find(id);
    if (it == ref_of_.end()) return;
    const Reference& ref = refs_[it->second];
    if (ref.use == Use::Init || !ref.object.known()) return;
    uint8_t bits = 0;
    bool any = false;
    for_each_alias(ref.object, [&](size_t i) {
      // With an unknown offset, the reference is fine if any element it may mean is.
      bits = any ? static_cast<uint8_t>(bits & s.bits[i]) : s.bits[i];
      any = true;
    });
    const std::string name = ref.object.to_string();
    if (!initialized_before(id, ref.object)) {
      // Once per object: the first use shows the bug, the later ones only repeat it.
      if (!uninitialized_reported_.insert(name).second) return;
      context_.report(FindingKind::MbarrierUninitialized, Severity::Error, id,
                      "'" + context_.text(id) + "' uses mbarrier " + name +
                          ", but no mbarrier.init of it is sure to run before this use; "
                          "its phase and counts are garbage, so arrivals and waits misbehave.",
                      "Initialize every mbarrier (mbarrier.init / cuda::barrier init) before "
                      "its first use, then __syncthreads() so all threads see the init.");
      return;
    }
    if ((bits & kUnpublished) && !same_threads_as_an_init(id, ref.object)) {
      context_.report(FindingKind::MbarrierInitFence, Severity::Error, id,
                      "'" + context_.text(id) + "' uses mbarrier " + name +
                          ", initialized by other threads with no CTA barrier in between; "
                          "this thread may see it before the init.",
                      "Put __syncthreads() (bar.sync) between the mbarrier.init and the first "
                      "use by other threads.");
      return;
    }
    if (ref.use == Use::AsyncProxy && (bits & kUnfenced)) {
      context_.report(FindingKind::MbarrierInitFence, Severity::Error, id,
                      "'" + context_.text(id) + "' completes on mbarrier " + name +
                          " through the async proxy (TMA), but no fence.mbarrier_init or "
                          "fence.proxy.async follows the init, so the copy engine may see an "
                          "uninitialized barrier.",
                      "After mbarrier.init, execute fence.mbarrier_init.release.cluster (or "
                      "fence.proxy.async.shared::cta) before __syncthreads() and the first "
                      "bulk copy.");
    }
  }

  void check_expect_tx() {
    bool any_arm = false;
    for (const Reference& ref : refs_) any_arm |= ref.use == Use::ArmsTx;
    for (const Reference& ref : refs_) {
      if (ref.use != Use::AsyncProxy) continue;
      bool armed = false;
      for (const Reference& other : refs_) {
        if (other.use != Use::ArmsTx) continue;
        armed |= !ref.object.known() || !other.object.known() || other.object.may_alias(ref.object);
      }
      if (armed || (!ref.object.known() && any_arm)) continue;
      context_.report(
          FindingKind::BulkCopyNoExpectTx, Severity::Error, ref.at,
          "'" + context_.text(ref.at) + "' completes its bytes on mbarrier " +
              ref.object.to_string() +
              ", but nothing arms that barrier with the expected transaction count "
              "(mbarrier.arrive.expect_tx / mbarrier.expect_tx); the phase can complete "
              "before the data lands, or the transaction count underflows.",
          "Before issuing the copy, have one thread call mbarrier.arrive.expect_tx with the "
          "number of bytes the copies deliver to this barrier in this phase.");
    }
  }

  FunctionContext& context_;
  std::vector<Reference> refs_;
  std::map<ptx::InstructionId, size_t> ref_of_;
  std::vector<SharedObject> objects_;
  std::set<std::string> uninitialized_reported_;
  size_t untraced_ = 0;
  ptx::InstructionId first_untraced_ = 0;
};

}  // namespace

void check_mbarriers(FunctionContext& context) { MbarrierCheck(context).run(); }

}  // namespace kiln::check
