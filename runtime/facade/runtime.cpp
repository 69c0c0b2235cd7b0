// The runtime facade behind the shims: start-up, thread registration, blocking hooks, signals and
// the process lifecycle. Runs on application threads; the signal handler it installs is in
// runtime_signal.cpp.
#include "facade/runtime.h"
#include "facade/runtime_signal.h"
#include "facade/descriptor_kinds.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "os/log.h"
#include "config/config.h"
#include "threads/process_tree.h"
#include "threads/sampler_switch.h"
#include "threads/settle.h"
#include "threads/threads.h"
#include "delays/delays.h"
#include "experiment/child_forwarder.h"
#include "experiment/profiler.h"
#include "fncounters/entry_patch.h"
#include "fncounters/function_counters.h"
#include "fncounters/process_counters.h"
#include "libc/guard.h"
#include "libc/real.h"
#include "os/memory.h"
#include "os/os.h"
#include "os/perf_event.h"
#include "profile/profile_writer.h"
#include "whatif/environment.h"

namespace whatif::facade {
using config::Config;
using threads::current_thread;
using threads::set_current_thread;
using threads::settle_delays;
using threads::ThreadRegistry;
using threads::ThreadState;

namespace {

// kTreeChild: a process forked from a profiled one, profiled as part of the root's program (its
// samples and visits forwarded to the root's profiler). kForkedChild: forked, but unprofiled.
enum Lifecycle : int { kNotStarted, kStarting, kRunning, kFinished, kForkedChild, kTreeChild };
/// The process whose memory holds the runtime's state (borrowed_memory).
std::atomic<pid_t> g_owner_pid{0};

struct RuntimeState {
  Config config;
  /// The shared memory of the process tree, mapped before any fork; nullptr if the kernel refused.
  threads::ProcessTree* tree = nullptr;
  delays::GlobalDelays own_delays;  // the delay clock when there is no tree
  /// The one delay clock: the tree's, shared with every forked child, or own_delays.
  delays::GlobalDelays* delays = &own_delays;
  ThreadRegistry threads;
  profile::ProfileWriter writer;
  sampling::SamplerKind sampler_kind = sampling::SamplerKind::kPerfEvent;
  /// perf_event kinds: the profiler moves threads that switch contexts often to the timer
  /// (sampling/switch_rule.h), unless WHATIF_SAMPLER=perf or user.
  bool adaptive_sampler = false;
  uint64_t start_ns = 0;
  pthread_key_t thread_key{};
  std::unique_ptr<experiment::Profiler> profiler;  // the root's; its thread is gone in a child
  std::unique_ptr<experiment::ChildForwarder> forwarder;  // in a tree child only
  bool lbr = false;  // --lbr, and this kernel can send SIGTRAP from breakpoints
  /// The runtime's SIGTRAP handler is installed (--lbr, or samplers that signal by SIGTRAP): the
  /// program's own SIGTRAP disposition is kept aside and served by that handler.
  bool trap_handler = false;
};

std::atomic<int> g_lifecycle{kNotStarted};
RuntimeState* g_state = nullptr;  // set once during start-up, never freed (threads may outlive exit)
std::atomic<pid_t> g_starting_tid{0};
DescriptorKinds g_descriptor_kinds;  // static storage: valid before start-up and after exit
std::atomic<int> g_main_status{-1};  // what main returned, for the atexit path
/// `--counters`' function counters, published once resolved and calibrated; never freed.
std::atomic<fncounters::FunctionCounters*> g_function_counters{nullptr};

/// Profiled: the root process, or a child in its tree (pairs with the stores of kRunning/kTreeChild).
bool running() {
  int lifecycle = g_lifecycle.load(std::memory_order_acquire);
  return lifecycle == kRunning || lifecycle == kTreeChild;
}

/// The program's registered threads that have not exited (register_current_thread, retire_thread).
std::atomic<long> g_live_program_threads{0};

/// The calling thread, the program's last, is exiting after its main thread left with
/// pthread_exit. glibc ends such a process when its last thread exits, but it counts whatif's own
/// threads too, which wait for the program's end: the process lived on with only those (a program
/// whose main called pthread_exit hung after its workers finished, and the SIGTERM its launcher
/// forwarded stayed pending, blocked in the profiler thread). Ends the process as glibc would, with
/// status 0, unless threads whatif never saw (started before it, or with clone) are still there.
void end_after_last_thread() {
  // The main thread, once it has left, stays listed as a zombie until the process ends.
  const int leader = os::gettid() == getpid() ? 0 : 1;
  const int threads = os::thread_count();
  if (threads < 0 || threads > real::runtime_threads() + 1 + leader) return;
  before_exit(0);  // the profile is finished and kept (retire_thread's guard keeps the exit shim out)
  real::exit(0);
}

void retire_thread(void* raw) {
  auto* thread = static_cast<ThreadState*>(raw);
  if (thread == nullptr || current_thread() != thread) return;
  const bool last = g_live_program_threads.fetch_sub(1, std::memory_order_acq_rel) == 1;
  interpose::ReentryGuard guard;
  settle_delays(*g_state->delays, *thread);  // table 1: a joiner may wake
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, os::sample_signal());
  real::pthread_sigmask(SIG_BLOCK, &mask, nullptr);  // no handler may touch the state from here on
  if (thread->tracer) thread->tracer->close();  // drops a burst in flight, removes the breakpoint
  set_current_thread(nullptr);
  if (thread->sampler) thread->sampler->stop();
  // Its CPU demand since the profiler's last reading (a thread of a pool that lives 2 ms is never
  // read by the profiler's 20-ms windows otherwise), where the profiler uses it: the tree's demand
  // (spinning pauses) and whether a window had one thread running (outside contention, either pause).
  if (g_state->config.contention) threads::exit_readings().record(*thread);
  delays::thread_exited(thread->delays);
  threads::nudge_table().leave(thread);  // before retired: the profiler frees it after quiesce
  thread->retired.store(true, std::memory_order_release);  // pairs with take_retired's acquire
  // No registered thread is left, so the main thread (registered first) left with pthread_exit:
  // returning from main calls exit, which runs no thread's key destructors.
  if (last) end_after_last_thread();
}


/// The tracer's settings. The naive tracer (WHATIF_LBR_NAIVE) stops at every pending branch, so it
/// uses one debug register; so does a run with -p breakpoints, which need registers of their own.
lbr::Settings lbr_settings(const Config& config) {
  uint32_t registers = config.lbr_naive || !config.breakpoint_points.empty() ? 1 : config.lbr_registers;
  return {config.lbr_depth, config.lbr_every, !config.lbr_naive, registers};
}

/// Opens the calling thread's branch tracer; warns once when it cannot. Returns 0 or -errno.
int open_tracer(ThreadState& thread) {
  auto tracer = std::make_unique<lbr::ThreadTracer>();
  int result = g_state->config.lbr_no_sigtrap ? -EINVAL
                                              : tracer->open(thread.tid, lbr_settings(g_state->config), tracer_cookie(thread.tid));
  if (result == 0) {
    thread.tracer = std::move(tracer);
    return 0;
  }
  static log::WarnOnce warn_once;
  warn_once("--lbr: cannot trace branches of thread {}: {}", thread.tid, std::strerror(-result));
  return result;
}

/// Start-up, once: the runtime's SIGTRAP handler (facade::on_trap_signal), the program's earlier
/// disposition kept aside for it.
void install_trap_handler(RuntimeState& state) {
  if (state.trap_handler) return;
  struct sigaction action {}, previous {};
  action.sa_sigaction = &on_trap_signal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  // A sample must not start a burst mid-stop, nor a nudge settle inside a trapping sample's handler.
  sigaddset(&action.sa_mask, os::sample_signal());
  real::sigaction(SIGTRAP, &action, &previous);
  set_program_trap_action(previous);
  state.trap_handler = true;
}

/// --lbr at start-up: probes the kernel with the main thread's breakpoint and installs the SIGTRAP
/// handler. Returns a warning (empty when branch tracing is on).
std::string start_lbr(RuntimeState& state) {
  int result = state.config.lbr_no_sigtrap ? -EINVAL : [&] {
    lbr::ThreadTracer probe;
    return probe.open(os::gettid(), lbr_settings(state.config), tracer_cookie(os::gettid()));
  }();
  if (result == -EINVAL || result == -E2BIG || result == -EOPNOTSUPP) {
    return "--lbr: this kernel cannot send SIGTRAP from perf breakpoints (perf_event attr.sigtrap needs Linux 5.13 or "
           "later): no branch records are taken; causal profiling goes on. Run on Linux 5.13+, or leave out --lbr";
  }
  if (result != 0) {
    return fmt::format("--lbr: cannot open a hardware breakpoint ({}): no branch records are taken; causal profiling "
                       "goes on. Allow perf events (perf_event_paranoid <= 2), or free the debug registers (a debugger, -p)",
                       std::strerror(-result));
  }
  install_trap_handler(state);
  state.lbr = true;
  return {};
}

/// Registers the calling thread and starts sampling it. Any thread, normal context.
ThreadState* register_current_thread(const delays::LocalDelays* parent, const delays::ThreadCreation* creation) {
  auto* thread = new ThreadState;
  thread->tid = os::gettid();
  if (parent != nullptr) delays::inherit(thread->delays, *parent);
  // Until its own first window closes, a thread stands for the program's average wait for a CPU.
  thread->delays.contention_permille.store(g_state->delays->tree_wall_per_cpu.load(std::memory_order_relaxed),
                                           std::memory_order_relaxed);
  delays::thread_started(thread->delays, creation);
  thread->sampler = sampling::make_sampler(g_state->sampler_kind, g_state->adaptive_sampler);
  // Visible to the handler before the first sample: that sample comes after a random first period
  // (as little as the kernel's 10 us), and only the handler's first signal sets the whole period.
  // Set after start, a thread whose first signal came before it was visible was signalled every
  // 10-20 us until its queue of signals overflowed: a 2-ms task ran for 14 s, and the kernel's
  // fallback, SIGIO, killed the program.
  set_current_thread(thread);
  // Likewise its pause: a spinning pause in that first handler must stop the sampler's events.
  thread->delays.sampling_pause = thread->sampler->sampling_pause();
  int result = thread->sampler->start(thread->tid, g_state->config.sampling_period_ns, os::sample_signal());
  if (result != 0) {
    static log::WarnOnce warn_once;
    warn_once("cannot sample thread {}: {}; its time is not profiled", thread->tid, std::strerror(-result));
    thread->delays.sampling_pause = nullptr;
    thread->sampler.reset();
  }
  if (g_state->lbr) open_tracer(*thread);
  pthread_setspecific(g_state->thread_key, thread);
  g_live_program_threads.fetch_add(1, std::memory_order_acq_rel);
  g_state->threads.add(thread);
  threads::nudge_table().enter(thread, os::sample_signal());
  return thread;
}

void scrub_preload_from_environment() {
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload == nullptr) return;
  std::string kept;
  std::string entries = preload;
  std::size_t start = 0;
  while (start <= entries.size()) {
    std::size_t end = entries.find_first_of(": ", start);
    if (end == std::string::npos) end = entries.size();
    std::string entry = entries.substr(start, end - start);
    if (!entry.empty() && entry.find("libwhatif") == std::string::npos) {
      if (!kept.empty()) kept += ':';
      kept += entry;
    }
    start = end + 1;
  }
  if (kept.empty()) unsetenv("LD_PRELOAD");
  else setenv("LD_PRELOAD", kept.c_str(), 1);
}

sampling::SamplerKind choose_sampler(const Config& config, std::string& warning) {
  if (config.force_timer_sampler) {
    warning = "using the timer sampler (WHATIF_SAMPLER=timer)";
    return sampling::SamplerKind::kTimer;
  }
  int result = os::probe_perf_events();
  if (result == 0) {
    if (config.user_only_sampler) return sampling::SamplerKind::kPerfEventUser;
    if (os::probe_perf_events(/*with_kernel=*/true) == 0) {
      if (!os::load_page_fault_entry(config.kallsyms.c_str())) {
        warning = fmt::format("time in page faults is not sampled: {} does not give the kernel's page-fault "
                              "entry (kptr_restrict hides its addresses), so the first touches of fresh memory "
                              "are lost to the lines that make them; system calls are counted",
                              config.kallsyms);
      }
      return sampling::SamplerKind::kPerfEvent;
    }
    warning = fmt::format("time in system calls and page faults is not sampled (perf_event_paranoid={}): it is "
                          "lost to the lines that make them; lower /proc/sys/kernel/perf_event_paranoid to 1 or "
                          "run as root to count it",
                          os::perf_event_paranoid());
    return sampling::SamplerKind::kPerfEventUser;
  }
  warning = fmt::format("perf_event_open denied ({}, perf_event_paranoid={}): run as root or lower "
                        "/proc/sys/kernel/perf_event_paranoid; falling back to timer sampling",
                        std::strerror(-result), os::perf_event_paranoid());
  return sampling::SamplerKind::kTimer;
}

void start() {
  real::resolve();
  g_state = new RuntimeState;
  RuntimeState& state = *g_state;
  state.config = Config::from_environment();
  state.start_ns = os::monotonic_ns();
  if (const char* level = std::getenv(environment::kLog)) {
    std::string text = level;
    log::set_level(text == "debug"     ? log::Level::kDebug
                   : text == "warning" ? log::Level::kWarning
                   : text == "error"   ? log::Level::kError  // the launcher relays warnings itself
                                       : log::Level::kInfo);
  }
  if (!state.config.follow_children) scrub_preload_from_environment();
  os::raise_fd_limit();

  std::string sampler_warning;
  state.sampler_kind = choose_sampler(state.config, sampler_warning);
  state.adaptive_sampler = state.sampler_kind != sampling::SamplerKind::kTimer && !state.config.perf_only_sampler &&
                           !state.config.user_only_sampler;
  // In the header's options: whether the samplers signal by SIGTRAP here, not only whether asked to.
  state.config.sample_trap = state.config.sample_trap && state.sampler_kind != sampling::SamplerKind::kTimer &&
                             os::probe_trapping_sampler(state.sampler_kind == sampling::SamplerKind::kPerfEvent) == 0;
  if (auto opened = state.writer.open(state.config.output, state.config.coz_format ? profile::Format::kCoz : profile::Format::kWhatif);
      !opened) {
    log::warning("{}", opened.error());
  }
  profile::Header header;
  header.command = state.config.command;
  if (header.command.empty()) {
    if (std::string path = os::executable_path(); !path.empty()) header.command.push_back(path);
  }
  header.start_realtime_ns = os::realtime_ns();
  header.pid = getpid();
  header.sampling_period_ns = state.config.sampling_period_ns;
  header.sampler = sampling::sampler_name(state.sampler_kind);
  header.options_json = state.config.options_json();
  header.binary_scope = state.config.binary_scope;
  header.source_scope = state.config.source_scope;
  state.writer.header(header);
  if (!sampler_warning.empty()) {
    log::warning("{}", sampler_warning);
    state.writer.warning(sampler_warning);
  }
  for (const std::string& error : state.config.errors) {
    log::warning("{}", error);
    state.writer.warning(error);
  }

  delays::runnable_threads().cpus = os::usable_cpus();
  delays::runnable_threads().enabled = state.config.contention && state.config.spin_pauses;
  state.tree = threads::ProcessTree::create();
  if (state.tree != nullptr) {
    delays::share_runnable_threads(state.tree->runnable());
    state.delays = &state.tree->delays();
    state.delays->spin_pauses.store(state.config.spin_pauses, std::memory_order_relaxed);
  } else {
    std::string message = fmt::format("cannot map memory shared with forked children ({}): processes this program "
                                      "forks run unprofiled",
                                      std::strerror(errno));
    state.own_delays.spin_pauses.store(state.config.spin_pauses, std::memory_order_relaxed);
    log::warning("{}", message);
    state.writer.warning(message);
  }
  // One sampling event per thread where the kernel can signal its samples by SIGTRAP: the second
  // event's timer interrupts cost as much again (sampling::set_trap_sampling).
  if (state.config.sample_trap) {
    install_trap_handler(state);
    sampling::set_trap_sampling(true);
  }
  if (state.config.lbr) {
    if (std::string warning = start_lbr(state); !warning.empty()) {
      log::warning("{}", warning);
      state.writer.warning(warning);
    }
  }

  publish_signal_delays(state.delays);
  struct sigaction action {};
  action.sa_sigaction = &on_runtime_signal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  // A stop that falls inside this handler's own code (a breakpoint in libc) waits until it returns
  // and arrives late (TRAP_PERF_FLAG_ASYNC): the tracer then drops that burst.
  if (state.trap_handler) sigaddset(&action.sa_mask, SIGTRAP);
  real::sigaction(os::sample_signal(), &action, nullptr);
  pthread_key_create(&state.thread_key, &retire_thread);

  fncounters::FunctionCounters* function_counters = nullptr;
  if (!state.config.counter_functions.empty()) {
    function_counters = new fncounters::FunctionCounters;
    std::vector<std::string> warnings;
    function_counters->start(state.config.counter_functions, state.config.counter_events, warnings,
                             state.config.counter_cycle, state.config.rdpmc, state.config.live_patch);
    for (const std::string& message : warnings) {
      log::warning("{}", message);
      state.writer.warning(message);
    }
    if (!function_counters->any()) {
      delete function_counters;
      function_counters = nullptr;
    } else {
      // `whatif ctl PID reload`: the handler raises a flag the profiler thread takes.
      struct sigaction reload {};
      reload.sa_handler = &fncounters::on_reload_signal;
      reload.sa_flags = SA_RESTART;
      sigemptyset(&reload.sa_mask);
      real::sigaction(os::reload_signal(), &reload, nullptr);
    }
  }

  // `--counters`' intervals: opened after the profiler thread starts, so its own CPU is not counted.
  fncounters::ProcessCounters* process_counters = nullptr;
  if (!state.config.counter_functions.empty() && state.config.counter_interval_ns > 0 &&
      !state.config.interval_events.empty()) {
    process_counters = new fncounters::ProcessCounters;  // never freed: the profiler reads it until exit
  }

  experiment::ProfilerContext context;
  context.function_counters = function_counters;
  context.process_counters = process_counters;
  context.config = &state.config;
  context.delays = state.delays;
  context.tree = state.tree;
  context.threads = &state.threads;
  context.writer = &state.writer;
  context.start_ns = state.start_ns;
  context.lbr = state.lbr;
  if (state.adaptive_sampler) {
    context.switch_events = state.sampler_kind == sampling::SamplerKind::kPerfEvent && !sampling::trap_sampling() ? 2 : 1;
  }
  state.profiler = std::make_unique<experiment::Profiler>(context);

  sampling::set_first_period(state.config.first_period_ns);
  sampling::set_period_jitter(state.config.period_jitter);
  register_current_thread(nullptr, nullptr);
  g_function_counters.store(function_counters, std::memory_order_release);  // pairs with the hooks' acquire
  if (int result = state.profiler->start(); result != 0) {
    log::warning("cannot start the profiler thread: {}; the program runs unprofiled", std::strerror(result));
  } else if (process_counters != nullptr) {
    process_counters->open(state.config.interval_events, os::monotonic_ns());
  }
  // -p points are patched while this is the program's only thread: no thread can be running a
  // line's instructions while they are moved.
  if (!state.config.breakpoint_points.empty()) state.profiler->wait_for_progress_points(10'000'000'000ull);
  std::atexit([] { before_exit(g_main_status.load(std::memory_order_acquire)); });
}

/// Blocks the calling thread's sample signal for its scope: no sample, and so no pause, inside it.
/// A signal that arrives meanwhile is delivered when the scope ends.
class SampleSignalBlocked {
 public:
  SampleSignalBlocked() {
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, os::sample_signal());
    real::pthread_sigmask(SIG_BLOCK, &mask, &previous_);
  }
  ~SampleSignalBlocked() { real::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  SampleSignalBlocked(const SampleSignalBlocked&) = delete;
  SampleSignalBlocked& operator=(const SampleSignalBlocked&) = delete;

 private:
  sigset_t previous_;
};

/// A tree child leaves the tree (exit or exec): forwards its last samples and visits, then pays
/// the delay it owes, so that a parent waiting for it may be credited up to the global clock.
void leave_tree() {
  SampleSignalBlocked blocked;  // the flush drains this thread's ring too
  g_state->forwarder->stop_and_flush();
  if (ThreadState* thread = current_thread()) settle_delays(*g_state->delays, *thread);
  delays::leave_runnable_threads();  // after its last pause: it was runnable until then
}

/// Stops the profiler and writes the final records (the root), or leaves the tree (a child),
/// once. Any application thread.
void finish(int exit_status) {
  int expected = kRunning;
  if (g_lifecycle.compare_exchange_strong(expected, kFinished, std::memory_order_acq_rel)) {
    interpose::ReentryGuard guard;
    // A count that drifted would see bursts that are not there (or miss real ones): after the
    // program joined its threads, it is this one, outside any blocking call.
    const delays::RunnableThreads& runnable = delays::runnable_threads();
    log::debug("threads at exit: {} registered, {} in blocking calls", runnable.live.load(std::memory_order_relaxed),
               runnable.blocked.load(std::memory_order_relaxed));
    g_state->profiler->stop_and_finish(exit_status);
    return;
  }
  expected = kTreeChild;
  if (g_lifecycle.compare_exchange_strong(expected, kFinished, std::memory_order_acq_rel)) {
    interpose::ReentryGuard guard;
    leave_tree();
  }
}

}  // namespace

void ensure_started() {
  int lifecycle = g_lifecycle.load(std::memory_order_acquire);
  if (lifecycle != kNotStarted && lifecycle != kStarting) return;
  int expected = kNotStarted;
  if (g_lifecycle.compare_exchange_strong(expected, kStarting, std::memory_order_acq_rel)) {
    g_starting_tid.store(os::gettid(), std::memory_order_relaxed);
    {
      interpose::ReentryGuard guard;
      g_owner_pid.store(getpid(), std::memory_order_relaxed);
      start();
    }
    g_lifecycle.store(kRunning, std::memory_order_release);  // pairs with running()'s acquire
    return;
  }
  if (g_starting_tid.load(std::memory_order_relaxed) == os::gettid()) return;  // re-entered
  while (g_lifecycle.load(std::memory_order_acquire) == kStarting) sched_yield();
}

bool active() { return running(); }

namespace {
/// GlobalDelays::global_ns at the program's latest reading of a monotonic clock (the largest, since
/// it only grows).
std::atomic<uint64_t> g_delay_at_clock_read{0};

/// Whether deadlines on `clock` are shifted: the monotonic clocks, which the program reads only
/// through clock_gettime (steady_clock, Rust's Instant). A real-time deadline may come from
/// gettimeofday or time(), which whatif does not see, so its shift could be too large.
WHATIF_SIGNAL_SAFE bool monotonic(clockid_t clock) {
  return clock == CLOCK_MONOTONIC || clock == CLOCK_MONOTONIC_RAW || clock == CLOCK_MONOTONIC_COARSE ||
         clock == CLOCK_BOOTTIME;
}
}  // namespace

WHATIF_SIGNAL_SAFE void clock_read(clockid_t clock) {
  if (!monotonic(clock) || !running()) return;
  uint64_t delay = g_state->delays->global_ns.load(std::memory_order_relaxed);
  // Most readings find the value unchanged (it moves only at the selected line's samples): a load,
  // not a store, keeps the cache line shared between threads that read the clock often.
  uint64_t seen = g_delay_at_clock_read.load(std::memory_order_relaxed);
  while (seen < delay && !g_delay_at_clock_read.compare_exchange_weak(seen, delay, std::memory_order_relaxed)) {
  }
}

WHATIF_SIGNAL_SAFE uint64_t deadline_shift_ns(clockid_t clock) {
  if (!monotonic(clock) || !running()) return 0;
  uint64_t delay = g_state->delays->global_ns.load(std::memory_order_relaxed);
  uint64_t at_read = g_delay_at_clock_read.load(std::memory_order_relaxed);
  return delay > at_read ? delay - at_read : 0;
}

void function_enter(const void* function) {
  if (fncounters::FunctionCounters* counters = g_function_counters.load(std::memory_order_acquire)) {
    counters->enter(function);
  }
}

void function_exit(const void* function) {
  if (fncounters::FunctionCounters* counters = g_function_counters.load(std::memory_order_acquire)) {
    counters->exit(function);
  }
}

void before_unwind() { fncounters::restore_returns_for_unwind(); }

void exception_caught(uintptr_t handler_sp) { fncounters::rehook_after_catch(handler_sp); }

namespace {
struct StartArguments {
  void* (*routine)(void*);
  void* argument;
  uint64_t parent_local_ns;
  delays::ThreadCreation creation;
  int (*c11_routine)(void*) = nullptr;  ///< a C11 thread's (thrd_create): it returns an int
};

void* thread_trampoline(void* raw) {
  StartArguments arguments = *static_cast<StartArguments*>(raw);
  delete static_cast<StartArguments*>(raw);
  if (running()) {
    interpose::ReentryGuard guard;
    delays::LocalDelays parent;
    parent.local_ns.store(arguments.parent_local_ns, std::memory_order_relaxed);
    register_current_thread(&parent, &arguments.creation);
  } else {
    delays::thread_not_started(arguments.creation);
  }
  // A C11 thread's int result travels as glibc's own start_thread carries it, so that thrd_join
  // reads it back: (void*)(uintptr_t)result.
  if (arguments.c11_routine != nullptr) {
    return reinterpret_cast<void*>(static_cast<uintptr_t>(arguments.c11_routine(arguments.argument)));
  }
  return arguments.routine(arguments.argument);  // retire_thread runs as the key's destructor
}

/// Starts a thread through thread_trampoline: it inherits `arguments`' parent clock. pthread_create's
/// result.
int start_thread(pthread_t* thread, const pthread_attr_t* attr, StartArguments arguments) {
  ThreadState* parent = current_thread();
  if (parent != nullptr) {
    // The child inherits the clock: what the parent's wait for a CPU paid, the child owes neither.
    delays::BusyScope busy(parent->delays.busy);
    if (busy.held()) delays::absorb_cpu_wait(*g_state->delays, parent->delays);
  }
  arguments.parent_local_ns = parent ? parent->delays.local_ns.load(std::memory_order_acquire) : 0;
  arguments.creation = delays::thread_created();
  auto* copy = new StartArguments(arguments);
  int result = real::pthread_create(thread, attr, &thread_trampoline, copy);
  if (result != 0) {
    delays::thread_not_started(copy->creation);
    delete copy;
  }
  return result;
}
}  // namespace

int create_thread(pthread_t* thread, const pthread_attr_t* attr, void* (*routine)(void*), void* arg) {
  program_starts_thread();
  ensure_started();
  if (!running()) return real::pthread_create(thread, attr, routine, arg);
  return start_thread(thread, attr, StartArguments{routine, arg, 0, {}});
}

int create_c11_thread(thrd_t* thread, int (*routine)(void*), void* arg) {
  program_starts_thread();
  ensure_started();
  if (!running()) return real::thrd_create(thread, routine, arg);  // the program's libc has it: it called it
  StartArguments arguments{nullptr, arg, 0, {}};
  arguments.c11_routine = routine;
  // thrd_t is glibc's pthread_t; its errors as glibc's thrd_create maps them.
  switch (start_thread(reinterpret_cast<pthread_t*>(thread), nullptr, arguments)) {
    case 0:
      return thrd_success;
    case ENOMEM:
      return thrd_nomem;
    default:
      return thrd_error;
  }
}

int detach_thread(pthread_t thread) {
  // glibc 2.36's pthread_detach marks the thread detached, then reads its descriptor again. A
  // thread that exits in between frees itself as detached, and its stack (the descriptor's memory)
  // may be unmapped from the stack cache: the read faults. Natively that window is two
  // instructions; a pause at a sample there (the delay of a virtual speedup, a millisecond) let
  // short-lived threads exit and be freed, and a program that detaches each thread it creates
  // crashed under whatif (1 run in ~15 of tests/integration/programs/short_threads.c before it
  // created its threads detached). The signal is blocked for the call, as a thread leaving the tree
  // blocks it for its flush.
  SampleSignalBlocked blocked;
  return real::pthread_detach(thread);
}

namespace {
/// Another thread of this process most likely ends a wait on `fd`: a pipe, a Unix socket, or an
/// eventfd (an anonymous inode whose /proc/self/fd link says so: how event loops are woken).
DescriptorKinds::Kind descriptor_kind(int fd) {
  struct stat info {};
  if (fstat(fd, &info) != 0) return DescriptorKinds::Kind::kUnknown;
  if (S_ISFIFO(info.st_mode)) return DescriptorKinds::Kind::kWokenByThread;
  if (S_ISSOCK(info.st_mode)) {
    sockaddr_storage address{};
    socklen_t length = sizeof(address);
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0 && address.ss_family == AF_UNIX) {
      return DescriptorKinds::Kind::kWokenByThread;
    }
    // A TCP connection to a socket of this process (a thread's listener, or a thread's connect):
    // the other end is one of its threads, as with a Unix socket.
    sockaddr_storage peer{};
    length = sizeof(peer);
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &length) == 0 &&
        g_descriptor_kinds.is_own_peer(reinterpret_cast<sockaddr*>(&peer), length)) {
      return DescriptorKinds::Kind::kWokenByThread;
    }
    return DescriptorKinds::Kind::kOther;
  }
  if ((info.st_mode & S_IFMT) == 0) {  // anon_inode: eventfd, timerfd, signalfd, epoll
    std::string link = "/proc/thread-self/fd/" + std::to_string(fd);  // /proc/self/fd: gone with a main thread that left
    char target[64];
    ssize_t length = readlink(link.c_str(), target, sizeof(target));
    if (length > 0 && std::string_view(target, static_cast<std::size_t>(length)) == "anon_inode:[eventfd]") {
      return DescriptorKinds::Kind::kWokenByThread;
    }
  }
  return DescriptorKinds::Kind::kOther;
}

/// What is remembered of `fd`, or looked up now (errno kept: the program's call comes next).
DescriptorKinds::Entry remembered(int fd) {
  uint64_t now = os::coarse_monotonic_ns();
  DescriptorKinds::Entry entry = g_descriptor_kinds.lookup_entry(fd, now);
  if (entry.kind == DescriptorKinds::Kind::kUnknown) {
    int saved_errno = errno;
    entry.kind = descriptor_kind(fd);
    int flags = fcntl(fd, F_GETFL);
    entry.nonblocking = flags != -1 && (flags & O_NONBLOCK) != 0;
    errno = saved_errno;
    g_descriptor_kinds.remember(fd, entry, now);
  }
  return entry;
}

/// The kind of `fd`, remembered or looked up now (errno kept).
DescriptorKinds::Kind remembered_kind(int fd) { return remembered(fd).kind; }
}  // namespace

void before_waking() {
  if (ThreadState* thread = current_thread()) settle_delays(*g_state->delays, *thread);
}

void before_yield() {
  if (ThreadState* thread = current_thread()) threads::before_yield(*g_state->delays, *thread);
}

void after_yield() {
  if (ThreadState* thread = current_thread()) delays::after_yield(thread->delays);
}

void before_blocking() {
  if (ThreadState* thread = current_thread()) threads::before_blocking(*g_state->delays, *thread);
}

void after_blocking(bool woken_by_thread) {
  if (ThreadState* thread = current_thread()) delays::after_blocking(*g_state->delays, thread->delays, woken_by_thread);
}

uint64_t end_wait() {
  ThreadState* thread = current_thread();
  return thread != nullptr ? delays::end_wait(thread->delays) : 0;
}

IoCall io_call(int fd, bool dont_wait) {
  if (fd < 0 || fd >= DescriptorKinds::kCached) return IoCall::kMayBeWokenByThread;  // looked up after a long wait only
  DescriptorKinds::Entry entry = remembered(fd);
  bool thread_end = entry.kind != DescriptorKinds::Kind::kOther;
  if (dont_wait || entry.nonblocking) return thread_end ? IoCall::kWakes : IoCall::kNothing;
  return thread_end ? IoCall::kMayBeWokenByThread : IoCall::kWokenByIo;
}

std::atomic<bool> detail::g_program_started_thread{false};

void program_starts_thread() { detail::g_program_started_thread.store(true, std::memory_order_relaxed); }

bool io_reaches_thread(int fd) {
  return fd >= 0 && (fd >= DescriptorKinds::kCached || remembered(fd).kind != DescriptorKinds::Kind::kOther);
}

namespace {
constexpr uint64_t kBlockedNs = 50000;  // shorter calls did not really wait for anyone
}  // namespace

bool waited_for_thread(uint64_t blocked_ns, bool thread_descriptor_ready) {
  return blocked_ns >= kBlockedNs && thread_descriptor_ready;
}

namespace {
bool thread_descriptor(int fd) { return fd >= 0 && remembered_kind(fd) == DescriptorKinds::Kind::kWokenByThread; }
}  // namespace

bool poll_woken_by_thread(const struct pollfd* fds, nfds_t count) {
  for (nfds_t i = 0; i < count; ++i) {
    if ((fds[i].revents & (POLLIN | POLLPRI | POLLHUP)) != 0 && thread_descriptor(fds[i].fd)) return true;
  }
  return false;
}

bool select_woken_by_thread(int count, const fd_set* readable) {
  if (readable == nullptr) return false;
  for (int fd = 0; fd < count && fd < FD_SETSIZE; ++fd) {
    if (FD_ISSET(fd, readable) && thread_descriptor(fd)) return true;
  }
  return false;
}

bool epoll_woken_by_thread(int epfd, const struct epoll_event* events, int ready) {
  if (!g_descriptor_kinds.epoll_names_fds(epfd)) return false;
  for (int i = 0; i < ready; ++i) {
    if ((events[i].events & (EPOLLIN | EPOLLPRI | EPOLLHUP)) != 0 && thread_descriptor(events[i].data.fd)) return true;
  }
  return false;
}

void epoll_registered(int epfd, int fd, const struct epoll_event* event) {
  g_descriptor_kinds.note_epoll_registration(epfd, event != nullptr && event->data.fd == fd);
}

bool io_wait_woken_by_thread(int fd) {
  uint64_t blocked_ns = end_wait();
  return waited_for_thread(blocked_ns, thread_descriptor(fd));
}

namespace {
void note_own_endpoint(int fd, bool listening) {
  int saved_errno = errno;
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    const auto* local = reinterpret_cast<const sockaddr*>(&address);
    uint64_t key = listening ? DescriptorKinds::wildcard_port_key(local, length) : 0;
    if (key == 0) key = DescriptorKinds::endpoint_key(local, length);
    g_descriptor_kinds.note_own_endpoint(fd, key);
  }
  errno = saved_errno;
}
}  // namespace

void socket_connected(int fd, bool connected) {
  if (!connected) return;
  note_own_endpoint(fd, /*listening=*/false);
  g_descriptor_kinds.forget_kind(fd);  // judged before it had a peer, during the connect
}

void socket_listening(int fd, bool listening) {
  if (listening) note_own_endpoint(fd, /*listening=*/true);
}

void descriptors_closed(unsigned int first, unsigned int last) { g_descriptor_kinds.forget_range(first, last); }

void descriptor_flags_changed(int fd) { g_descriptor_kinds.forget_kind(fd); }

bool is_runtime_signal(int signal) { return signal == os::sample_signal(); }

bool intercept_trap_action(int signal, const struct sigaction* action, struct sigaction* old) {
  // Once installed, the handler stays the process's, also after the profile is finished: threads
  // keep sampling until they exit, and a program that reset SIGTRAP in its exit handlers would die
  // of the next sample.
  if (signal != SIGTRAP || g_state == nullptr || !g_state->trap_handler) return false;
  if (old != nullptr) *old = program_trap_action();
  if (action != nullptr) set_program_trap_action(*action);
  return true;
}

void unblock_runtime_signal(sigset_t* mask) {
  if (mask == nullptr) return;
  sigdelset(mask, os::sample_signal());
  // Samplers that signal by SIGTRAP: a thread that blocks every signal (a server's workers, with
  // one thread in sigwait) must still take its samples.
  if (sampling::trap_sampling()) sigdelset(mask, SIGTRAP);
}

void main_returned(int status) { g_main_status.store(status, std::memory_order_release); }

namespace {
/// A process that shares this one's memory without having forked (a vfork child, a clone with
/// CLONE_VM): the runtime's state is its parent's. Its exec or exit must leave that state alone:
/// a vfork child's exec finished the parent's profile 25 ms into a 1-s run (0 experiments, and
/// "no experiment completed ... run the program longer").
bool borrowed_memory() {
  const pid_t owner = g_owner_pid.load(std::memory_order_relaxed);
  return owner != 0 && getpid() != owner;
}
}  // namespace

void before_exit(int status) {
  if (borrowed_memory()) return;
  if (running()) {
    before_waking();
    finish(status);
  }
}

void before_fast_exit(int status) {
  if (!borrowed_memory()) finish(status);
}

void before_exec() {
  if (borrowed_memory()) return;  // a vfork child's thread state is its parent's, sampler included
  finish(-1);
  // The calling thread's sampler stops before the call: a trapping sampler's sample taken in
  // execve's kernel time raised SIGTRAP in the new image, whose default action ended it (every
  // exec under the runtime died so). The profile is finished: nothing samples after this.
  if (ThreadState* self = current_thread(); self != nullptr && self->sampler) self->sampler->stop();
}

uint64_t before_fork() {
  if (running() && g_state->tree != nullptr) {
    if (ThreadState* self = current_thread()) self->forking = delays::child_forking();
  }
  return os::monotonic_ns();
}

void after_fork_in_parent(uint64_t started, bool forked) {
  ThreadState* self = running() ? current_thread() : nullptr;
  if (self != nullptr && !forked) delays::child_not_forked(self->forking);
  if (self != nullptr) self->forking = delays::ThreadCreation{};
  if (forked && running() && g_state->tree != nullptr) g_state->tree->add_fork(os::monotonic_ns() - started);
}

void after_fork_in_child() {
  const uint64_t born = os::monotonic_ns();  // whatif's setup in the child starts here
  if (!running()) return;
  g_lifecycle.store(kForkedChild, std::memory_order_release);  // unprofiled until it joins the tree
  g_owner_pid.store(getpid(), std::memory_order_relaxed);  // a fork's memory is its own
  interpose::ReentryGuard guard;
  // Only this thread survives the fork: the registry's lock may be held by a vanished thread, and
  // the perf descriptors watch the parent's threads. Close them without locking.
  g_state->threads.reset_after_fork();
  g_state->threads.for_each([](ThreadState* thread) {
    thread->delays.sampling_pause = nullptr;  // the sampler it belongs to goes next
    thread->sampler.reset();  // closes our copies; disabling would stop the parent's event
    thread->tracer.reset();   // the child has no breakpoints (not inherited); close our copy
    for (int& fd : thread->breakpoint_fds) {
      if (fd >= 0) os::close_counter(fd);
      fd = -1;
    }
    thread->breakpoints_opened = false;
    threads::close_task_files(*thread);  // the parent's threads' files
  });
  ThreadState* self = current_thread();
  g_state->threads.keep_only(self);
  real::forget_runtime_threads();  // the parent's; the child's forwarder counts anew
  g_live_program_threads.store(self != nullptr ? 1 : 0, std::memory_order_release);
  g_state->writer.abandon();
  // The parent's forwarder (a grandchild's parent is a tree child) and profiler threads are gone.
  g_state->forwarder.reset();
  threads::ProcessSlot* slot =
      self != nullptr && g_state->tree != nullptr ? g_state->tree->claim(getpid()) : nullptr;
  if (slot == nullptr) {
    if (self != nullptr && g_state->tree != nullptr && g_state->tree->open()) {
      static log::WarnOnce warn_once;
      warn_once("more than {} processes of this program run at once: process {} runs unprofiled",
                threads::ProcessTree::kMaxProcesses, getpid());
    }
    if (self != nullptr) delays::unprofiled_after_fork(self->forking);
    g_state->threads.keep_only(nullptr);
    set_current_thread(nullptr);
    return;
  }
  // This thread goes on in the child as a new kernel thread: sample it anew. Its delay clock is the
  // parent thread's, as a new thread's is: delays the parent executed delayed the fork too.
  self->tid = os::gettid();
  threads::forget_switch_readings(*self);  // the parent thread's readings are another task's
  self->switches_known = true;  // a new task's: no run time and no switch yet, without a /proc read
  self->sampler = sampling::make_sampler(g_state->sampler_kind, g_state->adaptive_sampler);
  // Before start: its first sample may come microseconds later, and a spinning pause in that
  // handler must stop this sampler's events, not call into the one just destroyed (its samples
  // then went on through the spin, a real-time signal queued for each).
  self->delays.sampling_pause = self->sampler->sampling_pause();
  if (self->sampler->start(self->tid, g_state->config.sampling_period_ns, os::sample_signal()) != 0) {
    self->delays.sampling_pause = nullptr;
    self->sampler.reset();
  }
  // Its contention is its own to measure: the parent thread's figure and schedstat window are not.
  // Until its first window closes it stands for the tree's average, as a new thread does.
  self->delays.contention_permille.store(g_state->delays->tree_wall_per_cpu.load(std::memory_order_relaxed),
                                         std::memory_order_relaxed);
  self->wall_per_cpu = delays::WallPerCpu{};
  self->sched_known = false;
  // The parent's other threads are not the child's; its one thread runs beside the parent's.
  delays::only_thread_after_fork(self->delays, slot->runnable_tally(), self->forking);
  self->forking = delays::ThreadCreation{};
  g_state->forwarder = std::make_unique<experiment::ChildForwarder>(
      *g_state->tree, *slot, g_state->threads, g_state->config.contention,
      g_state->config.contention && g_state->config.spin_pauses, born);
  if (g_state->forwarder->start() != 0) {
    g_state->forwarder->stop_and_flush();  // frees the slot; the child runs unprofiled
    delays::leave_runnable_threads();
    g_state->forwarder.reset();
    g_state->threads.keep_only(nullptr);
    if (self->sampler) self->sampler->stop();
    set_current_thread(nullptr);
    return;
  }
  slot->add_own_ns(os::monotonic_ns() - born);
  g_lifecycle.store(kTreeChild, std::memory_order_release);  // pairs with running()'s acquire
}

void after_dlopen() {
  if (running()) g_state->profiler->request_refresh();
}

progress::CozCounter* get_counter(int type, const char* name) { return progress::counters().get(type, name); }

}  // namespace whatif::facade
