// Address-space syscalls for the code patcher (see memory.h). Profiler thread; not signal-safe.
#include "os/memory.h"

#include <dirent.h>
#include <linux/membarrier.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "base/fill_once.h"

namespace whatif::os {

std::size_t page_size() {
  static std::atomic<std::size_t> size{0};
  return base::fill_once(size, std::size_t{0}, [] { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); });
}

void* map_near(uint64_t near, std::size_t size, uint64_t reach) {
  const uint64_t page = page_size();
  size = (size + page - 1) & ~(page - 1);
  const uint64_t base = near & ~(page - 1);
  auto within = [&](uint64_t begin) {
    uint64_t end = begin + size;
    uint64_t low = near > begin ? near - begin : 0;
    uint64_t high = end > near ? end - near : 0;
    return low <= reach && high <= reach;
  };
  // Outward from the address in growing steps: below first (where a program's text usually has
  // free space below its load address), then above. MAP_FIXED_NOREPLACE never clobbers a mapping.
  for (uint64_t step = 1ull << 20; step < reach; step <<= 1) {
    for (int side = 0; side < 2; ++side) {
      uint64_t candidate = side == 0 ? (base > step ? base - step : 0) : base + step;
      if (candidate == 0 || !within(candidate)) continue;
      void* mapped = mmap(reinterpret_cast<void*>(candidate), size, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
      if (mapped == MAP_FAILED) continue;
      if (within(reinterpret_cast<uint64_t>(mapped))) return mapped;
      munmap(mapped, size);  // a kernel without MAP_FIXED_NOREPLACE took it as a hint
    }
  }
  return nullptr;
}

void* map_at(uint64_t address, std::size_t size) {
  void* mapped = mmap(reinterpret_cast<void*>(address), size, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (mapped == MAP_FAILED) return nullptr;
  if (reinterpret_cast<uint64_t>(mapped) != address) {  // a kernel without MAP_FIXED_NOREPLACE took it as a hint
    munmap(mapped, size);
    return nullptr;
  }
  return mapped;
}

bool sync_cores() {
  static std::atomic<int> registered{-1};  // registering twice is harmless
  const int state = base::fill_once(registered, -1, [] {
    return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0) == 0 ? 1 : 0;
  });
  return state == 1 && syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0) == 0;
}

int unmap(void* address, std::size_t size) { return munmap(address, size) == 0 ? 0 : -errno; }

int protect(uint64_t address, std::size_t size, int prot) {
  const uint64_t page = page_size();
  uint64_t begin = address & ~(page - 1);
  uint64_t end = (address + size + page - 1) & ~(page - 1);
  return mprotect(reinterpret_cast<void*>(begin), end - begin, prot) == 0 ? 0 : -errno;
}

int thread_count() {
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return -errno;
  int count = 0;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count;
}

std::string executable_path() {
  char buffer[4096];
  for (const char* link : {"/proc/thread-self/exe", "/proc/self/exe"}) {  // thread-self: Linux 3.17
    ssize_t length = ::readlink(link, buffer, sizeof(buffer) - 1);
    if (length > 0) return std::string(buffer, static_cast<std::size_t>(length));
  }
  return {};
}

}  // namespace whatif::os
