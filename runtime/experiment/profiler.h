// The profiler thread: drains every thread's samples, attributes them to in-scope source lines,
// runs performance experiments (choose line and speedup, delay, measure progress) and writes the
// profile. All of it runs on the one profiler thread, which blocks all signals.
#pragma once
#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "config/config.h"
#include "threads/threads.h"
#include "delays/delays.h"
#include "profile/profile_writer.h"
#include "progress/progress_points.h"
#include "symbols/symbol_map.h"
#include "unwind/unwinder.h"

namespace whatif::experiment {

/// What the profiler needs from the rest of the runtime.
struct ProfilerContext {
  const config::Config* config = nullptr;
  delays::GlobalDelays* delays = nullptr;
  threads::ThreadRegistry* threads = nullptr;
  profile::ProfileWriter* writer = nullptr;
  uint64_t start_ns = 0;
};

class Profiler {
 public:
  explicit Profiler(ProfilerContext context);
  ~Profiler();

  /// Starts the thread (with all signals blocked). Returns 0 or an errno.
  int start();
  /// Stops the thread, completes an end-to-end experiment, writes final samples and runtime.
  void stop_and_finish(int exit_status);
  /// Asks for a line-map refresh after dlopen (any thread).
  void request_refresh() { refresh_requested_.store(true, std::memory_order_release); }

 private:
  struct Line {
    std::string name;       // FILE:LINE
    std::string file;
    uint32_t number = 0;
    bool ranges_known = false;                  // `ranges` looked up (once: it parses line tables)
    std::vector<symbols::AddressRange> ranges;  // the line's code, for threads' self-crediting
    bool fixed_match = false;
    int sampled_point = -1;  // index into sampled points, or -1
    uint64_t samples = 0;    // since the start
  };
  enum class State { kCoolOff, kWaitingForLine, kRunning, kDraining, kDone };

  static void* thread_main(void* self);
  void run();
  void setup_symbols();
  void tick(uint64_t now);
  void drain_thread(threads::ThreadState* thread);
  void handle_sample(threads::ThreadState* thread, const os::RawSample& sample);
  int32_t attribute(uint64_t address, bool is_return_address);
  /// The first in-scope line of the sample's DWARF-unwound stack (its IP is out of scope), or -1
  /// when none, libunwind is unavailable or the sample carries no stack.
  int32_t attribute_unwound(const os::RawSample& sample);
  int32_t intern_line(const symbols::SourceLine& line);
  void reap_retired();
  void open_breakpoints(threads::ThreadState* thread);
  void close_breakpoints(threads::ThreadState* thread);
  std::vector<uint64_t> read_breakpoint_points();
  void start_experiment(uint64_t now, int32_t line);
  /// Publishes the selected line's address ranges so threads credit their own samples in it.
  void publish_selected_ranges(int32_t line);
  void begin_draining(uint64_t now);
  /// A live thread outside a blocking call that still owes delay up to drain_target_ns_.
  bool owes_before_drain_end(const threads::ThreadState& thread) const;
  /// No thread in the snapshot owes_before_drain_end.
  bool drained() const;
  void finish_experiment(uint64_t now);
  void integrate_in_flight(uint64_t now);
  void write_samples(uint64_t now);
  void write_warnings();
  /// The fixed line named as samples name it (the full path the compiler recorded), so every
  /// experiment on it carries one name whether or not the line was sampled yet.
  std::string canonical_fixed_line_name();
  std::vector<profile::PointResult> point_deltas(uint64_t now);

  ProfilerContext context_;
  pthread_t thread_{};
  bool thread_started_ = false;
  std::atomic<bool> stop_requested_{false};
  std::atomic<bool> refresh_requested_{false};
  std::unique_ptr<symbols::SymbolMap> symbols_;
  std::vector<uint64_t> breakpoint_addresses_;   // one per -p point (0: unresolved)
  std::string fixed_line_name_;  // --fixed-line as FILE:LINE the way samples name it
  std::vector<symbols::AddressRange> fixed_line_ranges_;
  std::vector<uint64_t> breakpoint_retired_counts_;

  std::vector<Line> lines_;
  std::unordered_map<std::string, int32_t> line_index_;
  std::unordered_map<uint64_t, int32_t> address_cache_;  // -1: no in-scope line
  unwind::Unwinder unwinder_;  // loaded at the first sample that needs it
  bool unwind_warned_ = false;
  std::vector<threads::ThreadState*> snapshot_;
  std::vector<threads::ThreadState*> retired_;

  // Experiment state.
  State state_ = State::kCoolOff;
  uint64_t state_until_ns_ = 0;
  int32_t selected_ = -1;
  int32_t candidate_ = -1;
  double speedup_ = 0;
  uint64_t experiment_length_ns_ = 0;
  uint64_t experiment_start_ns_ = 0;
  uint64_t global_delay_at_start_ = 0;
  uint64_t drain_target_ns_ = 0;
  uint64_t selected_samples_ = 0;
  delays::RangesSnapshot published_ranges_;  // what threads credit themselves in this experiment
  uint64_t total_samples_ = 0;
  uint64_t experiments_done_ = 0;
  std::vector<progress::PointReading> points_at_start_;
  std::vector<uint64_t> breakpoints_at_start_;
  std::vector<uint64_t> sampled_counts_;   // per sampled point, since the start
  std::vector<uint64_t> sampled_at_start_;
  std::unordered_map<std::string, double> in_flight_integral_;  // latency name -> count·ns
  uint64_t last_integration_ns_ = 0;
  uint64_t last_samples_write_ns_ = 0;
  std::mt19937_64 random_;
};

}  // namespace whatif::experiment
