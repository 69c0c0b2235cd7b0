// The software branch tracer of one thread (Break Dancing, Algorithm 1): a sample starts a burst;
// the tracer decodes forward to the next control transfer, resolves direct jumps and calls itself
// and stops at the others with SIGTRAP hardware breakpoints (up to four debug registers: one stop
// can settle several pending conditional branches, §3.3), recording taken branches until the
// burst holds `depth` of them. open/close run on the owning thread (normal context), on_sample and
// on_trap in its signal handlers, drain and the statistics on the profiler thread.
#pragma once
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>

#include "base/signal_safe.h"
#include "lbr/evaluate.h"
#include "os/trap_breakpoint.h"
#include "x86/decoder.h"

namespace whatif::lbr {

struct Settings {
  uint32_t depth = 16;   ///< taken branches per burst (--lbr-depth)
  uint32_t every = 10;   ///< samples between bursts (--lbr-every)
  bool flow = true;      ///< resolve branches by data flow from each stop (off: the paper's naive tracer)
  uint32_t registers = 4;  ///< debug registers to use (1: one breakpoint, the stop at each pending branch)
};

/// One taken branch, in run-time addresses.
struct Edge {
  uint64_t from = 0;
  uint64_t to = 0;
};

/// Why a burst ended before it held `depth` taken branches. Truncated bursts keep the branches
/// they recorded (they are exact); dropped ones (kLate onwards) lose them, since the stop that
/// ended them may not be the one the tracer waited for.
enum class EndReason : uint8_t {
  kOutsideCode,       ///< the path left the traceable code (our own runtime, unmapped, JIT)
  kRseq,              ///< the next branch is inside an rseq critical section
  kUnsupported,       ///< an instruction the tracer cannot follow (syscall, int3, fs-relative jmp)
  kUnreadable,        ///< an indirect target or return address could not be read
  kBreakpointFailed,  ///< the kernel refused to move the breakpoint
  kStepLimit,         ///< too many statically resolved branches without a taken-branch budget
  kLate,              ///< the SIGTRAP arrived late (TRAP_PERF_FLAG_ASYNC): dropped
  kWrongPc,           ///< the stop's PC is not the breakpoint's (a delayed signal): dropped
  kWrongStack,        ///< the stop is in another context (a signal handler): dropped
  kStale,             ///< the breakpoint was never reached within `every` samples: dropped
  kThreadExit,        ///< the thread exited (or exec'ed) mid-burst: dropped
  kRingFull,          ///< no free burst buffer at the sample: never started
  kCount,
};
/// A stable lower-case name for the profile's statistics.
const char* end_reason_name(EndReason reason);
/// Whether a burst ended for `reason` keeps its recorded branches.
constexpr bool keeps_edges(EndReason reason) { return reason < EndReason::kLate; }

/// Counters the owning thread bumps (relaxed) and the profiler thread reads.
struct Stats {
  std::atomic<uint64_t> bursts{0};             ///< bursts started
  std::atomic<uint64_t> completed{0};          ///< bursts that reached `depth`
  std::atomic<uint64_t> taken{0};              ///< taken branches recorded (kept bursts)
  std::atomic<uint64_t> breakpoints{0};        ///< breakpoints set (stops asked of the kernel)
  std::atomic<uint64_t> static_branches{0};    ///< transfers resolved by decoding alone
  std::atomic<uint64_t> dynamic_branches{0};   ///< transfers resolved at a breakpoint stop
  std::atomic<uint64_t> flow_resolved{0};      ///< conditional branches resolved by data flow
  std::atomic<uint64_t> decoded_blocks{0};     ///< blocks decoded (block-cache misses)
  std::atomic<uint64_t> lookahead_settled{0};  ///< conditional branches settled by which breakpoint fired
  std::atomic<uint64_t> moves{0};              ///< breakpoints moved (a stop with lookahead moves several)
  std::atomic<uint64_t> ended[static_cast<int>(EndReason::kCount)] = {};
};

class ThreadTracer {
 public:
  /// Burst buffers per thread: filled ones wait here for the profiler, which drains every 1 ms.
  static constexpr uint32_t kSlots = 64;
  static constexpr uint32_t kMaxDepth = 1024;
  /// Direct-mapped cache of decoded blocks (paper §3.3).
  static constexpr uint32_t kCacheEntries = 512;
  /// Debug registers x86 has; and the lookahead's limits per predicted path: taken branches it
  /// records, and straight runs it remembers (to check no other breakpoint lies on the path).
  static constexpr uint32_t kRegisters = 4;
  static constexpr uint32_t kLookEdges = 16;
  static constexpr uint32_t kLookSpans = 24;
  static constexpr uint32_t kPreSpans = 64;  // runs from where the thread resumes to the pending branch

  ThreadTracer() = default;
  ThreadTracer(const ThreadTracer&) = delete;
  ThreadTracer& operator=(const ThreadTracer&) = delete;

  /// The calling thread `tid`: allocates the burst buffers and opens the breakpoint. `cookie`
  /// tells its SIGTRAPs from any other's. Returns 0 or -errno from the breakpoint's open.
  int open(pid_t tid, const Settings& settings, uint64_t cookie);
  /// The owning thread, at exit: drops a burst in flight and closes the breakpoint. The buffers
  /// stay drainable.
  void close();

  /// The runtime's sample signal on the owning thread: every `every` samples starts a burst at
  /// the interrupted PC (unless one is in flight).
  WHATIF_SIGNAL_SAFE void on_sample(const void* ucontext);
  /// A TRAP_PERF SIGTRAP on the owning thread. Returns false when it is not this tracer's (the
  /// caller then passes it on to the program's handler).
  WHATIF_SIGNAL_SAFE bool on_trap(const os::TrapPerfInfo& trap, const void* ucontext);

  /// Profiler thread: visits each finished burst (run-time addresses) and frees its buffer.
  template <typename Visitor>
  void drain(Visitor&& visit);

  const Stats& stats() const { return stats_; }
  uint64_t cookie() const { return cookie_; }
  /// Debug registers opened (1 to kRegisters once open).
  uint32_t registers() const { return registers_; }

 private:
  enum class State : uint8_t { kIdle, kWaiting, kClosed };
  struct Block {  // a decoded run of instructions ending at a control transfer
    uint64_t start = 0;
    uint64_t branch = 0;        // the transfer's address
    x86::Instruction transfer;  // its decoding
    int32_t stack_delta = 0;    // rsp change from start to the transfer
    bool stack_unknown = false;
  };

  /// Code executed on a predicted path: [start, end).
  struct Span {
    uint64_t start = 0;
    uint64_t end = 0;
  };
  /// A breakpoint of a lookahead: the transfer it stops at, and what reaching it means — the
  /// taken branches on the way (recorded at the stop) and the code run before it.
  struct Leaf {
    Block stop;            // arrival: only stop.branch (the address) is meaningful
    bool arrival = false;  // a stop at a direction's first instruction: it settles the branch only
    uint64_t sp = 0;
    bool sp_known = false;
    x86::KnownState known;
    uint32_t settled = 0;  // conditional branches whose direction the stop tells
    uint32_t statics = 0;  // transfers on the way resolved by decoding
    uint32_t flows = 0;    // and by data flow
    uint32_t edges = 0;
    Edge edge[kLookEdges];
    uint32_t spans = 0;
    Span span[kLookSpans];
  };
  enum class Walk : uint8_t { kStop, kFull, kEnded };

  WHATIF_SIGNAL_SAFE void start_burst(const Registers& registers);
  /// Follows the path from `pc` (rsp = `sp`) until a breakpoint is needed or the burst ends.
  WHATIF_SIGNAL_SAFE void advance(uint64_t pc, uint64_t sp, bool sp_known, const Registers* at_stop);
  /// Walks from `pc` to the next transfer that needs a stop (kStop, in `stop`, with `sp` and `known`
  /// updated). Recording (leaf null): records taken branches (kFull when the burst filled) and ends
  /// the burst itself when the path cannot be followed (kEnded). Predicting (into `leaf`): records
  /// nothing, adds the branches and spans to the leaf, and kEnded means only "cannot predict".
  WHATIF_SIGNAL_SAFE Walk walk(uint64_t pc, uint64_t& sp, bool& sp_known, x86::KnownState& known, Block& stop, Leaf* leaf);
  /// Sets the breakpoints for the pending transfer `stop`: with spare debug registers and a
  /// conditional branch, at the next stops of its two directions instead (recursively while
  /// registers remain), so whichever fires settles it; else at the branch itself.
  WHATIF_SIGNAL_SAFE void arm(const Block& stop, uint64_t sp, bool sp_known, const x86::KnownState& known);
  /// Splits `parent` (stopped at a conditional branch) into its taken and fall-through leaves: each
  /// at its direction's next stop when `full`, else (arrival) at its first instruction. A full
  /// leaf whose stop the data flow would settle after a stop at the parent (nothing on the way
  /// rewrites the flags) becomes an arrival: it would save no stop and cost a move. False when
  /// both end as arrivals (nothing saved).
  WHATIF_SIGNAL_SAFE bool split(const Leaf& parent, Leaf& taken, Leaf& fall, bool taken_full, bool fall_full);
  /// No leaf's breakpoint lies on another leaf's path (or its own) or shares its address. The
  /// pending branch's own address may: execution resumes there with RF set.
  WHATIF_SIGNAL_SAFE bool distinct(uint32_t count) const;
  WHATIF_SIGNAL_SAFE void disarm_all();
  WHATIF_SIGNAL_SAFE bool find_block(uint64_t pc, Block& block);
  /// Like find_block, decoding instruction by instruction through the data flow `known`.
  WHATIF_SIGNAL_SAFE bool walk_block(uint64_t pc, x86::KnownState& known, Block& block);
  /// Records a taken branch; true when the burst is now full (and was published).
  WHATIF_SIGNAL_SAFE bool record(uint64_t from, uint64_t to);
  WHATIF_SIGNAL_SAFE void end_burst(EndReason reason);
  WHATIF_SIGNAL_SAFE void publish();
  WHATIF_SIGNAL_SAFE static void bump(std::atomic<uint64_t>& counter) {
    counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  Settings settings_;
  uint64_t cookie_ = 0;
  os::TrapBreakpoint breakpoints_[kRegisters];
  uint32_t registers_ = 0;
  x86::Decoder decoder_;
  State state_ = State::kClosed;
  uint32_t samples_ = 0;
  uint32_t samples_in_burst_ = 0;
  // The burst in flight: written into slot head_ % kSlots.
  uint32_t count_ = 0;
  Edge* edges_ = nullptr;
  // The pending stop: one breakpoint at pending_, or leaf_count_ > 0 breakpoints at leaves_.
  Block pending_;
  uint64_t expected_sp_ = 0;
  bool expected_sp_known_ = false;
  Leaf leaves_[kRegisters];
  uint32_t leaf_count_ = 0;
  Leaf split_[2];  // scratch for arm(): the two halves of a split leaf
  Leaf saved_;     // and the leaf before it
  Leaf probe_;     // split(): the walk a stop at the branch itself would allow
  // The code the thread runs from where it resumes to the pending branch (no breakpoint may lie there).
  Span pre_[kPreSpans];
  uint32_t pre_count_ = 0;
  bool pre_ok_ = false;

  std::unique_ptr<Edge[]> buffers_;        // kSlots * depth
  std::unique_ptr<uint32_t[]> counts_;     // per slot
  std::unique_ptr<Block[]> cache_;         // kCacheEntries
  std::atomic<uint32_t> head_{0};          // owner: next slot to fill
  std::atomic<uint32_t> tail_{0};          // profiler: next slot to drain
  Stats stats_;
};

template <typename Visitor>
void ThreadTracer::drain(Visitor&& visit) {
  if (!buffers_) return;
  uint32_t tail = tail_.load(std::memory_order_relaxed);
  uint32_t head = head_.load(std::memory_order_acquire);  // pairs with publish's release
  for (; tail != head; ++tail) {
    uint32_t slot = tail % kSlots;
    visit(static_cast<const Edge*>(&buffers_[static_cast<std::size_t>(slot) * settings_.depth]), counts_[slot]);
  }
  tail_.store(tail, std::memory_order_release);  // pairs with start_burst's acquire
}

/// Whether a stop with stack pointer `sp` is the one expected at a breakpoint when the path from
/// the burst's last stop predicted `expected` (exactly when `known`; otherwise a frame in the same
/// activation: at most 256 bytes below and 64 KiB above, which excludes a signal handler's frame).
WHATIF_SIGNAL_SAFE bool same_context(uint64_t expected, bool known, uint64_t sp);

}  // namespace whatif::lbr
