// The branch tracer's signal-handler half (Algorithm 1 of Break Dancing): starting a burst at a
// sample, decoding forward to the next transfer, stopping at a breakpoint and evaluating the branch
// there. Runs on the owning thread in its sample and SIGTRAP handlers; signal-safe only: it reads
// code through the published code map and other memory with os::read_memory.
#include <algorithm>
#include <utility>

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
  Block stop;
  pre_count_ = 0;
  pre_ok_ = true;
  if (walk(pc, sp, sp_known, known, stop, nullptr) == Walk::kStop) arm(stop, sp, sp_known, known);
}

WHATIF_SIGNAL_SAFE ThreadTracer::Walk ThreadTracer::walk(uint64_t pc, uint64_t& sp, bool& sp_known, x86::KnownState& known,
                                                          Block& stop, Leaf* leaf) {
  // Predicting: a taken branch goes into the leaf, never into the burst.
  auto take = [&](uint64_t from, uint64_t to) -> bool {  // true: stop walking
    if (leaf == nullptr) return record(from, to);
    if (leaf->edges >= kLookEdges) return true;
    leaf->edge[leaf->edges++] = {from, to};
    return false;
  };
  auto fail = [&](EndReason reason) {
    if (leaf == nullptr) end_burst(reason);
    return Walk::kEnded;
  };
  uint32_t limit = leaf == nullptr ? kMaxStaticSteps : kLookSpans;
  for (uint32_t step = 0; step < limit; ++step) {
    Block block;
    // While the data flow knows something, walk instruction by instruction; once it knows
    // nothing, the block cache answers.
    bool flowing = known.known != 0 || known.flags_known;
    if (!(flowing ? walk_block(pc, known, block) : find_block(pc, block))) return fail(EndReason::kOutsideCode);
    // An rseq critical section ends the burst (paper §2.3): a breakpoint there would abort it, and
    // its control flow may restart from the abort handler behind the tracer's back.
    if (const CodeMap* map = current_code_map(); map != nullptr && map->in_rseq(block.branch)) return fail(EndReason::kRseq);
    sp += static_cast<uint64_t>(static_cast<int64_t>(block.stack_delta));
    sp_known = sp_known && !block.stack_unknown;
    const x86::Instruction& transfer = block.transfer;
    uint64_t next = block.branch + transfer.length;
    bool resolved = false;
    uint64_t target = next;
    switch (transfer.transfer) {
      case x86::Transfer::kJump:
      case x86::Transfer::kCall:
        if (leaf == nullptr) bump(stats_.static_branches);
        else ++leaf->statics;
        resolved = true;
        target = transfer.target;
        if (take(block.branch, target)) return leaf == nullptr ? Walk::kFull : Walk::kEnded;
        if (transfer.transfer == x86::Transfer::kCall) {
          sp -= 8;
          known.value[x86::kRsp] -= 8;
        }
        break;
      case x86::Transfer::kConditional: {
        bool taken = false;
        if (flowing && flow_direction(transfer, known, taken)) {
          if (leaf == nullptr) bump(stats_.flow_resolved);
          else ++leaf->flows;
          if (transfer.condition >= x86::Condition::kLoop && transfer.condition <= x86::Condition::kLoopne) {
            known.value[1] -= 1;  // loop* decrement rcx
          }
          resolved = true;
          target = taken ? transfer.target : next;
          if (taken && take(block.branch, target)) return leaf == nullptr ? Walk::kFull : Walk::kEnded;
        }
        break;
      }
      case x86::Transfer::kIndirectJump:
      case x86::Transfer::kIndirectCall:
        if (transfer.operand.kind != x86::Operand::Kind::kRegister && transfer.operand.kind != x86::Operand::Kind::kMemory) {
          return fail(EndReason::kUnsupported);
        }
        if (flowing && transfer.operand.kind == x86::Operand::Kind::kRegister && known.is_known(transfer.operand.base)) {
          if (leaf == nullptr) bump(stats_.flow_resolved);
          else ++leaf->flows;
          resolved = true;
          target = known.value[transfer.operand.base];
          if (take(block.branch, target)) return leaf == nullptr ? Walk::kFull : Walk::kEnded;
          if (transfer.transfer == x86::Transfer::kIndirectCall) {
            sp -= 8;
            known.value[x86::kRsp] -= 8;
          }
        }
        break;
      case x86::Transfer::kReturn:
        break;
      case x86::Transfer::kNone:
      case x86::Transfer::kOther:
        return fail(EndReason::kUnsupported);
    }
    // The code this block runs before the next stop: its transfer too when resolved.
    Span span{block.start, resolved ? next : block.branch};
    if (leaf != nullptr) {
      if (leaf->spans >= kLookSpans) return Walk::kEnded;
      leaf->span[leaf->spans++] = span;
    } else if (pre_count_ < kPreSpans) {
      pre_[pre_count_++] = span;
    } else {
      pre_ok_ = false;
    }
    if (!resolved) {
      stop = block;  // the branch needs a stop
      return Walk::kStop;
    }
    pc = target;
  }
  return fail(EndReason::kStepLimit);
}

WHATIF_SIGNAL_SAFE bool ThreadTracer::split(const Leaf& parent, Leaf& taken, Leaf& fall, bool taken_full, bool fall_full) {
  const x86::Instruction& branch = parent.stop.transfer;
  // Only the sixteen flag conditions: loop* also change rcx, which the prediction would have to follow.
  if (parent.arrival || branch.transfer != x86::Transfer::kConditional || branch.condition >= x86::Condition::kLoop) return false;
  uint64_t next = parent.stop.branch + branch.length;
  if (parent.spans >= kLookSpans || (parent.edges >= kLookEdges)) return false;
  auto init = [&](Leaf& child, bool is_taken) {
    child = parent;
    child.settled = parent.settled + 1;
    child.span[child.spans++] = {parent.stop.branch, next};
    if (is_taken) child.edge[child.edges++] = {parent.stop.branch, branch.target};
  };
  auto arrival = [&](Leaf& child, uint64_t start, bool is_taken) {
    init(child, is_taken);
    child.arrival = true;
    child.stop.branch = start;
  };
  auto grow = [&](Leaf& child, uint64_t start, bool full, bool is_taken) {
    if (!full) {
      arrival(child, start, is_taken);
      return true;
    }
    init(child, is_taken);
    if (walk(start, child.sp, child.sp_known, child.known, child.stop, &child) != Walk::kStop) return false;
    // A stop at the branch itself would give the data flow its flags: when nothing on the way
    // rewrites them, that flow settles the child's branch too, and the child saves no stop. Then
    // the direction's first instruction serves as well, with one breakpoint move less on the way.
    init(probe_, is_taken);
    probe_.known.flags_known = true;
    bool settled_by_flags = walk(start, probe_.sp, probe_.sp_known, probe_.known, probe_.stop, &probe_) != Walk::kStop ||
                            probe_.stop.branch != child.stop.branch;
    if (settled_by_flags) arrival(child, start, is_taken);
    return true;
  };
  // At least one direction must reach past its first instruction, or nothing is saved.
  return grow(taken, branch.target, taken_full, true) && grow(fall, next, fall_full, false) && !(taken.arrival && fall.arrival);
}

WHATIF_SIGNAL_SAFE bool ThreadTracer::distinct(uint32_t count) const {
  if (!pre_ok_) return false;
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t address = leaves_[i].stop.branch;
    for (uint32_t k = 0; k < pre_count_; ++k) {
      if (address >= pre_[k].start && address < pre_[k].end) return false;
    }
    for (uint32_t j = 0; j < count; ++j) {
      if (j != i && leaves_[j].stop.branch == address) return false;
      for (uint32_t k = 0; k < leaves_[j].spans; ++k) {
        if (address >= leaves_[j].span[k].start && address < leaves_[j].span[k].end) return false;
      }
    }
  }
  return true;
}

WHATIF_SIGNAL_SAFE void ThreadTracer::arm(const Block& stop, uint64_t sp, bool sp_known, const x86::KnownState& known) {
  bump(stats_.breakpoints);
  leaf_count_ = 0;
  if (registers_ >= 2) {
    // Lookahead: replace a conditional leaf by its two directions' next stops while registers
    // remain and no breakpoint would fire on another's path (then which one fires tells the way).
    leaves_[0].settled = leaves_[0].statics = leaves_[0].flows = leaves_[0].edges = leaves_[0].spans = 0;
    leaves_[0].arrival = false;
    leaves_[0].stop = stop;
    leaves_[0].sp = sp;
    leaves_[0].sp_known = sp_known;
    leaves_[0].known = known;
    uint32_t count = 1;
    // Breadth first: every leaf of one level is split before the next level's, so both directions
    // of the pending branch look equally far ahead.
    for (bool grew = true; grew && count < registers_;) {
      grew = false;
      for (uint32_t i = 0, level = count; i < level && count < registers_; ++i) {
        // Both directions to their next stops; else one of them to its first instruction (which
        // settles this branch alone, while the other settles it and the next one).
        saved_ = leaves_[i];
        for (auto [taken_full, fall_full] : {std::pair{true, true}, std::pair{false, true}, std::pair{true, false}}) {
          if (!split(saved_, split_[0], split_[1], taken_full, fall_full)) continue;
          leaves_[i] = split_[0];
          leaves_[count] = split_[1];
          if (distinct(count + 1)) {
            ++count;
            grew = true;
            break;
          }
          leaves_[i] = saved_;
        }
      }
    }
    if (count > 1) {
      leaf_count_ = count;
      for (uint32_t i = 0; i < count; ++i) {
        bump(stats_.moves);
        if (breakpoints_[i].move_to(leaves_[i].stop.branch) != 0) {
          end_burst(EndReason::kBreakpointFailed);
          return;
        }
      }
      return;
    }
  }
  pending_ = stop;
  expected_sp_ = sp;
  expected_sp_known_ = sp_known;
  bump(stats_.moves);
  if (breakpoints_[0].move_to(stop.branch) != 0) end_burst(EndReason::kBreakpointFailed);
}

WHATIF_SIGNAL_SAFE void ThreadTracer::disarm_all() {
  for (uint32_t i = 0; i < registers_; ++i) breakpoints_[i].disarm();
  leaf_count_ = 0;
}

WHATIF_SIGNAL_SAFE bool ThreadTracer::on_trap(const os::TrapPerfInfo& trap, const void* ucontext) {
  if (trap.data != cookie_) return false;
  if (state_ != State::kWaiting) {  // a stop for a burst already given up
    disarm_all();
    return true;
  }
  if ((trap.flags & os::kTrapPerfFlagAsync) != 0) {
    end_burst(EndReason::kLate);
    return true;
  }
  Registers registers;
  registers_from_ucontext(ucontext, registers);
  uint64_t sp = registers.gpr[x86::kRsp];
  if (leaf_count_ > 0) {
    // A lookahead: the breakpoint that fired tells which way the pending branches went.
    const Leaf* hit = nullptr;
    for (uint32_t i = 0; i < leaf_count_; ++i) {
      if (leaves_[i].stop.branch == registers.rip) hit = &leaves_[i];
    }
    if (hit == nullptr) {
      end_burst(EndReason::kWrongPc);
      return true;
    }
    if (!same_context(hit->sp, hit->sp_known, sp)) {
      end_burst(EndReason::kWrongStack);
      return true;
    }
    pending_ = hit->stop;
    disarm_all();  // leaves_ stay as they are until the next arm()
    stats_.lookahead_settled.store(stats_.lookahead_settled.load(std::memory_order_relaxed) + hit->settled, std::memory_order_relaxed);
    stats_.static_branches.store(stats_.static_branches.load(std::memory_order_relaxed) + hit->statics, std::memory_order_relaxed);
    stats_.flow_resolved.store(stats_.flow_resolved.load(std::memory_order_relaxed) + hit->flows, std::memory_order_relaxed);
    for (uint32_t i = 0; i < hit->edges; ++i) {
      if (record(hit->edge[i].from, hit->edge[i].to)) return true;
    }
    if (hit->arrival) {  // nothing to evaluate here: follow the path on from this instruction
      advance(registers.rip, sp, true, &registers);
      return true;
    }
  } else {
    if (registers.rip != pending_.branch) {
      end_burst(EndReason::kWrongPc);
      return true;
    }
    if (!same_context(expected_sp_, expected_sp_known_, sp)) {
      end_burst(EndReason::kWrongStack);
      return true;
    }
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
  disarm_all();
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
  disarm_all();
  state_ = State::kIdle;
}

}  // namespace whatif::lbr
