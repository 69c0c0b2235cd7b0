// Function-level counters (ScALPEL): the selected functions' addresses in an open-addressing set,
// per-thread preallocated slots the -finstrument-functions hooks update (application threads, no
// lock or allocation after a thread's first selected call), and the profiler thread's reads of them.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "os/perf_counter.h"

namespace whatif::fncounters {

/// At most this many functions (distinct names) and events per run; more are refused with a warning.
inline constexpr std::size_t kMaxFunctions = 256;
inline constexpr std::size_t kMaxEvents = 12;
/// Value 0 is thread CPU time (CLOCK_THREAD_CPUTIME_ID, ns); 1..events are the configured events.
inline constexpr std::size_t kMaxValues = kMaxEvents + 1;

/// An event to count per thread, as the launcher resolved it.
using EventSpec = config::CounterEvent;

/// One function's totals on one thread, written only by that thread (relaxed atomics so the profiler
/// thread may read them while it runs).
struct FunctionSlot {
  std::atomic<uint64_t> calls{0};
  /// Per event: the calls in which it counted (its set was the thread's active one).
  std::array<std::atomic<uint64_t>, kMaxEvents> measured{};
  std::array<std::atomic<uint64_t>, kMaxValues> inclusive{};
  std::array<std::atomic<uint64_t>, kMaxValues> exclusive{};
};

/// An outermost activation of a selected function on a thread's shadow stack.
struct Frame {
  uint32_t id = 0;
  uint64_t nested = 0;  ///< selected calls made inside this one (their hooks' cost is subtracted)
  std::array<uint64_t, kMaxValues> start{};
  std::array<uint64_t, kMaxValues> children{};  ///< direct selected children's raw inclusive + hook cost
};

/// The events in force, published whole (at start-up and by each reload) and never changed or freed
/// after: a thread adopts a new one between its outermost selected calls, so every call's window
/// counts one configuration. Indices are FunctionCounters' event indices (stable across reloads).
struct EventConfig {
  std::size_t count = 0;  ///< events known (indices 0..count-1) when it was published
  std::array<bool, kMaxEvents> active{};  ///< counted under this configuration
  std::array<int, kMaxEvents> set{};      ///< active events' sets (-1: every call)
  int set_count = 0;
  uint32_t cycle = 10;
  bool cycling = false;
  /// The hooks' cost with these events (calibrated before publishing): a selected call's whole cost
  /// seen from its caller, and the part inside its own window.
  std::array<uint64_t, kMaxValues> pair_cost{};
  std::array<uint64_t, kMaxValues> inner_cost{};
};

/// A thread's counters: allocated on its first selected call, never freed during the run.
struct ThreadCounters {
  int tid = 0;
  ThreadCounters* next = nullptr;  ///< the lock-free list of every thread's counters
  std::array<os::CountingEvent, kMaxEvents> events;  ///< this thread's counting events (kept open)
  std::array<int, kMaxEvents> fds{};  ///< their descriptors for the hooks' reads; -1: unavailable
  std::array<bool, kMaxEvents> tried{};  ///< opened (or failed to) on this thread
  const EventConfig* config = nullptr;   ///< the events this thread counts now
  bool pinned = false;                   ///< calibration's scratch: keeps its config
  std::array<bool, kMaxEvents> rdpmc{};  ///< read by rdpmc through the perf page (else read(2))
  int active_set = 0;        ///< the event set counting now (cycled sets only)
  uint64_t outer_calls = 0;  ///< outermost selected calls so far: the set changes every `cycle`
  std::array<uint32_t, kMaxFunctions + 1> depth{};  ///< recursion depth per function
  std::array<Frame, kMaxFunctions + 1> frames{};    ///< each function is on the stack at most once
  uint32_t top = 0;
  std::array<FunctionSlot, kMaxFunctions + 1> slots{};
};

/// The totals the profiler writes for one (thread, function).
struct FunctionTotals {
  int tid = 0;
  std::string function;
  uint64_t calls = 0;
  std::array<uint64_t, kMaxValues> inclusive{};
  std::array<uint64_t, kMaxValues> exclusive{};
  std::array<uint64_t, kMaxEvents> measured{};  ///< calls each event counted in
};

/// The pending-reload flag the reload signal's handler sets (reload_signal.cpp).
std::atomic<bool>& reload_flag();
/// The reload signal's handler (os::reload_signal(), installed with --counters): sets the flag.
void on_reload_signal(int signal);

class FunctionCounters {
 public:
  /// Resolves `functions` in the loaded objects and calibrates the hooks' cost, on the initialising
  /// thread. `warnings` receives what the user must know (names not found, events not available).
  /// `cycle`: outermost calls per event set (events with set >= 0 cycle; set -1 always counts);
  /// `rdpmc`: read events with rdpmc where the kernel allows (false: WHATIF_RDPMC=off);
  /// `live_patch`: patch -fpatchable-function-entry entries by their first byte, also at reloads
  /// (false: WHATIF_COUNTERS_LIVE_PATCH=off, all five bytes at start-up only).
  void start(const std::vector<std::string>& functions, const std::vector<EventSpec>& events,
             std::vector<std::string>& warnings, uint32_t cycle = 10, bool rdpmc = true, bool live_patch = true);
  bool any() const { return set_.load(std::memory_order_acquire) != nullptr; }

  /// `whatif ctl PID reload`: replaces the selected functions with `functions` and the events with
  /// `events` (profiler thread). Each is published with one atomic store; hooks running on the old
  /// set finish on it, a thread takes the new events between its outermost selected calls, and old
  /// sets and configurations are never freed during the run. Functions selected now whose
  /// -fpatchable-function-entry entries are not patched get patched, and patched ones no longer
  /// selected get their NOPs back. Returns how many functions were found.
  std::size_t reload(const std::vector<std::string>& functions, const std::vector<EventSpec>& events, uint32_t cycle,
                     std::vector<std::string>& warnings);
  /// True once after on_reload_signal ran (profiler thread).
  static bool take_reload_request();

  /// The hooks (application threads). Unselected addresses return after one set lookup.
  void enter(const void* function);
  void exit(const void* function);
  /// The patched-entry hooks (entry_patch.cpp): enter returns the function's id, or -1 when it is not
  /// selected (then nothing was counted and exit must not be called); exit takes that id.
  int enter_patched(const void* function);
  void exit_patched(uint32_t id);

  /// Every (thread, function) with calls; profiler thread.
  std::vector<FunctionTotals> totals() const;
  /// Every event counted at some point of the run (values 1..), the unavailable ones too (zeros);
  /// profiler thread.
  std::vector<EventSpec> events() const { return {specs_.begin(), specs_.begin() + static_cast<std::ptrdiff_t>(event_count_)}; }
  /// Whether event `e` counted in every selected call of the run so far (no cycling, no reload
  /// that dropped or added it): its records then carry no `measured`. Profiler thread.
  bool counted_in_every_call(std::size_t e) const { return !partial_[e]; }
  /// Events that could not be opened on some thread (reported once), read by the profiler thread;
  /// and, once, how the events are read (rdpmc or read(2), and why not rdpmc).
  std::vector<std::string> take_unavailable_warnings();

 private:
  int find(const void* function) const;
  ThreadCounters* thread_counters();
  ThreadCounters* create_thread_counters(bool registered);
  void read_values(const ThreadCounters& thread, std::array<uint64_t, kMaxValues>& values) const;
  /// Opens, enables and disables the thread's events for `config` (between outermost calls).
  void adopt(ThreadCounters& thread, const EventConfig* config);
  /// Builds the configuration for `events` (indices appended to specs_ as needed), calibrates its
  /// hooks' cost and publishes it.
  void publish_events(const std::vector<EventSpec>& events, uint32_t cycle, std::vector<std::string>& warnings);
  void enter_id(ThreadCounters& thread, uint32_t id);
  void exit_id(ThreadCounters& thread, uint32_t id);
  void calibrate(EventConfig& config);
  /// Patches the -fpatchable-function-entry entries of the functions resolved_ selects and unpatches
  /// the others (`only_thread`: at start-up with no other thread, which allows the fallback).
  void sync_patches(bool only_thread, std::vector<std::string>& warnings);
  void calibrate_set(ThreadCounters& scratch, std::array<uint64_t, kMaxValues>& pair,
                     std::array<uint64_t, kMaxValues>& inner);
  /// Whether event `e` counts on `thread` now (active in its configuration, in its active set).
  static bool counts_in(const ThreadCounters& thread, std::size_t e) {
    const EventConfig& config = *thread.config;
    return config.active[e] && (config.set[e] < 0 || config.set[e] == thread.active_set);
  }
  /// Disables the thread's active set's events and enables `set`'s.
  void switch_set(ThreadCounters& thread, int set);
  /// Looks `names_[first..]`'s ids up in the loaded objects and publishes them as the selected set.
  std::size_t publish(const std::vector<uint32_t>& ids, std::vector<std::string>& warnings);
  /// Each name's id, appending new names (warns past kMaxFunctions).
  std::vector<uint32_t> ids_for(const std::vector<std::string>& functions, std::vector<std::string>& warnings);

  /// An immutable open-addressing set (0 = empty key; power-of-two capacity) of function addresses.
  struct Set {
    std::vector<uintptr_t> keys;
    std::vector<uint32_t> ids;
    uint64_t mask = 0;
    void insert(uintptr_t address, uint32_t id);
  };
  std::atomic<const Set*> set_{nullptr};
  std::vector<std::unique_ptr<Set>> sets_;  // every set published, kept until the process ends
  std::vector<std::string> names_;  // by id, only appended to (ids stay stable across reloads)
  /// Every event of the run by index: written by the profiler thread before the configuration that
  /// first names it is published (release), never changed after; the hooks read encodings from it.
  std::array<EventSpec, kMaxEvents> specs_{};
  std::size_t event_count_ = 0;  // profiler thread
  std::array<bool, kMaxEvents> partial_{};  // counted in only some calls (cycled, or reloaded); profiler thread
  std::atomic<const EventConfig*> config_{nullptr};
  std::vector<std::unique_ptr<EventConfig>> configs_;  // every configuration published, kept until exit
  std::atomic<ThreadCounters*> threads_{nullptr};
  std::array<std::atomic<int>, kMaxEvents> unavailable_{};  // errno of the first failed open, 0 = fine
  std::array<std::atomic<bool>, kMaxEvents> reported_{};
  bool rdpmc_ = true;
  bool live_patch_ = true;
  /// How the first thread to open each event reads it: 0 unknown, 1 rdpmc, 2 read(2) (why: read_reason_).
  std::array<std::atomic<int>, kMaxEvents> read_mode_{};
  std::array<std::string, kMaxEvents> read_reason_;  // written before read_mode_'s release store
  std::atomic<bool> read_reported_{false};
  std::vector<std::pair<uintptr_t, uint32_t>> resolved_;  // the last publish's (address, id)s
};

}  // namespace whatif::fncounters
