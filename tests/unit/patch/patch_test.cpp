// Unit tests of the -p code patcher (runtime/patch): plans on fixture functions (what is displaced,
// what is refused and why) and patches installed in this process, whose functions must then count
// every call and still compute what they computed before.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include <link.h>

#include "patch/patcher.h"
#include "patch/plan.h"
#include "symbols/function_bounds.h"

extern "C" {
long patch_add(long a, long b);
int patch_less(long a, long b);
long patch_red_zone(long a);
long patch_rip(long a);
long patch_call();
long patch_branch(long a);
extern const char patch_add_end[], patch_less_site[], patch_less_end[], patch_red_zone_site[], patch_red_zone_end[],
    patch_rip_end[], patch_call_end[], patch_branch_end[];
extern const char patch_loop[], patch_loop_end[], patch_short[], patch_short_end[], patch_tiny[], patch_tiny_end[],
    patch_indirect_call[], patch_indirect_call_end[], patch_switch[], patch_switch_end[], patch_loopinsn[],
    patch_loopinsn_end[], patch_hot[], patch_hot_end[], patch_hot_cold[], patch_hot_cold_end[];
}

namespace whatif::patch {
namespace {

uint64_t address(const void* p) { return reinterpret_cast<uint64_t>(p); }

FunctionCode code(const void* begin, const void* end) {
  return {static_cast<const uint8_t*>(begin), address(begin), static_cast<std::size_t>(address(end) - address(begin))};
}

Result<Plan> plan(const void* begin, const void* end, const void* site) {
  return plan_patch(code(begin, end), address(site), address(begin) + 0x100000, address(begin) + 0x101000);
}

TEST(PatchPlan, DisplacesWholeInstructionsCoveringTheJump) {
  Result<Plan> p = plan(reinterpret_cast<const void*>(&patch_add), patch_add_end, reinterpret_cast<const void*>(&patch_add));
  ASSERT_TRUE(p) << p.error();
  EXPECT_EQ(p->displaced, 8u);  // lea (4) + add (4): the jmp needs 5
  EXPECT_EQ(p->displaced_instructions, 2u);
  EXPECT_EQ(p->jump[0], 0xe9);
}

TEST(PatchPlan, SavesTheFlagsOnlyWhereTheCodeAfterTheSiteMayReadThem) {
  // patch_add: lea, then add, which writes every flag the count changes: nothing to save.
  Result<Plan> add = plan(reinterpret_cast<const void*>(&patch_add), patch_add_end, reinterpret_cast<const void*>(&patch_add));
  ASSERT_TRUE(add) << add.error();
  EXPECT_FALSE(add->saves_flags);
  ASSERT_GE(add->trampoline.size(), 4u);
  EXPECT_EQ(add->trampoline[0], 0xf0) << "the trampoline starts with the locked increment";
  // patch_less: the setl after the site reads the flags the cmp before it set.
  Result<Plan> less = plan(reinterpret_cast<const void*>(&patch_less), patch_less_end, patch_less_site);
  ASSERT_TRUE(less) << less.error();
  EXPECT_TRUE(less->saves_flags);
  ASSERT_GE(less->trampoline.size(), 6u);
  EXPECT_EQ(less->trampoline[5], 0x9c) << "pushfq after stepping over the red zone";
}

TEST(PatchPlan, RefusesABranchTargetInsideTheDisplacedBytes) {
  Result<Plan> p = plan(patch_loop, patch_loop_end, patch_loop);
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().find("lands inside"), std::string::npos) << p.error();
}

TEST(PatchPlan, RefusesACallWhoseReturnLandsInsideTheDisplacedBytes) {
  Result<Plan> p = plan(patch_indirect_call, patch_indirect_call_end, patch_indirect_call);
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().find("lands inside"), std::string::npos) << p.error();
}

TEST(PatchPlan, RefusesToRunPastTheEndOfABlock) {
  Result<Plan> p = plan(patch_short, patch_short_end, patch_short);
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().find("basic block"), std::string::npos) << p.error();
}

TEST(PatchPlan, RefusesWhenTheFunctionIsTooShort) {
  Result<Plan> p = plan(patch_tiny, patch_tiny_end, patch_tiny);
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().find("fewer than 5 bytes"), std::string::npos) << p.error();
}

TEST(PatchPlan, RefusesSeveralInstructionsInAFunctionWithComputedJumps) {
  Result<Plan> p = plan(patch_switch, patch_switch_end, patch_switch);
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().find("computed jumps"), std::string::npos) << p.error();
}

TEST(PatchPlan, RefusesAnInstructionThatCannotMove) {
  Result<Plan> p = plan(patch_loopinsn, patch_loopinsn_end, patch_loopinsn);
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().find("cannot be moved"), std::string::npos) << p.error();
}

TEST(PatchPlan, RefusesABranchBackFromTheFunctionsColdPart) {
  EXPECT_TRUE(plan(patch_hot, patch_hot_end, patch_hot)) << "without its cold part the site looks safe";
  Result<Plan> p = plan_patch(code(patch_hot, patch_hot_end), address(patch_hot), address(patch_hot) + 0x100000,
                              address(patch_hot) + 0x101000, {code(patch_hot_cold, patch_hot_cold_end)});
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().find("lands inside"), std::string::npos) << p.error();
}

uint64_t main_bias() {
  uint64_t bias = 0;
  dl_iterate_phdr([](dl_phdr_info* info, size_t, void* out) {
    *static_cast<uint64_t*>(out) = info->dlpi_addr;
    return 1;  // the first entry is the main program
  }, &bias);
  return bias;
}

TEST(PatchPlan, FunctionBoundsFindTheBodyAndItsColdPart) {
  uint64_t bias = main_bias();
  auto extent = symbols::function_bounds("/proc/self/exe", address(patch_hot) + 1 - bias);
  ASSERT_TRUE(extent) << extent.error();
  EXPECT_EQ(extent->body.begin + bias, address(patch_hot));
  EXPECT_EQ(extent->body.end + bias, address(patch_hot_end));
  ASSERT_EQ(extent->fragments.size(), 1u);
  EXPECT_EQ(extent->fragments[0].begin + bias, address(patch_hot_cold));
}

TEST(PatchPlan, RefusesASiteInsideAnInstruction) {
  Result<Plan> p = plan(reinterpret_cast<const void*>(&patch_add), patch_add_end,
                        reinterpret_cast<const char*>(&patch_add) + 1);
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().find("instruction boundary"), std::string::npos) << p.error();
}

// Installed patches: the function runs through the trampoline, counts, and computes the same.
const uint64_t* install_at(const void* begin, const void* end, const void* site) {
  Result<Installed> installed = install(address(site), address(begin), address(end));
  EXPECT_TRUE(installed) << installed.error();
  return installed ? installed->counter : nullptr;
}

TEST(PatchInstall, CountsEveryCallOfAFunctionWithTwoDisplacedInstructions) {
  const uint64_t* counter = install_at(reinterpret_cast<const void*>(&patch_add), patch_add_end,
                                       reinterpret_cast<const void*>(&patch_add));
  ASSERT_NE(counter, nullptr);
  long sum = 0;
  for (long i = 0; i < 1000; ++i) sum += patch_add(i, 2);
  EXPECT_EQ(sum, 999 * 1000 / 2 + 3 * 1000);
  EXPECT_EQ(*counter, 1000u);
}

TEST(PatchInstall, KeepsTheFlagsSetBeforeTheSite) {
  const uint64_t* counter = install_at(reinterpret_cast<const void*>(&patch_less), patch_less_end, patch_less_site);
  ASSERT_NE(counter, nullptr);
  EXPECT_EQ(patch_less(1, 2), 1);
  EXPECT_EQ(patch_less(2, 1), 0);
  EXPECT_EQ(patch_less(-5, 3), 1);
  EXPECT_EQ(*counter, 3u);
}

TEST(PatchInstall, LeavesTheRedZoneIntact) {
  const uint64_t* counter = install_at(reinterpret_cast<const void*>(&patch_red_zone), patch_red_zone_end, patch_red_zone_site);
  ASSERT_NE(counter, nullptr);
  EXPECT_EQ(patch_red_zone(35), 42);
  EXPECT_EQ(*counter, 1u);
}

TEST(PatchInstall, MovesARipRelativeLoad) {
  const uint64_t* counter = install_at(reinterpret_cast<const void*>(&patch_rip), patch_rip_end,
                                       reinterpret_cast<const void*>(&patch_rip));
  ASSERT_NE(counter, nullptr);
  EXPECT_EQ(patch_rip(2), 42);
  EXPECT_EQ(*counter, 1u);
}

TEST(PatchInstall, MovesADirectCallThatReturnsToTheOriginalCode) {
  const uint64_t* counter = install_at(reinterpret_cast<const void*>(&patch_call), patch_call_end,
                                       reinterpret_cast<const void*>(&patch_call));
  ASSERT_NE(counter, nullptr);
  EXPECT_EQ(patch_call(), 42);
  EXPECT_EQ(patch_call(), 42);
  EXPECT_EQ(*counter, 2u);
}

TEST(PatchInstall, MovesAShortConditionalJump) {
  const uint64_t* counter = install_at(reinterpret_cast<const void*>(&patch_branch), patch_branch_end,
                                       reinterpret_cast<const void*>(&patch_branch));
  ASSERT_NE(counter, nullptr);
  EXPECT_EQ(patch_branch(0), 2);
  EXPECT_EQ(patch_branch(5), 1);
  EXPECT_EQ(*counter, 2u);
}

}  // namespace
}  // namespace whatif::patch
