// AutoFDO's text sample input (`whatif export --autofdo`): the fall-through ranges, sampled
// addresses and taken branches of one object, as Debian's `create_gcov --profiler=text` reads them
// (TextSampleReaderWriter). Offline, any thread.
#pragma once
#include <string>

#include "analysis/branches/branches.h"

namespace whatif::analysis {

/// The text for one object, in ELF virtual addresses (what create_gcov maps to symbols and lines):
///   N_RANGES,   then `START-END:COUNT` per range (hex; END is the address of the branch that ended
///               the straight run, executed too);
///   N_ADDRESSES, then `ADDRESS:COUNT` (none: the tracer records branches, not samples);
///   N_BRANCHES, then `FROM->TO:COUNT` per taken edge.
std::string autofdo_text(const ObjectBranches& object);

}  // namespace whatif::analysis
