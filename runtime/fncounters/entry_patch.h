// `--counters` on programs built with -fpatchable-function-entry=5 (XRay's way, entry side): at
// start-up, while the program has one thread, the entry NOPs of each selected function become a call
// to a trampoline that runs the enter hook and points the function's return address at an exit
// trampoline (a per-thread shadow stack keeps the real one). Unselected functions keep their NOPs and
// cost nothing. Patching on the initialising thread; trampolines and hooks on application threads.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace whatif::fncounters {

class FunctionCounters;

/// Where -fpatchable-function-entry=5's five one-byte NOPs start in a function: 0 at the entry, 4
/// after an `endbr64` (-fcf-protection builds), -1 when the function has none.
int patchable_entry_offset(const uint8_t* entry);

/// Patches `entries` (the NOPs' addresses of selected functions) to call the trampoline,
/// whose hooks report to `counters`. Only while the process has one thread: returns how many were
/// patched and appends to `warnings` why any was not.
std::size_t patch_entries(const std::vector<uintptr_t>& entries, FunctionCounters* counters,
                          std::vector<std::string>& warnings);

/// The trampolines' C side (application threads). `fn`: the patched NOPs' address; `slot`: where
/// its return address is. Enter returns after hooking (or not, when `fn` is no longer selected or the
/// shadow stack is full); exit returns the real return address.
extern "C" void whatif_fncounters_patched_enter(uintptr_t fn, uintptr_t* slot);
extern "C" uintptr_t whatif_fncounters_patched_exit(uintptr_t* slot);

}  // namespace whatif::fncounters
