// AutoFDO text export (see autofdo_export.h). Offline.
#include "analysis/branches/autofdo_export.h"

#include <fmt/format.h>

namespace whatif::analysis {

std::string autofdo_text(const ObjectBranches& object) {
  std::string text = fmt::format("{}\n", object.ranges.size());
  for (const BranchRange& range : object.ranges) text += fmt::format("{:x}-{:x}:{}\n", range.start, range.end, range.count);
  text += "0\n";
  text += fmt::format("{}\n", object.edges.size());
  for (const BranchEdge& edge : object.edges) text += fmt::format("{:x}->{:x}:{}\n", edge.from, edge.to, edge.count);
  return text;
}

}  // namespace whatif::analysis
