// Live patching for `whatif run --counters` on a -fpatchable-function-entry=5 build: a hammer thread
// calls hot() without pause for the whole run while reloads select hot() and parent() and later
// drop them, so their entries are patched and unpatched under it.
// `fncounters_live DIR`: leaf x5, writes DIR/pid and waits for DIR/go1 (reload 1 selects hot and
// parent); prints hot's entry byte, calls hot x1000, leaf x5, parent x4 (each: 3 ms + leaf 2 ms),
// writes DIR/ready2 and waits for DIR/go2 (reload 2 drops them); prints the entry byte again, calls
// hot x500 and parent x3, stops the hammer and prints how many calls it made.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long thread_cpu_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return now.tv_sec * 1000000000LL + now.tv_nsec;
}

static void spin_ns(long long ns) {
  long long end = thread_cpu_ns() + ns;
  while (thread_cpu_ns() < end) {
  }
}

__attribute__((noipa)) int hot(int x) {
  __asm__ volatile("" : "+r"(x));
  return x * 3 + 1;
}

__attribute__((noipa)) void leaf(void) { spin_ns(2000000); }

__attribute__((noipa)) void parent(void) {
  spin_ns(3000000);
  leaf();
}

static atomic_int stop;
static atomic_long hammered;

static void* hammer(void* unused) {
  (void)unused;
  long calls = 0;
  int sink = 0;
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    sink += hot(sink);
    ++calls;
  }
  atomic_store(&hammered, calls + (sink == 42));
  return NULL;
}

static int publish(const char* dir, const char* name, const char* text) {
  char path[4096], final_path[4096];
  snprintf(path, sizeof(path), "%s/%s.tmp", dir, name);
  snprintf(final_path, sizeof(final_path), "%s/%s", dir, name);
  FILE* out = fopen(path, "w");
  if (out == NULL) return 1;
  fputs(text, out);
  fclose(out);
  return rename(path, final_path);
}

static int wait_for(const char* dir, const char* name) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  for (int waited = 0; access(path, F_OK) != 0; ++waited) {
    if (waited > 6000) return 1;  // 60 s
    struct timespec pause = {0, 10000000};
    nanosleep(&pause, NULL);
  }
  return 0;
}

/// The byte the entry's NOPs start with (after an endbr64 in -fcf-protection builds).
static unsigned entry_byte(const void* function) {
  const unsigned char* code = function;
  static const unsigned char endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
  return memcmp(code, endbr64, 4) == 0 ? code[4] : code[0];
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const char* dir = argv[1];
  pthread_t thread;
  pthread_create(&thread, NULL, hammer, NULL);
  for (int i = 0; i < 5; ++i) leaf();
  char pid[32];
  snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
  if (publish(dir, "pid", pid) != 0 || wait_for(dir, "go1") != 0) return 1;
  printf("selected: hot entry %02x parent entry %02x\n", entry_byte((const void*)hot), entry_byte((const void*)parent));
  int sink = 0;
  for (int i = 0; i < 1000; ++i) sink += hot(i);
  for (int i = 0; i < 5; ++i) leaf();
  for (int i = 0; i < 4; ++i) parent();
  if (publish(dir, "ready2", "ready\n") != 0 || wait_for(dir, "go2") != 0) return 1;
  printf("dropped: hot entry %02x parent entry %02x\n", entry_byte((const void*)hot), entry_byte((const void*)parent));
  for (int i = 0; i < 500; ++i) sink += hot(i);
  for (int i = 0; i < 3; ++i) parent();
  atomic_store(&stop, 1);
  pthread_join(thread, NULL);
  printf("hammer made %ld calls (%d)\n", atomic_load(&hammered), sink & 1);
  return 0;
}
