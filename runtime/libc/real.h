// The one list of original (next-in-lookup-order) symbols the runtime wraps or calls past its own
// shims, as an X-macro typed with decltype(&::name). Resolved once, on first use, by dlsym(RTLD_NEXT).
#pragma once
#include <dlfcn.h>
#include <atomic>
#include <fcntl.h>
#include <mqueue.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>
#include <unwind.h>

/// glibc's program entry (not declared in any header): whatif wraps `main` through it to learn the
/// status main returns.
extern "C" int __libc_start_main(int (*main)(int, char**, char**), int argc, char** argv, void (*init)(),
                                 void (*fini)(), void (*rtld_fini)(), void* stack_end);

/// libgomp's entry points (GCC's OpenMP ABI; no installed header declares them). Its threads block
/// and wake in futex system calls of their own (inline, not syscall(3)), so whatif follows OpenMP at
/// these calls: parallel regions, barriers, critical sections, locks and task waits.
extern "C" {
void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags);
void GOMP_parallel_sections(void (*fn)(void*), void* data, unsigned num_threads, unsigned count, unsigned flags);
void GOMP_barrier();
void GOMP_loop_end();
void GOMP_sections_end();
void GOMP_taskwait();
void GOMP_critical_start();
void GOMP_critical_end();
void GOMP_critical_name_start(void** name);
void GOMP_critical_name_end(void** name);
void omp_set_lock(void* lock);
void omp_unset_lock(void* lock);
void omp_set_nest_lock(void* lock);
void omp_unset_nest_lock(void* lock);
/// The C++ ABI's catch entry (libstdc++; <cxxabi.h> declares it in namespace __cxxabiv1 only).
void* __cxa_begin_catch(void* exception) noexcept;
}

/// glibc's stdio entry points that no header declares in every configuration: the fortified
/// printf family (<bits/stdio2-decl.h>, _FORTIFY_SOURCE only) and the C99 scanf family that C
/// programs call (stdio.h redirects scanf there unless _GNU_SOURCE).
extern "C" {
int __vfprintf_chk(FILE* stream, int flag, const char* format, va_list arguments);
int __isoc99_vfscanf(FILE* stream, const char* format, va_list arguments);
}

// REQUIRED: start-up fails naming the symbol if missing. OPTIONAL: may be absent (nullptr).
#define WHATIF_REAL_SYMBOLS(REQUIRED, OPTIONAL)                                                   \
  REQUIRED(pthread_create) REQUIRED(pthread_exit) REQUIRED(pthread_join) REQUIRED(pthread_detach)  \
  OPTIONAL(pthread_tryjoin_np) OPTIONAL(pthread_timedjoin_np)                                     \
  REQUIRED(pthread_mutex_lock) REQUIRED(pthread_mutex_unlock) REQUIRED(pthread_mutex_trylock)     \
  OPTIONAL(pthread_mutex_timedlock) OPTIONAL(pthread_mutex_clocklock) OPTIONAL(pthread_clockjoin_np) \
  REQUIRED(pthread_cond_wait) REQUIRED(pthread_cond_timedwait) REQUIRED(pthread_cond_signal)      \
  REQUIRED(pthread_cond_broadcast) OPTIONAL(pthread_cond_clockwait)                               \
  REQUIRED(pthread_barrier_wait)                                                                  \
  REQUIRED(pthread_rwlock_rdlock) REQUIRED(pthread_rwlock_wrlock) REQUIRED(pthread_rwlock_unlock) \
  REQUIRED(pthread_rwlock_tryrdlock) REQUIRED(pthread_rwlock_trywrlock)                          \
  OPTIONAL(pthread_rwlock_timedrdlock) OPTIONAL(pthread_rwlock_timedwrlock)                       \
  OPTIONAL(pthread_rwlock_clockrdlock) OPTIONAL(pthread_rwlock_clockwrlock)                       \
  REQUIRED(sem_wait) REQUIRED(sem_timedwait) REQUIRED(sem_post) OPTIONAL(sem_clockwait)           \
  REQUIRED(sigwait) REQUIRED(sigwaitinfo) REQUIRED(sigtimedwait) REQUIRED(sigsuspend)             \
  REQUIRED(kill) REQUIRED(pthread_kill) REQUIRED(sigqueue)                                        \
  REQUIRED(sigaction) REQUIRED(signal) REQUIRED(sigprocmask) REQUIRED(pthread_sigmask)            \
  REQUIRED(exit) REQUIRED(_exit) REQUIRED(_Exit)                                                  \
  REQUIRED(nanosleep) REQUIRED(clock_nanosleep) REQUIRED(usleep) REQUIRED(sleep)                  \
  REQUIRED(sched_yield)                                                                           \
  REQUIRED(read) REQUIRED(write) REQUIRED(readv) REQUIRED(writev) REQUIRED(recv) REQUIRED(send) REQUIRED(recvfrom)                 \
  REQUIRED(sendto) REQUIRED(recvmsg) REQUIRED(sendmsg) REQUIRED(accept) REQUIRED(accept4)         \
  REQUIRED(connect) REQUIRED(listen) REQUIRED(poll) REQUIRED(ppoll) REQUIRED(select)              \
  REQUIRED(pselect)                                                                               \
  REQUIRED(epoll_wait) REQUIRED(epoll_pwait) REQUIRED(epoll_ctl)                                 \
  REQUIRED(wait) REQUIRED(waitpid) REQUIRED(waitid) REQUIRED(wait3) REQUIRED(wait4)              \
  REQUIRED(fork) REQUIRED(execve) REQUIRED(execv) REQUIRED(execvp) REQUIRED(execvpe)              \
  REQUIRED(dlopen) REQUIRED(close) OPTIONAL(close_range) REQUIRED(__libc_start_main)            \
  REQUIRED(fcntl) OPTIONAL(fcntl64)                                                               \
  REQUIRED(syscall)                                                                               \
  OPTIONAL(GOMP_parallel) OPTIONAL(GOMP_parallel_sections) OPTIONAL(GOMP_barrier)                \
  OPTIONAL(GOMP_loop_end) OPTIONAL(GOMP_sections_end) OPTIONAL(GOMP_taskwait)                     \
  OPTIONAL(GOMP_critical_start) OPTIONAL(GOMP_critical_end) OPTIONAL(GOMP_critical_name_start)   \
  OPTIONAL(GOMP_critical_name_end) OPTIONAL(omp_set_lock) OPTIONAL(omp_unset_lock)               \
  OPTIONAL(omp_set_nest_lock) OPTIONAL(omp_unset_nest_lock)                                       \
  OPTIONAL(_Unwind_RaiseException) OPTIONAL(_Unwind_Resume_or_Rethrow) OPTIONAL(__cxa_begin_catch)  \
  OPTIONAL(thrd_create) OPTIONAL(thrd_join) OPTIONAL(thrd_exit) OPTIONAL(thrd_sleep)              \
  OPTIONAL(thrd_yield) OPTIONAL(mtx_lock) OPTIONAL(mtx_trylock) OPTIONAL(mtx_timedlock)            \
  OPTIONAL(mtx_unlock) OPTIONAL(cnd_wait) OPTIONAL(cnd_timedwait) OPTIONAL(cnd_signal)             \
  OPTIONAL(cnd_broadcast)                                                                         \
  REQUIRED(fgets) REQUIRED(fgets_unlocked) REQUIRED(fread) REQUIRED(fread_unlocked) REQUIRED(fgetc) \
  REQUIRED(getc) REQUIRED(getchar) REQUIRED(fgetc_unlocked) REQUIRED(getc_unlocked)                \
  REQUIRED(getchar_unlocked) REQUIRED(__uflow) REQUIRED(getline) REQUIRED(getdelim)                \
  REQUIRED(__getdelim) REQUIRED(vfscanf) REQUIRED(__isoc99_vfscanf)                               \
  REQUIRED(fwrite) REQUIRED(fwrite_unlocked) REQUIRED(fputs) REQUIRED(fputs_unlocked) REQUIRED(puts) \
  REQUIRED(fputc) REQUIRED(putc) REQUIRED(putchar) REQUIRED(fputc_unlocked) REQUIRED(putc_unlocked)  \
  REQUIRED(putchar_unlocked) REQUIRED(__overflow) REQUIRED(fflush) REQUIRED(fflush_unlocked)      \
  REQUIRED(vfprintf) REQUIRED(__vfprintf_chk) REQUIRED(vdprintf) REQUIRED(fclose)    \
  REQUIRED(timer_create) OPTIONAL(mq_notify)

namespace whatif::real {

#define WHATIF_DECLARE_REAL(name) extern decltype(&::name) name;
WHATIF_REAL_SYMBOLS(WHATIF_DECLARE_REAL, WHATIF_DECLARE_REAL)
#undef WHATIF_DECLARE_REAL

namespace detail {
extern std::atomic<int> g_resolve_state;  ///< 0 unresolved, 1 resolving, 2 resolved
void resolve_all();
}  // namespace detail

/// Resolves every symbol once (idempotent, thread-safe). A missing required symbol is fatal and
/// named in the message. Inline: every shim calls it first, the stdio shims on each character.
inline bool resolved() { return detail::g_resolve_state.load(std::memory_order_acquire) == 2; }
inline void resolve() {
  if (detail::g_resolve_state.load(std::memory_order_acquire) != 2) detail::resolve_all();
}

/// An optional original that was absent at resolve() (a library loaded later, e.g. libgomp with a
/// dlopen'ed plugin): looks it up now, in the global scope and then in an already loaded `library`.
/// nullptr when neither has it.
void* resolve_late(const char* name, const char* library);

/// Starts one of the runtime's own threads past the pthread_create shim, with every signal blocked
/// in the new thread from its first instruction (pthread_attr_setsigmask_np). The calling thread's
/// mask never changes: a program thread whose sampler is already on must not block the runtime's
/// signal meanwhile, or each sample of a short first period queues one more real-time signal (a
/// forked child queued thousands in the ~10 ms its forwarder took to start, then spent seconds
/// handling them). Returns 0 or an error number, as pthread_create.
int create_runtime_thread(pthread_t* thread, void* (*routine)(void*), void* argument);

/// The runtime's own threads alive now (create_runtime_thread's, until their routine returns).
int runtime_threads();
/// A forked child: the parent's runtime threads are not its own.
void forget_runtime_threads();

}  // namespace whatif::real
