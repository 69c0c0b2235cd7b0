// Attribution of samples to in-scope source lines: the line table (one entry per FILE:LINE seen,
// with its sample count and option matches) and the address -> line cache. Profiler thread only
// (the SymbolMap it reads is not thread-safe).
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "config/config.h"
#include "os/perf_event.h"
#include "symbols/symbol_map.h"
#include "unwind/unwinder.h"

namespace whatif::experiment {

/// One in-scope source line that samples were attributed to; in an object without debug info, one
/// function (named by itself, number 0).
struct Line {
  std::string name;  ///< FILE:LINE, FILE as the compiler recorded it; or the function's name
  std::string file;
  uint32_t number = 0;
  bool ranges_known = false;                  ///< `ranges` looked up (once: it parses line tables)
  std::vector<symbols::AddressRange> ranges;  ///< the line's code, for threads' self-crediting
  bool fixed_match = false;  ///< the line is the --fixed-line
  int sampled_point = -1;    ///< index into the sampled points (--sampled-point), or -1
  uint64_t samples = 0;      ///< since the start
};

/// Whether `line` is the one `spec` names: same number, and spec's file names the line's file by
/// whole trailing components (symbols::path_matches, the rule of SymbolMap::ranges_for).
bool line_matches(const symbols::SourceLine& line, const config::LineSpec& spec);

/// `spec` named the way samples name it (the full path the compiler recorded), so every experiment
/// on it carries one name whether or not the line was sampled yet; spec.text() when no in-scope
/// code matches.
std::string canonical_line_name(symbols::SymbolMap& symbols, const config::LineSpec& spec);

/// Maps sampled addresses to in-scope lines, interning each line once and caching each address.
class Attributor {
 public:
  /// `config` (for --fixed-line and the sampled points) must outlive the attributor.
  explicit Attributor(const config::Config& config) : config_(config) {}

  /// Sets the symbol map to attribute with (nullptr: nothing is attributed). Clears the cache.
  void set_symbols(symbols::SymbolMap* symbols);
  /// Re-enumerates loaded objects (after dlopen/dlclose); when the set changed, forgets cached
  /// addresses (those in new objects were cached as unknown) and returns true.
  bool refresh();

  /// The line of a sample, or -1: its IP when in scope; else the first in-scope frame of its
  /// DWARF-unwound stack; else (no stack, no libunwind, nothing found) the first in-scope frame of
  /// its frame-pointer callchain. A return address stands for its call: looked up minus one.
  int32_t attribute_sample(const os::RawSample& sample);
  /// whatif's own time, which must not go to the program's lines: samples whose IP is in
  /// `own_code` (libwhatif.so's executable ranges: its shims and handlers) or exactly at one of
  /// `trap_addresses` (the -p breakpoints: a debug trap's cost lands on the trapping instruction).
  void set_own_time(std::vector<symbols::AddressRange> own_code, std::vector<uint64_t> trap_addresses);
  /// Samples dropped as whatif's own time so far.
  uint64_t own_samples() const { return own_samples_; }
  /// A warning to report once (libunwind could not be loaded), or empty.
  std::string take_warning() { return std::exchange(warning_, {}); }
  /// The line of one address (a return address is looked up minus one), or -1 when no in-scope
  /// line covers it. Cached.
  int32_t attribute(uint64_t address, bool is_return_address);

  /// A line by id (from attribute()).
  Line& line(int32_t id) { return lines_[static_cast<std::size_t>(id)]; }
  /// Every line attributed so far, by id.
  const std::vector<Line>& lines() const { return lines_; }
  /// The address ranges of line `id` (looked up once, in-scope objects only).
  const std::vector<symbols::AddressRange>& ranges_of(int32_t id);

 private:
  int32_t intern_line(const symbols::SourceLine& line);
  /// Adds a function's bounds to its entry's code ranges (objects without debug info).
  void add_function_range(int32_t id, const symbols::AddressRange& range);
  /// The first in-scope line of the sample's DWARF-unwound stack (its IP is out of scope), or -1.
  int32_t attribute_unwound(const os::RawSample& sample);

  const config::Config& config_;
  symbols::SymbolMap* symbols_ = nullptr;
  std::vector<Line> lines_;
  std::unordered_map<std::string, int32_t> line_index_;
  std::unordered_map<uint64_t, int32_t> address_cache_;  // -1: no in-scope line
  std::vector<symbols::AddressRange> own_code_;
  std::vector<uint64_t> trap_addresses_;
  uint64_t own_samples_ = 0;
  unwind::Unwinder unwinder_;  // loaded at the first sample that needs it
  bool unwind_warned_ = false;
  std::string warning_;
};

}  // namespace whatif::experiment
