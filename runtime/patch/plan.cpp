// Progress-point patch planning (see plan.h). Pure: decodes with x86/, allocates only the result.
// Profiler thread and tests.
#include "patch/plan.h"

#include <cstdio>
#include <cstring>
#include <limits>

#include "x86/decoder.h"
#include "x86/relocate.h"

namespace whatif::patch {
namespace {

void put32(uint8_t* at, int32_t value) { std::memcpy(at, &value, sizeof(value)); }

bool rel32(uint64_t target, uint64_t next, int32_t& out) {
  int64_t delta = static_cast<int64_t>(target - next);
  if (delta < std::numeric_limits<int32_t>::min() || delta > std::numeric_limits<int32_t>::max()) return false;
  out = static_cast<int32_t>(delta);
  return true;
}

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

bool ends_block(x86::Transfer transfer) {
  return transfer == x86::Transfer::kJump || transfer == x86::Transfer::kIndirectJump ||
         transfer == x86::Transfer::kReturn || transfer == x86::Transfer::kOther;
}

/// Whether the program may read a flag that `lock inc` changes (all status flags but CF) before
/// the code from `site` on writes it. Straight-line only: a control transfer, an undecodable
/// instruction or the function's end first counts as a read, and so does running out of
/// kLookahead instructions.
bool flags_live_at(const x86::Decoder& decoder, const FunctionCode& function, uint64_t site) {
  constexpr int kLookahead = 16;
  const uint64_t end = function.begin + function.size;
  uint32_t pending = x86::kFlagPF | x86::kFlagAF | x86::kFlagZF | x86::kFlagSF | x86::kFlagOF;
  uint64_t at = site;
  for (int i = 0; i < kLookahead && at < end; ++i) {
    x86::Instruction instruction = decoder.decode(function.bytes + (at - function.begin), end - at, at);
    if (instruction.length == 0) return true;
    if (instruction.flags_read & pending) return true;
    pending &= ~instruction.flags_written;
    if (pending == 0) return false;
    if (instruction.transfer != x86::Transfer::kNone) return true;
    at += instruction.length;
  }
  return true;
}

}  // namespace

Result<Plan> plan_patch(const FunctionCode& function, uint64_t site, uint64_t trampoline_address, uint64_t counter_address,
                        const std::vector<FunctionCode>& fragments) {
  const uint64_t end = function.begin + function.size;
  if (site < function.begin || site >= end) return Error{"the address " + hex(site) + " is outside its function"};

  // One linear sweep of the function: instruction boundaries, direct targets, computed jumps.
  const x86::Decoder decoder;  // per call, not a guarded static (static_guard_check.py)
  std::vector<uint64_t> targets;
  bool site_is_boundary = false;
  bool computed_jumps = false;
  auto sweep = [&](const FunctionCode& code) -> Result<void> {
    const uint64_t code_end = code.begin + code.size;
    for (uint64_t at = code.begin; at < code_end;) {
      x86::Instruction instruction = decoder.decode(code.bytes + (at - code.begin), code_end - at, at);
      if (instruction.length == 0) return Error{"its function does not decode at " + hex(at)};
      if (at == site) site_is_boundary = true;
      switch (instruction.transfer) {
        case x86::Transfer::kJump:
        case x86::Transfer::kConditional: targets.push_back(instruction.target); break;
        case x86::Transfer::kCall:
        case x86::Transfer::kIndirectCall: targets.push_back(at + instruction.length); break;  // the return lands here
        case x86::Transfer::kIndirectJump: computed_jumps = true; break;
        default: break;
      }
      at += instruction.length;
    }
    return {};
  };
  if (Result<void> swept = sweep(function); !swept) return Error{swept.error()};
  for (const FunctionCode& fragment : fragments) {
    if (Result<void> swept = sweep(fragment); !swept) return Error{swept.error()};
  }
  if (!site_is_boundary) return Error{hex(site) + " is not an instruction boundary of its function"};

  // The displaced instructions: whole instructions from the site covering the 5-byte jmp.
  Plan plan;
  std::vector<x86::Instruction> displaced;
  for (uint64_t at = site; at < site + kJumpLength;) {
    if (at >= end) return Error{"fewer than 5 bytes of code remain in the function after the line"};
    x86::Instruction instruction = decoder.decode(function.bytes + (at - function.begin), end - at, at);
    if (!displaced.empty() && ends_block(displaced.back().transfer)) {
      return Error{"the 5 bytes at the line run past the end of a basic block"};
    }
    displaced.push_back(instruction);
    at += instruction.length;
  }
  std::size_t length = 0;
  for (const x86::Instruction& instruction : displaced) length += instruction.length;
  if (site + length > end) return Error{"the instructions at the line run past the end of the function"};
  for (uint64_t target : targets) {
    if (target > site && target < site + length) {
      return Error{"a branch in its function lands inside the 5 bytes at the line (at " + hex(target) + ")"};
    }
  }
  if (computed_jumps && displaced.size() > 1) {
    return Error{"its function has computed jumps (a switch table?) whose targets could lie inside the 5 bytes at the line"};
  }

  // The trampoline: count, then the displaced code. Where the code after the site may read the
  // flags the increment changes, it skips the red zone and saves and restores them around it
  // (popfq alone cost a -p point on a hot line several times what COZ_PROGRESS costs).
  std::vector<uint8_t>& code = plan.trampoline;
  plan.saves_flags = flags_live_at(decoder, function, site);
  const uint8_t save[] = {0x48, 0x8D, 0x64, 0x24, 0x80,  // lea rsp, [rsp-128]: leave the red zone intact
                          0x9C};                         // pushfq
  if (plan.saves_flags) code.assign(save, save + sizeof(save));
  const uint8_t count[] = {0xF0, 0x48, 0xFF, 0x05};      // lock inc qword [rip+disp32]
  code.insert(code.end(), count, count + sizeof(count));
  int32_t disp = 0;
  if (!rel32(counter_address, trampoline_address + code.size() + 4, disp)) {
    return Error{"its counter is beyond 2 GiB of the trampoline"};
  }
  code.resize(code.size() + 4);
  put32(code.data() + code.size() - 4, disp);
  const uint8_t restore[] = {0x9D,                                            // popfq
                             0x48, 0x8D, 0xA4, 0x24, 0x80, 0x00, 0x00, 0x00};  // lea rsp, [rsp+128]
  if (plan.saves_flags) code.insert(code.end(), restore, restore + sizeof(restore));

  uint64_t from = site;
  for (std::size_t i = 0; i < displaced.size(); ++i) {
    uint8_t moved[x86::kMaxRelocatedLength];
    std::size_t written = 0, consumed = 0;
    x86::RelocateStatus status = x86::relocate(function.bytes + (from - function.begin), end - from, from,
                                               trampoline_address + code.size(), moved, sizeof(moved), written, consumed);
    if (status != x86::RelocateStatus::kOk) {
      return Error{"the instruction at " + hex(from) + " cannot be moved: " + x86::describe(status)};
    }
    code.insert(code.end(), moved, moved + written);
    from += consumed;
  }
  // Back to the first instruction after the displaced ones (dead code after a ret or jmp).
  int32_t back = 0;
  if (!rel32(site + length, trampoline_address + code.size() + 5, back)) return Error{"the site is beyond 2 GiB of the trampoline"};
  code.push_back(0xE9);
  code.resize(code.size() + 4);
  put32(code.data() + code.size() - 4, back);

  int32_t there = 0;
  if (!rel32(trampoline_address, site + kJumpLength, there)) return Error{"the trampoline is beyond 2 GiB of the site"};
  plan.jump[0] = 0xE9;
  put32(plan.jump + 1, there);
  plan.displaced = length;
  plan.displaced_instructions = displaced.size();
  return plan;
}

}  // namespace whatif::patch
