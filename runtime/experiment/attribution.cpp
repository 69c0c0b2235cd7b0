// Attribution of samples to in-scope source lines (see attribution.h). Profiler thread only.
#include "experiment/attribution.h"

#include <algorithm>
#include <utility>

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

void Attributor::set_own_time(std::vector<symbols::AddressRange> own_code, std::vector<uint64_t> trap_addresses) {
  own_code_ = std::move(own_code);
  trap_addresses_ = std::move(trap_addresses);
}

int32_t Attributor::attribute_sample(const os::RawSample& sample) {
  bool own = std::any_of(own_code_.begin(), own_code_.end(),
                         [&](const symbols::AddressRange& range) { return sample.ip >= range.begin && sample.ip < range.end; });
  if (own || std::find(trap_addresses_.begin(), trap_addresses_.end(), sample.ip) != trap_addresses_.end()) {
    own_samples_ += sample.weight;
    return -1;
  }
  int32_t id = attribute(sample.ip, false);
  if (id < 0) id = attribute_unwound(sample);
  // The frame-pointer callchain: the fallback when the sample was not unwound.
  // callchain[0] is the sampled IP; the rest are return addresses (look up the call itself).
  for (uint32_t i = 1; i < sample.callchain_length && id < 0; ++i) id = attribute(sample.callchain[i], true);
  return id;
}

int32_t Attributor::attribute_unwound(const os::RawSample& sample) {
  // A frame-pointer chain taken in a leaf without a frame (glibc's memset) skips its caller, so an
  // out-of-scope IP is unwound with DWARF CFI from the sample's registers and stack copy instead.
  if (symbols_ == nullptr || sample.user == nullptr || sample.user->size == 0) return -1;
  if (!unwinder_.load()) {
    if (!unwind_warned_) {
      unwind_warned_ = true;
      warning_ = unwinder_.load_error();
    }
    return -1;
  }
  const os::UserStack& user = *sample.user;
  unwind::Snapshot snapshot{user.regs, user.stack_start, user.bytes, user.size};
  struct Found {
    Attributor* self;
    int32_t id = -1;
  } found{this};
  uint64_t frames[os::RawSample::kMaxCallchain];
  unwinder_.unwind(snapshot, frames, os::RawSample::kMaxCallchain,
                   [](void* context, uint64_t frame, std::size_t index) {
                     auto* f = static_cast<Found*>(context);
                     f->id = index == 0 ? -1 : f->self->attribute(frame, /*is_return_address=*/true);
                     return f->id >= 0;
                   },
                   &found);
  return found.id;
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
      if (const symbols::SourceLine* line = symbols_->first_in_scope(*info)) {
        id = intern_line(*line);
        if (info->function.end > info->function.begin) add_function_range(id, info->function);
      }
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

void Attributor::add_function_range(int32_t id, const symbols::AddressRange& range) {
  // A function's code is known from its bounds; two functions of one name (static functions of
  // different files, or objects) are one entry with both ranges.
  Line& function = line(id);
  function.ranges_known = true;
  bool known = std::any_of(function.ranges.begin(), function.ranges.end(), [&](const symbols::AddressRange& r) {
    return r.begin == range.begin && r.end == range.end;
  });
  if (!known) function.ranges.push_back(range);
}

int32_t Attributor::intern_line(const symbols::SourceLine& source) {
  // A function of an object without debug info (line 0) is named by itself, a line FILE:LINE.
  std::string name = source.line == 0 ? std::string(source.file) : std::string(source.file) + ":" + std::to_string(source.line);
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
