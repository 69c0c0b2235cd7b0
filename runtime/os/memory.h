// Address-space syscalls for the code patcher: mapping pages near an address, changing page
// protections, counting the process's threads. Profiler thread (and tests); not signal-safe.
#pragma once
#include <string>
#include <cstddef>
#include <cstdint>

namespace whatif::os {

/// Maps `size` bytes of private, zeroed, read-write memory whose every byte lies within
/// `reach` bytes of `near` (both directions), trying free places outward from `near`.
/// Returns nullptr when no such place is free. The mapping is never unmapped by the callers
/// that patch code (threads may run in it until exit); free it with unmap() otherwise.
void* map_near(uint64_t near, std::size_t size, uint64_t reach);
/// Maps `size` bytes of private, zeroed, read-write memory at exactly `address` (page-aligned),
/// never replacing a mapping. Returns nullptr when any of it is taken.
void* map_at(uint64_t address, std::size_t size);
/// Makes every thread of the process serialise its instruction stream before it runs user code
/// again (membarrier PRIVATE_EXPEDITED_SYNC_CORE, registered on first use), after code was changed.
/// False when the kernel has no such command: threads then see the change at their next
/// serialising event (any interrupt or syscall), as x86 guarantees for a single-byte change.
bool sync_cores();
/// munmap. Returns 0 or -errno.
int unmap(void* address, std::size_t size);
/// mprotect over the pages covering [address, address + size). `prot` is PROT_* flags.
/// Returns 0 or -errno.
int protect(uint64_t address, std::size_t size, int prot);
/// The page size.
std::size_t page_size();
/// How many threads the process has now (entries of /proc/self/task), or -errno.
int thread_count();
/// The running executable's path ("" if unknown), from the calling thread's /proc entry: once the
/// main thread has left with pthread_exit, /proc/self (the thread group leader, a zombie) has no
/// exe or maps any more.
std::string executable_path();

}  // namespace whatif::os
