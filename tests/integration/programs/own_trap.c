/* The program's own SIGTRAP, while the runtime's samplers may signal by SIGTRAP too. Mode
   `handler`: installs a SIGTRAP handler, works and reads /dev/zero (samples in user and kernel
   mode) and executes int3 every few ms; checks that its handler saw each int3 and nothing else,
   that sigaction reports its handler back, and that no read came back short. Mode `default`: works,
   then executes int3 with SIGTRAP's default action, which ends it by that signal. Mode `atexit`:
   works, then an exit handler resets SIGTRAP to its default action and computes 0.1 s more.
   Usage: own_trap handler|default|atexit [milliseconds=600]. */
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#include <whatif.h>

#include "itest.h"

static volatile sig_atomic_t g_traps, g_others;

static void on_trap(int sig, siginfo_t* info, void* context) {
  (void)sig;
  (void)context;
  if (info->si_code == SI_KERNEL || info->si_code == 1 /* TRAP_BRKPT */) ++g_traps;  /* int3 */
  else ++g_others;
}

/* Mode `atexit`: an exit handler puts SIGTRAP back to its default action, then computes. */
static void reset_then_work(void) {
  signal(SIGTRAP, SIG_DFL);
  uint64_t acc = 3, end = itest_now_ns() + 100000000ULL;
  while (itest_now_ns() < end) WORK(acc, 200); /* @trap-atexit-work */
  printf("exit handler done sink=%llu\n", (unsigned long long)(acc & 1));
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "handler";
  uint64_t deadline = itest_now_ns() + (uint64_t)itest_arg(argc, argv, 2, 600) * 1000000ULL;
  uint64_t acc = 1;
  if (strcmp(mode, "default") == 0) {
    while (itest_now_ns() < deadline) {
      WORK(acc, 500); /* @trap-work */
      COZ_PROGRESS_NAMED("work");
    }
    printf("trapping now sink=%llu\n", (unsigned long long)(acc & 1));
    fflush(stdout);
    __asm__ volatile("int3");
    printf("survived int3\n");
    return 0;
  }
  if (strcmp(mode, "atexit") == 0) {
    atexit(reset_then_work);
    while (itest_now_ns() < deadline) WORK(acc, 500); /* @trap-main-work */
    printf("main done sink=%llu\n", (unsigned long long)(acc & 1));
    exit(0); /* the exit() call, not main's return: the runtime finishes its profile before the handlers */
  }
  ITEST_CHECK(strcmp(mode, "handler") == 0, "unknown mode %s", mode);
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_sigaction = on_trap;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  ITEST_CHECK(sigaction(SIGTRAP, &action, NULL) == 0, "sigaction");
  struct sigaction back;
  ITEST_CHECK(sigaction(SIGTRAP, NULL, &back) == 0 && back.sa_sigaction == on_trap, "SIGTRAP handler not reported back");
  int zero = open("/dev/zero", O_RDONLY);
  ITEST_CHECK(zero >= 0, "/dev/zero");
  static char buffer[4 << 20];
  long expected = 0, reads = 0, short_reads = 0;
  while (itest_now_ns() < deadline) {
    WORK(acc, 2000); /* @trap-handler-work */
    ++reads;
    if (read(zero, buffer, sizeof(buffer)) != (ssize_t)sizeof(buffer)) ++short_reads; /* @trap-read */
    __asm__ volatile("int3");
    ++expected;
    COZ_PROGRESS_NAMED("work");
  }
  close(zero);
  ITEST_CHECK(g_traps == expected && g_others == 0, "the handler saw %d int3 of %ld, and %d other SIGTRAPs", (int)g_traps,
              expected, (int)g_others);
  ITEST_CHECK(short_reads == 0, "%ld of %ld reads came back short", short_reads, reads);
  printf("traps %d reads %ld sink=%llu\n", (int)g_traps, reads, (unsigned long long)(acc & 1));
  return 0;
}
