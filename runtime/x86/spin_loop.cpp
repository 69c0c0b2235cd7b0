// Spin-wait loop recognition (see spin_loop.h). Pure; signal context or any thread.
#include "x86/spin_loop.h"

#include <Zydis/Zydis.h>

namespace whatif::x86 {

namespace {
/// An instruction a waiting loop may hold: it moves, compares, exchanges atomically or hints.
WHATIF_SIGNAL_SAFE bool waits_only(const Instruction& instruction) {
  if (instruction.transfer == Transfer::kConditional || instruction.transfer == Transfer::kJump) return true;
  if (instruction.transfer != Transfer::kNone) return false;
  switch (static_cast<ZydisMnemonic>(instruction.mnemonic)) {
    case ZYDIS_MNEMONIC_XCHG:
    case ZYDIS_MNEMONIC_CMPXCHG:
      return true;  // a test-and-set or compare-and-swap retry: its write is the lock's
    case ZYDIS_MNEMONIC_MOV:
    case ZYDIS_MNEMONIC_MOVZX:
    case ZYDIS_MNEMONIC_MOVSX:
    case ZYDIS_MNEMONIC_MOVSXD:
    case ZYDIS_MNEMONIC_CMP:
    case ZYDIS_MNEMONIC_TEST:
    case ZYDIS_MNEMONIC_PAUSE:
    case ZYDIS_MNEMONIC_NOP:
    case ZYDIS_MNEMONIC_LFENCE:
    case ZYDIS_MNEMONIC_MFENCE:
      return !instruction.writes_memory;
    default:
      return false;
  }
}
}  // namespace

WHATIF_SIGNAL_SAFE bool spin_loop_at(const Decoder& decoder, const uint8_t* code, std::size_t size,
                                     uint64_t code_address, uint64_t ip) {
  if (ip < code_address || ip >= code_address + size) return false;
  const uint64_t end = code_address + size;
  // The branch back: forward from ip, within the longest loop, through waiting instructions only.
  uint64_t at = ip, back_end = 0, start = 0;
  while (at < end && at < ip + kMaxSpinLoopBytes) {
    Instruction instruction = decoder.decode(code + (at - code_address), end - at, at);
    if (instruction.length == 0 || !waits_only(instruction)) return false;
    at += instruction.length;
    bool branch = instruction.transfer == Transfer::kConditional || instruction.transfer == Transfer::kJump;
    if (branch && instruction.target <= ip && at - instruction.target <= kMaxSpinLoopBytes) {
      back_end = at;
      start = instruction.target;
      break;
    }
    if (instruction.transfer == Transfer::kJump) return false;  // leaves for code not in a loop with ip
  }
  if (back_end == 0 || start < code_address) return false;
  // The loop from its start: instructions that land on ip, all waiting, one reading memory.
  // A load that feeds an address walks a list (`while (p) p = p->next;`): it moves on, not waits.
  bool reads = false, on_ip = false;
  uint16_t written = 0, addressing = 0;
  for (at = start; at < back_end;) {
    Instruction instruction = decoder.decode(code + (at - code_address), back_end - at, at);
    if (instruction.length == 0 || !waits_only(instruction)) return false;
    on_ip = on_ip || at == ip;
    reads = reads || instruction.reads_memory;
    written = static_cast<uint16_t>(written | instruction.registers_written);
    addressing = static_cast<uint16_t>(addressing | instruction.address_registers);
    at += instruction.length;
  }
  return at == back_end && on_ip && reads && (written & addressing) == 0;
}

}  // namespace whatif::x86
