// C++ exceptions through functions `whatif run --counters` patched (-fpatchable-function-entry=5):
// outer() (selected) calls selected(i) (selected) ten times in a try; selected spins 1 ms of thread
// CPU time and calls thrower(i), which throws for even i; outer catches. main calls outer twice and
// also throws through selected from main's own try. Exit 0 when every exception was caught where
// expected: 10 caught in outer, 1 in main. relay(i) (selected) catches what selected(i) throws and
// rethrows it (`throw;`) to main, four times: 2 relayed.
#include <cstdio>
#include <ctime>
#include <stdexcept>

static long long thread_cpu_ns() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return now.tv_sec * 1000000000LL + now.tv_nsec;
}

static void spin_ns(long long ns) {
  long long end = thread_cpu_ns() + ns;
  while (thread_cpu_ns() < end) {
  }
}

__attribute__((noinline)) void thrower(int i) {
  if (i % 2 == 0) throw std::runtime_error("even");
}

__attribute__((noinline)) int selected(int i) {
  spin_ns(1000000);
  thrower(i);
  return i;
}

__attribute__((noinline)) int outer() {
  int caught = 0;
  for (int i = 0; i < 10; ++i) {
    try {
      selected(i);
    } catch (const std::runtime_error&) {
      ++caught;
    }
  }
  return caught;
}

__attribute__((noinline)) int relay(int i) {
  try {
    return selected(i);
  } catch (...) {
    throw;
  }
}

int main() {
  int caught = outer() + outer();
  int in_main = 0;
  try {
    selected(4);
  } catch (const std::exception&) {
    in_main = 1;
  }
  int relayed = 0;
  for (int i = 0; i < 4; ++i) {
    try {
      relay(i);
    } catch (const std::runtime_error&) {
      ++relayed;
    }
  }
  std::printf("caught %d in outer, %d in main, %d relayed\n", caught, in_main, relayed);
  return caught == 10 && in_main == 1 && relayed == 2 ? 0 : 1;
}
