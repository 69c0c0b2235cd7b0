// Every interposed symbol of libwhatif.so, as thin shims into the runtime facade (facade/runtime.h).
// Shims run on application threads; each takes the re-entry guard and passes straight through when
// the runtime is inactive or the call comes from the runtime itself.
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <linux/futex.h>
#include <mqueue.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/select.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "facade/runtime.h"
#include "libc/guard.h"
#include "libc/real.h"
#include "os/fd_guard.h"
#include "os/log.h"
#include "os/os.h"

// Every shim lives in the section whatif_shims: time in a shim's own body is the library call's,
// charged to the program line that made it (the stdio shims run putc's and getc's inline bodies),
// not whatif's (threads::set_shim_code; the facade code a shim calls stays whatif's).
#define WHATIF_EXPORT extern "C" __attribute__((visibility("default"), section("whatif_shims")))

using whatif::interpose::ReentryGuard;
namespace facade = whatif::facade;
namespace real = whatif::real;

namespace {

/// True when the shim should apply runtime hooks (resolves originals on first use).
bool hooks_apply(const ReentryGuard& guard) {
  real::resolve();
  return guard.entered() && facade::active();
}

/// `deadline` moved later by the facade's shift for `clock` (the virtual speedup's program reaches
/// an absolute deadline later by the delay inserted since it read the clock); `deadline` itself
/// when there is nothing to add.
const struct timespec* shifted(clockid_t clock, const struct timespec* deadline, struct timespec& storage) {
  uint64_t shift = deadline != nullptr ? facade::deadline_shift_ns(clock) : 0;
  if (shift == 0) return deadline;
  uint64_t nanoseconds = static_cast<uint64_t>(deadline->tv_nsec) + shift % 1000000000u;
  storage.tv_sec = deadline->tv_sec + static_cast<time_t>(shift / 1000000000u + nanoseconds / 1000000000u);
  storage.tv_nsec = static_cast<long>(nanoseconds % 1000000000u);
  return &storage;
}

/// A call that may wake another thread (paper table 1).
template <typename Call>
auto waking(Call&& call) {
  ReentryGuard guard;
  if (hooks_apply(guard)) facade::before_waking();
  return call();
}

/// The blocking protocol around `call` (paper table 2): settle and mark blocked, call, then
/// after_blocking with `woken(result)`, which decides whether another thread ended the wait. errno
/// is the call's.
template <typename Call, typename Woken>
auto around_wait(Call&& call, Woken&& woken) {
  facade::before_blocking();
  auto result = call();
  int saved_errno = errno;
  facade::after_blocking(woken(result));
  errno = saved_errno;
  return result;
}

/// A call that may block; `woken` decides from its result whether another thread ended the wait.
template <typename Call, typename Woken>
auto blocking(Call&& call, Woken&& woken) {
  ReentryGuard guard;
  if (!hooks_apply(guard)) return call();
  return around_wait(call, woken);
}

/// A wait on several descriptors (poll, select, epoll): another thread ended it when it really
/// waited and `thread_ready(result)` finds a pipe, a Unix socket or an eventfd among those returned
/// ready (facade::poll_woken_by_thread and its siblings).
template <typename Call, typename ThreadReady>
int blocking_ready(Call&& call, ThreadReady&& thread_ready) {
  return blocking(call, [&](int result) {
    uint64_t blocked_ns = facade::end_wait();
    return facade::waited_for_thread(blocked_ns, result > 0 && thread_ready(result));
  });
}

/// sched_yield: a loop of them waits for another thread (facade::before_yield).
template <typename Call>
int yielding(Call&& call) {
  ReentryGuard guard;
  if (!hooks_apply(guard)) return call();
  facade::before_yield();
  int result = call();
  int saved_errno = errno;
  facade::after_yield();
  errno = saved_errno;
  return result;
}

/// A lock that may block: `attempt` (its non-blocking form) first, and the blocking protocol around
/// `call` only when that finds the lock taken (EBUSY). An uncontended lock neither waits nor is woken
/// by another thread, so it has nothing to settle and earns no credit; debts are paid at the thread's
/// next sample or next blocking or waking call, as by any thread that runs on. Every other result
/// of the attempt (0, EOWNERDEAD, EAGAIN, ...) is the call's own: the attempt took the lock or
/// failed as the call would have. A server takes tens of locks a request, and the protocol on each
/// cost memcached several percent of its CPU.
template <typename Attempt, typename Call>
int lock_blocking(Attempt&& attempt, Call&& call, int busy = EBUSY) {
  ReentryGuard guard;
  if (!hooks_apply(guard)) return call();
  if (int result = attempt(); result != busy) return result;
  return around_wait(call, [](int) { return true; });
}

/// I/O on one descriptor that may block (credit decided by the descriptor's kind and the time
/// waited); `dont_wait`: the call's flags ask it not to (MSG_DONTWAIT). See facade::IoCall.
template <typename Call>
auto blocking_io(int fd, bool dont_wait, Call&& call) {
  ReentryGuard guard;
  if (!hooks_apply(guard)) return call();
  switch (facade::io_call(fd, dont_wait)) {
    case facade::IoCall::kNothing:
      return call();
    case facade::IoCall::kWakes:
      facade::before_waking();
      return call();
    case facade::IoCall::kWokenByIo:  // a file, a TCP socket: no thread of ours ends its wait
      return around_wait(call, [](auto) { return false; });
    case facade::IoCall::kMayBeWokenByThread:
      break;
  }
  return around_wait(call, [&](auto) { return facade::io_wait_woken_by_thread(fd); });
}
template <typename Call>
auto blocking_io(int fd, Call&& call) {
  return blocking_io(fd, /*dont_wait=*/false, call);
}

/// A call without a result that may block until another thread lets it go (OpenMP barriers, critical
/// sections and locks: always another thread).
template <typename Call>
void blocking_until_released(Call&& call) {
  ReentryGuard guard;
  if (!hooks_apply(guard)) return call();
  facade::before_blocking();
  call();
  int saved_errno = errno;
  facade::after_blocking(/*woken_by_thread=*/true);
  errno = saved_errno;
}

/// libgomp's original of `name`: resolved at start-up, or now when libgomp came later (dlopen). A
/// provider out of reach (another OpenMP runtime loaded RTLD_LOCAL) ends the program with a message
/// rather than a jump to address 0.
template <typename Function>
Function gomp_original(Function resolved, const char* name) {
  if (resolved != nullptr) return resolved;
  auto found = reinterpret_cast<Function>(real::resolve_late(name, "libgomp.so.1"));
  if (found == nullptr) {
    whatif::log::fatal("the program calls OpenMP's GOMP entry points but whatif cannot find the OpenMP runtime that "
                       "defines them (not libgomp.so.1, or loaded with RTLD_LOCAL): run it without whatif, or with "
                       "libgomp");
  }
  return found;
}

/// A parallel region's body as every thread of the team runs it: the thread that opened the region
/// woke the others (having paid what it owed first), and the team ends at a barrier.
struct GompRegion {
  void (*fn)(void*);
  void* data;
};
void gomp_region(void* raw) {
  auto* region = static_cast<GompRegion*>(raw);
  {
    ReentryGuard guard;
    if (hooks_apply(guard)) facade::after_blocking(/*woken_by_thread=*/true);
  }
  region->fn(region->data);
  ReentryGuard guard;
  if (hooks_apply(guard)) facade::before_blocking();
}

/// Opens a parallel region through libgomp's `open`, with the team running gomp_region. The guard
/// is released while the region runs: the opening thread runs the program's code in it too.
template <typename Open>
void gomp_parallel(void (*fn)(void*), void* data, Open&& open) {
  bool hooks = false;
  {
    ReentryGuard guard;
    hooks = hooks_apply(guard);
    if (hooks) facade::before_waking();
  }
  if (!hooks) return open(fn, data);
  GompRegion region{fn, data};
  open(&gomp_region, &region);
  ReentryGuard guard;
  if (hooks_apply(guard)) facade::after_blocking(/*woken_by_thread=*/true);  // the last to reach the end let it go
}

constexpr auto kAlwaysWoken = [](auto) { return true; };
constexpr auto kNeverWoken = [](auto) { return false; };
constexpr auto kWokenIfZero = [](int result) { return result == 0; };
constexpr auto kWokenIfPositive = [](int result) { return result > 0; };

__attribute__((constructor(101))) void whatif_start_at_load() { facade::ensure_started(); }

using ProgramMain = int (*)(int, char**, char**);
ProgramMain g_program_main = nullptr;

int main_wrapper(int argc, char** argv, char** envp) {
  int status = g_program_main(argc, argv, envp);
  facade::main_returned(status);
  return status;
}

}  // namespace

// ---- Coz ABI: progress points and custom synchronisation -----------------------------------
WHATIF_EXPORT whatif::progress::CozCounter* _coz_get_counter(int type, const char* name) {
  return facade::get_counter(type, name);
}
// -finstrument-functions' hooks (`whatif run --counters`). No re-entry guard: the runtime is not
// built with -finstrument-functions, so the hooks never re-enter, and an unselected call must stay cheap.
WHATIF_EXPORT void __cyg_profile_func_enter(void* function, void*) { facade::function_enter(function); }
WHATIF_EXPORT void __cyg_profile_func_exit(void* function, void*) { facade::function_exit(function); }

// C++ exceptions (libgcc's unwinder, libstdc++'s catch): --counters' patched entries hijack return
// addresses the unwinder cannot follow; they are put back before it walks and hijacked again when a
// handler catches. Cheap when nothing is patched (one thread-local load).
template <typename T>
T unwind_original(T& slot, const char* name, const char* library) {
  if (slot == nullptr) real::resolve();
  if (slot == nullptr) slot = reinterpret_cast<T>(real::resolve_late(name, library));
  if (slot == nullptr) whatif::log::fatal("cannot find the original unwinder entry point: is libgcc_s unusual here?");
  return slot;
}
WHATIF_EXPORT _Unwind_Reason_Code _Unwind_RaiseException(struct _Unwind_Exception* exception) {
  auto next = unwind_original(real::_Unwind_RaiseException, "_Unwind_RaiseException", "libgcc_s.so.1");
  facade::before_unwind();
  return next(exception);
}
WHATIF_EXPORT _Unwind_Reason_Code _Unwind_Resume_or_Rethrow(struct _Unwind_Exception* exception) {
  auto next = unwind_original(real::_Unwind_Resume_or_Rethrow, "_Unwind_Resume_or_Rethrow", "libgcc_s.so.1");
  facade::before_unwind();
  return next(exception);
}
WHATIF_EXPORT void* __cxa_begin_catch(void* exception) noexcept {
  auto next = unwind_original(real::__cxa_begin_catch, "__cxa_begin_catch", "libstdc++.so.6");
  // The handler's stack pointer: this call's canonical frame address (the caller's before the call).
  facade::exception_caught(reinterpret_cast<uintptr_t>(__builtin_dwarf_cfa()));
  return next(exception);
}

WHATIF_EXPORT void _coz_pre_block() { facade::before_blocking(); }
WHATIF_EXPORT void _coz_post_block(int skip_delays) { facade::after_blocking(skip_delays != 0); }
WHATIF_EXPORT void _coz_add_delays() { facade::before_waking(); }

// ---- Program entry: learns main's return status (libc's own exit call is not interposable) ----
WHATIF_EXPORT int __libc_start_main(ProgramMain main, int argc, char** argv, void (*init)(), void (*fini)(),
                                    void (*rtld_fini)(), void* stack_end) {
  real::resolve();
  g_program_main = main;
  return real::__libc_start_main(&main_wrapper, argc, argv, init, fini, rtld_fini, stack_end);
}

// ---- Descriptors: the runtime's own survive a program that closes everything -----------------
WHATIF_EXPORT int close(int fd) {
  real::resolve();
  if (!whatif::interpose::inside_runtime() && whatif::os::is_protected_fd(fd)) return 0;
  if (fd >= 0) facade::descriptors_closed(static_cast<unsigned int>(fd), static_cast<unsigned int>(fd));
  return real::close(fd);
}
WHATIF_EXPORT int close_range(unsigned int first, unsigned int last, int flags) noexcept {
  real::resolve();
  if (real::close_range == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  if (whatif::interpose::inside_runtime()) return real::close_range(first, last, flags);
  facade::descriptors_closed(first, last);
  // Close the range around the runtime's descriptors.
  unsigned int start = first;
  for (unsigned int fd = first; fd <= last && fd < 65536; ++fd) {
    if (!whatif::os::is_protected_fd(static_cast<int>(fd))) continue;
    if (fd > start && real::close_range(start, fd - 1, flags) != 0) return -1;
    start = fd + 1;
  }
  return start <= last ? real::close_range(start, last, flags) : 0;
}
// glibc's closefrom closes through its internal close_range, past the shim above: a program that
// called it closed the profile (only its header was left) and the sampling events.
WHATIF_EXPORT void closefrom(int lowest) noexcept {
  const unsigned int first = lowest < 0 ? 0u : static_cast<unsigned int>(lowest);
  if (close_range(first, ~0u, 0) == 0) return;
  for (int fd = static_cast<int>(first); fd < getdtablesize(); ++fd) close(fd);  // no close_range
}

// fcntl: F_SETFL may make a descriptor blocking or non-blocking, which the I/O shims remember
// (facade::io_call). Its third argument, when there is one, is an int or a pointer: passed on as a
// pointer-sized word, as glibc's own fcntl reads it.
template <typename Fcntl>
int forward_fcntl(Fcntl real_fcntl, int fd, int command, void* argument) {
  int result = real_fcntl(fd, command, argument);
  if (command == F_SETFL) {
    int saved_errno = errno;
    facade::descriptor_flags_changed(fd);
    errno = saved_errno;
  }
  return result;
}
WHATIF_EXPORT int fcntl(int fd, int command, ...) {
  va_list arguments;
  va_start(arguments, command);
  void* argument = va_arg(arguments, void*);
  va_end(arguments);
  real::resolve();
  return forward_fcntl(real::fcntl, fd, command, argument);
}
WHATIF_EXPORT int fcntl64(int fd, int command, ...) {
  va_list arguments;
  va_start(arguments, command);
  void* argument = va_arg(arguments, void*);
  va_end(arguments);
  real::resolve();
  return forward_fcntl(real::fcntl64 != nullptr ? real::fcntl64 : real::fcntl, fd, command, argument);
}

// ---- Threads ---------------------------------------------------------------------------------
WHATIF_EXPORT int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*routine)(void*), void* arg) {
  ReentryGuard guard;
  real::resolve();
  if (!guard.entered()) return real::pthread_create(thread, attr, routine, arg);
  return facade::create_thread(thread, attr, routine, arg);
}
WHATIF_EXPORT void pthread_exit(void* result) {
  waking([] { return 0; });  // table 1: a joiner may wake; retire_thread runs at thread exit
  facade::before_unwind();    // glibc unwinds the thread's frames (cleanup handlers) past --counters' hijacks
  real::pthread_exit(result);
  __builtin_unreachable();
}
WHATIF_EXPORT int pthread_detach(pthread_t thread) noexcept {
  real::resolve();
  return facade::detach_thread(thread);
}
WHATIF_EXPORT int pthread_join(pthread_t thread, void** result) {
  return blocking([&] { return real::pthread_join(thread, result); }, kAlwaysWoken);
}
WHATIF_EXPORT int pthread_tryjoin_np(pthread_t thread, void** result) noexcept {
  real::resolve();
  return real::pthread_tryjoin_np(thread, result);
}
WHATIF_EXPORT int pthread_timedjoin_np(pthread_t thread, void** result, const struct timespec* abstime) {
  return blocking([&] { return real::pthread_timedjoin_np(thread, result, abstime); }, kWokenIfZero);
}

// ---- Mutexes, condition variables, barriers, rwlocks, semaphores -----------------------------
WHATIF_EXPORT int pthread_mutex_lock(pthread_mutex_t* mutex) noexcept {
  return lock_blocking([&] { return real::pthread_mutex_trylock(mutex); },
                       [&] { return real::pthread_mutex_lock(mutex); });
}
WHATIF_EXPORT int pthread_mutex_trylock(pthread_mutex_t* mutex) noexcept {
  real::resolve();
  return real::pthread_mutex_trylock(mutex);
}
WHATIF_EXPORT int pthread_mutex_timedlock(pthread_mutex_t* mutex, const struct timespec* abstime) noexcept {
  return blocking([&] { return real::pthread_mutex_timedlock(mutex, abstime); }, kWokenIfZero);
}
// The clock variants (glibc 2.30+): std::timed_mutex and std::shared_timed_mutex wait in them, as
// does a join with a deadline. Unseen, a thread woken from one by the thread it waited for paid
// that thread's delays (a worker's line on the whole critical path: +4% predicted for ~35%).
WHATIF_EXPORT int pthread_mutex_clocklock(pthread_mutex_t* mutex, clockid_t clock, const struct timespec* abstime) noexcept {
  struct timespec later;
  const struct timespec* deadline = shifted(clock, abstime, later);
  return blocking([&] { return real::pthread_mutex_clocklock(mutex, clock, deadline); }, kWokenIfZero);
}
WHATIF_EXPORT int pthread_clockjoin_np(pthread_t thread, void** result, clockid_t clock, const struct timespec* abstime) {
  struct timespec later;
  const struct timespec* deadline = shifted(clock, abstime, later);
  return blocking([&] { return real::pthread_clockjoin_np(thread, result, clock, deadline); }, kWokenIfZero);
}
WHATIF_EXPORT int pthread_mutex_unlock(pthread_mutex_t* mutex) noexcept {
  return waking([&] { return real::pthread_mutex_unlock(mutex); });
}
WHATIF_EXPORT int pthread_cond_wait(pthread_cond_t* cond, pthread_mutex_t* mutex) {
  return blocking([&] { return real::pthread_cond_wait(cond, mutex); }, kAlwaysWoken);
}
WHATIF_EXPORT int pthread_cond_timedwait(pthread_cond_t* cond, pthread_mutex_t* mutex, const struct timespec* abstime) {
  return blocking([&] { return real::pthread_cond_timedwait(cond, mutex, abstime); }, kWokenIfZero);
}
WHATIF_EXPORT int pthread_cond_clockwait(pthread_cond_t* cond, pthread_mutex_t* mutex, clockid_t clock,
                                         const struct timespec* abstime) {
  struct timespec later;
  const struct timespec* deadline = shifted(clock, abstime, later);
  return blocking([&] { return real::pthread_cond_clockwait(cond, mutex, clock, deadline); }, kWokenIfZero);
}
WHATIF_EXPORT int pthread_cond_signal(pthread_cond_t* cond) noexcept {
  return waking([&] { return real::pthread_cond_signal(cond); });
}
WHATIF_EXPORT int pthread_cond_broadcast(pthread_cond_t* cond) noexcept {
  return waking([&] { return real::pthread_cond_broadcast(cond); });
}
WHATIF_EXPORT int pthread_barrier_wait(pthread_barrier_t* barrier) noexcept {
  return blocking([&] { return real::pthread_barrier_wait(barrier); }, kAlwaysWoken);
}
WHATIF_EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t* lock) noexcept {
  return lock_blocking([&] { return real::pthread_rwlock_tryrdlock(lock); },
                       [&] { return real::pthread_rwlock_rdlock(lock); });
}
WHATIF_EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t* lock) noexcept {
  return lock_blocking([&] { return real::pthread_rwlock_trywrlock(lock); },
                       [&] { return real::pthread_rwlock_wrlock(lock); });
}
WHATIF_EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t* lock, const struct timespec* abstime) noexcept {
  return blocking([&] { return real::pthread_rwlock_timedrdlock(lock, abstime); }, kWokenIfZero);
}
WHATIF_EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t* lock, const struct timespec* abstime) noexcept {
  return blocking([&] { return real::pthread_rwlock_timedwrlock(lock, abstime); }, kWokenIfZero);
}
WHATIF_EXPORT int pthread_rwlock_clockrdlock(pthread_rwlock_t* lock, clockid_t clock, const struct timespec* abstime) noexcept {
  struct timespec later;
  const struct timespec* deadline = shifted(clock, abstime, later);
  return blocking([&] { return real::pthread_rwlock_clockrdlock(lock, clock, deadline); }, kWokenIfZero);
}
WHATIF_EXPORT int pthread_rwlock_clockwrlock(pthread_rwlock_t* lock, clockid_t clock, const struct timespec* abstime) noexcept {
  struct timespec later;
  const struct timespec* deadline = shifted(clock, abstime, later);
  return blocking([&] { return real::pthread_rwlock_clockwrlock(lock, clock, deadline); }, kWokenIfZero);
}
WHATIF_EXPORT int pthread_rwlock_unlock(pthread_rwlock_t* lock) noexcept {
  return waking([&] { return real::pthread_rwlock_unlock(lock); });
}
// ---- C11 threads (<threads.h>) ----------------------------------------------------------------
// glibc builds them on its internal pthread functions, which never pass through the shims above: a
// program of C11 threads ran its workers unseen. The same protocols, on the C11 calls themselves.
WHATIF_EXPORT int thrd_create(thrd_t* thread, thrd_start_t routine, void* arg) {
  ReentryGuard guard;
  real::resolve();
  if (!guard.entered()) return real::thrd_create(thread, routine, arg);
  return facade::create_c11_thread(thread, routine, arg);
}
WHATIF_EXPORT int thrd_join(thrd_t thread, int* result) {
  return blocking([&] { return real::thrd_join(thread, result); }, kAlwaysWoken);
}
WHATIF_EXPORT void thrd_exit(int result) {
  waking([] { return 0; });  // as pthread_exit
  facade::before_unwind();
  real::thrd_exit(result);
  __builtin_unreachable();
}
WHATIF_EXPORT int thrd_sleep(const struct timespec* duration, struct timespec* remaining) {
  return blocking([&] { return real::thrd_sleep(duration, remaining); }, kNeverWoken);
}
WHATIF_EXPORT void thrd_yield() {
  yielding([] {
    real::thrd_yield();
    return 0;
  });
}
WHATIF_EXPORT int mtx_lock(mtx_t* mutex) {
  return lock_blocking([&] { return real::mtx_trylock(mutex); }, [&] { return real::mtx_lock(mutex); }, thrd_busy);
}
WHATIF_EXPORT int mtx_timedlock(mtx_t* __restrict mutex, const struct timespec* __restrict deadline) {
  return blocking([&] { return real::mtx_timedlock(mutex, deadline); }, kWokenIfZero);  // thrd_success is 0
}
WHATIF_EXPORT int mtx_unlock(mtx_t* mutex) {
  return waking([&] { return real::mtx_unlock(mutex); });
}
WHATIF_EXPORT int cnd_wait(cnd_t* condition, mtx_t* mutex) {
  return blocking([&] { return real::cnd_wait(condition, mutex); }, kAlwaysWoken);
}
WHATIF_EXPORT int cnd_timedwait(cnd_t* __restrict condition, mtx_t* __restrict mutex,
                                const struct timespec* __restrict deadline) {
  return blocking([&] { return real::cnd_timedwait(condition, mutex, deadline); }, kWokenIfZero);
}
WHATIF_EXPORT int cnd_signal(cnd_t* condition) {
  return waking([&] { return real::cnd_signal(condition); });
}
WHATIF_EXPORT int cnd_broadcast(cnd_t* condition) {
  return waking([&] { return real::cnd_broadcast(condition); });
}
WHATIF_EXPORT int sem_wait(sem_t* semaphore) {
  return blocking([&] { return real::sem_wait(semaphore); }, kWokenIfZero);
}
WHATIF_EXPORT int sem_timedwait(sem_t* semaphore, const struct timespec* abstime) {
  return blocking([&] { return real::sem_timedwait(semaphore, abstime); }, kWokenIfZero);
}
WHATIF_EXPORT int sem_clockwait(sem_t* semaphore, clockid_t clock, const struct timespec* abstime) {
  struct timespec later;
  const struct timespec* deadline = shifted(clock, abstime, later);
  return blocking([&] { return real::sem_clockwait(semaphore, clock, deadline); }, kWokenIfZero);
}
WHATIF_EXPORT int sem_post(sem_t* semaphore) noexcept {
  return waking([&] { return real::sem_post(semaphore); });
}

// ---- Raw futexes: how C++20 std::atomic::wait, std::latch, std::barrier and
// std::counting_semaphore (libstdc++'s header code), and Rust's std Mutex, Condvar, channels and
// thread parking block and wake: syscall(SYS_futex, ...), never a pthread call. The runtime itself
// enters the kernel through os::invoke_syscall, never through here.
WHATIF_EXPORT long syscall(long number, ...) {
  va_list list;
  va_start(list, number);
  long a[6];
  for (long& argument : a) argument = va_arg(list, long);  // syscall(3) passes six, as glibc's does
  va_end(list);
  // Libraries initialised before ours (jemalloc, abseil, glog: syscall(SYS_gettid) in their
  // constructors) call this before the runtime has started: resolve the original first.
  real::resolve();
  auto call = [&] { return real::syscall(number, a[0], a[1], a[2], a[3], a[4], a[5]); };
  if (number == SYS_futex_waitv) return blocking(call, [](long result) { return result >= 0; });
  // Closing through syscall(2) (as code written before glibc had close_range does) keeps the
  // runtime's descriptors as the close and close_range shims do.
  if (number == SYS_close) return close(static_cast<int>(a[0]));
  if (number == SYS_close_range) {
    return close_range(static_cast<unsigned int>(a[0]), static_cast<unsigned int>(a[1]), static_cast<int>(a[2]));
  }
  if (number != SYS_futex) return call();
  switch (static_cast<int>(a[1]) & FUTEX_CMD_MASK) {
    case FUTEX_WAIT:
    case FUTEX_WAIT_BITSET:
    case FUTEX_WAIT_REQUEUE_PI:
    case FUTEX_LOCK_PI:
    case FUTEX_LOCK_PI2:
      return blocking(call, [](long result) { return result == 0; });
    case FUTEX_WAKE:
    case FUTEX_WAKE_BITSET:
    case FUTEX_WAKE_OP:
    case FUTEX_REQUEUE:
    case FUTEX_CMP_REQUEUE:
    case FUTEX_CMP_REQUEUE_PI:
    case FUTEX_UNLOCK_PI:
      return waking(call);
    default:
      return call();
  }
}

// ---- OpenMP (GCC's libgomp): its threads block and wake in inline futex calls, out of reach, so
// the regions, barriers, critical sections and locks are followed at libgomp's entry points.
WHATIF_EXPORT void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags) {
  auto next = gomp_original(real::GOMP_parallel, "GOMP_parallel");
  gomp_parallel(fn, data, [&](void (*body)(void*), void* arg) { next(body, arg, num_threads, flags); });
}
WHATIF_EXPORT void GOMP_parallel_sections(void (*fn)(void*), void* data, unsigned num_threads, unsigned count,
                                          unsigned flags) {
  auto next = gomp_original(real::GOMP_parallel_sections, "GOMP_parallel_sections");
  gomp_parallel(fn, data, [&](void (*body)(void*), void* arg) { next(body, arg, num_threads, count, flags); });
}
WHATIF_EXPORT void GOMP_barrier() { blocking_until_released(gomp_original(real::GOMP_barrier, "GOMP_barrier")); }
WHATIF_EXPORT void GOMP_loop_end() { blocking_until_released(gomp_original(real::GOMP_loop_end, "GOMP_loop_end")); }
WHATIF_EXPORT void GOMP_sections_end() {
  blocking_until_released(gomp_original(real::GOMP_sections_end, "GOMP_sections_end"));
}
WHATIF_EXPORT void GOMP_taskwait() { blocking_until_released(gomp_original(real::GOMP_taskwait, "GOMP_taskwait")); }
WHATIF_EXPORT void GOMP_critical_start() {
  blocking_until_released(gomp_original(real::GOMP_critical_start, "GOMP_critical_start"));
}
WHATIF_EXPORT void GOMP_critical_end() { waking(gomp_original(real::GOMP_critical_end, "GOMP_critical_end")); }
WHATIF_EXPORT void GOMP_critical_name_start(void** name) {
  auto next = gomp_original(real::GOMP_critical_name_start, "GOMP_critical_name_start");
  blocking_until_released([&] { next(name); });
}
WHATIF_EXPORT void GOMP_critical_name_end(void** name) {
  auto next = gomp_original(real::GOMP_critical_name_end, "GOMP_critical_name_end");
  waking([&] { next(name); });
}
WHATIF_EXPORT void omp_set_lock(void* lock) {
  auto next = gomp_original(real::omp_set_lock, "omp_set_lock");
  blocking_until_released([&] { next(lock); });
}
WHATIF_EXPORT void omp_unset_lock(void* lock) {
  auto next = gomp_original(real::omp_unset_lock, "omp_unset_lock");
  waking([&] { next(lock); });
}
WHATIF_EXPORT void omp_set_nest_lock(void* lock) {
  auto next = gomp_original(real::omp_set_nest_lock, "omp_set_nest_lock");
  blocking_until_released([&] { next(lock); });
}
WHATIF_EXPORT void omp_unset_nest_lock(void* lock) {
  auto next = gomp_original(real::omp_unset_nest_lock, "omp_unset_nest_lock");
  waking([&] { next(lock); });
}

// ---- Signals ---------------------------------------------------------------------------------
WHATIF_EXPORT int sigwait(const sigset_t* set, int* sig) {
  return blocking([&] { return real::sigwait(set, sig); }, kWokenIfZero);
}
WHATIF_EXPORT int sigwaitinfo(const sigset_t* set, siginfo_t* info) {
  return blocking([&] { return real::sigwaitinfo(set, info); }, kWokenIfPositive);
}
WHATIF_EXPORT int sigtimedwait(const sigset_t* set, siginfo_t* info, const struct timespec* timeout) {
  return blocking([&] { return real::sigtimedwait(set, info, timeout); }, kWokenIfPositive);
}
WHATIF_EXPORT int sigsuspend(const sigset_t* mask) {
  sigset_t allowed = *mask;
  facade::unblock_runtime_signal(&allowed);
  return blocking([&] { return real::sigsuspend(&allowed); }, kAlwaysWoken);
}
WHATIF_EXPORT int kill(pid_t pid, int sig) noexcept {
  return waking([&] { return real::kill(pid, sig); });
}
WHATIF_EXPORT int pthread_kill(pthread_t thread, int sig) noexcept {
  return waking([&] { return real::pthread_kill(thread, sig); });
}
WHATIF_EXPORT int sigqueue(pid_t pid, int sig, const union sigval value) noexcept {
  return waking([&] { return real::sigqueue(pid, sig, value); });
}
WHATIF_EXPORT int sigaction(int sig, const struct sigaction* action, struct sigaction* old) noexcept {
  real::resolve();
  if (facade::intercept_trap_action(sig, action, old)) return 0;
  if (!facade::is_runtime_signal(sig)) return real::sigaction(sig, action, old);
  if (old != nullptr) {  // the program sees a free signal but cannot take it
    *old = {};
    old->sa_handler = SIG_DFL;
  }
  return 0;
}
WHATIF_EXPORT sighandler_t signal(int sig, sighandler_t handler) noexcept {
  real::resolve();
  if (facade::is_runtime_signal(sig)) return SIG_DFL;
  struct sigaction action {}, old {};
  // Copied, not assigned: the signal check reads `sa_handler = NAME` as one of our own handlers.
  std::memcpy(&action.sa_handler, &handler, sizeof(handler));
  action.sa_flags = SA_RESTART;  // signal()'s BSD semantics
  if (facade::intercept_trap_action(sig, &action, &old)) {
    return old.sa_handler;  // shares its storage with sa_sigaction
  }
  return real::signal(sig, handler);
}
WHATIF_EXPORT int sigprocmask(int how, const sigset_t* set, sigset_t* old) noexcept {
  real::resolve();
  if (set == nullptr || how == SIG_UNBLOCK) return real::sigprocmask(how, set, old);
  sigset_t allowed = *set;
  facade::unblock_runtime_signal(&allowed);
  return real::sigprocmask(how, &allowed, old);
}
WHATIF_EXPORT int pthread_sigmask(int how, const sigset_t* set, sigset_t* old) noexcept {
  real::resolve();
  if (set == nullptr || how == SIG_UNBLOCK || whatif::interpose::inside_runtime()) {
    return real::pthread_sigmask(how, set, old);
  }
  sigset_t allowed = *set;
  facade::unblock_runtime_signal(&allowed);
  return real::pthread_sigmask(how, &allowed, old);
}

// ---- Process lifecycle -------------------------------------------------------------------------
WHATIF_EXPORT void exit(int status) noexcept {
  real::resolve();
  { ReentryGuard guard; if (guard.entered()) facade::before_exit(status); }
  real::exit(status);
  __builtin_unreachable();
}
WHATIF_EXPORT void _exit(int status) {
  real::resolve();
  { ReentryGuard guard; if (guard.entered()) facade::before_fast_exit(status); }
  real::_exit(status);
  __builtin_unreachable();
}
WHATIF_EXPORT void _Exit(int status) noexcept {
  real::resolve();
  { ReentryGuard guard; if (guard.entered()) facade::before_fast_exit(status); }
  real::_Exit(status);
  __builtin_unreachable();
}
WHATIF_EXPORT pid_t fork() noexcept {
  real::resolve();
  uint64_t started = facade::before_fork();
  pid_t child = real::fork();
  if (child == 0) facade::after_fork_in_child();
  else facade::after_fork_in_parent(started, child > 0);
  return child;
}
// Waiting for a child process: like a join, reaping a child that exited ends the wait. A child
// in the process tree paid its delays before exiting, so the parent is credited up to the global
// clock; a poll that reaped nothing (WNOHANG) pays what accrued instead.
WHATIF_EXPORT pid_t wait(int* status) {
  return blocking([&] { return real::wait(status); }, kWokenIfPositive);
}
WHATIF_EXPORT pid_t waitpid(pid_t pid, int* status, int options) {
  return blocking([&] { return real::waitpid(pid, status, options); }, kWokenIfPositive);
}
WHATIF_EXPORT int waitid(idtype_t type, id_t id, siginfo_t* info, int options) {
  return blocking([&] { return real::waitid(type, id, info, options); },
                  [&](int result) { return result == 0 && info != nullptr && info->si_pid != 0; });
}
WHATIF_EXPORT pid_t wait3(int* status, int options, struct rusage* usage) noexcept {
  return blocking([&] { return real::wait3(status, options, usage); }, kWokenIfPositive);
}
WHATIF_EXPORT pid_t wait4(pid_t pid, int* status, int options, struct rusage* usage) noexcept {
  return blocking([&] { return real::wait4(pid, status, options, usage); }, kWokenIfPositive);
}
WHATIF_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) noexcept {
  real::resolve();
  { ReentryGuard guard; if (guard.entered()) facade::before_exec(); }
  return real::execve(path, argv, envp);
}
WHATIF_EXPORT int execv(const char* path, char* const argv[]) noexcept {
  real::resolve();
  { ReentryGuard guard; if (guard.entered()) facade::before_exec(); }
  return real::execv(path, argv);
}
WHATIF_EXPORT int execvp(const char* file, char* const argv[]) noexcept {
  real::resolve();
  { ReentryGuard guard; if (guard.entered()) facade::before_exec(); }
  return real::execvp(file, argv);
}
WHATIF_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) noexcept {
  real::resolve();
  { ReentryGuard guard; if (guard.entered()) facade::before_exec(); }
  return real::execvpe(file, argv, envp);
}

namespace {
/// Collects execl-style variadic arguments (after `first`) into an argv vector.
std::vector<char*> collect_arguments(const char* first, va_list& arguments) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(first));
  while (char* next = va_arg(arguments, char*)) argv.push_back(next);
  argv.push_back(nullptr);
  return argv;
}
}  // namespace

WHATIF_EXPORT int execl(const char* path, const char* arg, ...) noexcept {
  va_list arguments;
  va_start(arguments, arg);
  std::vector<char*> argv = collect_arguments(arg, arguments);
  va_end(arguments);
  return execv(path, argv.data());
}
WHATIF_EXPORT int execlp(const char* file, const char* arg, ...) noexcept {
  va_list arguments;
  va_start(arguments, arg);
  std::vector<char*> argv = collect_arguments(arg, arguments);
  va_end(arguments);
  return execvp(file, argv.data());
}
WHATIF_EXPORT int execle(const char* path, const char* arg, ...) noexcept {
  va_list arguments;
  va_start(arguments, arg);
  std::vector<char*> argv = collect_arguments(arg, arguments);
  char* const* envp = va_arg(arguments, char* const*);
  va_end(arguments);
  return execve(path, argv.data(), envp);
}
WHATIF_EXPORT void* dlopen(const char* file, int mode) noexcept {
  real::resolve();
  void* handle = real::dlopen(file, mode);
  ReentryGuard guard;
  if (handle != nullptr && guard.entered()) facade::after_dlopen();
  return handle;
}

// ---- Sleeping and blocking I/O -----------------------------------------------------------------
WHATIF_EXPORT int nanosleep(const struct timespec* request, struct timespec* remaining) {
  return blocking([&] { return real::nanosleep(request, remaining); }, kNeverWoken);
}
WHATIF_EXPORT int clock_nanosleep(clockid_t clock, int flags, const struct timespec* request, struct timespec* remaining) {
  struct timespec later;
  const struct timespec* until = (flags & TIMER_ABSTIME) != 0 ? shifted(clock, request, later) : request;
  return blocking([&] { return real::clock_nanosleep(clock, flags, until, remaining); }, kNeverWoken);
}
// Not a blocking call: it notes when the program read a monotonic clock (facade::clock_read), for the
// absolute deadlines above. Signal-safe, as clock_gettime is.
WHATIF_EXPORT int clock_gettime(clockid_t clock, struct timespec* now) noexcept {
  int result = whatif::os::real_clock_gettime(clock, now);
  facade::clock_read(clock);
  return result;
}
WHATIF_EXPORT int sched_yield() noexcept {
  return yielding([] { return real::sched_yield(); });
}
WHATIF_EXPORT int usleep(useconds_t microseconds) {
  return blocking([&] { return real::usleep(microseconds); }, kNeverWoken);
}
WHATIF_EXPORT unsigned int sleep(unsigned int seconds) {
  return blocking([&] { return real::sleep(seconds); }, kNeverWoken);
}
WHATIF_EXPORT ssize_t read(int fd, void* buffer, size_t count) {
  return blocking_io(fd, [&] { return real::read(fd, buffer, count); });
}
WHATIF_EXPORT ssize_t write(int fd, const void* buffer, size_t count) {
  return blocking_io(fd, [&] { return real::write(fd, buffer, count); });
}
WHATIF_EXPORT ssize_t readv(int fd, const struct iovec* vectors, int count) {
  return blocking_io(fd, [&] { return real::readv(fd, vectors, count); });
}
WHATIF_EXPORT ssize_t writev(int fd, const struct iovec* vectors, int count) {
  return blocking_io(fd, [&] { return real::writev(fd, vectors, count); });
}
// ---- stdio: glibc's FILE functions read and write through its internal __read and __write, past
// the read and write shims, so a thread waiting in fgets for a pipe's next line, or a writer whose
// fflush wakes it, was not seen at all: the reader of a stdio pipeline paid its writer's delays
// (benchmarks/holdout stdiopipe). glibc's FILE is public ABI (struct _IO_FILE), so each call looks
// at the stream's buffer first: a read takes the blocking protocol on the stream's descriptor only
// when its buffer cannot serve it, a write only when it may reach write(2) on a descriptor another
// thread may read (a pipe, a socket). A character at a time, a buffer at a time: a program that
// putc's to a pipe pays the protocol once a buffer, not once a character.
namespace {
constexpr int kStdioUnbuffered = 0x0002;    // glibc's _IO_UNBUFFERED (libio.h, not installed)
constexpr int kStdioLineBuffered = 0x0200;  // glibc's _IO_LINE_BUF
std::size_t stdio_buffered(FILE* stream) {
  return stream->_IO_read_ptr < stream->_IO_read_end ? static_cast<std::size_t>(stream->_IO_read_end - stream->_IO_read_ptr) : 0;
}
/// A read from `stream` that its buffer serves (`served`) or that may wait for its descriptor (none
/// for a memory stream).
template <typename Call>
auto stdio_read(FILE* stream, bool served, Call&& call) {
  int fd = served || stream == nullptr ? -1 : fileno_unlocked(stream);
  if (fd < 0) return call();
  return blocking_io(fd, call);
}
/// A read of a line (up to `delimiter`): served when the buffer holds the delimiter.
template <typename Call>
auto stdio_read_line(FILE* stream, int delimiter, Call&& call) {
  real::resolve();
  std::size_t n = stream != nullptr ? stdio_buffered(stream) : 0;
  return stdio_read(stream, n > 0 && std::memchr(stream->_IO_read_ptr, delimiter, n) != nullptr, call);
}
/// A read of `bytes`: served when the buffer holds them.
template <typename Call>
auto stdio_read_some(FILE* stream, std::size_t bytes, Call&& call) {
  real::resolve();
  return stdio_read(stream, stream != nullptr && stdio_buffered(stream) >= bytes, call);
}
/// Whether writing `bytes` (`newline`: among them a '\n') to `stream` may reach write(2): it is
/// unbuffered or has no buffer yet, it is line-buffered and the bytes end a line, or they do not fit.
bool stdio_may_write(FILE* stream, std::size_t bytes, bool newline) {
  if ((stream->_flags & kStdioUnbuffered) != 0 || stream->_IO_buf_base == nullptr) return true;
  if ((stream->_flags & kStdioLineBuffered) != 0 && newline) return true;
  const char* at = stream->_IO_write_ptr > stream->_IO_buf_base ? stream->_IO_write_ptr : stream->_IO_buf_base;
  return stream->_IO_buf_end - at <= static_cast<std::ptrdiff_t>(bytes);
}
/// A write to `stream` that `may_write` (given the stream) says may reach write(2): the protocol of
/// write(2) where another thread may be at the other end.
template <typename MayWrite, typename Call>
auto stdio_write(FILE* stream, MayWrite&& may_write, Call&& call) {
  real::resolve();
  if (stream == nullptr || !may_write(stream) || !facade::io_reaches_thread(fileno_unlocked(stream))) return call();
  return blocking_io(fileno_unlocked(stream), call);
}
template <typename Call>
auto stdio_write_bytes(FILE* stream, const void* bytes, std::size_t size, Call&& call) {
  return stdio_write(stream, [&](FILE* s) {
    return stdio_may_write(s, size, (s->_flags & kStdioLineBuffered) != 0 && std::memchr(bytes, '\n', size) != nullptr);
  }, call);
}
template <typename Call>
auto stdio_write_char(FILE* stream, int c, Call&& call) {
  return stdio_write(stream, [&](FILE* s) { return stdio_may_write(s, 1, c == '\n'); }, call);
}
/// Formatted output: its length is not known before it is formatted; a format with a newline, or
/// a buffer within 256 bytes of its end, may write.
template <typename Call>
auto stdio_write_format(FILE* stream, const char* format, Call&& call) {
  return stdio_write(stream, [&](FILE* s) {
    std::size_t length = format != nullptr ? std::strlen(format) : 0;
    return stdio_may_write(s, length + 256, format != nullptr && std::memchr(format, '\n', length) != nullptr);
  }, call);
}
/// The program's only thread calls a stream function without glibc's stream lock (`unlocked`, the
/// function's _unlocked form); `locked` once it has another thread. Natively alone, glibc skips the
/// lock in the character calls and takes an uncontended one in the rest (fgets, fwrite, fflush):
/// whatif's threads made the first take it, and the second no cheaper, so both skip it.
template <typename Unlocked, typename Locked>
auto alone_or_locked(Unlocked&& unlocked, Locked&& locked) {
  return facade::program_alone() ? unlocked() : locked();
}
/// The character calls' fast path: the originals resolved and the program alone. Its check and the
/// inline body are all a putc costs then, so the slow path is out of line (a putc loop's line
/// spent twice native's time in the shim when the slow path's registers were saved on every call).
inline bool stdio_alone(FILE* stream) {
  return __builtin_expect(stream != nullptr && real::resolved() && facade::program_alone(), 1);
}
/// A character read by the program's only thread: glibc's own unlocked inline body, whose empty
/// buffer calls __uflow (the shim below, which takes the protocol); `locked` otherwise.
template <typename Locked>
__attribute__((noinline)) int stdio_getc_locked(FILE* stream, Locked locked) {
  return stdio_read_some(stream, 1, locked);
}
template <typename Locked>
inline int stdio_getc(FILE* stream, Locked locked) {
  if (stdio_alone(stream)) return __getc_unlocked_body(stream);
  return stdio_getc_locked(stream, locked);
}
/// A character written by the program's only thread: glibc's unlocked inline body, whose full
/// buffer calls __overflow (the shim below); `locked` otherwise.
template <typename Locked>
__attribute__((noinline)) int stdio_putc_locked(FILE* stream, int c, Locked locked) {
  return stdio_write_char(stream, c, locked);
}
template <typename Locked>
inline int stdio_putc(FILE* stream, int c, Locked locked) {
  if (stdio_alone(stream)) return __putc_unlocked_body(c, stream);
  return stdio_putc_locked(stream, c, locked);
}
/// fflush, __overflow, fclose: output pending (or a full buffer) goes to write(2).
template <typename Call>
auto stdio_write_pending(FILE* stream, Call&& call) {
  return stdio_write(stream, [](FILE* s) { return s->_IO_write_ptr > s->_IO_write_base || (s->_flags & kStdioUnbuffered) != 0; }, call);
}
}  // namespace

WHATIF_EXPORT char* fgets(char* buffer, int size, FILE* stream) {
  return stdio_read_line(stream, '\n', [&] { return alone_or_locked([&] { return real::fgets_unlocked(buffer, size, stream); }, [&] { return real::fgets(buffer, size, stream); }); });
}
WHATIF_EXPORT char* fgets_unlocked(char* buffer, int size, FILE* stream) {
  return stdio_read_line(stream, '\n', [&] { return real::fgets_unlocked(buffer, size, stream); });
}
WHATIF_EXPORT size_t fread(void* buffer, size_t size, size_t count, FILE* stream) {
  return stdio_read_some(stream, size * count, [&] { return alone_or_locked([&] { return real::fread_unlocked(buffer, size, count, stream); }, [&] { return real::fread(buffer, size, count, stream); }); });
}
WHATIF_EXPORT size_t fread_unlocked(void* buffer, size_t size, size_t count, FILE* stream) {
  return stdio_read_some(stream, size * count, [&] { return real::fread_unlocked(buffer, size, count, stream); });
}
WHATIF_EXPORT int fgetc(FILE* stream) { return stdio_getc(stream, [stream] { return real::fgetc(stream); }); }
WHATIF_EXPORT int getc(FILE* stream) { return stdio_getc(stream, [stream] { return real::getc(stream); }); }
WHATIF_EXPORT int getchar() { return stdio_getc(stdin, [] { return real::getchar(); }); }
WHATIF_EXPORT int fgetc_unlocked(FILE* stream) { return stdio_read_some(stream, 1, [&] { return real::fgetc_unlocked(stream); }); }
WHATIF_EXPORT int getc_unlocked(FILE* stream) { return stdio_read_some(stream, 1, [&] { return real::getc_unlocked(stream); }); }
WHATIF_EXPORT int getchar_unlocked() { return stdio_read_some(stdin, 1, [] { return real::getchar_unlocked(); }); }
// getc_unlocked's inline form (-O2, <bits/stdio.h>) calls __uflow when the buffer is empty.
WHATIF_EXPORT int __uflow(FILE* stream) { return stdio_read_some(stream, 1, [&] { return real::__uflow(stream); }); }
WHATIF_EXPORT ssize_t getline(char** line, size_t* size, FILE* stream) {
  return stdio_read_line(stream, '\n', [&] { return real::getline(line, size, stream); });
}
WHATIF_EXPORT ssize_t getdelim(char** line, size_t* size, int delimiter, FILE* stream) {
  return stdio_read_line(stream, delimiter, [&] { return real::getdelim(line, size, delimiter, stream); });
}
// getline's inline form (-O2) calls __getdelim.
WHATIF_EXPORT ssize_t __getdelim(char** line, size_t* size, int delimiter, FILE* stream) {
  return stdio_read_line(stream, delimiter, [&] { return real::__getdelim(line, size, delimiter, stream); });
}
// scanf: a conversion may read past a line, but one whose line is buffered rarely waits. The
// plain names are older programs' (binaries built before glibc 2.7, or C89/C++98 with _GNU_SOURCE);
// stdio.h gives them asm labels of the C99 forms here, so these definitions name their symbols.
WHATIF_EXPORT int plain_vfscanf(FILE* stream, const char* format, va_list arguments) __asm__("vfscanf");
WHATIF_EXPORT int plain_fscanf(FILE* stream, const char* format, ...) __asm__("fscanf");
WHATIF_EXPORT int plain_vscanf(const char* format, va_list arguments) __asm__("vscanf");
WHATIF_EXPORT int plain_scanf(const char* format, ...) __asm__("scanf");
WHATIF_EXPORT int plain_vfscanf(FILE* stream, const char* format, va_list arguments) {
  return stdio_read_line(stream, '\n', [&] { return real::vfscanf(stream, format, arguments); });
}
WHATIF_EXPORT int plain_fscanf(FILE* stream, const char* format, ...) {
  va_list arguments;
  va_start(arguments, format);
  int result = plain_vfscanf(stream, format, arguments);
  va_end(arguments);
  return result;
}
WHATIF_EXPORT int plain_vscanf(const char* format, va_list arguments) { return plain_vfscanf(stdin, format, arguments); }
WHATIF_EXPORT int plain_scanf(const char* format, ...) {
  va_list arguments;
  va_start(arguments, format);
  int result = plain_vfscanf(stdin, format, arguments);
  va_end(arguments);
  return result;
}
// Today's programs' scanf family (stdio.h redirects scanf, fscanf, ... there).
WHATIF_EXPORT int __isoc99_vfscanf(FILE* stream, const char* format, va_list arguments) {
  return stdio_read_line(stream, '\n', [&] { return real::__isoc99_vfscanf(stream, format, arguments); });
}
WHATIF_EXPORT int __isoc99_fscanf(FILE* stream, const char* format, ...) {
  va_list arguments;
  va_start(arguments, format);
  int result = __isoc99_vfscanf(stream, format, arguments);
  va_end(arguments);
  return result;
}
WHATIF_EXPORT int __isoc99_vscanf(const char* format, va_list arguments) { return __isoc99_vfscanf(stdin, format, arguments); }
WHATIF_EXPORT int __isoc99_scanf(const char* format, ...) {
  va_list arguments;
  va_start(arguments, format);
  int result = __isoc99_vfscanf(stdin, format, arguments);
  va_end(arguments);
  return result;
}

WHATIF_EXPORT size_t fwrite(const void* buffer, size_t size, size_t count, FILE* stream) {
  return stdio_write_bytes(stream, buffer, size * count, [&] { return alone_or_locked([&] { return real::fwrite_unlocked(buffer, size, count, stream); }, [&] { return real::fwrite(buffer, size, count, stream); }); });
}
WHATIF_EXPORT size_t fwrite_unlocked(const void* buffer, size_t size, size_t count, FILE* stream) {
  return stdio_write_bytes(stream, buffer, size * count, [&] { return real::fwrite_unlocked(buffer, size, count, stream); });
}
WHATIF_EXPORT int fputs(const char* text, FILE* stream) {
  return stdio_write_bytes(stream, text, std::strlen(text), [&] { return alone_or_locked([&] { return real::fputs_unlocked(text, stream); }, [&] { return real::fputs(text, stream); }); });
}
WHATIF_EXPORT int fputs_unlocked(const char* text, FILE* stream) {
  return stdio_write_bytes(stream, text, std::strlen(text), [&] { return real::fputs_unlocked(text, stream); });
}
WHATIF_EXPORT int puts(const char* text) {  // its newline ends a line
  return stdio_write(stdout, [&](FILE* s) { return stdio_may_write(s, std::strlen(text) + 1, true); }, [&] { return real::puts(text); });
}
WHATIF_EXPORT int fputc(int c, FILE* stream) { return stdio_putc(stream, c, [c, stream] { return real::fputc(c, stream); }); }
WHATIF_EXPORT int putc(int c, FILE* stream) { return stdio_putc(stream, c, [c, stream] { return real::putc(c, stream); }); }
WHATIF_EXPORT int putchar(int c) { return stdio_putc(stdout, c, [c] { return real::putchar(c); }); }
WHATIF_EXPORT int fputc_unlocked(int c, FILE* stream) { return stdio_write_char(stream, c, [&] { return real::fputc_unlocked(c, stream); }); }
WHATIF_EXPORT int putc_unlocked(int c, FILE* stream) { return stdio_write_char(stream, c, [&] { return real::putc_unlocked(c, stream); }); }
WHATIF_EXPORT int putchar_unlocked(int c) { return stdio_write_char(stdout, c, [&] { return real::putchar_unlocked(c); }); }
// putc_unlocked's inline form calls __overflow when the buffer is full (or the stream line-buffered).
WHATIF_EXPORT int __overflow(FILE* stream, int c) {
  return stdio_write(stream, [](FILE*) { return true; }, [&] { return real::__overflow(stream, c); });
}
WHATIF_EXPORT int fflush(FILE* stream) { return stdio_write_pending(stream, [&] { return alone_or_locked([&] { return real::fflush_unlocked(stream); }, [&] { return real::fflush(stream); }); }); }
WHATIF_EXPORT int fflush_unlocked(FILE* stream) { return stdio_write_pending(stream, [&] { return real::fflush_unlocked(stream); }); }
WHATIF_EXPORT int vfprintf(FILE* stream, const char* format, va_list arguments) {
  return stdio_write_format(stream, format, [&] { return real::vfprintf(stream, format, arguments); });
}
WHATIF_EXPORT int vprintf(const char* format, va_list arguments) { return vfprintf(stdout, format, arguments); }
WHATIF_EXPORT int fprintf(FILE* stream, const char* format, ...) {
  va_list arguments;
  va_start(arguments, format);
  int result = vfprintf(stream, format, arguments);
  va_end(arguments);
  return result;
}
WHATIF_EXPORT int printf(const char* format, ...) {
  va_list arguments;
  va_start(arguments, format);
  int result = vfprintf(stdout, format, arguments);
  va_end(arguments);
  return result;
}
// The fortified forms (_FORTIFY_SOURCE, Ubuntu's default).
WHATIF_EXPORT int __vfprintf_chk(FILE* stream, int flag, const char* format, va_list arguments) {
  return stdio_write_format(stream, format, [&] { return real::__vfprintf_chk(stream, flag, format, arguments); });
}
WHATIF_EXPORT int __vprintf_chk(int flag, const char* format, va_list arguments) {
  return __vfprintf_chk(stdout, flag, format, arguments);
}
WHATIF_EXPORT int __fprintf_chk(FILE* stream, int flag, const char* format, ...) {
  va_list arguments;
  va_start(arguments, format);
  int result = __vfprintf_chk(stream, flag, format, arguments);
  va_end(arguments);
  return result;
}
WHATIF_EXPORT int __printf_chk(int flag, const char* format, ...) {
  va_list arguments;
  va_start(arguments, format);
  int result = __vfprintf_chk(stdout, flag, format, arguments);
  va_end(arguments);
  return result;
}
WHATIF_EXPORT int vdprintf(int fd, const char* format, va_list arguments) {
  return blocking_io(fd, [&] { return real::vdprintf(fd, format, arguments); });
}
WHATIF_EXPORT int dprintf(int fd, const char* format, ...) {
  va_list arguments;
  va_start(arguments, format);
  int result = vdprintf(fd, format, arguments);
  va_end(arguments);
  return result;
}
// A SIGEV_THREAD notification runs on a thread glibc starts itself, past the pthread_create shim.
WHATIF_EXPORT int timer_create(clockid_t clock, struct sigevent* event, timer_t* timer) noexcept {
  real::resolve();
  if (event != nullptr && event->sigev_notify == SIGEV_THREAD) facade::program_starts_thread();
  return real::timer_create(clock, event, timer);
}
WHATIF_EXPORT int mq_notify(mqd_t queue, const struct sigevent* event) noexcept {
  real::resolve();
  if (event != nullptr && event->sigev_notify == SIGEV_THREAD) facade::program_starts_thread();
  if (real::mq_notify == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  return real::mq_notify(queue, event);
}

// fclose flushes, may wake a reader with the end of the stream, and closes past the close shim: the
// descriptor's remembered kind goes with it.
WHATIF_EXPORT int fclose(FILE* stream) {
  int fd = stream != nullptr ? fileno_unlocked(stream) : -1;
  int result = stdio_write(stream, [](FILE*) { return true; }, [&] { return real::fclose(stream); });
  if (fd >= 0) facade::descriptors_closed(static_cast<unsigned int>(fd), static_cast<unsigned int>(fd));
  return result;
}

WHATIF_EXPORT ssize_t recv(int fd, void* buffer, size_t length, int flags) {
  return blocking_io(fd, (flags & MSG_DONTWAIT) != 0, [&] { return real::recv(fd, buffer, length, flags); });
}
WHATIF_EXPORT ssize_t send(int fd, const void* buffer, size_t length, int flags) {
  return blocking_io(fd, (flags & MSG_DONTWAIT) != 0, [&] { return real::send(fd, buffer, length, flags); });
}
WHATIF_EXPORT ssize_t recvfrom(int fd, void* buffer, size_t length, int flags, struct sockaddr* address, socklen_t* address_length) {
  return blocking_io(fd, (flags & MSG_DONTWAIT) != 0, [&] { return real::recvfrom(fd, buffer, length, flags, address, address_length); });
}
WHATIF_EXPORT ssize_t sendto(int fd, const void* buffer, size_t length, int flags, const struct sockaddr* address, socklen_t address_length) {
  return blocking_io(fd, (flags & MSG_DONTWAIT) != 0, [&] { return real::sendto(fd, buffer, length, flags, address, address_length); });
}
WHATIF_EXPORT ssize_t recvmsg(int fd, struct msghdr* message, int flags) {
  return blocking_io(fd, (flags & MSG_DONTWAIT) != 0, [&] { return real::recvmsg(fd, message, flags); });
}
WHATIF_EXPORT ssize_t sendmsg(int fd, const struct msghdr* message, int flags) {
  return blocking_io(fd, (flags & MSG_DONTWAIT) != 0, [&] { return real::sendmsg(fd, message, flags); });
}
WHATIF_EXPORT int accept(int fd, struct sockaddr* address, socklen_t* address_length) {
  return blocking_io(fd, [&] { return real::accept(fd, address, address_length); });
}
WHATIF_EXPORT int accept4(int fd, struct sockaddr* address, socklen_t* address_length, int flags) {
  return blocking_io(fd, [&] { return real::accept4(fd, address, address_length, flags); });
}
WHATIF_EXPORT int connect(int fd, const struct sockaddr* address, socklen_t address_length) {
  int result = blocking_io(fd, [&] { return real::connect(fd, address, address_length); });
  facade::socket_connected(fd, result == 0 || errno == EINPROGRESS);
  return result;
}
WHATIF_EXPORT int listen(int fd, int backlog) {
  real::resolve();
  int result = real::listen(fd, backlog);
  facade::socket_listening(fd, result == 0);
  return result;
}
WHATIF_EXPORT int poll(struct pollfd* fds, nfds_t count, int timeout) {
  return blocking_ready([&] { return real::poll(fds, count, timeout); }, [&](int) { return facade::poll_woken_by_thread(fds, count); });
}
WHATIF_EXPORT int ppoll(struct pollfd* fds, nfds_t count, const struct timespec* timeout, const sigset_t* mask) {
  return blocking_ready([&] { return real::ppoll(fds, count, timeout, mask); },
                        [&](int) { return facade::poll_woken_by_thread(fds, count); });
}
WHATIF_EXPORT int select(int count, fd_set* readable, fd_set* writable, fd_set* errors, struct timeval* timeout) {
  return blocking_ready([&] { return real::select(count, readable, writable, errors, timeout); },
                        [&](int) { return facade::select_woken_by_thread(count, readable); });
}
WHATIF_EXPORT int pselect(int count, fd_set* readable, fd_set* writable, fd_set* errors, const struct timespec* timeout,
                          const sigset_t* mask) {
  return blocking_ready([&] { return real::pselect(count, readable, writable, errors, timeout, mask); },
                        [&](int) { return facade::select_woken_by_thread(count, readable); });
}
WHATIF_EXPORT int epoll_wait(int fd, struct epoll_event* events, int count, int timeout) {
  return blocking_ready([&] { return real::epoll_wait(fd, events, count, timeout); },
                        [&](int ready) { return facade::epoll_woken_by_thread(fd, events, ready); });
}
WHATIF_EXPORT int epoll_pwait(int fd, struct epoll_event* events, int count, int timeout, const sigset_t* mask) {
  return blocking_ready([&] { return real::epoll_pwait(fd, events, count, timeout, mask); },
                        [&](int ready) { return facade::epoll_woken_by_thread(fd, events, ready); });
}
WHATIF_EXPORT int epoll_ctl(int epfd, int op, int fd, struct epoll_event* event) noexcept {
  real::resolve();
  int result = real::epoll_ctl(epfd, op, fd, event);
  if (result == 0 && (op == EPOLL_CTL_ADD || op == EPOLL_CTL_MOD)) facade::epoll_registered(epfd, fd, event);
  return result;
}
