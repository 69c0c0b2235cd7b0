// pthread_exit from a function `whatif run --counters` patched (-fpatchable-function-entry=5): the
// thread's cleanup handler, pushed by the thread body above the patched quit(), must still run.
#include <pthread.h>
#include <stdio.h>

__attribute__((noipa)) void quit(void) { pthread_exit(NULL); }

static void cleanup(void* unused) {
  (void)unused;
  printf("cleanup ran\n");
}

static void* body(void* unused) {
  pthread_cleanup_push(cleanup, NULL);
  quit();
  pthread_cleanup_pop(0);
  return unused;
}

int main(void) {
  pthread_t thread;
  pthread_create(&thread, NULL, body, NULL);
  pthread_join(thread, NULL);
  printf("joined\n");
  return 0;
}
