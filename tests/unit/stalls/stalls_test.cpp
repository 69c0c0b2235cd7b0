// Unit tests of the stall analysis (analysis/stalls) on fixture code (tests/fixtures/stalls/kernels.c)
// with synthesized per-instruction samples whose frequencies and stalls are known, and of the profile
// reader's `instructions` and `branches` records.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "analysis/profile/profile.h"
#include "analysis/stalls/clock.h"
#include "analysis/stalls/stalls.h"
#include "analysis/stalls/stalls_report.h"

namespace whatif::stalls {
namespace {

const ElfCode& kernels() {
  static ElfCode code = [] {
    auto read = ElfCode::read(WHATIF_STALLS_KERNELS);
    EXPECT_TRUE(read) << read.error();
    return std::move(*read);
  }();
  return code;
}

/// The loop of `function`: its self-looping block's instructions, from an analysis without samples.
std::vector<InstructionResult> loop_of(const Function& function) {
  ProcedureResult shape = analyse(kernels(), function, "kernels", {}, nullptr, Options{});
  std::vector<InstructionResult> loop;
  // The loop body: the instructions from the target of the last backward conditional jump up to it.
  for (const InstructionResult& row : shape.instructions) {
    if (row.text.rfind("j", 0) == 0 && row.text.find("jmp") == std::string::npos) {
      uint64_t target = std::stoull(row.text.substr(row.text.find("0x")), nullptr, 16);
      if (target <= row.address) {
        loop.clear();
        for (const InstructionResult& r : shape.instructions)
          if (r.address >= target && r.address <= row.address) loop.push_back(r);
      }
    }
  }
  return loop;
}

/// Samples as the model predicts them for `frequency` executions per period (S = F x M), plus
/// `extra` cycles per execution at `stalled`, taken without skid (the tests analyse with skid off).
std::map<uint64_t, double> synthesize(const std::vector<InstructionResult>& loop, double frequency, uint64_t stalled,
                                      double extra) {
  std::map<uint64_t, double> counts;
  for (const InstructionResult& row : loop) {
    counts[row.address] += frequency * (row.best_case + (row.address == stalled ? extra : 0));
  }
  return counts;
}

Options no_skid() {
  Options options;
  options.skid = false;
  return options;
}

const InstructionResult& at(const ProcedureResult& result, uint64_t address) {
  for (const InstructionResult& row : result.instructions)
    if (row.address == address) return row;
  static InstructionResult none;
  ADD_FAILURE() << "no instruction at " << std::hex << address;
  return none;
}

TEST(StallsTest, LatencyTableNamesItsCpuAndKnowsDividesAreSlow) {
  const Model& model = Model::table();
  EXPECT_FALSE(model.cpu.empty());
  EXPECT_NE(model.source.find("llvm-mca"), std::string::npos);
  Latency add = model.lookup("add r64,r64", "add", false);
  Latency div = model.lookup("div r64", "div", false);
  Latency load = model.lookup("mov r64,m64", "mov", true);
  EXPECT_GT(div.latency, 5 * add.latency);
  EXPECT_TRUE(load.loads);
  EXPECT_GE(load.latency, 3);
}

TEST(StallsTest, PointerChasingIsBlamedOnTheDCacheWithTheLoadAsCulprit) {
  const Function* chase = kernels().function_named("chase");
  ASSERT_NE(chase, nullptr);
  std::vector<InstructionResult> loop = loop_of(*chase);
  ASSERT_GE(loop.size(), 2u);
  auto load = std::find_if(loop.begin(), loop.end(), [](const InstructionResult& r) { return r.text.find('[') != std::string::npos && r.text.rfind("mov", 0) == 0; });
  ASSERT_NE(load, loop.end()) << "no load in chase's loop";
  // 10000 executions per period; the load misses: 150 cycles more each time.
  auto counts = synthesize(loop, 10000, load->address, 150);
  ProcedureResult result = analyse(kernels(), *chase, "kernels", counts, nullptr, no_skid());
  const InstructionResult& row = at(result, load->address);
  EXPECT_NEAR(row.frequency, 10000, 1000) << "the loop's frequency from its unstalled issue points";
  EXPECT_GT(row.dynamic_stall, 100);
  ASSERT_FALSE(row.culprits.empty());
  auto top = std::max_element(row.culprits.begin(), row.culprits.end(),
                              [](const Culprit& a, const Culprit& b) { return a.high < b.high; });
  EXPECT_EQ(top->cause, Cause::dcache);
  EXPECT_EQ(top->instruction, load->address);
  // The summary ranks the D-cache first among the causes.
  auto causes = result.summary.causes;
  auto first = std::max_element(causes.begin(), causes.end(), [](const CauseRange& a, const CauseRange& b) { return a.high < b.high; });
  EXPECT_EQ(first->cause, Cause::dcache);
  EXPECT_GT(result.summary.actual_cpi, 3 * result.summary.best_case_cpi);
  EXPECT_NE(render_summary(result).find("D-cache"), std::string::npos);
}

TEST(StallsTest, DependentDividesAreAStaticDividerStall) {
  const Function* divide = kernels().function_named("divide_chain");
  ASSERT_NE(divide, nullptr);
  std::vector<InstructionResult> loop = loop_of(*divide);
  ASSERT_FALSE(loop.empty());
  auto div = std::find_if(loop.begin(), loop.end(), [](const InstructionResult& r) { return r.text.rfind("div", 0) == 0; });
  ASSERT_NE(div, loop.end());
  auto counts = synthesize(loop, 5000, 0, 0);
  ProcedureResult result = analyse(kernels(), *divide, "kernels", counts, nullptr, no_skid());
  // The divide's consumer waits for it at the head of the queue (the stall is charged to the waiter).
  const InstructionResult& consumer = at(result, (div + 1)->address);
  EXPECT_GT(consumer.static_stall, 5) << consumer.text << " waits for the divide's result";
  EXPECT_EQ(consumer.static_cause, Cause::static_unit);
  EXPECT_EQ(consumer.static_culprit, div->address);
  auto causes = result.summary.causes;
  auto first = std::max_element(causes.begin(), causes.end(), [](const CauseRange& a, const CauseRange& b) { return a.high < b.high; });
  ASSERT_NE(first, causes.end());
  EXPECT_EQ(first->cause, Cause::static_unit);
  EXPECT_NEAR(at(result, div->address).frequency, 5000, 500);
}

TEST(StallsTest, BranchRecordsGiveHighConfidenceFrequencies) {
  const Function* branchy = kernels().function_named("branchy");
  ASSERT_NE(branchy, nullptr);
  ProcedureResult shape = analyse(kernels(), *branchy, "kernels", {}, nullptr, Options{});
  // Every instruction ran 100 times in the records; samples say 2000 per period each.
  analysis::BranchSamples records;
  records.path = "kernels";
  records.ranges.push_back({branchy->start, branchy->start + branchy->size - 1, 100});
  std::map<uint64_t, double> counts;
  for (const InstructionResult& row : shape.instructions) counts[row.address] = 2000 * row.best_case;
  Options options;
  options.skid = false;
  ProcedureResult result = analyse(kernels(), *branchy, "kernels", counts, &records, options);
  EXPECT_TRUE(result.summary.from_branch_records);
  for (const InstructionResult& row : result.instructions) {
    EXPECT_EQ(row.confidence, Confidence::high);
    EXPECT_NEAR(row.frequency, 2000, 200) << row.text;
  }
}

TEST(StallsTest, SkidMovesSamplesBackUnlessTheNamedInstructionWaitsForItsProducer) {
  // chase: the compare after the load names the load's time; divide_chain: the add after the divide
  // waits for its result, so its samples are its own.
  const Function* chase = kernels().function_named("chase");
  const Function* divide = kernels().function_named("divide_chain");
  ASSERT_NE(chase, nullptr);
  ASSERT_NE(divide, nullptr);
  std::vector<InstructionResult> chase_loop = loop_of(*chase), divide_loop = loop_of(*divide);
  auto load = std::find_if(chase_loop.begin(), chase_loop.end(), [](const InstructionResult& r) { return r.text.find('[') != std::string::npos; });
  auto div = std::find_if(divide_loop.begin(), divide_loop.end(), [](const InstructionResult& r) { return r.text.rfind("div", 0) == 0; });
  ASSERT_TRUE(load != chase_loop.end() && load + 1 != chase_loop.end());
  ASSERT_TRUE(div != divide_loop.end() && div + 1 != divide_loop.end());
  ASSERT_EQ((load + 1)->static_stall, 0) << (load + 1)->text << " does not wait for the load";
  ProcedureResult moved = analyse(kernels(), *chase, "kernels", {{(load + 1)->address, 500}}, nullptr, Options{});
  EXPECT_EQ(at(moved, load->address).charged, 500);
  EXPECT_EQ(at(moved, (load + 1)->address).charged, 0);
  ProcedureResult kept = analyse(kernels(), *divide, "kernels", {{(div + 1)->address, 500}}, nullptr, Options{});
  EXPECT_EQ(at(kept, (div + 1)->address).charged, 500) << "the divide's consumer waits: its samples stay";
  EXPECT_EQ(at(kept, div->address).charged, 0);
  ProcedureResult off = analyse(kernels(), *chase, "kernels", {{(load + 1)->address, 500}}, nullptr, no_skid());
  EXPECT_EQ(at(off, (load + 1)->address).charged, 500) << "--no-skid keeps samples where they were taken";
}

/// chase's loop, its load and the load's best-case latency: the known answers below come from it.
struct ChaseLoop {
  const Function* function = nullptr;
  std::vector<InstructionResult> loop;
  std::vector<InstructionResult>::const_iterator load;
  double latency = 0;
};

ChaseLoop chase_loop() {
  ChaseLoop chase;
  chase.function = kernels().function_named("chase");
  if (chase.function == nullptr) return chase;
  chase.loop = loop_of(*chase.function);
  chase.load = std::find_if(chase.loop.cbegin(), chase.loop.cend(),
                            [](const InstructionResult& r) { return r.text.find('[') != std::string::npos; });
  chase.latency = Model::table().lookup("mov r64,m64", "mov", true).latency;
  return chase;
}

TEST(StallsTest, AnUnstalledLoopWhoseSamplesNameOneInstructionGetsItsExactFrequency) {
  // Known answer: chase's loop runs 1000 times per sampling period, every load an L1 hit (the best
  // case), so an iteration takes the load's latency: the pointer chain is the loop's only carried
  // dependency and the other three instructions retire beside it. On an out-of-order core every
  // sample names the instruction after the load (measured: 1912 of 1917 samples in
  // benchmarks/stalls). S = F x C over the iteration, so F = 1000 exactly; single issue points with
  // a small M_i made it many times larger.
  ChaseLoop c = chase_loop();
  ASSERT_NE(c.function, nullptr);
  ASSERT_TRUE(c.load != c.loop.end() && c.load + 1 != c.loop.end());
  ASSERT_GE(c.latency, 3);
  std::map<uint64_t, double> counts = {{(c.load + 1)->address, 1000 * c.latency}};
  for (const Options& options : {Options{}, no_skid()}) {
    ProcedureResult result = analyse(kernels(), *c.function, "kernels", counts, nullptr, options);
    for (const InstructionResult& row : c.loop) {
      EXPECT_NEAR(at(result, row.address).frequency, 1000, 50) << row.text << (options.skid ? "" : " (--no-skid)");
    }
  }
}

/// The cause with the largest upper bound in the procedure summary (how the Figure-4 ranges rank).
Cause first_cause(const ProcedureResult& result) {
  const auto& causes = result.summary.causes;
  auto first = std::max_element(causes.begin(), causes.end(), [](const CauseRange& a, const CauseRange& b) { return a.high < b.high; });
  return first == causes.end() ? Cause::unexplained : first->cause;
}

double cause_high(const ProcedureResult& result, Cause cause) {
  for (const CauseRange& c : result.summary.causes)
    if (c.cause == cause) return c.high;
  return 0;
}

TEST(StallsTest, ALoadChainWhoseSamplesAllNameOneInstructionRanksTheDCacheFirst) {
  // Known answer from benchmarks/stalls (`micro chase`, a 64 MB random cycle): on this out-of-order
  // core every sample of the loop names the instruction after the load, as in a loop of L1 hits.
  // F is then only an upper bound (the L1-hit frequency, kept as is: see the test above); any
  // smaller F fits the same samples, and the wait is then a miss. The D-cache must rank first.
  // Before: the wait counted as a static L1-hit stall (55%) with the D-cache at 0-40%, so the
  // ranking hung on whether a stray sample fell on another instruction (1 run in 2).
  ChaseLoop c = chase_loop();
  ASSERT_NE(c.function, nullptr);
  ASSERT_TRUE(c.load != c.loop.end() && c.load + 1 != c.loop.end());
  ProcedureResult result = analyse(kernels(), *c.function, "kernels", {{(c.load + 1)->address, 1000 * c.latency}}, nullptr, Options{});
  const InstructionResult& row = at(result, c.load->address);
  EXPECT_EQ(row.confidence, Confidence::low);
  ASSERT_FALSE(row.culprits.empty()) << "the load's wait may be a miss";
  EXPECT_EQ(row.culprits.front().cause, Cause::dcache);
  EXPECT_EQ(row.culprits.front().instruction, c.load->address);
  EXPECT_EQ(first_cause(result), Cause::dcache) << render_summary(result);
  EXPECT_GT(cause_high(result, Cause::dcache), 0.8 * result.summary.total_cycles) << render_summary(result);
  EXPECT_NE(render_annotate(result).find("F is an upper bound"), std::string::npos) << "the listing says why the bound is larger";
}

TEST(StallsTest, ADependencyChainWithoutALoadIsNeverADCacheStall) {
  // The same sample shape (every sample on the multiply's consumer) on a chain of multiplies and
  // adds: the model knows its latency, so F is not a mere bound and no cycle is a D-cache candidate.
  const Function* multiply = kernels().function_named("multiply_chain");
  ASSERT_NE(multiply, nullptr);
  std::vector<InstructionResult> loop = loop_of(*multiply);
  auto mul = std::find_if(loop.begin(), loop.end(), [](const InstructionResult& r) { return r.text.rfind("imul", 0) == 0; });
  ASSERT_NE(mul, loop.end());
  auto consumer = std::find_if(mul + 1, loop.end(), [](const InstructionResult& r) { return r.static_stall > 0; });
  ASSERT_NE(consumer, loop.end()) << "no instruction waits for the multiply";
  ProcedureResult result = analyse(kernels(), *multiply, "kernels", {{consumer->address, 4000}}, nullptr, Options{});
  EXPECT_NE(at(result, mul->address).confidence, Confidence::low);
  EXPECT_EQ(cause_high(result, Cause::dcache), 0);
  EXPECT_EQ(first_cause(result), Cause::dependency) << render_summary(result);
}

TEST(StallsTest, AnEstimateRestingOnLoadSamplesIsLowConfidenceOneOnADivideIsNot) {
  // The same samples come from a chase loop of L1 hits at F and one of misses at F / 20: the estimate
  // cannot tell them apart (DCPI: classes whose issue points stall regularly), so it says low. The
  // divide's wait is the divider's latency, which the model knows.
  const Function* chase = kernels().function_named("chase");
  const Function* divide = kernels().function_named("divide_chain");
  ASSERT_NE(chase, nullptr);
  ASSERT_NE(divide, nullptr);
  std::vector<InstructionResult> chase_loop = loop_of(*chase), divide_loop = loop_of(*divide);
  auto load = std::find_if(chase_loop.begin(), chase_loop.end(), [](const InstructionResult& r) { return r.text.find('[') != std::string::npos; });
  auto div = std::find_if(divide_loop.begin(), divide_loop.end(), [](const InstructionResult& r) { return r.text.rfind("div", 0) == 0; });
  ASSERT_TRUE(load != chase_loop.end() && load + 1 != chase_loop.end());
  ASSERT_TRUE(div != divide_loop.end() && div + 1 != divide_loop.end());
  // Every issue point sampled in proportion to its best case, the load 150 cycles more: the
  // unstalled issue points cluster (which alone would make the estimate medium or high).
  ProcedureResult chased = analyse(kernels(), *chase, "kernels", synthesize(chase_loop, 1000, load->address, 150), nullptr, no_skid());
  EXPECT_EQ(at(chased, load->address).confidence, Confidence::low);
  ProcedureResult divided = analyse(kernels(), *divide, "kernels", synthesize(divide_loop, 1000, 0, 0), nullptr, no_skid());
  EXPECT_NE(at(divided, div->address).confidence, Confidence::low);
}

TEST(StallsTest, HotCodeLargerThanTheICacheLeavesNoInstructionRuledOutForICacheMisses) {
  // A stall inside a cache line, at an instruction that neither loads nor follows a branch: with the
  // hot code within the I-cache it stays unexplained; with more hot code than the I-cache holds, the
  // out-of-order front end may starve the queue at any instruction, so the I-cache is a candidate.
  const Function* divide = kernels().function_named("divide_chain");
  ASSERT_NE(divide, nullptr);
  std::vector<InstructionResult> loop = loop_of(*divide);
  const InstructionResult* inside = nullptr;
  for (std::size_t k = 1; k < loop.size(); ++k) {
    const InstructionResult& r = loop[k];
    bool line_start = r.address % 64 == 0 || loop[k - 1].address % 64 == 0;
    if (!line_start && r.text.find('[') == std::string::npos && r.text.rfind("div", 0) != 0 && r.text.rfind("j", 0) != 0) {
      inside = &r;
      break;
    }
  }
  ASSERT_NE(inside, nullptr);
  auto counts = synthesize(loop, 1000, inside->address, 40);
  auto has_icache = [&](double hot_bytes) {
    Options options = no_skid();
    options.hot_code_bytes = hot_bytes;
    ProcedureResult result = analyse(kernels(), *divide, "kernels", counts, nullptr, options);
    const InstructionResult& row = at(result, inside->address);
    EXPECT_GT(row.dynamic_stall, 10) << row.text;
    return std::any_of(row.culprits.begin(), row.culprits.end(), [](const Culprit& c) { return c.cause == Cause::icache; });
  };
  EXPECT_FALSE(has_icache(20000)) << "20 KB of hot code: the line rule rules it out";
  EXPECT_TRUE(has_icache(40000)) << "40 KB of hot code outgrows a 32 KB I-cache";
}

TEST(StallsTest, HotCodeCountsTheLinesThatRanUnsampled) {
  // Every line sampled three times or more: nothing is unseen. Lines sampled once or twice say that
  // more ran without a sample (a 36 KB loop showed under 32 KB in one run of two).
  analysis::InstructionSamples dense, sparse;
  for (uint64_t line = 0; line < 100; ++line) dense.counts[line * 64] = 3;
  for (uint64_t line = 0; line < 100; ++line) sparse.counts[line * 64] = line < 60 ? 1 : line < 80 ? 2 : 5;
  EXPECT_DOUBLE_EQ(hot_code_bytes({dense}), 100 * 64);
  EXPECT_DOUBLE_EQ(hot_code_bytes({sparse}), (100 + 60.0 * 59 / (2 * 21)) * 64);
}

TEST(StallsTest, CyclesPerPeriodUseTheMeasuredClockOverTheNominalOne) {
  // A 2.45 GHz EPYC ran at 2.6-3.2 GHz: the nominal clock of /proc/cpuinfo made every execution count
  // 6-30% short. The launcher's `clock` record wins over the header's nominal `cpu_mhz`.
  std::string text =
      R"({"type":"header","format":"whatif-profile","version":1,"pid":1,"sampling_period_ns":1000000,"machine":{"cpu_mhz":2000}})" "\n"
      R"({"type":"clock","measured_mhz":3000,"method":"fixture"})" "\n";
  auto profile = analysis::parse_profile(text, "fixture");
  ASSERT_TRUE(profile) << profile.error();
  EXPECT_DOUBLE_EQ(period_cycles(*profile), 3000000) << "1 ms at the measured 3000 MHz";
  ProcedureResult result;
  result.summary.clock_mhz = 3000;
  result.summary.clock_measured = true;
  EXPECT_NE(render_summary(result).find("3000 MHz (measured"), std::string::npos) << "the summary says which clock";
  EXPECT_NE(analysis::clock_record(2500, "m").find(R"("measured_mhz":2500)"), std::string::npos);
}

TEST(StallsTest, TheClockMeasurementGivesAPlausibleRate) {
  ClockMeasurement clock = measure_clock(3);
  EXPECT_GT(clock.mhz, 200) << "no x86-64 core adds slower than 200 MHz";
  EXPECT_LT(clock.mhz, 10000);
  EXPECT_FALSE(clock.method.empty());
}

TEST(StallsTest, WithoutSamplesNoStallIsInvented) {
  const Function* chase = kernels().function_named("chase");
  ASSERT_NE(chase, nullptr);
  ProcedureResult result = analyse(kernels(), *chase, "kernels", {}, nullptr, Options{});
  for (const InstructionResult& row : result.instructions) EXPECT_TRUE(row.culprits.empty()) << row.text;
  EXPECT_EQ(result.summary.samples, 0);
}

TEST(StallsTest, ProfileReaderKeepsTheLastInstructionsRecordPerProcessAndAddsProcesses) {
  std::string text =
      R"({"type":"header","format":"whatif-profile","version":1,"pid":1,"sampling_period_ns":1000000,"machine":{"cpu_mhz":2000}})" "\n"
      R"({"type":"instructions","path":"/bin/x","build_id":"ab","counts":[[4096,3],[4100,1]]})" "\n"
      R"({"type":"instructions","path":"/bin/x","build_id":"ab","counts":[[4096,5],[4100,2]]})" "\n"
      R"({"type":"branches","path":"/bin/x","build_id":"ab","edges":[[4100,4096,7]],"ranges":[[4096,4100,7]]})" "\n"
      R"({"type":"header","format":"whatif-profile","version":1,"pid":2,"sampling_period_ns":1000000})" "\n"
      R"({"type":"instructions","path":"/bin/x","build_id":"ab","counts":[[4096,10]]})" "\n";
  auto profile = analysis::parse_profile(text, "fixture");
  ASSERT_TRUE(profile) << profile.error();
  auto merged = analysis::merged_instructions(*profile);
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0].counts.at(4096), 15) << "5 (the first process's last record) + 10";
  EXPECT_EQ(merged[0].counts.at(4100), 2);
  auto branches = analysis::merged_branches(*profile);
  ASSERT_EQ(branches.size(), 1u);
  ASSERT_EQ(branches[0].edges.size(), 1u);
  EXPECT_EQ(branches[0].edges[0].from, 4100u);
  EXPECT_EQ(branches[0].edges[0].to, 4096u);
  ASSERT_EQ(branches[0].ranges.size(), 1u);
  EXPECT_EQ(branches[0].ranges[0].count, 7);
  EXPECT_DOUBLE_EQ(period_cycles(*profile), 2000000) << "1 ms at 2000 MHz";
}

TEST(StallsTest, StatsGiveRangeMeanAndSpreadPerProcedure) {
  std::vector<std::vector<ProcedureSamples>> runs = {{{"a", "x", 100}, {"b", "x", 10}}, {{"a", "x", 140}}, {{"a", "x", 120}, {"b", "x", 10}}};
  auto rows = stats(runs);
  ASSERT_EQ(rows.size(), 2u);
  const StatsRow& a = rows[0].procedure == "a" ? rows[0] : rows[1];
  const StatsRow& b = rows[0].procedure == "b" ? rows[0] : rows[1];
  EXPECT_EQ(a.runs, 3u);
  EXPECT_DOUBLE_EQ(a.sum, 360);
  EXPECT_DOUBLE_EQ(a.mean, 120);
  EXPECT_DOUBLE_EQ(a.stddev, 20);
  EXPECT_DOUBLE_EQ(a.min, 100);
  EXPECT_DOUBLE_EQ(a.max, 140);
  EXPECT_NEAR(a.range_percent, 100.0 * 40 / 360, 1e-9);
  EXPECT_DOUBLE_EQ(b.min, 0) << "a run without the procedure counts 0";
  EXPECT_EQ(rows[0].procedure, "b") << "sorted by range %: b's 10/20 beats a's 40/360";
}

}  // namespace
}  // namespace whatif::stalls
