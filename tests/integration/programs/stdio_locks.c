/* Stream locks as natively: glibc's character calls (putc, getc, fputc, fgetc) take a FILE's lock
   only once the process has a second thread. Alone, the program marks two streams' locks as held by
   someone else and putc's and getc's through them: natively (and under whatif, whose own threads
   must not count) neither takes the lock, so neither waits; a call that took it would wait for ever
   (an alarm ends the program with status 3). Then a thread holds a third stream's lock (flockfile)
   for 0.2 s: main's putc on it must wait for the funlockfile. Prints "stdio locks ok" and exits 0
   when all held.
   `stdio_locks loop [rounds]` instead runs rounds of ~0.2 ms of putc to /dev/null on one line and
   ~0.2 ms of arithmetic on the next, alone: the putc line's time is the program's, not whatif's. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#include "itest.h"

/* glibc's _IO_lock_t (the FILE's _lock): a lock word, a recursion count and the owner. */
struct stream_lock {
  int lock;
  int count;
  void* owner;
};

static void on_alarm(int sig) {
  (void)sig;
  static const char message[] = "a stream call took the lock of a single-threaded program's stream\n";
  ssize_t ignored = write(2, message, sizeof message - 1);
  (void)ignored;
  _exit(3);
}

static void mark_held(FILE* stream, int held) {
  struct stream_lock* lock = (struct stream_lock*)stream->_lock;
  lock->lock = held;
  lock->count = held;
  lock->owner = held ? (void*)(uintptr_t)0x1000 : NULL;
}

static atomic_int g_holding, g_released;

static void* holder(void* arg) {
  FILE* stream = arg;
  flockfile(stream);
  atomic_store(&g_holding, 1);
  struct timespec pause = {0, 200 * 1000 * 1000};
  nanosleep(&pause, NULL);
  atomic_store(&g_released, 1);
  funlockfile(stream);
  return NULL;
}

static int putc_loop(long rounds) {
  FILE* sink = fopen("/dev/null", "w");
  ITEST_CHECK(sink != NULL, "fopen");
  uint64_t acc = 1;
  for (long r = 0; r < rounds; ++r) {
    for (int k = 0; k < 100000; ++k) putc('a' + k % 26, sink); /* @putc */
    WORK(acc, 200);                                              /* @work */
  }
  fclose(sink);
  printf("loop done %llu\n", (unsigned long long)(acc & 1));
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "loop") == 0) return putc_loop(itest_arg(argc, argv, 2, 2000));
  FILE* out = fopen("/dev/null", "w");
  FILE* in = fopen("/dev/zero", "r");
  ITEST_CHECK(out != NULL && in != NULL, "fopen");
  signal(SIGALRM, on_alarm);
  alarm(20);
  mark_held(out, 1);
  mark_held(in, 1);
  uint64_t acc = 0;
  for (int i = 0; i < 100000; ++i) {
    ITEST_CHECK(putc('a' + i % 26, out) == 'a' + i % 26, "putc");
    acc += (uint64_t)getc(in);
  }
  ITEST_CHECK(acc == 0, "getc from /dev/zero");
  mark_held(out, 0);
  mark_held(in, 0);
  alarm(0);
  ITEST_CHECK(fputs("line\n", out) >= 0 && fflush(out) == 0, "fputs/fflush");

  FILE* shared = fopen("/dev/null", "w");
  ITEST_CHECK(shared != NULL, "fopen shared");
  pthread_t thread;
  ITEST_CHECK(pthread_create(&thread, NULL, holder, shared) == 0, "pthread_create");
  while (!atomic_load(&g_holding)) sched_yield();
  ITEST_CHECK(putc('x', shared) == 'x', "putc shared");
  ITEST_CHECK(atomic_load(&g_released), "putc went past a lock another thread held");
  pthread_join(thread, NULL);
  fclose(shared);
  fclose(out);
  fclose(in);
  printf("stdio locks ok\n");
  return 0;
}
