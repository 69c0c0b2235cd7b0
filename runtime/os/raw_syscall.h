// The runtime's one way into the kernel: the `syscall` instruction itself. libc's syscall(3) is
// interposed by libwhatif.so (futex waits and wakes credit delays), so the runtime never calls it.
// Any thread and signal context; sets errno and returns -1 on failure, as syscall(3) does.
#pragma once
#include <cerrno>
#include <cstddef>
#include <type_traits>

#include "base/signal_safe.h"

namespace whatif::os {

WHATIF_SIGNAL_SAFE inline long raw_syscall6(long number, long a1, long a2, long a3, long a4, long a5, long a6) {
  long result;
  register long r10 __asm__("r10") = a4;
  register long r8 __asm__("r8") = a5;
  register long r9 __asm__("r9") = a6;
  __asm__ volatile("syscall"
                   : "=a"(result)
                   : "a"(number), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  if (result < 0 && result > -4096) {
    errno = static_cast<int>(-result);
    return -1;
  }
  return result;
}

template <typename T>
WHATIF_SIGNAL_SAFE inline long syscall_argument(T value) {
  if constexpr (std::is_null_pointer_v<T>) {
    return 0;
  } else if constexpr (std::is_pointer_v<T>) {
    return reinterpret_cast<long>(value);
  } else {
    return static_cast<long>(value);
  }
}

/// syscall(3)'s contract without libc: `number` and up to six arguments (integers or pointers).
template <typename... Args>
WHATIF_SIGNAL_SAFE inline long invoke_syscall(long number, Args... args) {
  static_assert(sizeof...(Args) <= 6, "x86-64 system calls take at most six arguments");
  long a[6] = {syscall_argument(args)...};
  return raw_syscall6(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

}  // namespace whatif::os
