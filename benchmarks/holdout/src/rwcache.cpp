// rwcache: std::shared_mutex cache. 3 readers loop: lookup under the shared lock (A, 0.3 ms) + 0.3 ms
// unlocked; 1 writer: exclusive update (B, 0.5 ms) + 0.5 ms unlocked until the readers end. Progress =
// lookups. CPU-bound (4 threads, 2 CPUs); glibc's rwlock prefers readers (~260 updates a run). Expected
// at s=60%: A ~35% (0.6 -> 0.42 ms a lookup), B ~5% (one CPU idles while the writer holds the lock).
#include "common.h"
#include <atomic>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

static std::shared_mutex cache_mutex;
static std::map<int, uint64_t> cache;
static std::atomic<int> readers_left{0};

static void reader(int id, long lookups) {
  uint64_t sum = 0;
  for (long i = 0; i < lookups; i++) {
    {
      std::shared_lock<std::shared_mutex> lk(cache_mutex);
      auto it = cache.find((int)((i + id) % 64));
      if (it != cache.end()) sum += it->second;
      SPIN(ms_iters(0.3, scaleA)); // @line:A
    }
    COZ_PROGRESS_NAMED("item");
    SPIN(ms_iters(0.3, 1.0));  // unlocked work on the result
  }
  __asm__ volatile("" : : "r"(sum));
  readers_left.fetch_sub(1);
}

static void writer() {
  uint64_t v = 0;
  while (readers_left.load() > 0) {
    {
      std::unique_lock<std::shared_mutex> lk(cache_mutex);
      cache[(int)(v % 64)] = v;
      SPIN(ms_iters(0.5, scaleB)); // @line:B
    }
    v++;
    SPIN(ms_iters(0.5, 1.0));  // unlocked: prepare the next update
  }
  printf("writer_updates=%llu\n", (unsigned long long)v);
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const int nreaders = 3;
  long total = n_items > 0 ? n_items : 3000;
  long per_reader = (total + nreaders - 1) / nreaders;
  for (int k = 0; k < 64; k++) cache[k] = (uint64_t)k;
  readers_left.store(nreaders);
  uint64_t t0 = now_ns();
  std::thread w(writer);
  std::vector<std::thread> rs;
  for (int r = 0; r < nreaders; r++) rs.emplace_back(reader, r, per_reader);
  for (auto& t : rs) t.join();
  w.join();
  printf("lookups=%ld\n", per_reader * nreaders);
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
