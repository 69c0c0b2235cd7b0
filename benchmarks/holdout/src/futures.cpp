// Per round the main thread launches 3 std::async(std::launch::async, ...) tasks of unequal size,
// 0.5 / 0.8 / 1.1 ms (line A, in the task function), computes its own 0.5 ms part (line B), then
// .get()s the 3 futures; one progress visit per round. A fresh thread per task (libstdc++'s
// launch::async), so 4 threads on 2 CPUs each round.
// Ideal (work-conserving): 2.9 ms of work on 2 CPUs, 1.45 ms a round; s=60%: A 1.46 / 2 = 0.73
// (~50%), B 2.6 / 2 = 1.3 (~10%). Fair sharing (each of 4 runnable threads half a CPU): 1.6 ms,
// A 0.76 (~52%), B 1.45 (~9%). Thread creation and exit (~0.1 ms a round) are on neither line.
#include "common.h"
#include <future>
#include <vector>

static uint64_t task(long iters, uint64_t id) {
  SPIN(iters); // @line:A
  return id + 1;
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long n = n_items > 0 ? n_items : 450;
  const double task_ms[3] = {0.5, 0.8, 1.1};
  long a_iters[3];
  for (int t = 0; t < 3; t++) a_iters[t] = ms_iters(task_ms[t], scaleA);
  const long b_iters = ms_iters(0.5, scaleB);
  uint64_t check = 0;
  uint64_t t0 = now_ns();

  for (long r = 0; r < n; r++) {
    std::vector<std::future<uint64_t>> fs;
    fs.reserve(3);
    for (int t = 0; t < 3; t++) fs.push_back(std::async(std::launch::async, task, a_iters[t], (uint64_t)t));
    SPIN(b_iters); // @line:B
    for (auto& f : fs) check += f.get();
    COZ_PROGRESS_NAMED("item");
  }

  if (check != (uint64_t)n * 6) { fprintf(stderr, "bad results\n"); return 1; }
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
