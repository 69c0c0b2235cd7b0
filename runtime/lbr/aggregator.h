// The profiler thread's side of the branch tracer: it drains every thread's finished bursts into
// taken-edge, fall-through-range and path counts, sums the threads' statistics, and turns them into
// the profile's `branches` (per object, ELF virtual addresses) and `branch_stats` records.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "lbr/tracer.h"
#include "symbols/symbol_map.h"

namespace whatif::lbr {

/// Statistics summed over threads (plain numbers, profiler thread only).
struct StatsTotals {
  uint64_t bursts = 0, completed = 0, taken = 0, breakpoints = 0, static_branches = 0, dynamic_branches = 0;
  uint64_t flow_resolved = 0, decoded_blocks = 0;
  uint64_t lookahead_settled = 0, moves = 0;
  uint32_t registers = 0;  ///< the most debug registers a thread had
  uint64_t ended[static_cast<int>(EndReason::kCount)] = {};
  void add(const Stats& stats);
  void add(const StatsTotals& other);
};

/// One object's branches: ELF virtual addresses (run-time address minus the load bias).
struct ObjectBranches {
  std::string path;
  std::string build_id;
  std::vector<std::array<uint64_t, 3>> edges;   ///< [from, to, count]
  std::vector<std::array<uint64_t, 3>> ranges;  ///< [start, end, count]
  /// The hottest paths: [count, start, from1, to1, ..., fromN, toN] (see Aggregator::add_burst).
  std::vector<std::vector<uint64_t>> paths;
};

class Aggregator {
 public:
  /// Distinct paths kept (new ones are not counted once this many are known), and paths per object
  /// in the record (the hottest).
  static constexpr std::size_t kMaxPaths = 1 << 14;
  static constexpr std::size_t kPathsPerObject = 256;

  /// One burst of `count` consecutive taken branches (run-time addresses): each branch counts
  /// once, and the code between one branch's target and the next branch ran straight through.
  /// A path is the run of taken branches from one backward branch (to <= from: a loop's back
  /// edge, or a return to a lower address) to the next one, inclusive, starting at the first one's
  /// target: one loop iteration, as Ball-Larus paths end at back edges. Only paths that lie
  /// wholly inside the burst count, so none is cut short by the burst's start or end.
  void add_burst(const Edge* edges, uint32_t count);
  /// Counts so far, in run-time addresses (0 when never seen).
  uint64_t edge_count(uint64_t from, uint64_t to) const {
    auto found = edges_.find(Edge{from, to});
    return found == edges_.end() ? 0 : found->second;
  }
  uint64_t range_count(uint64_t start, uint64_t end) const {
    auto found = ranges_.find(Edge{start, end});
    return found == ranges_.end() ? 0 : found->second;
  }
  /// Count of the path {start, from1, to1, ...} (run-time addresses), 0 when never seen.
  uint64_t path_count(const std::vector<uint64_t>& key) const {
    auto found = paths_.find(key);
    return found == paths_.end() ? 0 : found->second;
  }
  /// A thread that exits: its counters join the retired totals.
  void retire(const ThreadTracer& tracer) {
    retired_.add(tracer.stats());
    retired_.registers = std::max(retired_.registers, tracer.registers());
  }

  /// Per object holding the branches (edges whose ends lie in different objects are left out:
  /// no consumer of per-binary profiles can use them), sorted by address.
  std::vector<ObjectBranches> records(const symbols::SymbolMap& symbols) const;
  /// The retired totals plus `live`.
  StatsTotals totals(const StatsTotals& live) const {
    StatsTotals total = retired_;
    total.add(live);
    return total;
  }

 private:
  struct PairHash {
    std::size_t operator()(const Edge& edge) const { return std::hash<uint64_t>()(edge.from * 0x9e3779b97f4a7c15ull ^ edge.to); }
  };
  struct PairEqual {
    bool operator()(const Edge& a, const Edge& b) const { return a.from == b.from && a.to == b.to; }
  };
  std::unordered_map<Edge, uint64_t, PairHash, PairEqual> edges_;
  std::unordered_map<Edge, uint64_t, PairHash, PairEqual> ranges_;  // {start, end (the next branch)}
  struct PathHash {
    std::size_t operator()(const std::vector<uint64_t>& key) const {
      uint64_t hash = 0xcbf29ce484222325ull;
      for (uint64_t value : key) hash = (hash ^ value) * 0x100000001b3ull;
      return static_cast<std::size_t>(hash);
    }
  };
  std::unordered_map<std::vector<uint64_t>, uint64_t, PathHash> paths_;  // {start, from1, to1, ...}
  StatsTotals retired_;
};

}  // namespace whatif::lbr
