// Attribution of samples to in-scope source lines (see attribution.h). Profiler thread only.
#include "experiment/attribution.h"

#include "symbols/interner.h"

namespace whatif::experiment {

bool line_matches(const symbols::SourceLine& line, const config::LineSpec& spec) {
  return line.line == spec.line && symbols::path_matches(line.file, spec.file);
}

std::string canonical_line_name(symbols::SymbolMap& symbols, const config::LineSpec& spec) {
  for (const symbols::AddressRange& range : symbols.ranges_for(spec.file, spec.line, /*in_scope_only=*/true)) {
    if (auto info = symbols.lookup(range.begin)) {
      for (const symbols::SourceLine& frame : info->frames) {
        if (line_matches(frame, spec)) return std::string(frame.file) + ":" + std::to_string(frame.line);
      }
    }
  }
  return spec.text();
}

void Attributor::set_symbols(symbols::SymbolMap* symbols) {
  symbols_ = symbols;
  address_cache_.clear();
}

bool Attributor::refresh() {
  if (symbols_ == nullptr || !symbols_->refresh()) return false;
  address_cache_.clear();  // addresses in new objects were cached as unknown
  return true;
}

int32_t Attributor::attribute_sample(const os::RawSample& sample) {
  if (sample.callchain_length == 0) return attribute(sample.ip, false);
  int32_t id = -1;
  for (uint32_t i = 0; i < sample.callchain_length && id < 0; ++i) id = attribute(sample.callchain[i], i > 0);
  return id;
}

int32_t Attributor::attribute(uint64_t address, bool is_return_address) {
  if (symbols_ == nullptr || address == 0) return -1;
  uint64_t key = is_return_address ? address - 1 : address;
  auto cached = address_cache_.find(key);
  if (cached != address_cache_.end()) return cached->second;
  int32_t id = -1;
  // Out-of-scope objects (libc, ...) never yield a line: skip them before touching their DWARF.
  const symbols::LoadedObject* object = symbols_->object_at(key);
  if (object != nullptr && object->in_scope) {
    if (auto info = symbols_->lookup(key)) {
      if (const symbols::SourceLine* line = symbols_->first_in_scope(*info)) id = intern_line(*line);
    }
  }
  address_cache_.emplace(key, id);
  return id;
}

const std::vector<symbols::AddressRange>& Attributor::ranges_of(int32_t id) {
  Line& selected = line(id);
  if (!selected.ranges_known && symbols_ != nullptr) {
    selected.ranges = symbols_->ranges_for(selected.file, selected.number, /*in_scope_only=*/true);
  }
  selected.ranges_known = true;
  return selected.ranges;
}

int32_t Attributor::intern_line(const symbols::SourceLine& source) {
  std::string name = std::string(source.file) + ":" + std::to_string(source.line);
  auto [it, inserted] = line_index_.try_emplace(name, static_cast<int32_t>(lines_.size()));
  if (inserted) {
    Line line;
    line.name = name;
    line.file = std::string(source.file);
    line.number = source.line;
    line.fixed_match = config_.fixed_line && line_matches(source, *config_.fixed_line);
    for (std::size_t i = 0; i < config_.sampled_points.size(); ++i) {
      if (line_matches(source, config_.sampled_points[i])) line.sampled_point = static_cast<int>(i);
    }
    lines_.push_back(std::move(line));
  }
  return it->second;
}

}  // namespace whatif::experiment
