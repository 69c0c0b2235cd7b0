// The bundled example `make demo` profiles: a small job pipeline. A producer fills a bounded queue;
// worker threads decode each job (the costly part), checksum it, and record the result under a
// shared lock. One progress point per finished job.
#include <pthread.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <condition_variable>
#include <thread>
#include <vector>

#include "whatif.h"

namespace {

struct Job {
  uint64_t seed;
};

std::mutex queue_mutex;
std::condition_variable queue_not_empty, queue_not_full;
std::deque<Job> queue;
bool producing = true;
constexpr std::size_t kQueueCapacity = 16;

std::mutex results_mutex;
uint64_t results_total = 0;

uint64_t decode(uint64_t seed) {
  uint64_t x = seed;
  for (int i = 0; i < 400000; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;  // decode loop
  return x;
}

uint64_t checksum(uint64_t value) {
  uint64_t sum = 0;
  for (int i = 0; i < 60000; ++i) sum += (value >> (i % 61)) ^ static_cast<uint64_t>(i);  // checksum loop
  return sum;
}

void record(uint64_t value) {
  std::lock_guard<std::mutex> lock(results_mutex);
  for (int i = 0; i < 20000; ++i) results_total += value % 7;  // bookkeeping under the lock
}

void worker() {
  while (true) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(queue_mutex);
      queue_not_empty.wait(lock, [] { return !queue.empty() || !producing; });
      if (queue.empty()) return;
      job = queue.front();
      queue.pop_front();
    }
    queue_not_full.notify_one();
    uint64_t decoded = decode(job.seed);
    record(checksum(decoded));
    COZ_PROGRESS_NAMED("job done");
  }
}

}  // namespace

int main(int argc, char** argv) {
  int jobs = argc > 1 ? std::atoi(argv[1]) : 6000;
  int workers = argc > 2 ? std::atoi(argv[2]) : 2;
  std::vector<std::thread> threads;
  for (int i = 0; i < workers; ++i) threads.emplace_back(worker);
  for (int i = 0; i < jobs; ++i) {
    std::unique_lock<std::mutex> lock(queue_mutex);
    queue_not_full.wait(lock, [] { return queue.size() < kQueueCapacity; });
    queue.push_back(Job{static_cast<uint64_t>(i) * 2654435761u});
    queue_not_empty.notify_one();
  }
  {
    std::lock_guard<std::mutex> lock(queue_mutex);
    producing = false;
  }
  queue_not_empty.notify_all();
  for (auto& thread : threads) thread.join();
  std::printf("processed %d jobs, total %llu\n", jobs, static_cast<unsigned long long>(results_total));
  return 0;
}
