// Aggregation of bursts into edge and range counts, and the branch records (see aggregator.h).
// Profiler thread only.
#include "lbr/aggregator.h"

#include <algorithm>
#include <map>

namespace whatif::lbr {

void StatsTotals::add(const Stats& stats) {
  auto get = [](const std::atomic<uint64_t>& value) { return value.load(std::memory_order_relaxed); };
  bursts += get(stats.bursts);
  completed += get(stats.completed);
  taken += get(stats.taken);
  breakpoints += get(stats.breakpoints);
  static_branches += get(stats.static_branches);
  dynamic_branches += get(stats.dynamic_branches);
  flow_resolved += get(stats.flow_resolved);
  decoded_blocks += get(stats.decoded_blocks);
  for (int i = 0; i < static_cast<int>(EndReason::kCount); ++i) ended[i] += get(stats.ended[i]);
}

void StatsTotals::add(const StatsTotals& other) {
  bursts += other.bursts;
  completed += other.completed;
  taken += other.taken;
  breakpoints += other.breakpoints;
  static_branches += other.static_branches;
  dynamic_branches += other.dynamic_branches;
  flow_resolved += other.flow_resolved;
  decoded_blocks += other.decoded_blocks;
  for (int i = 0; i < static_cast<int>(EndReason::kCount); ++i) ended[i] += other.ended[i];
}

void Aggregator::add_burst(const Edge* edges, uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) {
    ++edges_[edges[i]];
    if (i + 1 < count && edges[i].to <= edges[i + 1].from) ++ranges_[Edge{edges[i].to, edges[i + 1].from}];
  }
}

std::vector<ObjectBranches> Aggregator::records(const symbols::SymbolMap& symbols) const {
  std::map<const symbols::LoadedObject*, ObjectBranches> by_object;
  auto object_of = [&](uint64_t from, uint64_t to) -> const symbols::LoadedObject* {
    const symbols::LoadedObject* object = symbols.object_at(from);
    return object != nullptr && symbols.object_at(to) == object ? object : nullptr;
  };
  auto record_of = [&](const symbols::LoadedObject* object) -> ObjectBranches& {
    ObjectBranches& record = by_object[object];
    if (record.path.empty()) {
      record.path = object->path;
      record.build_id = object->build_id;
    }
    return record;
  };
  for (const auto& [edge, count] : edges_) {
    if (const symbols::LoadedObject* object = object_of(edge.from, edge.to)) {
      record_of(object).edges.push_back({edge.from - object->bias, edge.to - object->bias, count});
    }
  }
  for (const auto& [range, count] : ranges_) {
    if (const symbols::LoadedObject* object = object_of(range.from, range.to)) {
      record_of(object).ranges.push_back({range.from - object->bias, range.to - object->bias, count});
    }
  }
  std::vector<ObjectBranches> records;
  for (auto& [object, record] : by_object) {
    std::sort(record.edges.begin(), record.edges.end());
    std::sort(record.ranges.begin(), record.ranges.end());
    records.push_back(std::move(record));
  }
  return records;
}

}  // namespace whatif::lbr
