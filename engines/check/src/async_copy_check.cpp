// cp.async (the Ampere per-thread async copy) data read too early. Along every path:
//   issued       some cp.async may have been issued (OR over paths)
//   waited       a wait_group/wait_all that really waits has run (AND over paths). Not reset by
//                a later issue: a pipeline issues stage k+1 and then reads stage k.
//   synced       a CTA barrier ran after the last wait (AND over paths)
//   pending      committed groups not known complete, as a [min, max] over paths
//   groups       per pending group, newest first, the .shared variables it copies into (OR)
//   uncommitted  variables copied into by copies not yet committed (OR)
//   completed    variables some finished copy has filled (OR)
// A wait_group N waits for something only when more than N groups are pending on every path.
// A read is flagged when no such wait has run; when it reads a variable whose only copies are
// all still pending; or when it reads data other threads copied with no barrier after the wait.
#include <algorithm>
#include <array>

#include "barrier_sites.h"
#include "checks.h"
#include "forward_dataflow.h"
#include "shared_object.h"

namespace kiln::check {
namespace {

constexpr uint32_t kMaxPending = 64;
constexpr size_t kTrackedGroups = 8;

struct CopyState {
  bool issued = false;
  bool waited = false;
  bool synced = true;
  uint32_t pending_min = 0, pending_max = 0;
  std::array<uint64_t, kTrackedGroups> groups{};  // newest first
  uint64_t uncommitted = 0;
  uint64_t completed = 0;

  uint64_t in_flight() const {
    uint64_t all = uncommitted;
    for (uint64_t g : groups) all |= g;
    return all;
  }
  bool merge(const CopyState& o) {
    const CopyState before = *this;
    issued |= o.issued;
    waited &= o.waited;
    synced &= o.synced;
    pending_min = std::min(pending_min, o.pending_min);
    pending_max = std::max(pending_max, o.pending_max);
    for (size_t i = 0; i < kTrackedGroups; ++i) groups[i] |= o.groups[i];
    uncommitted |= o.uncommitted;
    completed |= o.completed;
    return before.issued != issued || before.waited != waited || before.synced != synced ||
           before.pending_min != pending_min || before.pending_max != pending_max ||
           before.groups != groups || before.uncommitted != uncommitted ||
           before.completed != completed;
  }
};

enum class Op : uint8_t { None, Issue, Commit, WaitGroup, WaitAll, Barrier, Read };

Op classify(const ptx::Instruction& inst) {
  if (inst.opcode == ptx::Opcode::Cp && inst.has_modifier("async") && !inst.has_modifier("bulk")) {
    if (inst.has_modifier("commit_group")) return Op::Commit;
    if (inst.has_modifier("wait_group")) return Op::WaitGroup;
    if (inst.has_modifier("wait_all")) return Op::WaitAll;
    if (inst.has_modifier("mbarrier")) return Op::None;  // cp.async.mbarrier.arrive
    return Op::Issue;
  }
  if (const auto site = barrier_site(inst); site && site->waits && !site->cluster) {
    return Op::Barrier;
  }
  if (inst.opcode == ptx::Opcode::Bar && inst.has_modifier("warp")) return Op::Barrier;
  if (inst.opcode == ptx::Opcode::Ldmatrix ||
      (inst.opcode == ptx::Opcode::Wgmma && inst.has_modifier("mma_async"))) {
    return Op::Read;
  }
  if ((inst.opcode == ptx::Opcode::Ld || inst.opcode == ptx::Opcode::Ldu) &&
      ptx::is_shared_space(inst.state_space())) {
    return Op::Read;
  }
  return Op::None;
}

const ptx::Operand* first_address(const ptx::Instruction& inst) {
  for (const ptx::Operand& op : inst.operands) {
    if (op.kind == ptx::OperandKind::Address) return &op;
  }
  return nullptr;
}

class AsyncCopyCheck {
 public:
  explicit AsyncCopyCheck(FunctionContext& context) : context_(context) {}

  void run() {
    const ptx::Function& f = context_.function();
    bool any_issue = false;
    for (ptx::InstructionId id = 0; id < f.instructions.size(); ++id) {
      const Op op = classify(f.instructions[id]);
      if (op == Op::Issue) {
        any_issue = true;
        if (const ptx::Operand* dst = first_address(f.instructions[id])) {
          copy_bases_.push_back(dst->address_base());
        }
      }
    }
    if (!any_issue) return;
    auto transfer = [&](ptx::InstructionId id, CopyState& s) { apply(id, s); };
    auto in = forward_dataflow(context_.cfg(), CopyState{}, transfer);
    replay_dataflow(context_.cfg(), in, transfer,
                    [&](ptx::InstructionId id, const CopyState& s) { visit(id, s); });
  }

 private:
  // The bit of the .shared variable `id`'s first address points into; 0 when unknown.
  uint64_t object_bit(ptx::InstructionId id) {
    const ptx::Operand* address = first_address(context_.instruction(id));
    if (address == nullptr) return 0;
    const SharedObject object = trace_address(context_, id, *address);
    if (!object.known()) return 0;
    auto it = std::find(symbols_.begin(), symbols_.end(), object.symbol);
    if (it == symbols_.end()) {
      if (symbols_.size() == 64) return 0;
      symbols_.push_back(object.symbol);
      it = symbols_.end() - 1;
    }
    return uint64_t{1} << (it - symbols_.begin());
  }

  void apply(ptx::InstructionId id, CopyState& s) {
    const ptx::Instruction& inst = context_.instruction(id);
    switch (classify(inst)) {
      case Op::Issue:
        s.issued = true;
        s.uncommitted |= object_bit(id);
        break;
      case Op::Commit:
        s.groups[kTrackedGroups - 1] |= s.groups[kTrackedGroups - 2];  // oldest ones merge
        std::copy_backward(s.groups.begin(), s.groups.end() - 2, s.groups.end() - 1);
        s.groups[0] = s.uncommitted;
        s.uncommitted = 0;
        s.pending_min = std::min(s.pending_min + 1, kMaxPending);
        s.pending_max = std::min(s.pending_max + 1, kMaxPending);
        break;
      case Op::WaitGroup: {
        const auto& ops = inst.operands;
        const bool immediate = !ops.empty() && ops[0].kind == ptx::OperandKind::Immediate;
        const uint32_t n = immediate ? static_cast<uint32_t>(ops[0].number.bits) : 0;
        if (!immediate || s.pending_min > n) s.waited = true;
        if (!immediate || s.pending_max > n) s.synced = false;
        for (size_t g = std::min<size_t>(n, kTrackedGroups); g < kTrackedGroups; ++g) {
          s.completed |= s.groups[g];
          s.groups[g] = 0;
        }
        s.pending_min = std::min(s.pending_min, n);
        s.pending_max = std::min(s.pending_max, n);
        break;
      }
      case Op::WaitAll:
        s.completed |= s.in_flight();
        s.groups.fill(0);
        s.uncommitted = 0;
        s.pending_min = s.pending_max = 0;
        s.waited = true;
        s.synced = false;
        break;
      case Op::Barrier:
        s.synced = true;
        break;
      default:
        break;
    }
  }

  // Whether the read at `id` uses the same address register as one of this thread's copies.
  bool reads_own_copy(ptx::InstructionId id) const {
    const ptx::Operand* address = first_address(context_.instruction(id));
    if (address == nullptr) return false;
    return std::any_of(copy_bases_.begin(), copy_bases_.end(),
                       [&](const ptx::Operand& base) { return base == address->address_base(); });
  }

  void visit(ptx::InstructionId id, const CopyState& s) {
    if (classify(context_.instruction(id)) != Op::Read || !s.issued) return;
    if (!s.waited) {
      report(id,
             "reads shared memory while cp.async copies issued earlier may still be in flight: "
             "on some path no cp.async.wait_group that really waits (more groups committed "
             "than it leaves in flight) or cp.async.wait_all runs between the copies and this "
             "read.");
      return;
    }
    const uint64_t bit = object_bit(id);
    if (bit != 0 && (s.in_flight() & bit) != 0 && (s.completed & bit) == 0) {
      const std::string name = symbols_[static_cast<size_t>(__builtin_ctzll(bit))];
      report(id, "reads " + name +
                     ", but every cp.async into it is still in flight here: the "
                     "last wait_group leaves the newest groups pending, and that is where the "
                     "copies into " +
                     name + " are.");
      return;
    }
    if (!s.synced && !reads_own_copy(id)) {
      report(id,
             "reads shared memory that other threads' cp.async copies filled; the wait only "
             "covers this thread's own copies and no barrier follows it, so other threads' "
             "data may not have landed.");
    }
  }

  void report(ptx::InstructionId id, const std::string& what) {
    context_.report(
        FindingKind::AsyncCopyUnwaited, Severity::Error, id, "'" + context_.text(id) + "' " + what,
        "After cp.async.commit_group, call cp.async.wait_group N, where N is the number of "
        "newer groups allowed to stay in flight (0 waits for all; commit a group every "
        "iteration, even an empty one, so N counts right), or cp.async.wait_all; then "
        "__syncthreads() before threads read data other threads copied.");
  }

  FunctionContext& context_;
  std::vector<ptx::Operand> copy_bases_;
  std::vector<std::string> symbols_;
};

}  // namespace

void check_async_copies(FunctionContext& context) { AsyncCopyCheck(context).run(); }

}  // namespace kiln::check
