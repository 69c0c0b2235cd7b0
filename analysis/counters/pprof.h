// `whatif export --pprof`: a profile's function counters (`whatif run --counters`) and per-line
// samples as pprof's profile.proto (github.com/google/pprof/proto/profile.proto), one sample type per
// counter, encoded by hand (no protobuf dependency) and gzip-compressed as pprof writes it.
// Launcher process, one thread.
#pragma once
#include <string>
#include <string_view>

#include "analysis/profile/profile.h"
#include "base/result.h"

namespace whatif::counters {

/// The profile.proto message (uncompressed) for `profile`: sample types `calls`, `cpu_inclusive` and
/// `cpu_exclusive` (nanoseconds), `EVENT_inclusive`/`EVENT_exclusive` per counted event (scaled to
/// every call where event sets cycled by call count; left out where the event was not available),
/// one sample per (process, thread, function) with `pid` and `tid` labels; and `samples` (count),
/// one sample per sampled line. Comments say what was scaled or left out. An error when the profile
/// has neither.
Result<std::string> pprof_profile(const analysis::Profile& profile);

/// gzip (RFC 1952) of `bytes`, as pprof's files are.
Result<std::string> gzip(std::string_view bytes);

}  // namespace whatif::counters
