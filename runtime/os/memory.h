// Address-space syscalls for the code patcher: mapping pages near an address, changing page
// protections, counting the process's threads. Profiler thread (and tests); not signal-safe.
#pragma once
#include <cstddef>
#include <cstdint>

namespace whatif::os {

/// Maps `size` bytes of private, zeroed, read-write memory whose every byte lies within
/// `reach` bytes of `near` (both directions), trying free places outward from `near`.
/// Returns nullptr when no such place is free. The mapping is never unmapped by the callers
/// that patch code (threads may run in it until exit); free it with unmap() otherwise.
void* map_near(uint64_t near, std::size_t size, uint64_t reach);
/// munmap. Returns 0 or -errno.
int unmap(void* address, std::size_t size);
/// mprotect over the pages covering [address, address + size). `prot` is PROT_* flags.
/// Returns 0 or -errno.
int protect(uint64_t address, std::size_t size, int prot);
/// The page size.
std::size_t page_size();
/// How many threads the process has now (entries of /proc/self/task), or -errno.
int thread_count();

}  // namespace whatif::os
