// The branch tracer's signal-handler half (Algorithm 1 of Break Dancing): starting a burst at a
// sample, decoding forward to the next transfer, stopping at a breakpoint and evaluating the branch
// there. Runs on the owning thread in its sample and SIGTRAP handlers; signal-safe only: it reads
// code through the published code map and other memory with os::read_memory.
#include <algorithm>

#include "lbr/code_map.h"
#include "lbr/tracer.h"

namespace whatif::lbr {
namespace {

constexpr uint32_t kMaxBlockInstructions = 512;  // a longer straight run ends the burst
constexpr uint32_t kMaxStaticSteps = 4096;       // statically resolved transfers per stop

}  // namespace

WHATIF_SIGNAL_SAFE bool same_context(uint64_t expected, bool known, uint64_t sp) {
  if (known) return sp == expected;
  return sp + 256 >= expected && sp <= expected + 65536;
}

WHATIF_SIGNAL_SAFE void ThreadTracer::on_sample(const void* ucontext) {
  if (state_ == State::kClosed) return;
  if (state_ == State::kWaiting) {
    // The stop never came (the thread left the path through a longjmp or a handler that did not
    // return): give the burst up after `every` samples and start anew.
    if (++samples_in_burst_ <= settings_.every) return;
    end_burst(EndReason::kStale);
  }
  if (++samples_ < settings_.every) return;
  samples_ = 0;
  Registers registers;
  registers_from_ucontext(ucontext, registers);
  start_burst(registers);
}

WHATIF_SIGNAL_SAFE void ThreadTracer::start_burst(const Registers& registers) {
  uint32_t head = head_.load(std::memory_order_relaxed);
  if (head - tail_.load(std::memory_order_acquire) >= kSlots) {  // pairs with drain's release
    bump(stats_.ended[static_cast<int>(EndReason::kRingFull)]);
    return;
  }
  bump(stats_.bursts);
  count_ = 0;
  edges_ = &buffers_[static_cast<std::size_t>(head % kSlots) * settings_.depth];
  samples_in_burst_ = 0;
  state_ = State::kWaiting;  // in flight from here; advance() ends it or sets the breakpoint
  advance(registers.rip, registers.gpr[x86::kRsp], true, &registers);
}

WHATIF_SIGNAL_SAFE bool ThreadTracer::find_block(uint64_t pc, Block& block) {
  Block& cached = cache_[(pc >> 1) % kCacheEntries];
  if (cached.start == pc && cached.branch != 0) {
    block = cached;
    return true;
  }
  const CodeMap* map = current_code_map();
  const CodeRange* range = map != nullptr ? map->code_at(pc) : nullptr;
  if (range == nullptr) return false;
  block = Block{};
  block.start = pc;
  uint64_t at = pc;
  for (uint32_t i = 0; i < kMaxBlockInstructions; ++i) {
    if (at >= range->end) return false;
    std::size_t available = static_cast<std::size_t>(std::min<uint64_t>(15, range->end - at));
    x86::Instruction instruction = decoder_.decode(reinterpret_cast<const uint8_t*>(at), available, at);
    if (instruction.length == 0) return false;
    if (instruction.transfer != x86::Transfer::kNone) {
      block.branch = at;
      block.transfer = instruction;
      bump(stats_.decoded_blocks);
      cached = block;
      return true;
    }
    block.stack_delta += instruction.stack_delta;
    block.stack_unknown = block.stack_unknown || instruction.stack_unknown;
    at += instruction.length;
  }
  return false;
}

WHATIF_SIGNAL_SAFE bool ThreadTracer::walk_block(uint64_t pc, x86::KnownState& known, Block& block) {
  const CodeMap* map = current_code_map();
  const CodeRange* range = map != nullptr ? map->code_at(pc) : nullptr;
  if (range == nullptr) return false;
  block = Block{};
  block.start = pc;
  uint64_t at = pc;
  for (uint32_t i = 0; i < kMaxBlockInstructions; ++i) {
    if (at >= range->end) return false;
    std::size_t available = static_cast<std::size_t>(std::min<uint64_t>(15, range->end - at));
    x86::Instruction instruction = decoder_.step(reinterpret_cast<const uint8_t*>(at), available, at, known);
    if (instruction.length == 0) return false;
    if (instruction.transfer != x86::Transfer::kNone) {
      block.branch = at;
      block.transfer = instruction;
      return true;
    }
    block.stack_delta += instruction.stack_delta;
    block.stack_unknown = block.stack_unknown || instruction.stack_unknown;
    at += instruction.length;
  }
  return false;
}

namespace {

/// A conditional branch's direction from the data flow, when its inputs are known.
WHATIF_SIGNAL_SAFE bool flow_direction(const x86::Instruction& branch, const x86::KnownState& known, bool& taken) {
  using x86::Condition;
  bool needs_rcx = branch.condition >= Condition::kLoop;
  bool needs_flags = branch.condition < Condition::kLoop || branch.condition == Condition::kLoope ||
                     branch.condition == Condition::kLoopne;
  if ((needs_rcx && !known.is_known(1)) || (needs_flags && !known.flags_known)) return false;
  taken = condition_holds(branch.condition, known.rflags, known.value[1]);
  return true;
}

}  // namespace

WHATIF_SIGNAL_SAFE void ThreadTracer::advance(uint64_t pc, uint64_t sp, bool sp_known, const Registers* at_stop) {
  x86::KnownState known;
  if (at_stop != nullptr && settings_.flow) {
    for (int i = 0; i < x86::kRegisterCount; ++i) known.value[i] = at_stop->gpr[i];
    known.value[x86::kRsp] = sp;
    known.known = sp_known ? 0xffff : static_cast<uint16_t>(0xffff & ~(1u << x86::kRsp));
    known.rflags = at_stop->rflags;
    known.flags_known = true;
  }
  for (uint32_t step = 0; step < kMaxStaticSteps; ++step) {
    Block block;
    // While the data flow knows something, walk instruction by instruction; once it knows
    // nothing, the block cache answers.
    bool flowing = known.known != 0 || known.flags_known;
    if (!(flowing ? walk_block(pc, known, block) : find_block(pc, block))) {
      end_burst(EndReason::kOutsideCode);
      return;
    }
    // An rseq critical section ends the burst (paper §2.3): a breakpoint there would abort it, and
    // its control flow may restart from the abort handler behind the tracer's back.
    if (const CodeMap* map = current_code_map(); map != nullptr && map->in_rseq(block.branch)) {
      end_burst(EndReason::kRseq);
      return;
    }
    sp += static_cast<uint64_t>(static_cast<int64_t>(block.stack_delta));
    sp_known = sp_known && !block.stack_unknown;
    const x86::Instruction& transfer = block.transfer;
    uint64_t next = block.branch + transfer.length;
    switch (transfer.transfer) {
      case x86::Transfer::kJump:
      case x86::Transfer::kCall:
        bump(stats_.static_branches);
        if (record(block.branch, transfer.target)) return;
        if (transfer.transfer == x86::Transfer::kCall) {
          sp -= 8;
          known.value[x86::kRsp] -= 8;
        }
        pc = transfer.target;
        continue;
      case x86::Transfer::kConditional: {
        bool taken = false;
        if (flowing && flow_direction(transfer, known, taken)) {
          bump(stats_.flow_resolved);
          if (transfer.condition >= x86::Condition::kLoop && transfer.condition <= x86::Condition::kLoopne) {
            known.value[1] -= 1;  // loop* decrement rcx
          }
          if (taken && record(block.branch, transfer.target)) return;
          pc = taken ? transfer.target : next;
          continue;
        }
        break;
      }
      case x86::Transfer::kIndirectJump:
      case x86::Transfer::kIndirectCall:
        if (transfer.operand.kind != x86::Operand::Kind::kRegister && transfer.operand.kind != x86::Operand::Kind::kMemory) {
          end_burst(EndReason::kUnsupported);
          return;
        }
        if (flowing && transfer.operand.kind == x86::Operand::Kind::kRegister && known.is_known(transfer.operand.base)) {
          bump(stats_.flow_resolved);
          uint64_t target = known.value[transfer.operand.base];
          if (record(block.branch, target)) return;
          if (transfer.transfer == x86::Transfer::kIndirectCall) {
            sp -= 8;
            known.value[x86::kRsp] -= 8;
          }
          pc = target;
          continue;
        }
        break;
      case x86::Transfer::kReturn:
        break;
      case x86::Transfer::kNone:
      case x86::Transfer::kOther:
        end_burst(EndReason::kUnsupported);
        return;
    }
    // The branch needs a stop.
    pending_ = block;
    expected_sp_ = sp;
    expected_sp_known_ = sp_known;
    bump(stats_.breakpoints);
    if (breakpoint_.move_to(block.branch) != 0) end_burst(EndReason::kBreakpointFailed);
    return;
  }
  end_burst(EndReason::kStepLimit);
}

WHATIF_SIGNAL_SAFE bool ThreadTracer::on_trap(const os::TrapPerfInfo& trap, const void* ucontext) {
  if (trap.data != cookie_) return false;
  if (state_ != State::kWaiting) {  // a stop for a burst already given up
    breakpoint_.disarm();
    return true;
  }
  if ((trap.flags & os::kTrapPerfFlagAsync) != 0) {
    end_burst(EndReason::kLate);
    return true;
  }
  Registers registers;
  registers_from_ucontext(ucontext, registers);
  if (registers.rip != pending_.branch) {
    end_burst(EndReason::kWrongPc);
    return true;
  }
  uint64_t sp = registers.gpr[x86::kRsp];
  if (!same_context(expected_sp_, expected_sp_known_, sp)) {
    end_burst(EndReason::kWrongStack);
    return true;
  }
  bump(stats_.dynamic_branches);
  Outcome outcome = evaluate(pending_.transfer, pending_.branch, registers);
  if (!outcome.ok) {
    end_burst(EndReason::kUnreadable);
    return true;
  }
  if (outcome.taken && record(pending_.branch, outcome.target)) return true;
  bool sp_known = true;
  switch (pending_.transfer.transfer) {
    case x86::Transfer::kIndirectCall: sp -= 8; break;
    case x86::Transfer::kReturn:
      sp += 8;
      sp_known = pending_.transfer.length == 1;  // ret $n pops n more bytes: fall back to the window
      break;
    default: break;
  }
  advance(outcome.target, sp, sp_known, &registers);
  return true;
}

WHATIF_SIGNAL_SAFE bool ThreadTracer::record(uint64_t from, uint64_t to) {
  edges_[count_++] = {from, to};
  if (count_ < settings_.depth) return false;
  bump(stats_.completed);
  publish();
  return true;
}

WHATIF_SIGNAL_SAFE void ThreadTracer::publish() {
  breakpoint_.disarm();
  uint32_t head = head_.load(std::memory_order_relaxed);
  stats_.taken.store(stats_.taken.load(std::memory_order_relaxed) + count_, std::memory_order_relaxed);
  counts_[head % kSlots] = count_;
  head_.store(head + 1, std::memory_order_release);  // pairs with drain's acquire
  state_ = State::kIdle;
}

WHATIF_SIGNAL_SAFE void ThreadTracer::end_burst(EndReason reason) {
  bump(stats_.ended[static_cast<int>(reason)]);
  if (keeps_edges(reason) && count_ > 0) {
    publish();
    return;
  }
  breakpoint_.disarm();
  state_ = State::kIdle;
}

}  // namespace whatif::lbr
