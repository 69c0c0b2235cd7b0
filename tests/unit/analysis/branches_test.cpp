// The branch-record reader (last cumulative record per object wins, statistics) and the llvm-bolt
// fdata export, whose function names and offsets come from this test binary's own symbols.
#include <gtest/gtest.h>
#include <link.h>

#include "analysis/branches/autofdo_export.h"
#include "analysis/branches/bolt_export.h"
#include "analysis/branches/branch_report.h"
#include "analysis/branches/branches.h"
#include "analysis/branches/flow.h"
#include "analysis/branches/flow_record.h"

extern "C" __attribute__((noinline, used)) int whatif_branches_fixture(int x) { return x > 3 ? x * 2 : x + 1; }
// A local (static) function: its symbol is the mangled _ZL21whatif_branches_locali.
static __attribute__((noinline, used)) int whatif_branches_local(int x) { return x * 5; }

// A function of known layout for the flow: test; jz skip (2 bytes); add (3 bytes); skip: ret.
__asm__(".text\n.globl whatif_flow_fixture\n.type whatif_flow_fixture,@function\n"
        "whatif_flow_fixture:\n  test %edi,%edi\n"
        ".globl whatif_flow_fixture_jz\nwhatif_flow_fixture_jz:\n  jz whatif_flow_fixture_skip\n"
        "  add $1,%eax\n"
        ".globl whatif_flow_fixture_skip\nwhatif_flow_fixture_skip:\n  ret\n"
        ".size whatif_flow_fixture, .-whatif_flow_fixture\n");
extern "C" char whatif_flow_fixture[], whatif_flow_fixture_jz[], whatif_flow_fixture_skip[];

namespace whatif::analysis {
namespace {

TEST(Branches, TheLastRecordPerObjectWinsAndStatsAreRead) {
  std::string text =
      R"({"type":"header","format":"whatif-profile","version":1})" "\n"
      R"({"type":"branches","path":"/bin/prog","build_id":"ab","edges":[[16,32,1]],"ranges":[[32,48,1]]})" "\n"
      R"({"type":"branches","path":"/lib/libc.so.6","build_id":"cd","edges":[[1,2,3]],"ranges":[]})" "\n"
      R"({"type":"branches","path":"/bin/prog","build_id":"ab","edges":[[16,32,5],[40,16,2]],"ranges":[[32,48,4]]})" "\n"
      R"({"type":"branch_stats","depth":16,"bursts":10,"taken":7,"breakpoints":3,"breakpoints_per_taken":0.43,"ended":{"rseq":2}})" "\n";
  auto profile = parse_branches(text, "test");
  ASSERT_TRUE(profile.ok()) << profile.error();
  ASSERT_EQ(profile->objects.size(), 2u);
  const ObjectBranches* program = profile->object("prog");
  ASSERT_NE(program, nullptr);
  ASSERT_EQ(program->edges.size(), 2u);
  EXPECT_EQ(program->edges[0].count, 5u);
  EXPECT_EQ(program->taken(), 7u);
  EXPECT_EQ(program->ranges[0].count, 4u);
  EXPECT_EQ(profile->object("rog"), nullptr);  // whole path components only
  ASSERT_TRUE(profile->stats.has_value());
  EXPECT_EQ(profile->stats->breakpoints, 3u);
  EXPECT_EQ(profile->stats->ended.at("rseq"), 2u);
}

TEST(Branches, MalformedEdgesAreAnError) {
  auto profile = parse_branches(R"({"type":"branches","path":"/p","edges":[[1,2]],"ranges":[]})" "\n", "bad");
  EXPECT_FALSE(profile.ok());
}

uintptr_t main_bias() {
  uintptr_t bias = 0;
  dl_iterate_phdr([](dl_phdr_info* info, size_t, void* out) { *static_cast<uintptr_t*>(out) = info->dlpi_addr; return 1; }, &bias);
  return bias;
}

TEST(BoltExport, EdgesBecomeFunctionOffsetsOfTheObjectsSymbols) {
  auto symbols = read_function_symbols("/proc/self/exe");
  ASSERT_TRUE(symbols.ok()) << symbols.error();
  uint64_t fixture = reinterpret_cast<uintptr_t>(&whatif_branches_fixture) - main_bias();
  ObjectBranches object;
  object.path = "/proc/self/exe";
  object.edges = {{fixture + 4, fixture + 1, 7}, {1, 2, 3}};  // the second lies in no function
  uint64_t skipped = 0;
  std::string fdata = bolt_fdata(object, *symbols, &skipped);
  EXPECT_EQ(fdata, "1 whatif_branches_fixture 4 1 whatif_branches_fixture 1 0 7\n");
  EXPECT_EQ(skipped, 1u);
}

TEST(BoltExport, LocalFunctionsAreNamedAsBoltNamesThem) {
  auto symbols = read_function_symbols("/proc/self/exe");
  ASSERT_TRUE(symbols.ok()) << symbols.error();
  uint64_t local = reinterpret_cast<uintptr_t>(&whatif_branches_local) - main_bias();
  ObjectBranches object;
  object.edges = {{local + 2, local, 1}};
  EXPECT_EQ(bolt_fdata(object, *symbols), "1 _ZL21whatif_branches_locali/1 2 1 _ZL21whatif_branches_locali/1 0 0 1\n");
}

TEST(BranchReport, TakenRateCountsRangesRunningThroughTheBranch) {
  ObjectBranches object;
  // The branch at 0x20 was taken 3 times; twice the code ran through it (0x10..0x30) untaken.
  object.edges = {{0x20, 0x80, 3}, {0x30, 0x10, 2}};
  object.ranges = {{0x10, 0x30, 2}, {0x10, 0x20, 3}};
  EXPECT_DOUBLE_EQ(taken_rate(object, 0x20), 3.0 / 5.0);
  EXPECT_DOUBLE_EQ(taken_rate(object, 0x30), 1.0);
  EXPECT_DOUBLE_EQ(taken_rate(object, 0x99), -1.0);
}

TEST(BranchFlow, BlocksEdgesAndFallThroughsFromTheRanges) {
  auto code = code::ElfCode::read("/proc/self/exe");
  ASSERT_TRUE(code.ok()) << code.error();
  uint64_t entry = reinterpret_cast<uintptr_t>(whatif_flow_fixture) - main_bias();
  uint64_t jz = reinterpret_cast<uintptr_t>(whatif_flow_fixture_jz) - main_bias();
  uint64_t skip = reinterpret_cast<uintptr_t>(whatif_flow_fixture_skip) - main_bias();
  ASSERT_EQ(skip, jz + 5);  // jz rel8 (2) + add $1,%eax (3)
  // Five calls: three take jz to skip, two fall through the add; every one returns to a caller
  // outside the function.
  ObjectBranches object;
  object.edges = {{jz, skip, 3}, {skip, 0x10, 5}};
  object.ranges = {{entry, jz, 3}, {skip, skip, 3}, {entry, skip, 2}};
  object.paths = {{4, entry, {{jz, skip, 0}, {skip, 0x10, 0}}}};
  auto flows = function_flows(object, *code);
  ASSERT_EQ(flows.size(), 1u);
  const FunctionFlow& flow = flows[0];
  EXPECT_EQ(flow.name, "whatif_flow_fixture");
  EXPECT_EQ(flow.taken, 8u);
  ASSERT_EQ(flow.blocks.size(), 3u);
  EXPECT_EQ(flow.blocks[0].start, entry);
  EXPECT_EQ(flow.blocks[0].last, jz);
  EXPECT_EQ(flow.blocks[0].count, 5u);
  EXPECT_EQ(flow.blocks[1].start, jz + 2);
  EXPECT_EQ(flow.blocks[1].count, 2u);
  EXPECT_EQ(flow.blocks[2].start, skip);
  EXPECT_EQ(flow.blocks[2].count, 5u);
  auto find = [&](uint64_t from, uint64_t to) -> const FlowEdge* {
    for (const FlowEdge& edge : flow.edges) {
      if (edge.from == from && edge.to == to) return &edge;
    }
    return nullptr;
  };
  const FlowEdge* taken = find(jz, skip);
  const FlowEdge* into_add = find(jz, jz + 2);
  const FlowEdge* into_skip = find(jz + 2, skip);
  const FlowEdge* leaves = find(skip, 0x10);
  ASSERT_TRUE(taken && into_add && into_skip && leaves);
  EXPECT_EQ(taken->kind, FlowEdge::Kind::kTaken);
  EXPECT_EQ(into_add->kind, FlowEdge::Kind::kFallThrough);
  EXPECT_EQ(into_add->count, 2u);
  EXPECT_EQ(into_skip->count, 2u);
  EXPECT_EQ(leaves->kind, FlowEdge::Kind::kLeaves);
  EXPECT_EQ(flow.edges.size(), 4u);
  // BOLT's fall-throughs: from each block's last instruction to the next block.
  auto falls = fall_throughs(flows);
  ASSERT_EQ(falls.size(), 2u);
  EXPECT_EQ(falls[0].from, jz);
  EXPECT_EQ(falls[1].from, jz + 2);
  // The path runs through the entry block and then the ret block.
  ASSERT_EQ(flow.paths.size(), 1u);
  EXPECT_EQ(path_blocks(flow, flow.paths[0]), (std::vector<int>{0, 2}));
}

TEST(AutoFdoExport, RangesAddressesAndBranchesInCreateGcovsTextLayout) {
  ObjectBranches object;
  object.edges = {{0x401020, 0x401000, 7}, {0x401010, 0x401018, 2}};
  object.ranges = {{0x401000, 0x401010, 2}, {0x401000, 0x401020, 5}};
  EXPECT_EQ(autofdo_text(object),
            "2\n401000-401010:2\n401000-401020:5\n"
            "0\n"
            "2\n401020->401000:7\n401010->401018:2\n");
  EXPECT_EQ(autofdo_text(ObjectBranches{}), "0\n0\n0\n");
}

}  // namespace
}  // namespace whatif::analysis
