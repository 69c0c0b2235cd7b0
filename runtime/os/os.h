// The OS layer's small helpers: clocks, thread ids, signals to threads, sleeping. The only place
// (with perf_event.*, cpu_timer.*) that makes raw syscalls. All functions here are signal-safe but
// read_text (which allocates).
#pragma once
#include <sys/types.h>
#include <time.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/signal_safe.h"

namespace whatif::os {

/// CLOCK_MONOTONIC in nanoseconds.
WHATIF_SIGNAL_SAFE uint64_t monotonic_ns();
/// CLOCK_MONOTONIC_COARSE: a scheduler tick's resolution, for a few ns (vDSO, no clock read).
uint64_t coarse_monotonic_ns();
/// CLOCK_REALTIME in nanoseconds (for the profile header only).
uint64_t realtime_ns();
/// libc's clock_gettime, never the runtime's interposed one (the raw syscall before libc's is
/// resolved). Returns 0 or -1 with errno, as clock_gettime.
WHATIF_SIGNAL_SAFE int real_clock_gettime(clockid_t clock, timespec* ts);
/// The calling thread's kernel id.
WHATIF_SIGNAL_SAFE pid_t gettid();
/// Sends `sig` to thread `tid` of process `pid`. Returns 0 or -errno.
WHATIF_SIGNAL_SAFE int tgkill(pid_t pid, pid_t tid, int sig);
/// Sleeps at least `ns` with the raw syscall (not the interposed nanosleep); returns the time
/// actually slept in ns.
WHATIF_SIGNAL_SAFE uint64_t sleep_ns(uint64_t ns);
/// Busy-waits at least `ns` of wall time (CLOCK_MONOTONIC through the vDSO, `pause` between
/// reads): the thread stays runnable and keeps its CPU share. Returns the time actually waited.
WHATIF_SIGNAL_SAFE uint64_t spin_ns(uint64_t ns);
/// The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID, by the raw syscall: the vDSO has no fast
/// path for CPU clocks, and a sample taken in the call then has its user IP in the runtime's code).
WHATIF_SIGNAL_SAFE uint64_t thread_cpu_ns();
/// The whole process's CPU time, all its threads (CLOCK_PROCESS_CPUTIME_ID, by the raw syscall).
WHATIF_SIGNAL_SAFE uint64_t process_cpu_ns();
/// The calling thread's total time waiting in a run queue for a CPU (the second field of
/// /proc/thread-self/schedstat, raw open/read/close: a few microseconds). False when unreadable
/// (no schedstats in this kernel). Keeps errno.
WHATIF_SIGNAL_SAFE bool own_run_queue_wait_ns(uint64_t& wait_ns);
/// Busy-waits until the calling thread has run at least `cpu_ns` of CPU time (the TSC between
/// readings of its CPU clock, `pause` in between): preempted meanwhile, it goes on spinning once it
/// runs again. Returns the CPU time actually spun.
WHATIF_SIGNAL_SAFE uint64_t spin_cpu_ns(uint64_t cpu_ns);
/// Measures the TSC's rate against CLOCK_MONOTONIC (5 ms; not in a handler) so spin_ns can wait on
/// the TSC alone.
void calibrate_spin();
/// Writes all of [data, data + size) to `fd` with the raw write syscall (never an interposed
/// write, libwhatif's own shim included: the crash path may run inside symbol resolution). Retries
/// on EINTR and short writes; keeps errno. Returns false if the kernel refused.
WHATIF_SIGNAL_SAFE bool write_all(int fd, const void* data, std::size_t size);
/// read(2) with the raw syscall (bypasses the read shim). Returns the bytes read or -errno.
WHATIF_SIGNAL_SAFE long read_raw(int fd, void* buffer, std::size_t size);
/// Up to `max` bytes of a (small, procfs) text file, read with raw syscalls; empty when unreadable.
/// Allocates: not for signal context.
std::string read_text(const char* path, std::size_t max);
/// Copies `size` bytes at `address` of this process into `out` without faulting
/// (process_vm_readv): false when any of them is unmapped or unreadable. Signal-safe.
WHATIF_SIGNAL_SAFE bool read_memory(uint64_t address, void* out, std::size_t size);
/// Restores `sig`'s default action (raw rt_sigaction) and sends it to the calling thread: the
/// process ends as the signal's default would end it, once the caller's handler returns.
WHATIF_SIGNAL_SAFE void die_by_signal(int sig);
/// Ends the whole process now with the raw exit_group syscall: no atexit handlers, no interposed
/// _exit, no lock.
[[noreturn]] WHATIF_SIGNAL_SAFE void exit_group(int code);
/// The signal the runtime uses to interrupt threads for sampling and delays (a real-time signal,
/// so the program's SIGPROF/SIGALRM stay its own).
int sample_signal();
/// The signal `whatif ctl PID reload` sends a program run with --counters (a real-time signal next to
/// the sample signal; the runtime handles it only when --counters is on).
int reload_signal();
/// Where `whatif ctl PID reload` leaves the new function list for process `pid` (one name a line).
std::string counters_reload_path(int pid);
/// Removes a file (raw unlink); false when it could not be removed. Not for signal context.
bool remove_file(const char* path);
/// Raises RLIMIT_NOFILE's soft limit to the hard limit (each thread holds perf descriptors).
void raise_fd_limit();
/// RLIMIT_NOFILE's soft limit (1024 when it cannot be read).
uint64_t fd_soft_limit();
/// `bytes` of zeroed memory shared with every process later forked from this one
/// (MAP_SHARED|MAP_ANONYMOUS, inherited by fork). Returns nullptr when the kernel refuses.
void* map_shared_anonymous(std::size_t bytes);
/// Thread `tid`'s scheduler times (/proc/self/task/TID/schedstat): on a CPU and waiting on a run
/// queue, in ns. False where the kernel has no schedstat (CONFIG_SCHED_INFO) or the thread is gone.
bool read_schedstat(pid_t tid, uint64_t& run_ns, uint64_t& wait_ns);
/// How many times thread `tid` gave up its CPU by blocking or yielding (voluntary_ctxt_switches in
/// /proc/self/task/TID/status). False when the thread is gone.
bool read_voluntary_switches(pid_t tid, uint64_t& switches);
/// /proc/self/task/TID/<file> opened for repeated reads (close-on-exec, protected from the program's
/// close), or -1. Opening and closing a /proc file costs several times the read itself.
int open_task_file(pid_t tid, const char* file);
/// Closes a descriptor from open_task_file.
void close_task_file(int fd);
/// read_schedstat and read_voluntary_switches through a descriptor from open_task_file (read from
/// offset 0 each time).
bool read_schedstat_fd(int fd, uint64_t& run_ns, uint64_t& wait_ns);
bool read_voluntary_switches_fd(int fd, uint64_t& switches);
/// The CPUs this process may run on (its affinity mask), at least 1.
int usable_cpus();
/// Whether process `pid` has exited (it is gone or a zombie), from /proc/PID/stat.
bool process_exited(pid_t pid);

}  // namespace whatif::os
