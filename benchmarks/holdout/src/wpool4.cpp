// A pool of 4 std::threads on one std::mutex + std::condition_variable task queue (std::function
// tasks), 4 workers on 2 CPUs. Per batch the main thread submits 24 fine-grained tasks of 0.05 ms
// each (line A, ~67 us real), waits until the batch's pending counter reaches zero (a second
// condition_variable), then does 0.5 ms of serial work (line B); one progress visit per batch.
// Ideal: 24 x 0.05 = 1.2 ms of tasks on 2 CPUs (0.6 ms) + 0.5 ms serial = 1.1 ms a batch;
// s=60%: A 0.24 + 0.5 = 0.74 (~33%), B 0.6 + 0.2 = 0.8 (~27%). Hand-offs (a lock round trip and
// often a wake-up per task) are on neither line.
#include "common.h"
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

static const int kWorkers = 4;
static const int kTasksPerBatch = 24;

static std::mutex mu;
static std::condition_variable work_cv;  // workers wait here for tasks
static std::condition_variable done_cv;  // main waits here for the batch to finish
static std::deque<std::function<void()>> tasks;
static long pending = 0;  // tasks of the current batch not yet finished
static bool shutting_down = false;

static void worker_loop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lk(mu);
      work_cv.wait(lk, [] { return !tasks.empty() || shutting_down; });
      if (tasks.empty()) return;
      task = std::move(tasks.front());
      tasks.pop_front();
    }
    task();
    std::lock_guard<std::mutex> lk(mu);
    if (--pending == 0) done_cv.notify_one();
  }
}

static void task_work(long iters, uint64_t* sink) {
  SPIN(iters); // @line:A
  __atomic_add_fetch(sink, 1, __ATOMIC_RELAXED);
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long n = n_items > 0 ? n_items : 800;
  const long a_iters = ms_iters(0.05, scaleA);
  const long b_iters = ms_iters(0.5, scaleB);
  uint64_t tasks_run = 0;
  uint64_t t0 = now_ns();

  std::vector<std::thread> pool;
  for (int i = 0; i < kWorkers; i++) pool.emplace_back(worker_loop);

  for (long b = 0; b < n; b++) {
    {
      std::lock_guard<std::mutex> lk(mu);
      for (int t = 0; t < kTasksPerBatch; t++) tasks.emplace_back([a_iters, &tasks_run] { task_work(a_iters, &tasks_run); });
      pending = kTasksPerBatch;
    }
    work_cv.notify_all();
    {
      std::unique_lock<std::mutex> lk(mu);
      done_cv.wait(lk, [] { return pending == 0; });
    }
    SPIN(b_iters); // @line:B
    COZ_PROGRESS_NAMED("item");
  }

  {
    std::lock_guard<std::mutex> lk(mu);
    shutting_down = true;
  }
  work_cv.notify_all();
  for (auto& t : pool) t.join();
  if (tasks_run != (uint64_t)n * kTasksPerBatch) { fprintf(stderr, "lost tasks\n"); return 1; }
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
