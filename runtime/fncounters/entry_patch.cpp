// -fpatchable-function-entry patching (initialising thread at start-up, profiler thread at reloads,
// while application threads run) and the trampolines (application threads, entered from a patched
// function's first instruction; they save every register the C hooks may clobber, so the function
// body runs as if nothing happened), and what C++ exceptions and pthread_exit need to unwind past a
// hijacked return (the throwing or exiting thread, from the interposed unwinder entries).
#include "fncounters/entry_patch.h"

#include <sys/mman.h>

#include <algorithm>
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
  bool restored;  // the real return address is back in the slot while an exception unwinds
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

// Patching while threads run. A thread may be anywhere in the five one-byte NOPs (preempted after
// the second, say), so rewriting bytes 1-4 under it would run the middle of a call. The live scheme
// never changes them: the call's displacement is 0x90909090, the NOPs' own bytes, so the call lands
// 0x6F6F6F6B bytes (about 1.87 GB) below the entry, where a 5-byte `jmp rel32` stub is mapped
// (MAP_FIXED_NOREPLACE) that jumps on to the trampoline. Patching and unpatching then store one byte
// (0x90 <-> 0xe8, an atomic store within one aligned word): every thread sees five NOPs or the call,
// and a thread already past the first byte runs NOPs into the body (that activation is not counted).
// sync_cores() (membarrier SYNC_CORE) makes every thread see the change before the reload returns.
constexpr uint8_t kNop = 0x90;
constexpr uint8_t kCall = 0xe8;
constexpr int32_t kLiveDisplacement = static_cast<int32_t>(0x90909090u);
constexpr std::size_t kLiveStubSize = 5;

enum class Mode { kLive, kStartup };
struct Patched {
  uintptr_t entry;
  Mode mode;
  bool on;
};
// Touched by the initialising thread at start-up, then by the profiler thread only.
std::vector<Patched> g_entries;               // every entry ever patched, sorted by address
std::vector<uintptr_t> g_live_stub_pages;     // pages this file mapped for live stubs (sorted)
std::vector<uintptr_t> g_hubs;                // `jmp *` stubs to the trampoline, for live stubs
uint8_t* g_startup_stubs = nullptr;           // the start-up fallback's current stub page
std::size_t g_startup_used = 0;

bool reachable(uintptr_t from_end, uintptr_t to) {
  int64_t distance = static_cast<int64_t>(to) - static_cast<int64_t>(from_end);
  return distance >= INT32_MIN && distance <= INT32_MAX;
}

Patched* known(uintptr_t entry) {
  auto it = std::lower_bound(g_entries.begin(), g_entries.end(), entry,
                             [](const Patched& p, uintptr_t e) { return p.entry < e; });
  return it != g_entries.end() && it->entry == entry ? &*it : nullptr;
}

void remember(uintptr_t entry, Mode mode) {
  auto it = std::lower_bound(g_entries.begin(), g_entries.end(), entry,
                             [](const Patched& p, uintptr_t e) { return p.entry < e; });
  g_entries.insert(it, {entry, mode, true});
}

/// Stores `byte` at `entry` in the program's code (made writable for the store, executable all along).
bool store_code_byte(uintptr_t entry, uint8_t byte) {
  if (os::protect(entry, 1, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) return false;
  __atomic_store_n(reinterpret_cast<uint8_t*>(entry), byte, __ATOMIC_RELEASE);
  os::protect(entry, 1, PROT_READ | PROT_EXEC);
  os::sync_cores();
  return true;
}

/// A `jmp *` stub to the trampoline within rel32 reach of `from_end` (hubs are shared).
uintptr_t hub_near(uintptr_t from_end) {
  for (uintptr_t hub : g_hubs) {
    if (reachable(from_end, hub)) return hub;
  }
  std::size_t page = os::page_size();
  auto* mapped = static_cast<uint8_t*>(os::map_near(from_end, page, 1ull << 30));
  if (mapped == nullptr) return 0;
  write_stub(mapped, reinterpret_cast<uintptr_t>(&whatif_fncounters_entry_trampoline));
  os::protect(reinterpret_cast<uint64_t>(mapped), page, PROT_READ | PROT_EXEC);
  g_hubs.push_back(reinterpret_cast<uintptr_t>(mapped));
  return g_hubs.back();
}

/// Writes the live scheme's stub for `entry` (idempotent). "" or why it cannot.
std::string live_stub(uintptr_t entry) {
  uintptr_t stub = entry + 5 + static_cast<uintptr_t>(static_cast<intptr_t>(kLiveDisplacement));
  if (stub >= entry || stub < (1u << 20)) return "the stub address 1.87 GB below the entry is outside the address space";
  std::size_t page = os::page_size();
  uintptr_t first = stub & ~(page - 1), last = (stub + kLiveStubSize - 1) & ~(page - 1);
  for (uintptr_t at = first; at <= last; at += page) {
    if (std::binary_search(g_live_stub_pages.begin(), g_live_stub_pages.end(), at)) continue;
    if (os::map_at(at, page) == nullptr) {
      return "the stub address 1.87 GB below the entry is taken by another mapping";
    }
    os::protect(at, page, PROT_READ | PROT_EXEC);
    g_live_stub_pages.insert(std::lower_bound(g_live_stub_pages.begin(), g_live_stub_pages.end(), at), at);
  }
  uintptr_t hub = hub_near(stub + kLiveStubSize);
  if (hub == 0) return "no free memory within reach of its stub";
  uint8_t jmp[kLiveStubSize] = {0xe9, 0, 0, 0, 0};
  int32_t displacement = static_cast<int32_t>(static_cast<intptr_t>(hub) - static_cast<intptr_t>(stub + kLiveStubSize));
  std::memcpy(jmp + 1, &displacement, sizeof(displacement));
  // Executable all along: other entries' stubs on the page may be running.
  os::protect(first, last - first + page, PROT_READ | PROT_WRITE | PROT_EXEC);
  std::memcpy(reinterpret_cast<void*>(stub), jmp, sizeof(jmp));
  os::protect(first, last - first + page, PROT_READ | PROT_EXEC);
  return "";
}

/// The start-up fallback (one thread only): all five bytes become a call to a near stub.
std::string startup_patch(uintptr_t entry) {
  std::size_t page = os::page_size();
  if (g_startup_stubs == nullptr || g_startup_used + kStubSize > page ||
      !reachable(entry + 5, reinterpret_cast<uintptr_t>(g_startup_stubs))) {
    g_startup_stubs = static_cast<uint8_t*>(os::map_near(entry, page, 1ull << 30));
    g_startup_used = 0;
    if (g_startup_stubs == nullptr) return "no free memory within reach of the entry";
  }
  uint8_t* stub = g_startup_stubs + g_startup_used;
  g_startup_used += kStubSize;
  os::protect(reinterpret_cast<uint64_t>(g_startup_stubs), page, PROT_READ | PROT_WRITE);
  write_stub(stub, reinterpret_cast<uintptr_t>(&whatif_fncounters_entry_trampoline));
  if (os::protect(reinterpret_cast<uint64_t>(g_startup_stubs), page, PROT_READ | PROT_EXEC) != 0 ||
      os::protect(entry, 5, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
    return "mprotect refused to make its code writable";
  }
  int32_t displacement = static_cast<int32_t>(reinterpret_cast<intptr_t>(stub) - static_cast<intptr_t>(entry + 5));
  uint8_t call[5] = {kCall, 0, 0, 0, 0};
  std::memcpy(call + 1, &displacement, sizeof(displacement));
  std::memcpy(reinterpret_cast<void*>(entry), call, sizeof(call));
  os::protect(entry, 5, PROT_READ | PROT_EXEC);
  return "";
}

}  // namespace

int patchable_entry_offset(const uint8_t* entry) {
  auto address = reinterpret_cast<uintptr_t>(entry);
  if (known(address) != nullptr) return 0;
  auto nops = [](const uint8_t* at) {
    for (int i = 0; i < 5; ++i) {
      if (at[i] != kNop) return false;
    }
    return true;
  };
  const uint8_t endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
  bool after_endbr = std::memcmp(entry, endbr64, sizeof(endbr64)) == 0;
  if (after_endbr && known(address + 4) != nullptr) return 4;
  if (nops(entry)) return 0;
  if (after_endbr && nops(entry + 4)) return 4;
  return -1;
}

std::string patch_entry(uintptr_t entry, FunctionCounters* counters, bool only_thread, bool live) {
  // The same object every time; written before the first entry calls the trampoline (the code
  // byte's release store and the core sync publish it).
  if (g_counters == nullptr) g_counters = counters;
  if (Patched* patched = known(entry)) {
    if (patched->on) return "";
    // Unpatched by an earlier reload: its stub is still in place.
    if (!store_code_byte(entry, kCall)) return "mprotect refused to make its code writable";
    patched->on = true;
    return "";
  }
  std::string why = live ? live_stub(entry) : "live patching is off (WHATIF_COUNTERS_LIVE_PATCH=off)";
  if (why.empty()) {
    os::sync_cores();  // the stub is complete everywhere before any thread can call it
    if (!store_code_byte(entry, kCall)) return "mprotect refused to make its code writable";
    remember(entry, Mode::kLive);
    return "";
  }
  if (!only_thread) return why + "; entries are rewritten whole only at start-up, while the program has one thread";
  if (std::string fallback = startup_patch(entry); !fallback.empty()) return why + "; " + fallback;
  remember(entry, Mode::kStartup);
  return "";
}

bool unpatch_entry(uintptr_t entry) {
  Patched* patched = known(entry);
  if (patched == nullptr || !patched->on) return true;
  if (patched->mode != Mode::kLive) return false;
  if (!store_code_byte(entry, kNop)) return false;
  patched->on = false;
  return true;
}

std::vector<uintptr_t> patched_entries() {
  std::vector<uintptr_t> out;
  for (const Patched& patched : g_entries) {
    if (patched.on) out.push_back(patched.entry);
  }
  return out;
}

extern "C" void whatif_fncounters_patched_enter(uintptr_t fn, uintptr_t* slot) {
  if (t_shadow == nullptr) t_shadow = new ShadowStack;
  ShadowStack& shadow = *t_shadow;
  if (shadow.top == kShadowDepth) return;  // deeper than the shadow stack: not counted
  // Frames a longjmp skipped left entries below the stack pointer: drop them first. Those an
  // exception in flight unwound (a destructor runs this call) exited: count them.
  while (shadow.top > 0 && shadow.entries[shadow.top - 1].slot <= slot) {
    Hijack dropped = shadow.entries[--shadow.top];
    if (dropped.restored) g_counters->exit_patched(dropped.id);
  }
  int id = g_counters->enter_patched(reinterpret_cast<const void*>(fn));
  if (id < 0) return;  // not selected (now)
  shadow.entries[shadow.top++] = {slot, *slot, static_cast<uint32_t>(id), false};
  *slot = reinterpret_cast<uintptr_t>(&whatif_fncounters_exit_trampoline);
}

extern "C" uintptr_t whatif_fncounters_patched_exit(uintptr_t* slot) {
  ShadowStack& shadow = *t_shadow;  // set by the enter that hijacked this return
  while (shadow.top > 0 && shadow.entries[shadow.top - 1].slot < slot) {  // skipped by longjmp or unwound
    Hijack dropped = shadow.entries[--shadow.top];
    if (dropped.restored) g_counters->exit_patched(dropped.id);
  }
  if (shadow.top == 0 || shadow.entries[shadow.top - 1].slot != slot) {
    log::fatal("--counters: a patched function returned through a frame the shadow stack does not know (a stack "
               "switch?): cannot continue; build with -finstrument-functions for such a program");
  }
  Hijack hijack = shadow.entries[--shadow.top];
  g_counters->exit_patched(hijack.id);
  return hijack.original;
}

// C++ exceptions. The unwinder finds no unwind info for the exit trampoline, so a hijacked return
// address would end its search (std::terminate). Before it walks the stack, every hijacked slot of
// this thread gets its real return address back; when a handler catches (__cxa_begin_catch), the
// functions whose frames the exception left are counted as exited, and the hijacks of those still
// running are put back.
void restore_returns_for_unwind() {
  ShadowStack* shadow = t_shadow;
  if (shadow == nullptr) return;
  const auto trampoline = reinterpret_cast<uintptr_t>(&whatif_fncounters_exit_trampoline);
  for (int i = 0; i < shadow->top; ++i) {
    Hijack& hijack = shadow->entries[i];
    if (hijack.restored || *hijack.slot != trampoline) continue;  // a frame a longjmp left: not ours now
    *hijack.slot = hijack.original;
    hijack.restored = true;
  }
}

void rehook_after_catch(uintptr_t handler_sp) {
  ShadowStack* shadow = t_shadow;
  if (shadow == nullptr) return;
  // Below the handler's stack pointer: frames the exception unwound. Their functions exited.
  while (shadow->top > 0 && reinterpret_cast<uintptr_t>(shadow->entries[shadow->top - 1].slot) < handler_sp) {
    Hijack hijack = shadow->entries[--shadow->top];
    if (hijack.restored) g_counters->exit_patched(hijack.id);
  }
  const auto trampoline = reinterpret_cast<uintptr_t>(&whatif_fncounters_exit_trampoline);
  for (int i = 0; i < shadow->top; ++i) {
    Hijack& hijack = shadow->entries[i];
    if (!hijack.restored || *hijack.slot != hijack.original) continue;
    *hijack.slot = trampoline;
    hijack.restored = false;
  }
}

}  // namespace whatif::fncounters
