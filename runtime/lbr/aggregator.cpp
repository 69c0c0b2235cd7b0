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
  lookahead_settled += get(stats.lookahead_settled);
  moves += get(stats.moves);
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
  lookahead_settled += other.lookahead_settled;
  moves += other.moves;
  registers = std::max(registers, other.registers);
  for (int i = 0; i < static_cast<int>(EndReason::kCount); ++i) ended[i] += other.ended[i];
}

void Aggregator::add_burst(const Edge* edges, uint32_t count) {
  uint32_t cut = count;  // the last backward branch seen: a path starts at its target
  for (uint32_t i = 0; i < count; ++i) {
    ++edges_[edges[i]];
    if (i + 1 < count && edges[i].to <= edges[i + 1].from) ++ranges_[Edge{edges[i].to, edges[i + 1].from}];
    if (edges[i].to > edges[i].from) continue;
    if (cut < i) {
      std::vector<uint64_t> key;
      key.reserve(1 + 2 * (i - cut));
      key.push_back(edges[cut].to);
      for (uint32_t j = cut + 1; j <= i; ++j) {
        key.push_back(edges[j].from);
        key.push_back(edges[j].to);
      }
      auto found = paths_.find(key);
      if (found != paths_.end()) ++found->second;
      else if (paths_.size() < kMaxPaths) paths_.emplace(std::move(key), 1);
    }
    cut = i;
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
  // Paths: those whose every address lies in one object, the hottest first.
  std::vector<std::pair<uint64_t, const std::vector<uint64_t>*>> hottest;
  for (const auto& [key, count] : paths_) hottest.emplace_back(count, &key);
  std::sort(hottest.begin(), hottest.end(), [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && *a.second < *b.second); });
  for (const auto& [count, key] : hottest) {
    const symbols::LoadedObject* object = symbols.object_at(key->front());
    if (object == nullptr) continue;
    bool inside = std::all_of(key->begin(), key->end(), [&](uint64_t address) { return symbols.object_at(address) == object; });
    if (!inside) continue;
    ObjectBranches& record = record_of(object);
    if (record.paths.size() >= kPathsPerObject) continue;
    std::vector<uint64_t> path{count};
    for (uint64_t address : *key) path.push_back(address - object->bias);
    record.paths.push_back(std::move(path));
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
