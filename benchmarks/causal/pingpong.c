/* Known-answer workload: blocking I/O on a serial path. The main thread (client) per item reads
   `c` chunks of 64 KiB from a file (line C: pread from the page cache, time spent in the kernel),
   runs line A (pointer chase), writes a request into a pipe and blocks reading the reply pipe. A
   server thread blocks in read(2) on the request pipe, runs line B (floating point) and writes the
   reply. Nothing overlaps: period = t_C + t_A + t_B + two pipe wake-ups, and speeding any line X
   by s gains s * t_X / period. Unlike `blockio`, the blocked thread here is waiting for the line
   being sped up, so its wait must shrink with the virtual speedup (blocking credit), and the
   selected line B runs on a thread other than the one visiting the progress point. */
#include <pthread.h>
#include <unistd.h>

#include "workload.h"

#define CHUNK (64u * 1024u)

static double g_b;
static long g_items;
static int g_req[2], g_rep[2];

static int read_full(int fd, void* buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t k = read(fd, (char*)buf + got, n - got);
    if (k <= 0) return -1;
    got += (size_t)k;
  }
  return 0;
}

static void* server(void* arg) {
  double x = (double)(uintptr_t)arg;
  for (long i = 0; i < g_items; ++i) {
    uint64_t msg;
    if (read_full(g_req[0], &msg, sizeof msg) != 0) break;
    FLOPS(x, g_b); /* @line:B */
    msg += (uint64_t)x;
    if (write(g_rep[1], &msg, sizeof msg) != (ssize_t)sizeof msg) break;
  }
  return NULL;
}

int main(int argc, char** argv) {
  const double a = wl_arg(argc, argv, "a", 300);
  g_b = wl_arg(argc, argv, "b", 350);
  const double c = wl_arg(argc, argv, "c", 24);
  g_items = (long)wl_arg(argc, argv, "items", 900);
  wl_ring_init();
  char path[] = "/tmp/wl_pingpong_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) {
    perror("mkstemp");
    return 1;
  }
  unlink(path);
  unsigned char* buf = (unsigned char*)malloc(CHUNK);
  if (!buf) return 3;
  memset(buf, 5, CHUNK);
  if (write(fd, buf, CHUNK) != (ssize_t)CHUNK || pipe(g_req) != 0 || pipe(g_rep) != 0) {
    perror("setup");
    return 1;
  }
  uint64_t msg = 1, sink = 0;
  uint32_t idx = 0;
  const uint64_t t0 = wl_now_ns();
  pthread_t ts;
  pthread_create(&ts, NULL, server, (void*)(uintptr_t)2);
  for (long i = 0; i < g_items; ++i) {
    LIBCALLS(c, if (pread(fd, buf, CHUNK, 0) < 0) abort(), if (pread(fd, buf, (size_t)(_l_frac * CHUNK), 0) < 0) abort()); /* @line:C */
    WALK(idx, a); /* @line:A */
    msg += idx + buf[i % CHUNK];
    if (write(g_req[1], &msg, sizeof msg) != (ssize_t)sizeof msg || read_full(g_rep[0], &msg, sizeof msg) != 0) {
      perror("pipe");
      return 1;
    }
    COZ_PROGRESS_NAMED("item");
    ++sink;
  }
  pthread_join(ts, NULL);
  wl_report(wl_now_ns() - t0, (uint64_t)g_items, 0, msg + sink);
  close(fd);
  return 0;
}
