/* Preloaded after libwhatif by a test (LD_PRELOAD=libwhatif.so:libitdetachprobe.so): stands between
   whatif and glibc's pthread_detach, and records whether whatif's sample signal (SIGRTMIN + 4) was
   blocked while the real call ran. Prints "detach-probe: calls=N blocked=M" at exit when it saw a
   call. Runs on the program's threads. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static int g_calls, g_blocked;

/* The calling thread's blocked set as the kernel holds it (a query through pthread_sigmask would go
   through whatif's shim first). */
static unsigned long long blocked_signals(void) {
  unsigned long long mask = 0;
  FILE* status = fopen("/proc/thread-self/status", "r");
  if (status == NULL) return 0;
  char line[256];
  while (fgets(line, sizeof line, status) != NULL) {
    if (strncmp(line, "SigBlk:", 7) == 0) sscanf(line + 7, "%llx", &mask);
  }
  fclose(status);
  return mask;
}

int pthread_detach(pthread_t thread) {
  static int (*real)(pthread_t);
  if (real == NULL) real = (int (*)(pthread_t))dlsym(RTLD_NEXT, "pthread_detach");
  int sample_signal = SIGRTMIN + 4;
  __atomic_add_fetch(&g_calls, 1, __ATOMIC_RELAXED);
  if (blocked_signals() & (1ULL << (sample_signal - 1))) __atomic_add_fetch(&g_blocked, 1, __ATOMIC_RELAXED);
  return real(thread);
}

__attribute__((destructor)) static void report(void) {
  if (g_calls > 0) fprintf(stderr, "detach-probe: calls=%d blocked=%d\n", g_calls, g_blocked);
}
