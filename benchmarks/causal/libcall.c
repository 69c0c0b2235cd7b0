/* Known-answer workload: a line whose time is spent in library calls. One thread; per round line A
   calls memset on an L2-sized buffer `a` times, line B memcpy's between two such buffers `b` times,
   and line C is a plain integer loop. The work of A and B is the number of calls (a fractional part
   is one call on that fraction of the buffer), so scaling the parameter by 1 - s is optimising the
   line by s. No waiting: speeding line X by s gains s * t_X / round. The samples for A and B land in
   libc (no line of ours): a causal profiler must charge them to the calling line through the call
   stack, and libc's memset/memcpy are leaves without a frame of their own, so a frame-pointer walk
   skips the caller's return address (it sits at the stack pointer, not above a saved frame). */
#include "workload.h"

#define BUF_BYTES (256u * 1024u) /* half this machine's 512 KiB L2 */

static unsigned char* g_dst;
static unsigned char* g_src;

int main(int argc, char** argv) {
  const double a = wl_arg(argc, argv, "a", 136);
  const double b = wl_arg(argc, argv, "b", 20);
  const double c = wl_arg(argc, argv, "c", 225);
  const long rounds = (long)wl_arg(argc, argv, "rounds", 1000);
  /* A runtime size keeps GCC from expanding the calls inline (it does for small constant sizes). */
  volatile size_t size_v = BUF_BYTES;
  const size_t size = size_v;
  g_dst = (unsigned char*)aligned_alloc(64, size);
  g_src = (unsigned char*)aligned_alloc(64, size);
  if (!g_dst || !g_src) return 3;
  memset(g_src, 7, size);
  uint64_t acc = 1, progress = 0, sink = 0;
  const uint64_t t0 = wl_now_ns();
  for (long r = 0; r < rounds; ++r) {
    LIBCALLS(a, memset(g_dst, (int)r, size), memset(g_dst, (int)r, (size_t)(_l_frac * (double)size))); /* @line:A */
    LIBCALLS(b, memcpy(g_dst, g_src, size), memcpy(g_dst, g_src, (size_t)(_l_frac * (double)size))); /* @line:B */
    WORK(acc, c); /* @line:C */
    sink += g_dst[(size_t)r % size];
    COZ_PROGRESS_NAMED("item");
    ++progress;
  }
  wl_report(wl_now_ns() - t0, progress, 0, acc + sink);
  return 0;
}
