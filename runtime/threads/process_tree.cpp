// The process tree's shared memory (see process_tree.h): slots claimed by forked children, their
// sample rings, and the progress visits they forward. The child's forwarder thread writes; the
// root's profiler thread reads. No part of it runs in signal context (the delay clock's does, in
// delays/).
#include "threads/process_tree.h"

#include <sched.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "os/os.h"

namespace whatif::threads {

void ProcessSlot::push(const os::RawSample& sample) {
  uint64_t head = head_.load(std::memory_order_relaxed);
  // Acquire pairs with drain's release of tail_: the entry is free to overwrite.
  if (head - tail_.load(std::memory_order_acquire) >= kRingSize) {
    lost_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  ForwardedSample& entry = ring_[head & (kRingSize - 1)];
  entry.ip = sample.ip;
  entry.weight = sample.weight;
  uint32_t length = sample.callchain_length < ForwardedSample::kMaxCallchain ? sample.callchain_length
                                                                             : ForwardedSample::kMaxCallchain;
  entry.callchain_length = length;
  std::memcpy(entry.callchain, sample.callchain, length * sizeof(uint64_t));
  head_.store(head + 1, std::memory_order_release);  // pairs with drain's acquire: the entry is complete
}

std::size_t ProcessSlot::drain(sampling::SampleVisitor visit, void* context) {
  uint64_t tail = tail_.load(std::memory_order_relaxed);
  uint64_t head = head_.load(std::memory_order_acquire);  // pairs with push's release
  os::RawSample sample;
  for (uint64_t i = tail; i != head; ++i) {
    const ForwardedSample& entry = ring_[i & (kRingSize - 1)];
    sample.ip = entry.ip;
    sample.weight = entry.weight;
    sample.callchain_length = entry.callchain_length;
    std::memcpy(sample.callchain, entry.callchain, entry.callchain_length * sizeof(uint64_t));
    sample.owner_scanned = false;
    sample.user = nullptr;
    visit(context, sample);
  }
  tail_.store(head, std::memory_order_release);  // pairs with push's acquire
  return static_cast<std::size_t>(head - tail);
}

void ProcessSlot::release() {
  pid_.store(0, std::memory_order_relaxed);
  lost_.store(0, std::memory_order_relaxed);
  own_ns_.store(0, std::memory_order_relaxed);
  life_ns_.store(0, std::memory_order_relaxed);
  state_.store(kFree, std::memory_order_release);  // pairs with claim's acquire CAS
}

ProcessTree* ProcessTree::create() {
  void* memory = os::map_shared_anonymous(sizeof(ProcessTree));
  if (memory == nullptr) return nullptr;
  return new (memory) ProcessTree;  // never destroyed: children may outlive the root's exit
}

ProcessSlot* ProcessTree::claim(pid_t pid) {
  if (!open()) return nullptr;
  forked_.store(true, std::memory_order_release);  // before any slot turns live (pairs with forked())
  for (ProcessSlot& slot : slots_) {
    int expected = ProcessSlot::kFree;
    // Acquire pairs with release(): the root finished with the slot's previous owner.
    if (!slot.state_.compare_exchange_strong(expected, ProcessSlot::kClaimed, std::memory_order_acquire)) continue;
    // The ring is empty (the root drained it up to head before releasing): start where it left off.
    slot.tail_.store(slot.head_.load(std::memory_order_relaxed), std::memory_order_relaxed);
    slot.pid_.store(pid, std::memory_order_relaxed);
    slot.state_.store(ProcessSlot::kLive, std::memory_order_release);  // pairs with state()
    return &slot;
  }
  refused_.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

void ProcessTree::note_timer_thread(pid_t tid) {
  uint32_t index = timer_threads_.fetch_add(1, std::memory_order_acq_rel);
  if (index < kTimerIds) timer_thread_ids_[index].store(tid, std::memory_order_release);
}

std::vector<pid_t> ProcessTree::timer_thread_ids() const {
  std::vector<pid_t> ids;
  uint32_t count = std::min(timer_threads(), kTimerIds);
  for (uint32_t i = 0; i < count; ++i) {
    if (pid_t tid = timer_thread_ids_[i].load(std::memory_order_acquire); tid != 0) ids.push_back(tid);
  }
  return ids;
}

void ProcessTree::add_visits(int type, const char* name, uint64_t delta) {
  uint32_t used = counters_used_.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < used; ++i) {
    TreeCounter& counter = counters_[i];
    if (counter.ready.load(std::memory_order_acquire) && counter.type == type &&
        std::strncmp(counter.name, name, sizeof(counter.name) - 1) == 0) {
      counter.count.fetch_add(delta, std::memory_order_relaxed);
      return;
    }
  }
  // A spin lock between processes: only forwarder threads register, briefly.
  while (counters_lock_.test_and_set(std::memory_order_acquire)) sched_yield();
  used = counters_used_.load(std::memory_order_relaxed);
  TreeCounter* found = nullptr;
  for (uint32_t i = 0; i < used && found == nullptr; ++i) {
    if (counters_[i].type == type && std::strncmp(counters_[i].name, name, sizeof(counters_[i].name) - 1) == 0) {
      found = &counters_[i];
    }
  }
  if (found == nullptr && used < kMaxCounters) {
    found = &counters_[used];
    found->type = type;
    std::strncpy(found->name, name, sizeof(found->name) - 1);
    found->ready.store(true, std::memory_order_release);  // pairs with the readers' acquire
    counters_used_.store(used + 1, std::memory_order_release);
  }
  counters_lock_.clear(std::memory_order_release);
  if (found != nullptr) found->count.fetch_add(delta, std::memory_order_relaxed);
}

std::vector<progress::PointReading> ProcessTree::read_points() const {
  std::vector<progress::PointReading> readings = progress::read_source_points();
  uint32_t used = counters_used_.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < used; ++i) {
    const TreeCounter& counter = counters_[i];
    if (!counter.ready.load(std::memory_order_acquire)) continue;
    uint64_t count = counter.count.load(std::memory_order_relaxed);
    bool latency = counter.type != static_cast<int>(progress::CounterType::kThroughput);
    progress::PointReading* reading = nullptr;
    for (progress::PointReading& candidate : readings) {
      if (candidate.latency == latency && candidate.name == counter.name) reading = &candidate;
    }
    if (reading == nullptr) {
      readings.push_back({counter.name, latency, 0, 0});
      reading = &readings.back();
    }
    if (counter.type == static_cast<int>(progress::CounterType::kEnd)) reading->departures += count;
    else reading->visits += count;
  }
  return readings;
}

}  // namespace whatif::threads
