// Clocks, thread ids, sleeping, raw reads and writes and the process exit through raw syscalls; used
// from any thread and signal handlers.
#include "os/os.h"
#include "os/fd_guard.h"
#include "os/raw_syscall.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace whatif::os {

namespace {
using ClockGettime = int (*)(clockid_t, timespec*);
/// libc's clock_gettime (the vDSO's speed), past the runtime's own shim of it: the runtime's clocks
/// are real time, and its reads are not the program's. Resolved before main; the raw syscall until then.
std::atomic<ClockGettime> g_clock_gettime{nullptr};
__attribute__((constructor(101))) void resolve_clock_gettime() {
  g_clock_gettime.store(reinterpret_cast<ClockGettime>(dlsym(RTLD_NEXT, "clock_gettime")), std::memory_order_release);
}
}  // namespace

WHATIF_SIGNAL_SAFE int real_clock_gettime(clockid_t clock, timespec* ts) {
  if (ClockGettime real = g_clock_gettime.load(std::memory_order_acquire); real != nullptr) return real(clock, ts);
  long result = whatif::os::invoke_syscall(SYS_clock_gettime, clock, ts);
  if (result >= 0) return 0;
  errno = static_cast<int>(-result);  // clock_gettime's contract, which the interposed one passes on
  return -1;
}

WHATIF_SIGNAL_SAFE uint64_t monotonic_ns() {
  timespec ts;
  real_clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

uint64_t coarse_monotonic_ns() {
  timespec ts;
  real_clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

uint64_t realtime_ns() {
  timespec ts;
  real_clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

WHATIF_SIGNAL_SAFE pid_t gettid() { return static_cast<pid_t>(whatif::os::invoke_syscall(SYS_gettid)); }

WHATIF_SIGNAL_SAFE int tgkill(pid_t pid, pid_t tid, int sig) {
  return whatif::os::invoke_syscall(SYS_tgkill, pid, tid, sig) == 0 ? 0 : -errno;
}

namespace {
/// The thread's timer slack (50 us by default) would lengthen every sleep by about that much (this
/// VM: a 50-us request slept 115 us, with a slack of 1 ns 65 us): a pause must last what it pays
/// for, so the slack is 1 ns while `sleep` runs, and the program's own slack comes back after.
template <typename Sleep>
WHATIF_SIGNAL_SAFE uint64_t with_fine_slack(Sleep sleep) {
  int saved_errno = errno;
  uint64_t start = monotonic_ns();
  long slack = whatif::os::invoke_syscall(SYS_prctl, PR_GET_TIMERSLACK, 0, 0, 0, 0);
  if (slack > 1) whatif::os::invoke_syscall(SYS_prctl, PR_SET_TIMERSLACK, 1, 0, 0, 0);
  sleep();
  if (slack > 1) whatif::os::invoke_syscall(SYS_prctl, PR_SET_TIMERSLACK, slack, 0, 0, 0);
  errno = saved_errno;
  return monotonic_ns() - start;
}

timespec as_timespec(uint64_t ns) {
  return timespec{static_cast<time_t>(ns / 1000000000ull), static_cast<long>(ns % 1000000000ull)};
}
}  // namespace

WHATIF_SIGNAL_SAFE uint64_t sleep_ns(uint64_t ns) {
  return with_fine_slack([ns] {
    timespec request = as_timespec(ns), remaining{};
    // The raw syscall, so the program's (and our) nanosleep interposition is bypassed.
    while (whatif::os::invoke_syscall(SYS_nanosleep, &request, &remaining) != 0 && errno == EINTR) request = remaining;
  });
}

namespace {
/// TSC ticks per microsecond, from calibrate_spin (0: unknown, spin_ns polls the clock instead).
std::atomic<uint64_t> g_tsc_per_us{0};
}  // namespace

void calibrate_spin() {
  uint64_t t0 = monotonic_ns(), c0 = __builtin_ia32_rdtsc();
  sleep_ns(5000000);
  uint64_t t1 = monotonic_ns(), c1 = __builtin_ia32_rdtsc();
  if (t1 > t0 && c1 > c0) g_tsc_per_us.store((c1 - c0) * 1000 / (t1 - t0), std::memory_order_relaxed);
}

WHATIF_SIGNAL_SAFE uint64_t spin_ns(uint64_t ns) {
  const uint64_t start = monotonic_ns();
  // The loop reads the TSC, not the clock: every sample taken while it spins then has its IP in
  // the runtime's own code (whatif's time), where the vDSO's clock code would be unwound to the
  // program line that called the shim.
  if (uint64_t per_us = g_tsc_per_us.load(std::memory_order_relaxed); per_us > 0) {
    const uint64_t deadline = __builtin_ia32_rdtsc() + ns * per_us / 1000;
    while (__builtin_ia32_rdtsc() < deadline) __builtin_ia32_pause();
  }
  uint64_t now = monotonic_ns();
  while (now - start < ns) {  // uncalibrated, or the TSC ran slow against the clock
    __builtin_ia32_pause();
    now = monotonic_ns();
  }
  return now - start;
}

WHATIF_SIGNAL_SAFE uint64_t thread_cpu_ns() {
  timespec ts{};
  whatif::os::invoke_syscall(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

WHATIF_SIGNAL_SAFE uint64_t process_cpu_ns() {
  timespec ts{};
  whatif::os::invoke_syscall(SYS_clock_gettime, CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

WHATIF_SIGNAL_SAFE uint64_t spin_cpu_ns(uint64_t cpu_ns) {
  // Between readings of the CPU clock (a system call), spin on the TSC alone for a slice: short
  // enough that a slice cut by preemption overshoots little, long enough that the calls cost ~1%.
  constexpr uint64_t kSliceNs = 20000;
  int saved_errno = errno;
  const uint64_t start = thread_cpu_ns();
  uint64_t spun = 0;
  while (spun < cpu_ns) {
    uint64_t slice = std::min(cpu_ns - spun, kSliceNs);
    if (uint64_t per_us = g_tsc_per_us.load(std::memory_order_relaxed); per_us > 0) {
      const uint64_t deadline = __builtin_ia32_rdtsc() + slice * per_us / 1000;
      while (__builtin_ia32_rdtsc() < deadline) __builtin_ia32_pause();
    } else {
      for (uint64_t i = 0; i < slice / 32; ++i) __builtin_ia32_pause();  // uncalibrated: ~30 ns each or more
    }
    spun = thread_cpu_ns() - start;
  }
  errno = saved_errno;
  return spun;
}

WHATIF_SIGNAL_SAFE bool write_all(int fd, const void* data, std::size_t size) {
  int saved_errno = errno;
  const char* bytes = static_cast<const char*>(data);
  bool ok = true;
  while (size > 0) {
    long n = whatif::os::invoke_syscall(SYS_write, fd, bytes, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = false;
      break;
    }
    bytes += n;
    size -= static_cast<std::size_t>(n);
  }
  errno = saved_errno;
  return ok;
}

WHATIF_SIGNAL_SAFE long read_raw(int fd, void* buffer, std::size_t size) {
  int saved_errno = errno;
  long n;
  do {
    n = whatif::os::invoke_syscall(SYS_read, fd, buffer, size);
  } while (n < 0 && errno == EINTR);
  long result = n < 0 ? -errno : n;
  errno = saved_errno;
  return result;
}

std::string read_text(const char* path, std::size_t max) {
  int fd = static_cast<int>(whatif::os::invoke_syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC));
  if (fd < 0) return {};
  std::string text(max, '\0');
  std::size_t size = 0;
  while (size < max) {
    long n = read_raw(fd, text.data() + size, max - size);
    if (n <= 0) break;
    size += static_cast<std::size_t>(n);
  }
  whatif::os::invoke_syscall(SYS_close, fd);
  text.resize(size);
  return text;
}

WHATIF_SIGNAL_SAFE bool read_memory(uint64_t address, void* out, std::size_t size) {
  int saved = errno;
  iovec local{out, size};
  iovec remote{reinterpret_cast<void*>(address), size};
  long n = whatif::os::invoke_syscall(SYS_process_vm_readv, whatif::os::invoke_syscall(SYS_getpid), &local, 1ul, &remote, 1ul, 0ul);
  errno = saved;
  return n == static_cast<long>(size);
}

WHATIF_SIGNAL_SAFE void die_by_signal(int sig) {
  struct {  // the kernel's struct sigaction (not glibc's)
    void* handler;
    unsigned long flags;
    void* restorer;
    uint64_t mask;
  } action{};  // SIG_DFL, nothing masked
  whatif::os::invoke_syscall(SYS_rt_sigaction, sig, &action, nullptr, sizeof(action.mask));
  whatif::os::invoke_syscall(SYS_tgkill, whatif::os::invoke_syscall(SYS_getpid), whatif::os::invoke_syscall(SYS_gettid), sig);
}

[[noreturn]] WHATIF_SIGNAL_SAFE void exit_group(int code) {
  for (;;) whatif::os::invoke_syscall(SYS_exit_group, code);
}

int sample_signal() { return SIGRTMIN + 4; }

int reload_signal() { return SIGRTMIN + 5; }

std::string counters_reload_path(int pid) { return "/tmp/whatif-counters-reload." + std::to_string(pid); }

bool remove_file(const char* path) { return whatif::os::invoke_syscall(SYS_unlink, path) == 0; }

void raise_fd_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

uint64_t fd_soft_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
  return limit.rlim_cur == RLIM_INFINITY ? UINT64_MAX : limit.rlim_cur;
}

void* map_shared_anonymous(std::size_t bytes) {
  void* memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  return memory == MAP_FAILED ? nullptr : memory;
}

namespace {

/// Reads the start of a small /proc file into `text` (NUL-terminated); false when it cannot be read.
template <std::size_t N>
WHATIF_SIGNAL_SAFE bool read_proc(const char* path, char (&text)[N]) {
  int fd = static_cast<int>(invoke_syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC));
  if (fd < 0) return false;
  long n = read_raw(fd, text, N - 1);
  invoke_syscall(SYS_close, fd);  // not the close shim: it is the program's
  if (n <= 0) return false;
  text[n] = '\0';
  return true;
}

/// A schedstat file's "<run ns> <wait ns> <timeslices>": the first two numbers, by hand (no sscanf
/// in a handler).
WHATIF_SIGNAL_SAFE bool parse_schedstat(const char* text, uint64_t& run_ns, uint64_t& wait_ns) {
  uint64_t fields[2] = {0, 0};
  const char* p = text;
  for (uint64_t& field : fields) {
    if (*p < '0' || *p > '9') return false;
    for (; *p >= '0' && *p <= '9'; ++p) field = field * 10 + static_cast<uint64_t>(*p - '0');
    if (*p == ' ') ++p;
  }
  run_ns = fields[0];
  wait_ns = fields[1];
  return true;
}
}  // namespace

WHATIF_SIGNAL_SAFE bool own_run_queue_wait_ns(uint64_t& wait_ns) {
  int saved_errno = errno;
  char text[96];
  uint64_t run_ns = 0;
  bool read = read_proc("/proc/thread-self/schedstat", text) && parse_schedstat(text, run_ns, wait_ns);
  errno = saved_errno;
  return read;
}

bool read_schedstat(pid_t tid, uint64_t& run_ns, uint64_t& wait_ns) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", static_cast<int>(tid));
  char text[128];
  return read_proc(path, text) && parse_schedstat(text, run_ns, wait_ns);
}

namespace {
/// The voluntary_ctxt_switches field of a status file's text.
bool parse_voluntary_switches(const char* text, uint64_t& switches) {
  const char* field = std::strstr(text, "\nvoluntary_ctxt_switches:");
  if (field == nullptr) return false;
  unsigned long long value = 0;
  if (std::sscanf(field + std::strlen("\nvoluntary_ctxt_switches:"), "%llu", &value) != 1) return false;
  switches = value;
  return true;
}

/// Reads the start of an open /proc file from offset 0 into `text` (NUL-terminated).
template <std::size_t N>
bool pread_proc(int fd, char (&text)[N]) {
  long n = invoke_syscall(SYS_pread64, fd, text, N - 1, 0);
  if (n <= 0) return false;
  text[n] = '\0';
  return true;
}
}  // namespace

bool read_voluntary_switches(pid_t tid, uint64_t& switches) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/self/task/%d/status", static_cast<int>(tid));
  char text[4096];
  return read_proc(path, text) && parse_voluntary_switches(text, switches);
}

int open_task_file(pid_t tid, const char* file) {
  char path[96];
  std::snprintf(path, sizeof(path), "/proc/self/task/%d/%s", static_cast<int>(tid), file);
  int fd = static_cast<int>(invoke_syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC));
  if (fd < 0) return -1;
  protect_fd(fd);
  return fd;
}

void close_task_file(int fd) {
  if (fd < 0) return;
  unprotect_fd(fd);
  invoke_syscall(SYS_close, fd);  // not the close shim: it is the program's
}

bool read_schedstat_fd(int fd, uint64_t& run_ns, uint64_t& wait_ns) {
  char text[128];
  return pread_proc(fd, text) && parse_schedstat(text, run_ns, wait_ns);
}

bool read_voluntary_switches_fd(int fd, uint64_t& switches) {
  char text[4096];
  return pread_proc(fd, text) && parse_voluntary_switches(text, switches);
}

int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return std::max(CPU_COUNT(&set), 1);
}

bool process_exited(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(pid));
  char text[512];
  if (!read_proc(path, text)) return true;
  // "PID (COMM) STATE ...": COMM may hold spaces and parentheses, the state follows the last ')'.
  const char* close_paren = std::strrchr(text, ')');
  if (close_paren == nullptr || close_paren[1] == '\0' || close_paren[2] == '\0') return false;
  char state = close_paren[2];
  return state == 'Z' || state == 'X';
}

}  // namespace whatif::os
