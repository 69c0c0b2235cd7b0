// The branch-record reader (see branches.h). Offline.
#include "analysis/branches/branches.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "whatif/profile_format.h"

namespace whatif::analysis {
namespace {
using json = nlohmann::json;

uint64_t u64(const json& record, const char* field) {
  auto found = record.find(field);
  return found != record.end() && found->is_number() ? found->get<uint64_t>() : 0;
}

template <typename T>
bool triples(const json& record, const char* field, std::vector<T>& out) {
  auto found = record.find(field);
  if (found == record.end() || !found->is_array()) return false;
  out.clear();
  for (const json& item : *found) {
    if (!item.is_array() || item.size() != 3 || !item[0].is_number_unsigned() || !item[1].is_number_unsigned() ||
        !item[2].is_number_unsigned()) {
      return false;
    }
    out.push_back({item[0].get<uint64_t>(), item[1].get<uint64_t>(), item[2].get<uint64_t>()});
  }
  return true;
}

/// The optional `paths` field: [count, start, from1, to1, ...] arrays. False when malformed.
bool paths_of(const json& record, const char* field, std::vector<BranchPath>& out) {
  out.clear();
  auto found = record.find(field);
  if (found == record.end()) return true;
  if (!found->is_array()) return false;
  for (const json& item : *found) {
    if (!item.is_array() || item.size() < 4 || item.size() % 2 != 0) return false;
    for (const json& value : item) {
      if (!value.is_number_unsigned()) return false;
    }
    BranchPath path;
    path.count = item[0].get<uint64_t>();
    path.start = item[1].get<uint64_t>();
    for (std::size_t i = 2; i + 1 < item.size(); i += 2) path.branches.push_back({item[i].get<uint64_t>(), item[i + 1].get<uint64_t>(), 0});
    out.push_back(std::move(path));
  }
  return true;
}

}  // namespace

uint64_t ObjectBranches::taken() const {
  uint64_t sum = 0;
  for (const BranchEdge& edge : edges) sum += edge.count;
  return sum;
}

const ObjectBranches* BranchProfile::object(std::string_view suffix) const {
  for (const ObjectBranches& object : objects) {
    std::string_view path = object.path;
    if (path == suffix || (path.size() > suffix.size() && path.ends_with(suffix) && path[path.size() - suffix.size() - 1] == '/')) {
      return &object;
    }
  }
  return nullptr;
}

Result<BranchProfile> parse_branches(std::string_view text, const std::string& name) {
  namespace branches = format::record::branches;
  namespace stats = format::record::branch_stats;
  BranchProfile profile;
  std::size_t line_number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (line.empty() || line.find("\"branch") == std::string_view::npos) continue;  // cheap skip
    json record = json::parse(line, nullptr, false);
    if (record.is_discarded() || !record.is_object()) {
      if (end == text.size()) break;  // a last line still being written
      return Error{fmt::format("{}:{}: not a JSON record", name, line_number)};
    }
    std::string type = record.value(format::kTypeField, "");
    if (type == branches::kName) {
      ObjectBranches object;
      object.path = record.value(branches::path, "");
      object.build_id = record.value(branches::build_id, "");
      if (object.path.empty() || !triples(record, branches::edges, object.edges) || !triples(record, branches::ranges, object.ranges)) {
        return Error{fmt::format("{}:{}: a branches record needs path, edges and ranges ([a, b, count] triples)", name, line_number)};
      }
      if (!paths_of(record, branches::paths, object.paths)) {
        return Error{fmt::format("{}:{}: a branches record's paths are [count, start, from, to, ...] arrays", name, line_number)};
      }
      bool replaced = false;
      for (ObjectBranches& known : profile.objects) {
        if (known.path == object.path && known.build_id == object.build_id) {
          known = std::move(object);  // cumulative: the last one wins
          replaced = true;
          break;
        }
      }
      if (!replaced) profile.objects.push_back(std::move(object));
    } else if (type == stats::kName) {
      BranchStats s;
      s.depth = u64(record, stats::depth);
      s.every = u64(record, stats::every);
      s.bursts = u64(record, stats::bursts);
      s.completed = u64(record, stats::completed);
      s.taken = u64(record, stats::taken);
      s.breakpoints = u64(record, stats::breakpoints);
      s.static_branches = u64(record, stats::static_branches);
      s.dynamic_branches = u64(record, stats::dynamic_branches);
      s.flow_resolved = u64(record, stats::flow_resolved);
      s.decoded_blocks = u64(record, stats::decoded_blocks);
      s.lookahead_settled = u64(record, stats::lookahead_settled);
      s.breakpoint_moves = u64(record, stats::breakpoint_moves);
      s.registers = u64(record, stats::registers);
      s.breakpoints_per_taken = record.value(stats::breakpoints_per_taken, 0.0);
      if (auto ended = record.find(stats::ended); ended != record.end() && ended->is_object()) {
        for (const auto& [reason, count] : ended->items()) s.ended[reason] = count.is_number() ? count.get<uint64_t>() : 0;
      }
      profile.stats = s;
    }
  }
  return profile;
}

Result<BranchProfile> read_branches(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return Error{fmt::format("cannot read {}", path)};
  std::stringstream buffer;
  buffer << file.rdbuf();
  return parse_branches(buffer.str(), path);
}

}  // namespace whatif::analysis
