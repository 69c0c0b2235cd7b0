/* Known control flow for the software branch tracer (--lbr): a hand-written loop whose branches
   are taken in known ratios, run in one of several modes that exercise the tracer's limits.
   Usage: lbr_loop MODE MILLISECONDS
     loop    the loop on the main thread
     threads short-lived threads running the loop (threads exit mid-burst)
     trap    the program's own SIGTRAP handler counts int3 traps (it must be chained to)
     signal  a profiling-timer handler runs the loop too (breakpoints hit from another context)
     rseq    the loop lies inside an rseq critical section (__rseq_cs): never traced
     chain   chain_loop: two branches per iteration on bytes loaded from memory (no data flow can
             settle them), chain_a taken for 1 byte in 4, chain_b for 1 in 2
   Prints "addr NAME 0xADDRESS" for each label as an ELF virtual address, then "ok". */
#define _GNU_SOURCE
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>

#include "itest.h"

/* hot_loop(n): for i = n .. 1: if (i & 3) x ^= i else x += 3. Branches:
     hot_mod  -> hot_odd  taken when i & 3 != 0 (3 of 4 iterations)
     hot_skip -> hot_next taken otherwise (1 of 4), a direct jmp
     hot_back -> hot_top  taken on every iteration but the last */
#define LOOP(prefix)                                                     \
  ".p2align 4\n"                                                         \
  ".globl " prefix "_loop\n.type " prefix "_loop,@function\n"            \
  prefix "_loop:\n"                                                      \
  "  xor %eax,%eax\n"                                                    \
  "  mov %rdi,%rcx\n"                                                    \
  ".globl " prefix "_top\n" prefix "_top:\n"                             \
  "  test $3,%cl\n"                                                      \
  ".globl " prefix "_mod\n" prefix "_mod:\n"                             \
  "  jnz " prefix "_odd\n"                                               \
  "  add $3,%rax\n"                                                      \
  ".globl " prefix "_skip\n" prefix "_skip:\n"                           \
  "  jmp " prefix "_next\n"                                              \
  ".globl " prefix "_odd\n" prefix "_odd:\n"                             \
  "  xor %rcx,%rax\n"                                                    \
  ".globl " prefix "_next\n" prefix "_next:\n"                           \
  "  dec %rcx\n"                                                         \
  ".globl " prefix "_back\n" prefix "_back:\n"                           \
  "  jnz " prefix "_top\n"                                               \
  ".globl " prefix "_end\n" prefix "_end:\n"                             \
  "  ret\n"                                                              \
  ".size " prefix "_loop, .-" prefix "_loop\n"

/* chain_loop(n, a, b): for i = n .. 1: if (a[i]) x += 3; if (b[i]) x ^= i. Branches:
     chain_a -> chain_skip_a taken when a[i] == 0; chain_b -> chain_skip_b when b[i] == 0;
     chain_back -> chain_top on every iteration but the last */
__asm__(".text\n.p2align 4\n"
        ".globl chain_loop\n.type chain_loop,@function\n"
        "chain_loop:\n"
        "  xor %eax,%eax\n"
        "  mov %rdi,%rcx\n"
        ".globl chain_top\nchain_top:\n"
        "  movzbl (%rsi,%rcx),%r8d\n"
        "  test %r8d,%r8d\n"
        ".globl chain_a\nchain_a:\n"
        "  jz chain_skip_a\n"
        "  add $3,%rax\n"
        ".globl chain_skip_a\nchain_skip_a:\n"
        "  movzbl (%rdx,%rcx),%r9d\n"
        "  test %r9d,%r9d\n"
        ".globl chain_b\nchain_b:\n"
        "  jz chain_skip_b\n"
        "  xor %rcx,%rax\n"
        ".globl chain_skip_b\nchain_skip_b:\n"
        "  dec %rcx\n"
        ".globl chain_back\nchain_back:\n"
        "  jnz chain_top\n"
        "  ret\n"
        ".size chain_loop, .-chain_loop\n");

__asm__(".text\n" LOOP("hot") LOOP("rseq")
        /* One rseq_cs descriptor covering rseq_loop (version, flags, start_ip, post_commit_offset,
           abort_ip): the tracer reads the section and must not set breakpoints in it. */
        ".pushsection __rseq_cs, \"aw\"\n"
        ".balign 32\n"
        ".long 0, 0\n"
        ".quad rseq_loop, rseq_end - rseq_loop + 1, rseq_end\n"
        ".popsection\n");

long hot_loop(long n);
long rseq_loop(long n);
extern char hot_top[], hot_mod[], hot_skip[], hot_odd[], hot_next[], hot_back[], hot_end[];
extern char rseq_top[], rseq_end[];
long chain_loop(long n, const unsigned char* a, const unsigned char* b);
extern char chain_top[], chain_a[], chain_skip_a[], chain_b[], chain_skip_b[], chain_back[];
static unsigned char g_a[1024], g_b[1024];

static long (*volatile g_loop)(long) = hot_loop;
static long g_expected;
static volatile long g_handler_runs;
static volatile int g_traps;

static uintptr_t g_bias;
static int first_object(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  (void)data;
  g_bias = info->dlpi_addr;
  return 1;
}

static void print_address(const char* name, const void* address) {
  printf("addr %s 0x%lx\n", name, (unsigned long)((uintptr_t)address - g_bias));
}

/* Runs the loop for about `ms` of CPU time, checking every result. */
static void run_for(long ms) {
  uint64_t end = itest_now_ns() + (uint64_t)ms * 1000000ULL;
  while (itest_now_ns() < end) {
    for (int i = 0; i < 100; ++i) ITEST_CHECK(g_loop(1000) == g_expected, "hot_loop returned a wrong value");
  }
}

static void* thread_main(void* arg) {
  run_for((long)(intptr_t)arg);
  return NULL;
}

static void on_trap(int sig, siginfo_t* info, void* context) {
  (void)sig;
  (void)context;
  if (info->si_code == SI_KERNEL || info->si_code == TRAP_BRKPT || info->si_code > 0) ++g_traps;
}

static void on_prof(int sig) {
  (void)sig;
  if (hot_loop(1000) == g_expected) ++g_handler_runs;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "loop";
  long ms = itest_arg(argc, argv, 2, 300);
  dl_iterate_phdr(first_object, NULL);
  g_expected = hot_loop(1000);
  print_address("top", hot_top);
  print_address("mod", hot_mod);
  print_address("skip", hot_skip);
  print_address("odd", hot_odd);
  print_address("next", hot_next);
  print_address("back", hot_back);
  print_address("end", hot_end);
  print_address("rseq_begin", (void*)rseq_loop);
  print_address("rseq_end", rseq_end);
  print_address("chain_top", chain_top);
  print_address("chain_a", chain_a);
  print_address("chain_skip_a", chain_skip_a);
  print_address("chain_b", chain_b);
  print_address("chain_skip_b", chain_skip_b);
  print_address("chain_back", chain_back);

  if (strcmp(mode, "loop") == 0) {
    run_for(ms);
  } else if (strcmp(mode, "threads") == 0) {
    for (int round = 0; round < 40; ++round) {
      pthread_t threads[4];
      for (int i = 0; i < 4; ++i) pthread_create(&threads[i], NULL, thread_main, (void*)(intptr_t)(ms / 40 + 1));
      for (int i = 0; i < 4; ++i) pthread_join(threads[i], NULL);
    }
  } else if (strcmp(mode, "trap") == 0) {
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_sigaction = on_trap;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    ITEST_CHECK(sigaction(SIGTRAP, &action, NULL) == 0, "sigaction");
    struct sigaction back;
    ITEST_CHECK(sigaction(SIGTRAP, NULL, &back) == 0 && back.sa_sigaction == on_trap, "SIGTRAP handler not reported back");
    int expected = 0;
    uint64_t end = itest_now_ns() + (uint64_t)ms * 1000000ULL;
    while (itest_now_ns() < end) {
      for (int i = 0; i < 50; ++i) ITEST_CHECK(g_loop(1000) == g_expected, "hot_loop returned a wrong value");
      __asm__ volatile("int3");
      ++expected;
    }
    ITEST_CHECK(g_traps == expected, "the program's SIGTRAP handler saw %d of %d traps", g_traps, expected);
    printf("traps %d\n", g_traps);
  } else if (strcmp(mode, "signal") == 0) {
    signal(SIGPROF, on_prof);
    struct itimerval timer = {{0, 300}, {0, 300}};
    setitimer(ITIMER_PROF, &timer, NULL);
    run_for(ms);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);
    ITEST_CHECK(g_handler_runs > 0, "the timer handler never ran");
    printf("handler runs %ld\n", g_handler_runs);
  } else if (strcmp(mode, "chain") == 0) {
    uint64_t seed = 12345;
    for (int i = 0; i < 1024; ++i) {  /* a pseudo-random pattern: a[i] == 0 for 1 in 4, b[i] == 0 for 1 in 2 */
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      g_a[i] = (unsigned char)((seed >> 40) & 3) != 0;
      g_b[i] = (unsigned char)((seed >> 50) & 1);
    }
    long expected = chain_loop(1000, g_a, g_b);
    uint64_t end = itest_now_ns() + (uint64_t)ms * 1000000ULL;
    while (itest_now_ns() < end) {
      for (int i = 0; i < 100; ++i) ITEST_CHECK(chain_loop(1000, g_a, g_b) == expected, "chain_loop returned a wrong value");
    }
    int zero_a = 0, zero_b = 0;
    for (int i = 1; i <= 1000; ++i) {
      zero_a += g_a[i] == 0;
      zero_b += g_b[i] == 0;
    }
    printf("zeros a %d b %d of 1000\n", zero_a, zero_b);
  } else if (strcmp(mode, "rseq") == 0) {
    g_loop = rseq_loop;
    run_for(ms);
  } else {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  printf("ok\n");
  return 0;
}
