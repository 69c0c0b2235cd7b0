// Unit tests of a forked child's forwarder (runtime/experiment/child_forwarder): what it adds to the
// process tree's CPU demand, from which the root decides whether the program oversubscribes its CPUs.
// Runs on the test's thread, standing in for the child's exiting thread.
#include "experiment/child_forwarder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "os/os.h"

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

  ChildForwarder forwarder(*tree, *slot, registry, /*scale_by_waits=*/true);
  forwarder.stop_and_flush();  // frees `exited`
  EXPECT_GE(tree->children_run_ns(), 20000000u + 7000000u)
      << "the exiting child's threads are missing from the tree's demand for CPUs";
  EXPECT_GE(tree->children_wait_ns(), 3000000u);
  delete live;
}

}  // namespace
}  // namespace whatif::experiment
