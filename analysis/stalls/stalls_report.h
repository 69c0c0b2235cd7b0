// The stall analysis's outputs: dcpiprof's procedure list, dcpicalc's annotated listing with stall
// bubbles, the Figure 4 procedure summary, dcpistats' variation across runs, and the `stalls`
// profile record the viewer reads. Offline (the launcher), one thread.
#pragma once
#include <string>
#include <vector>

#include "analysis/stalls/stalls.h"

namespace whatif::stalls {

/// `whatif report --procedures`: samples, %, cum%, procedure, object; most first.
std::string render_procedures(const std::vector<ProcedureSamples>& rows);
/// `whatif report --annotate F`: per instruction its samples, frequency, CPI and stall bubbles
/// (cycles, culprit letters and instructions), grouped under source lines.
std::string render_annotate(const ProcedureResult& procedure);
/// The paper's Figure 4: best-case and actual CPI, each cause's range, static and dynamic stall,
/// execution, unexplained.
std::string render_summary(const ProcedureResult& procedure);

/// One procedure's row in dcpistats: over N runs.
struct StatsRow {
  std::string procedure;
  double range_percent = 0;  ///< (max - min) / sum over runs, in %
  double sum = 0, sum_percent = 0;
  std::size_t runs = 0;
  double mean = 0, stddev = 0, min = 0, max = 0;
};
/// dcpistats: per procedure over the runs (a run without samples in it counts 0), sorted by range %.
std::vector<StatsRow> stats(const std::vector<std::vector<ProcedureSamples>>& runs);
std::string render_stats(const std::vector<StatsRow>& rows, const std::vector<double>& run_totals);

/// A `stalls` record (one JSON line with its newline) for the viewer.
std::string stalls_record(const ProcedureResult& procedure, const Model& model = Model::table());

}  // namespace whatif::stalls
