// Unit tests of the process tree's shared memory (runtime/threads/process_tree): what a forked child
// writes there (the delay clock, forwarded samples, progress visits) is what the root reads, slots
// are reused after the root frees them, and a full ring counts its losses.
#include "threads/process_tree.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

namespace whatif::threads {
namespace {

os::RawSample sample_at(uint64_t ip, uint32_t callchain_length = 0) {
  os::RawSample sample;
  sample.ip = ip;
  sample.weight = 2;
  sample.callchain_length = callchain_length;
  for (uint32_t i = 0; i < callchain_length; ++i) sample.callchain[i] = ip + 100 + i;
  return sample;
}

std::vector<os::RawSample> drain_all(ProcessSlot& slot) {
  std::vector<os::RawSample> out;
  slot.drain([](void* context, const os::RawSample& sample) { static_cast<std::vector<os::RawSample>*>(context)->push_back(sample); },
             &out);
  return out;
}

TEST(ProcessTree, WhatAForkedChildWritesTheParentReads) {
  ProcessTree* tree = ProcessTree::create();
  ASSERT_NE(tree, nullptr);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ProcessSlot* slot = tree->claim(getpid());
    if (slot == nullptr) _exit(1);
    slot->push(sample_at(0x1000, 3));
    slot->push(sample_at(0x2000, os::RawSample::kMaxCallchain));  // longer than a forwarded one
    tree->add_visits(static_cast<int>(progress::CounterType::kThroughput), "tree-unit-visits", 5);
    tree->add_visits(static_cast<int>(progress::CounterType::kThroughput), "tree-unit-visits", 2);
    tree->delays().raise_to(12345);
    slot->mark_exited();
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;

  EXPECT_EQ(tree->delays().global_ns.load(), 12345u) << "the child's delay clock is not the parent's";
  ProcessSlot* exited = nullptr;
  for (std::size_t i = 0; i < ProcessTree::kMaxProcesses; ++i) {
    if (tree->slot(i).state() == ProcessSlot::kExited) exited = &tree->slot(i);
  }
  ASSERT_NE(exited, nullptr);
  EXPECT_EQ(exited->pid(), child);
  std::vector<os::RawSample> samples = drain_all(*exited);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].ip, 0x1000u);
  EXPECT_EQ(samples[0].weight, 2u);
  ASSERT_EQ(samples[0].callchain_length, 3u);
  EXPECT_EQ(samples[0].callchain[2], 0x1000u + 102);
  EXPECT_FALSE(samples[0].owner_scanned);
  EXPECT_EQ(samples[1].callchain_length, ForwardedSample::kMaxCallchain);
  EXPECT_TRUE(drain_all(*exited).empty()) << "a sample was drained twice";

  bool found = false;
  for (const progress::PointReading& reading : tree->read_points()) {
    if (reading.name == "tree-unit-visits") {
      found = true;
      EXPECT_FALSE(reading.latency);
      EXPECT_EQ(reading.visits, 7u);
    }
  }
  EXPECT_TRUE(found) << "the child's progress visits are missing";
  exited->release();
  EXPECT_EQ(exited->state(), ProcessSlot::kFree);
}

TEST(ProcessTree, SlotsAreReusedAndAFullRingCountsItsLosses) {
  ProcessTree* tree = ProcessTree::create();
  ASSERT_NE(tree, nullptr);
  std::vector<ProcessSlot*> claimed;
  while (ProcessSlot* slot = tree->claim(1000 + static_cast<pid_t>(claimed.size()))) claimed.push_back(slot);
  ASSERT_EQ(claimed.size(), ProcessTree::kMaxProcesses) << "a full tree must refuse, not overwrite";
  EXPECT_EQ(tree->refused(), 1u) << "the root cannot warn about a child it does not know was refused";
  ProcessSlot& slot = *claimed.front();
  for (uint64_t i = 0; i < ProcessSlot::kRingSize + 3; ++i) slot.push(sample_at(i));
  EXPECT_EQ(slot.lost(), 3u);
  EXPECT_EQ(drain_all(slot).size(), ProcessSlot::kRingSize);
  slot.push(sample_at(7));
  slot.mark_exited();
  EXPECT_EQ(drain_all(slot).size(), 1u);
  slot.release();
  ProcessSlot* again = tree->claim(4242);
  ASSERT_EQ(again, &slot);
  EXPECT_EQ(again->pid(), 4242);
  EXPECT_EQ(again->lost(), 0u);
  EXPECT_TRUE(drain_all(*again).empty()) << "a reused slot handed out its previous owner's samples";
  again->release();
  tree->close();
  EXPECT_EQ(tree->claim(4243), nullptr) << "a closed tree (the root finished) must not take children";
}

TEST(ProcessTree, LatencyVisitsOfChildrenJoinTheirPoint) {
  ProcessTree* tree = ProcessTree::create();
  ASSERT_NE(tree, nullptr);
  tree->add_visits(static_cast<int>(progress::CounterType::kBegin), "tree-unit-latency", 4);
  tree->add_visits(static_cast<int>(progress::CounterType::kEnd), "tree-unit-latency", 3);
  int matches = 0;
  for (const progress::PointReading& reading : tree->read_points()) {
    if (reading.name != "tree-unit-latency") continue;
    ++matches;
    EXPECT_TRUE(reading.latency);
    EXPECT_EQ(reading.visits, 4u);
    EXPECT_EQ(reading.departures, 3u);
  }
  EXPECT_EQ(matches, 1);
}

}  // namespace
}  // namespace whatif::threads
