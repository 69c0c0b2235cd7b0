// The one list of original (next-in-lookup-order) symbols the runtime wraps or calls past its own
// shims, as an X-macro typed with decltype(&::name). Resolved once, on first use, by dlsym(RTLD_NEXT).
#pragma once
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/// glibc's program entry (not declared in any header): whatif wraps `main` through it to learn the
/// status main returns.
extern "C" int __libc_start_main(int (*main)(int, char**, char**), int argc, char** argv, void (*init)(),
                                 void (*fini)(), void (*rtld_fini)(), void* stack_end);

// REQUIRED: start-up fails naming the symbol if missing. OPTIONAL: may be absent (nullptr).
#define WHATIF_REAL_SYMBOLS(REQUIRED, OPTIONAL)                                                   \
  REQUIRED(pthread_create) REQUIRED(pthread_exit) REQUIRED(pthread_join)                          \
  OPTIONAL(pthread_tryjoin_np) OPTIONAL(pthread_timedjoin_np)                                     \
  REQUIRED(pthread_mutex_lock) REQUIRED(pthread_mutex_unlock) REQUIRED(pthread_mutex_trylock)     \
  OPTIONAL(pthread_mutex_timedlock)                                                               \
  REQUIRED(pthread_cond_wait) REQUIRED(pthread_cond_timedwait) REQUIRED(pthread_cond_signal)      \
  REQUIRED(pthread_cond_broadcast) OPTIONAL(pthread_cond_clockwait)                               \
  REQUIRED(pthread_barrier_wait)                                                                  \
  REQUIRED(pthread_rwlock_rdlock) REQUIRED(pthread_rwlock_wrlock) REQUIRED(pthread_rwlock_unlock) \
  OPTIONAL(pthread_rwlock_timedrdlock) OPTIONAL(pthread_rwlock_timedwrlock)                       \
  REQUIRED(sem_wait) REQUIRED(sem_timedwait) REQUIRED(sem_post) OPTIONAL(sem_clockwait)           \
  REQUIRED(sigwait) REQUIRED(sigwaitinfo) REQUIRED(sigtimedwait) REQUIRED(sigsuspend)             \
  REQUIRED(kill) REQUIRED(pthread_kill) REQUIRED(sigqueue)                                        \
  REQUIRED(sigaction) REQUIRED(signal) REQUIRED(sigprocmask) REQUIRED(pthread_sigmask)            \
  REQUIRED(exit) REQUIRED(_exit) REQUIRED(_Exit)                                                  \
  REQUIRED(nanosleep) REQUIRED(clock_nanosleep) REQUIRED(usleep) REQUIRED(sleep)                  \
  REQUIRED(read) REQUIRED(write) REQUIRED(recv) REQUIRED(send) REQUIRED(recvfrom)                 \
  REQUIRED(sendto) REQUIRED(recvmsg) REQUIRED(sendmsg) REQUIRED(accept) REQUIRED(accept4)         \
  REQUIRED(connect) REQUIRED(poll) REQUIRED(ppoll) REQUIRED(select) REQUIRED(pselect)             \
  REQUIRED(epoll_wait) REQUIRED(epoll_pwait)                                                      \
  REQUIRED(wait) REQUIRED(waitpid) REQUIRED(waitid) REQUIRED(wait3) REQUIRED(wait4)              \
  REQUIRED(fork) REQUIRED(execve) REQUIRED(execv) REQUIRED(execvp) REQUIRED(execvpe)              \
  REQUIRED(dlopen) REQUIRED(close) OPTIONAL(close_range) REQUIRED(__libc_start_main)            \
  REQUIRED(syscall)

namespace whatif::real {

#define WHATIF_DECLARE_REAL(name) extern decltype(&::name) name;
WHATIF_REAL_SYMBOLS(WHATIF_DECLARE_REAL, WHATIF_DECLARE_REAL)
#undef WHATIF_DECLARE_REAL

/// Resolves every symbol once (idempotent, thread-safe). A missing required symbol is fatal and
/// named in the message.
void resolve();

}  // namespace whatif::real
