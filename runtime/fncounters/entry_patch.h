// `--counters` on programs built with -fpatchable-function-entry=5 (XRay's way, entry side): the
// entry NOPs of each selected function become a call to a trampoline that runs the enter hook and
// points the function's return address at an exit trampoline (a per-thread shadow stack keeps the
// real one). Entries are patched at start-up and by reloads while threads run (only the first byte
// changes: see entry_patch.cpp), and unpatched when a reload drops their function. Unselected
// functions keep their NOPs and cost nothing. Patching on the initialising thread at start-up and on
// the profiler thread at reloads; trampolines and hooks on application threads.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace whatif::fncounters {

class FunctionCounters;

/// Where -fpatchable-function-entry=5's five one-byte NOPs start in a function: 0 at the entry, 4
/// after an `endbr64` (-fcf-protection builds), -1 when the function has none. An entry this file
/// patched counts as patchable (its NOPs' first byte is a call now).
int patchable_entry_offset(const uint8_t* entry);

/// Makes the entry NOPs at `entry` call the trampoline, whose hooks report to `counters`; safe while
/// other threads run the function. `only_thread`: no other thread runs (start-up), which allows the
/// fallback that rewrites all five bytes when the live scheme's stub address is taken (or `live` is
/// false: WHATIF_COUNTERS_LIVE_PATCH=off). Returns "" or why the entry is not patched.
std::string patch_entry(uintptr_t entry, FunctionCounters* counters, bool only_thread, bool live);
/// Puts the NOPs back (safe while threads run): the function is no longer hooked. False for an entry
/// the start-up fallback patched (it stays patched; its hook finds the function unselected).
bool unpatch_entry(uintptr_t entry);
/// The entries patched now (sorted).
std::vector<uintptr_t> patched_entries();

/// C++ exceptions through patched functions (application threads, from the unwinder's interposed
/// entry points). Before an exception unwinds: puts the real return addresses back in this thread's
/// hijacked slots, so the unwinder can follow them.
void restore_returns_for_unwind();
/// When a handler catches (`handler_sp`: its stack pointer): counts the exits of the patched
/// functions the exception left and hijacks the returns of those still running again.
void rehook_after_catch(uintptr_t handler_sp);

/// The trampolines' C side (application threads). `fn`: the patched NOPs' address; `slot`: where
/// its return address is. Enter returns after hooking (or not, when `fn` is no longer selected or the
/// shadow stack is full); exit returns the real return address.
extern "C" void whatif_fncounters_patched_enter(uintptr_t fn, uintptr_t* slot);
extern "C" uintptr_t whatif_fncounters_patched_exit(uintptr_t* slot);

}  // namespace whatif::fncounters
