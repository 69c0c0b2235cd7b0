// -fpatchable-function-entry patching (initialising thread, one thread only) and the trampolines
// (application threads, entered from a patched function's first instruction; they save every
// register the C hooks may clobber, so the function body runs as if nothing happened).
#include "fncounters/entry_patch.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "fncounters/function_counters.h"
#include "os/log.h"
#include "os/memory.h"
#include "os/os.h"

// The entry trampoline: called from a patched entry (through a near stub), so [rsp] is fn + 5 and
// [rsp + 8] the caller's return address; rsp is 16-byte aligned here. Saves the argument registers
// (and rax for varargs, r10 for the static chain, r11), xmm0-7, calls the C hook, restores, returns
// into the function body.
// The exit trampoline: the hijacked return lands here with rsp just above the slot that held the
// return address; it keeps the return values (rax, rdx, xmm0, xmm1), asks the C hook for the real
// return address, puts it back in that slot and returns through it.
asm(R"(
  .text
  .p2align 4
  .globl whatif_fncounters_entry_trampoline
  .hidden whatif_fncounters_entry_trampoline
  .type whatif_fncounters_entry_trampoline, @function
whatif_fncounters_entry_trampoline:
  endbr64
  pushq %rax
  pushq %rdi
  pushq %rsi
  pushq %rdx
  pushq %rcx
  pushq %r8
  pushq %r9
  pushq %r10
  pushq %r11
  subq $136, %rsp
  movdqu %xmm0, 0(%rsp)
  movdqu %xmm1, 16(%rsp)
  movdqu %xmm2, 32(%rsp)
  movdqu %xmm3, 48(%rsp)
  movdqu %xmm4, 64(%rsp)
  movdqu %xmm5, 80(%rsp)
  movdqu %xmm6, 96(%rsp)
  movdqu %xmm7, 112(%rsp)
  movq 208(%rsp), %rdi
  subq $5, %rdi
  leaq 216(%rsp), %rsi
  call whatif_fncounters_patched_enter
  movdqu 0(%rsp), %xmm0
  movdqu 16(%rsp), %xmm1
  movdqu 32(%rsp), %xmm2
  movdqu 48(%rsp), %xmm3
  movdqu 64(%rsp), %xmm4
  movdqu 80(%rsp), %xmm5
  movdqu 96(%rsp), %xmm6
  movdqu 112(%rsp), %xmm7
  addq $136, %rsp
  popq %r11
  popq %r10
  popq %r9
  popq %r8
  popq %rcx
  popq %rdx
  popq %rsi
  popq %rdi
  popq %rax
  ret
  .size whatif_fncounters_entry_trampoline, .-whatif_fncounters_entry_trampoline

  .p2align 4
  .globl whatif_fncounters_exit_trampoline
  .hidden whatif_fncounters_exit_trampoline
  .type whatif_fncounters_exit_trampoline, @function
whatif_fncounters_exit_trampoline:
  subq $8, %rsp
  pushq %rax
  pushq %rdx
  subq $40, %rsp
  movdqu %xmm0, 0(%rsp)
  movdqu %xmm1, 16(%rsp)
  leaq 56(%rsp), %rdi
  call whatif_fncounters_patched_exit
  movq %rax, 56(%rsp)
  movdqu 0(%rsp), %xmm0
  movdqu 16(%rsp), %xmm1
  addq $40, %rsp
  popq %rdx
  popq %rax
  ret
  .size whatif_fncounters_exit_trampoline, .-whatif_fncounters_exit_trampoline
)");

extern "C" void whatif_fncounters_entry_trampoline();
extern "C" void whatif_fncounters_exit_trampoline();

namespace whatif::fncounters {
namespace {

constexpr int kShadowDepth = 1024;

/// One hijacked return: where it was, what it was, whose.
struct Hijack {
  uintptr_t* slot;
  uintptr_t original;
  uint32_t id;  // the function's counters id (it stays valid across reloads)
};

struct ShadowStack {
  Hijack entries[kShadowDepth];
  int top = 0;
};

/// Allocated at a thread's first patched call (as its counters are), never freed during the run.
thread_local ShadowStack* t_shadow __attribute__((tls_model("initial-exec"))) = nullptr;
FunctionCounters* g_counters = nullptr;  // set before the first patch, never changed

/// `jmp *0(%rip)` followed by the absolute target: 14 bytes, placed within rel32 reach of the code.
constexpr std::size_t kStubSize = 16;

void write_stub(uint8_t* at, uintptr_t target) {
  const uint8_t jmp[6] = {0xff, 0x25, 0, 0, 0, 0};
  std::memcpy(at, jmp, sizeof(jmp));
  std::memcpy(at + 6, &target, sizeof(target));
}

}  // namespace

int patchable_entry_offset(const uint8_t* entry) {
  auto nops = [](const uint8_t* at) {
    for (int i = 0; i < 5; ++i) {
      if (at[i] != 0x90) return false;
    }
    return true;
  };
  if (nops(entry)) return 0;
  const uint8_t endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
  if (std::memcmp(entry, endbr64, sizeof(endbr64)) == 0 && nops(entry + 4)) return 4;
  return -1;
}

std::size_t patch_entries(const std::vector<uintptr_t>& entries, FunctionCounters* counters,
                          std::vector<std::string>& warnings) {
  if (entries.empty()) return 0;
  int threads = os::thread_count();
  if (threads != 1) {
    warnings.push_back("--counters: " + std::to_string(entries.size()) +
                       " selected function(s) built with -fpatchable-function-entry were not patched: the program "
                       "already runs " + std::to_string(threads) + " threads at start-up, and entries are rewritten "
                       "only while one thread runs (build with -finstrument-functions instead)");
    return 0;
  }
  g_counters = counters;
  std::size_t page = os::page_size();
  uint8_t* stubs = nullptr;
  std::size_t used = 0;
  std::size_t patched = 0;
  for (uintptr_t entry : entries) {
    // A stub page within reach of this entry (the first one usually serves the whole program).
    auto reachable = [&](uintptr_t from, uintptr_t to) {
      int64_t distance = static_cast<int64_t>(to) - static_cast<int64_t>(from + 5);
      return distance >= INT32_MIN && distance <= INT32_MAX;
    };
    if (stubs == nullptr || used + kStubSize > page || !reachable(entry, reinterpret_cast<uintptr_t>(stubs))) {
      stubs = static_cast<uint8_t*>(os::map_near(entry, page, 1ull << 30));
      used = 0;
      if (stubs == nullptr) {
        warnings.push_back("--counters: no free memory within reach of a patchable entry; that function is not counted");
        continue;
      }
    }
    uint8_t* stub = stubs + used;
    used += kStubSize;
    os::protect(reinterpret_cast<uint64_t>(stubs), page, PROT_READ | PROT_WRITE);
    write_stub(stub, reinterpret_cast<uintptr_t>(&whatif_fncounters_entry_trampoline));
    if (os::protect(reinterpret_cast<uint64_t>(stubs), page, PROT_READ | PROT_EXEC) != 0 ||
        os::protect(entry, 5, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
      warnings.push_back("--counters: cannot make code writable to patch a selected function's entry (mprotect "
                         "refused); it is not counted");
      continue;
    }
    int32_t displacement = static_cast<int32_t>(reinterpret_cast<intptr_t>(stub) - static_cast<intptr_t>(entry + 5));
    uint8_t call[5] = {0xe8, 0, 0, 0, 0};
    std::memcpy(call + 1, &displacement, sizeof(displacement));
    std::memcpy(reinterpret_cast<void*>(entry), call, sizeof(call));
    os::protect(entry, 5, PROT_READ | PROT_EXEC);
    ++patched;
  }
  return patched;
}

extern "C" void whatif_fncounters_patched_enter(uintptr_t fn, uintptr_t* slot) {
  if (t_shadow == nullptr) t_shadow = new ShadowStack;
  ShadowStack& shadow = *t_shadow;
  if (shadow.top == kShadowDepth) return;  // deeper than the shadow stack: not counted
  // Frames a longjmp skipped left entries below the stack pointer: drop them first.
  while (shadow.top > 0 && shadow.entries[shadow.top - 1].slot <= slot) --shadow.top;
  int id = g_counters->enter_patched(reinterpret_cast<const void*>(fn));
  if (id < 0) return;  // not selected (now)
  shadow.entries[shadow.top++] = {slot, *slot, static_cast<uint32_t>(id)};
  *slot = reinterpret_cast<uintptr_t>(&whatif_fncounters_exit_trampoline);
}

extern "C" uintptr_t whatif_fncounters_patched_exit(uintptr_t* slot) {
  ShadowStack& shadow = *t_shadow;  // set by the enter that hijacked this return
  while (shadow.top > 0 && shadow.entries[shadow.top - 1].slot < slot) --shadow.top;  // skipped by longjmp
  if (shadow.top == 0 || shadow.entries[shadow.top - 1].slot != slot) {
    log::fatal("--counters: a patched function returned through a frame the shadow stack does not know (a stack "
               "switch?): cannot continue; build with -finstrument-functions for such a program");
  }
  Hijack hijack = shadow.entries[--shadow.top];
  g_counters->exit_patched(hijack.id);
  return hijack.original;
}

}  // namespace whatif::fncounters
