// `whatif export --pprof`: a profile's function counters (`whatif run --counters`), per-line
// samples and software branch records (`whatif run --lbr`) as pprof's profile.proto (github.com/google/pprof/proto/profile.proto), one sample type per
// counter, encoded by hand (no protobuf dependency) and gzip-compressed as pprof writes it.
// Launcher process, one thread.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/profile/profile.h"
#include "base/result.h"

namespace whatif::counters {

/// One taken-branch edge of the branch records, with the source lines of its two ends (FILE:LINE, or
/// 0xADDRESS where the object has no line for it).
struct PprofEdge {
  std::string object;
  uint64_t from = 0, to = 0;  ///< ELF virtual addresses
  std::string from_line, to_line;
  uint64_t count = 0;
};

/// The profile.proto message (uncompressed) for `profile` and its branch `edges`: sample types `calls`, `cpu_inclusive` and
/// `cpu_exclusive` (nanoseconds), `EVENT_inclusive`/`EVENT_exclusive` per counted event (scaled to
/// every call where event sets cycled by call count; left out where the event was not available),
/// one sample per (process, thread, function) with `pid` and `tid` labels; and `samples` (count),
/// one sample per sampled line; and `taken_branches` (count), one sample per edge at its branch's line
/// with the edge as labels (`to`: the target's line; `from_address`, `to_address`; `object`).
/// Comments say what was scaled or left out. An error when the profile has none of these.
Result<std::string> pprof_profile(const analysis::Profile& profile, const std::vector<PprofEdge>& edges = {});

/// gzip (RFC 1952) of `bytes`, as pprof's files are.
Result<std::string> gzip(std::string_view bytes);

}  // namespace whatif::counters
