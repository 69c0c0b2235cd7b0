// Unit tests of a forked child's forwarder (runtime/experiment/child_forwarder): what it adds to the
// process tree's CPU demand, from which the root decides whether the program oversubscribes its CPUs.
// Runs on the test's thread, standing in for the child's exiting thread.
#include "experiment/child_forwarder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "libc/real.h"
#include "os/os.h"
#include "progress/progress_points.h"

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

namespace whatif::experiment {
namespace {

TEST(ChildForwarder, TheFlushCountsThreadsNeverReadAndThoseThatExited) {
  threads::ProcessTree* tree = threads::ProcessTree::create();
  ASSERT_NE(tree, nullptr);
  threads::ProcessSlot* slot = tree->claim(getpid());
  ASSERT_NE(slot, nullptr);

  // A live thread the forwarder never read (a child that lives less than two ticks), with CPU time.
  const uint64_t start = os::thread_cpu_ns();
  volatile uint64_t sink = 0;
  while (os::thread_cpu_ns() - start < 20000000) sink = sink + 1;
  auto* live = new threads::ThreadState;
  live->tid = os::gettid();
  // A thread that exited after reading its own schedstat, never read by the forwarder.
  auto* exited = new threads::ThreadState;
  exited->tid = live->tid + 1000000;
  exited->exit_cpu_ns = 7000000;
  exited->exit_run_ns = 7000000;
  exited->exit_wait_ns = 3000000;
  exited->exit_known = true;
  exited->exit_read = true;
  exited->retired.store(true);
  threads::ThreadRegistry registry;
  registry.add(live);
  registry.add(exited);

  ChildForwarder forwarder(*tree, *slot, registry, /*count_demand=*/true, /*scale_by_waits=*/true);
  forwarder.stop_and_flush();  // frees `exited`
  EXPECT_GE(tree->children_run_ns(), 20000000u + 7000000u)
      << "the exiting child's threads are missing from the tree's demand for CPUs";
  EXPECT_GE(tree->children_wait_ns(), 3000000u);
  delete live;
}

TEST(ChildForwarder, TheExitFlushTakesOverFromARunningForwarderWithoutLosingVisits) {
  // The exiting thread no longer joins the forwarder thread: it takes the draining over, whether the
  // thread sleeps or is in the middle of a tick. Every visit counted before the flush reaches the
  // tree, once, at every handover point.
  real::resolve();  // the forwarder's thread is a runtime thread, created with the original pthread_create
  threads::ProcessTree* tree = threads::ProcessTree::create();
  ASSERT_NE(tree, nullptr);
  progress::CozCounter* counter =
      progress::counters().get(static_cast<int>(progress::CounterType::kThroughput), "forwarder-handover");
  ASSERT_NE(counter, nullptr);
  auto tree_visits = [&] {
    for (const progress::PointReading& point : tree->read_points())
      if (point.name == "forwarder-handover") return point.visits;
    return uint64_t{0};
  };
  // As in a child, a forwarder outlives its thread (the runtime never frees it): the thread may wake
  // once more after the flush, and finds the work taken.
  static std::vector<std::unique_ptr<ChildForwarder>> forwarders;
  static std::vector<std::unique_ptr<threads::ThreadRegistry>> registries;
  uint64_t counted = 0;
  for (int round = 0; round < 40; ++round) {
    threads::ProcessSlot* slot = tree->claim(getpid());
    ASSERT_NE(slot, nullptr);
    registries.push_back(std::make_unique<threads::ThreadRegistry>());
    forwarders.push_back(std::make_unique<ChildForwarder>(*tree, *slot, *registries.back(), /*count_demand=*/false, /*scale_by_waits=*/false));
    ChildForwarder& forwarder = *forwarders.back();
    ASSERT_EQ(forwarder.start(), 0);
    __atomic_add_fetch(&counter->count, 3, __ATOMIC_RELAXED);
    counted += 3;
    // From no tick at all to several: the flush lands before, during and between ticks.
    std::this_thread::sleep_for(std::chrono::microseconds(round * 97));
    __atomic_add_fetch(&counter->count, 2, __ATOMIC_RELAXED);
    counted += 2;
    forwarder.stop_and_flush();
    EXPECT_EQ(slot->state(), threads::ProcessSlot::kExited);
    slot->release();
    // The forwarder thread may run once more after the flush: it must forward nothing.
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    // The tree's reading adds the forwarded visits to this process's own counter.
    const uint64_t own = __atomic_load_n(&counter->count, __ATOMIC_RELAXED);
    ASSERT_EQ(tree_visits() - own, counted) << "round " << round << ": visits lost or forwarded twice";
  }
}

}  // namespace
}  // namespace whatif::experiment
