// The code the branch tracer may decode and set breakpoints in: the executable ranges of the loaded
// objects (libwhatif.so's own left out) and the restartable-sequence critical sections it must not
// enter. Built and published by the profiler thread; read lock-free in signal handlers.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/signal_safe.h"

namespace whatif::lbr {

struct CodeRange {
  uint64_t begin = 0;
  uint64_t end = 0;  ///< exclusive
};

/// An immutable snapshot: sorted, non-overlapping ranges.
struct CodeMap {
  static constexpr uint32_t kMaxCode = 512;
  static constexpr uint32_t kMaxRseq = 256;
  uint32_t code_count = 0;
  uint32_t rseq_count = 0;
  CodeRange code[kMaxCode];
  CodeRange rseq[kMaxRseq];
  const CodeMap* previous = nullptr;  ///< the snapshot this one replaced (kept, see publish_code_map)

  /// The executable range holding `address`, or nullptr.
  WHATIF_SIGNAL_SAFE const CodeRange* code_at(uint64_t address) const;
  /// Whether `address` lies in an rseq critical section [start_ip, start_ip + post_commit_offset).
  WHATIF_SIGNAL_SAFE bool in_rseq(uint64_t address) const;
};

/// Profiler thread: builds a snapshot from (unsorted) ranges; keeps the first kMax of each.
CodeMap build_code_map(std::vector<CodeRange> code, std::vector<CodeRange> rseq);
/// Profiler thread: makes `map` the one handlers read. Every snapshot stays allocated for the life of
/// the process, exit included (a handler may still be reading one); there is one per dlopen.
void publish_code_map(const CodeMap& map);
/// The current snapshot, or nullptr before the first publication. Any context.
WHATIF_SIGNAL_SAFE const CodeMap* current_code_map();

/// Profiler thread: the rseq critical sections of a loaded object, read from its `__rseq_cs`
/// section in memory (relocated: the descriptors hold run-time addresses). `path` is the object's
/// file, `bias` its load bias; empty when it has none.
std::vector<CodeRange> rseq_sections(const std::string& path, uint64_t bias);

}  // namespace whatif::lbr
