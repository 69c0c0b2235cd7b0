// The runtime facade: everything the interposed shims call. Each function is safe to call before
// start-up finishes (it then does nothing or initialises first). Runs on application threads.
#pragma once
#include <pthread.h>
#include <signal.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <threads.h>

#include <atomic>
#include <cstdint>

#include "base/signal_safe.h"
#include "libc/guard.h"
#include "progress/progress_points.h"

namespace whatif::facade {

/// Starts the runtime once (config, signal handler, main-thread sampling, profiler thread).
void ensure_started();
/// True while this process is profiled (false in a forked child, after exec prep, or at exit).
bool active();

/// The -finstrument-functions hooks (`--counters`): count `function`'s call when it is selected.
/// Nothing before start-up or without --counters; an unselected function costs one set lookup.
void function_enter(const void* function);
void function_exit(const void* function);
/// The unwinder is about to walk this thread's stack for an exception (--counters' patched entries
/// put their real return addresses back).
void before_unwind();
/// A catch handler whose stack pointer is `handler_sp` caught an exception (patched functions it left
/// are counted as exited).
void exception_caught(uintptr_t handler_sp);

/// pthread_create through the runtime: the child registers itself, inherits its parent's delay
/// clock and starts sampling before running `routine`.
int create_thread(pthread_t* thread, const pthread_attr_t* attr, void* (*routine)(void*), void* arg);
/// thrd_create (C11 <threads.h>) through the runtime, as create_thread: glibc starts C11 threads
/// with its internal pthread_create, past the shim, and they ran unseen (no samples, no delays).
int create_c11_thread(thrd_t* thread, int (*routine)(void*), void* arg);
/// pthread_detach with the sample signal blocked: no pause of this thread inside glibc's call.
int detach_thread(pthread_t thread);

/// Any thread or signal handler: the program read `clock` (through clock_gettime). For a monotonic
/// clock, notes the delay inserted so far (GlobalDelays::global_ns), from which deadline_shift_ns
/// measures.
WHATIF_SIGNAL_SAFE void clock_read(clockid_t clock);
/// Any thread: what to add to an absolute deadline on `clock` so that it falls where it would in
/// the virtual speedup's program: the delay inserted since the program last read a monotonic clock
/// (a deadline is a reading plus an interval, and the program runs late by the delay inserted
/// since it read). Taken from the latest reading by any thread, it is never more than the
/// deadline's own shift: a fixed-rate loop's deadlines from one starting time shift by all the
/// delay since, a deadline from a fresh reading by almost nothing. 0 for real-time and other clocks.
WHATIF_SIGNAL_SAFE uint64_t deadline_shift_ns(clockid_t clock);

/// Paper table 1: before a call that may wake another thread, execute owed delays.
void before_waking();
/// Paper table 2: around a call that may block. `woken_by_thread` says whether another thread
/// ended the wait (credit the delays) or a timeout / I/O did (execute them).
void before_blocking();
void after_blocking(bool woken_by_thread);
/// As the blocking call returns, before after_blocking: how long it blocked (0 when the thread is
/// not profiled). after_blocking reuses the clock reading.
uint64_t end_wait();
/// Around sched_yield: a loop of them is a wait for another thread (threads::before_yield).
void before_yield();
void after_yield();
/// Whether a wait on descriptors that blocked `blocked_ns` was ended by another thread of the
/// program: it really waited, and `thread_descriptor_ready` (a descriptor it returned ready is a
/// pipe, a Unix socket or an eventfd). For the poll, select and epoll shims, and io_wait_woken_by_thread.
bool waited_for_thread(uint64_t blocked_ns, bool thread_descriptor_ready);
/// Whether one of the descriptors that poll returned readable, select returned readable, or epoll
/// returned in `events` is another thread's to make ready: a pipe, a Unix socket or an eventfd
/// (remembered per descriptor; errno kept). For epoll only in a set whose registrations all named
/// their descriptors (data.fd), else the events do not say which.
bool poll_woken_by_thread(const struct pollfd* fds, nfds_t count);
bool select_woken_by_thread(int count, const fd_set* readable);
bool epoll_woken_by_thread(int epfd, const struct epoll_event* events, int ready);
/// epoll_ctl registered `fd` in `epfd` (EPOLL_CTL_ADD or MOD) with `event`.
void epoll_registered(int epfd, int fd, const struct epoll_event* event);
/// As a blocking I/O call on `fd` returns, before after_blocking: whether another thread ended its
/// wait (in-process pipes, Unix sockets and eventfds count when the call really waited; end_wait).
bool io_wait_woken_by_thread(int fd);
/// What an I/O call on `fd` can do, judged before it (`dont_wait`: its flags say MSG_DONTWAIT).
enum class IoCall : uint8_t {
  /// It may block, and another thread of the program could end the wait (a pipe, a Unix socket,
  /// an eventfd, or a descriptor not known): the blocking protocol, and its duration judged.
  kMayBeWokenByThread,
  /// It may block, but only I/O ends the wait (a file, another process's TCP socket): the protocol,
  /// never credited.
  kWokenByIo,
  /// It cannot block (the descriptor is non-blocking, or the call asks not to wait) and another
  /// thread may read what it writes: it may wake that thread, nothing more (before_waking).
  kWakes,
  /// It cannot block and no thread of the program is on the other end: nothing to do. A server's
  /// non-blocking socket I/O, 3 calls of 4 in memcached's get path, took 0.2-0.5 us each for the
  /// protocol around a call that neither waits nor wakes anyone.
  kNothing,
};
IoCall io_call(int fd, bool dont_wait);
/// Whether the calling thread is the program's only thread (it never started another, nor asked
/// glibc for a SIGEV_THREAD notification; whatif's threads are inside_runtime): its stdio calls may
/// skip the stream locks that glibc's putc and getc take only because whatif's own threads made
/// the process multi-threaded (a putc loop ran 2.8 times slower under whatif, and its line looked
/// that much costlier than natively). whatif's threads never touch the program's streams.
namespace detail {
extern std::atomic<bool> g_program_started_thread;
}
inline bool program_alone() {
  return !detail::g_program_started_thread.load(std::memory_order_relaxed) && !interpose::inside_runtime();
}
/// The program is about to start a thread of its own (or glibc one for it): program_alone() is
/// false from now on, in this process and its children.
void program_starts_thread();
/// Whether another thread of the program may be at the other end of `fd` (a pipe, a Unix socket,
/// an eventfd, or a descriptor not known): a stdio write there may wake it or wait for it.
bool io_reaches_thread(int fd);
/// After the program's connect (`connected`: it succeeded or is in progress) or listen (`listening`:
/// it succeeded) on `fd`: its local endpoint is the process's own, so a socket of the process whose
/// peer it is counts as woken by a thread (a TCP connection between two threads). errno kept.
void socket_connected(int fd, bool connected);
void socket_listening(int fd, bool listening);
/// Descriptors [first, last] were closed: the I/O shims look their kind up afresh.
void descriptors_closed(unsigned int first, unsigned int last);
/// fcntl(F_SETFL) on `fd`: whether it blocks is looked up afresh.
void descriptor_flags_changed(int fd);

/// Signals: the runtime's own signal cannot be blocked, ignored or taken by the program.
bool is_runtime_signal(int signal);
/// The runtime keeps SIGTRAP's handler once installed (--lbr, trapping samplers), also after the
/// profile is finished: a program's sigaction(SIGTRAP) is recorded (and the previous one returned)
/// and its handler chained to. Returns false when the call must go to libc as usual.
bool intercept_trap_action(int signal, const struct sigaction* action, struct sigaction* old);
/// Removes the runtime's signal from a mask the program passes to sigprocmask & co.
void unblock_runtime_signal(sigset_t* mask);

/// Process lifecycle.
void main_returned(int status);    ///< main returned `status`; libc's exit follows
void before_exit(int status);      ///< exit(): finishes the profile
void before_fast_exit(int status);  ///< _exit()/_Exit(): finishes the profile without atexit work
void before_exec();                 ///< the image is replaced: finishes the profile
uint64_t before_fork();              ///< a clock reading for after_fork_in_parent
/// The fork's wall time, for the tree's cost warning; `forked`: whether a child was created.
void after_fork_in_parent(uint64_t started, bool forked);
void after_fork_in_child();         ///< joins the parent's process tree, or runs unprofiled
void after_dlopen();                ///< refresh the line map on the profiler thread

progress::CozCounter* get_counter(int type, const char* name);

}  // namespace whatif::facade
