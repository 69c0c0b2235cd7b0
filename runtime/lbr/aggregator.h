// The profiler thread's side of the branch tracer: it drains every thread's finished bursts into
// taken-edge and fall-through-range counts, sums the threads' statistics, and turns both into the
// profile's `branches` (per object, ELF virtual addresses) and `branch_stats` records.
#pragma once
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
};

class Aggregator {
 public:
  /// One burst of `count` consecutive taken branches (run-time addresses): each branch counts
  /// once, and the code between one branch's target and the next branch ran straight through.
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
  /// A thread that exits: its counters join the retired totals.
  void retire(const ThreadTracer& tracer) { retired_.add(tracer.stats()); }

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
  StatsTotals retired_;
};

}  // namespace whatif::lbr
