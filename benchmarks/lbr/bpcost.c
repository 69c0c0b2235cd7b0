/* Breakpoint cost on this machine (the Break Dancing paper's Fig. 6): the CPU time of moving a
   perf execution breakpoint (PERF_EVENT_IOC_MODIFY_ATTRIBUTES, "set") and of moving it and taking
   its SIGTRAP with an empty handler ("set + trigger"), per thread, with 1..N threads at once.
   Usage: bpcost ITERATIONS MAX_THREADS. Prints microseconds per operation. */
#define _GNU_SOURCE
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long g_iterations;
static void on_trap(int sig, siginfo_t* info, void* context) { (void)sig, (void)info, (void)context; }
__attribute__((noinline)) static int target(int x) { __asm__ volatile(""); return x + 1; }
__attribute__((noinline)) static int elsewhere(int x) { __asm__ volatile(""); return x - 1; }

static double thread_cpu_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

struct result { double set_us, total_us; };

static void* worker(void* out) {
  struct perf_event_attr attr;
  memset(&attr, 0, sizeof(attr));
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_BREAKPOINT;
  attr.bp_type = HW_BREAKPOINT_X;
  attr.bp_addr = (unsigned long)elsewhere;
  attr.bp_len = sizeof(long);
  attr.sample_period = 1;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.remove_on_exec = 1;
  attr.sigtrap = 1;
  int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) { perror("perf_event_open"); exit(1); }
  volatile int sink = 0;
  attr.disabled = 0;
  double start = thread_cpu_us();
  for (long i = 0; i < g_iterations; ++i) {  // set only: the breakpoint sits where nothing runs
    attr.bp_addr = (unsigned long)((i & 1) ? elsewhere : (void*)on_trap);
    ioctl(fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &attr);
  }
  double set = thread_cpu_us() - start;
  start = thread_cpu_us();
  for (long i = 0; i < g_iterations; ++i) {  // set + trigger
    attr.bp_addr = (unsigned long)target;
    ioctl(fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &attr);
    sink += target((int)i);
    attr.bp_addr = (unsigned long)elsewhere;
    ioctl(fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &attr);
  }
  double total = thread_cpu_us() - start;
  close(fd);
  struct result* r = out;
  r->set_us = set / g_iterations;
  r->total_us = (total - set) / g_iterations;  // one of the two moves per iteration is the "set" above
  return NULL;
}

int main(int argc, char** argv) {
  g_iterations = argc > 1 ? atol(argv[1]) : 20000;
  int max_threads = argc > 2 ? atoi(argv[2]) : 4;
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_sigaction = on_trap;
  action.sa_flags = SA_SIGINFO;
  sigaction(SIGTRAP, &action, NULL);
  printf("threads  set_us  set+trigger_us\n");
  for (int threads = 1; threads <= max_threads; threads *= 2) {
    pthread_t ids[64];
    struct result results[64];
    for (int i = 0; i < threads; ++i) pthread_create(&ids[i], NULL, worker, &results[i]);
    double set = 0, total = 0;
    for (int i = 0; i < threads; ++i) {
      pthread_join(ids[i], NULL);
      set += results[i].set_us;
      total += results[i].total_us;
    }
    printf("%7d  %6.2f  %14.2f\n", threads, set / threads, total / threads);
  }
  return 0;
}
