/* Creates threads that return at once and detaches each right after pthread_create(), the pattern
   of glibc's detach-after-exit race, while main does the counted work.
   Usage: detach [threads=200]. Prints the count. */
#include <pthread.h>
#include <whatif.h>

#include "itest.h"

static void* quick(void* arg) { return arg; }

int main(int argc, char** argv) {
  long count = itest_arg(argc, argv, 1, 200);
  uint64_t acc = 1;
  for (long i = 0; i < count; ++i) {
    pthread_t thread;
    ITEST_CHECK(pthread_create(&thread, NULL, quick, NULL) == 0, "pthread_create");
    ITEST_CHECK(pthread_detach(thread) == 0, "pthread_detach");
    WORK(acc, 200); /* @detach-work */
    COZ_PROGRESS;
  }
  printf("detached=%ld sink=%d\n", count, (int)(acc & 1));
  return 0;
}
