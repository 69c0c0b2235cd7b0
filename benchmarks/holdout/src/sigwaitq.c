/* sigwaitq: two pthreads handing work over with signals, strictly serial request/reply. All
 * threads block SIGUSR1 and SIGUSR2 (the main thread's mask is set before the worker is created,
 * which inherits it). Per item the main thread does line B (0.5 ms), sends SIGUSR1 to the worker
 * with pthread_kill and waits in sigwait() for SIGUSR2; the worker waits in sigwait() for SIGUSR1,
 * does line A (1 ms) and replies with pthread_kill(main, SIGUSR2). One progress visit per
 * completed reply (on the main thread). Serial: 1.5 ms an item, one CPU busy at a time.
 * Expected at s=60% (scale 0.4): A 40% (0.6 of 1.5 ms), B 20% (0.3 of 1.5 ms). */
#include "common.h"
#include <errno.h>
#include <pthread.h>
#include <signal.h>

static pthread_t main_th;
static sigset_t req_set, rep_set;
static long total;

static void wait_sig(const sigset_t* set) {
  int sig;
  int e = sigwait(set, &sig);
  if (e != 0) { fprintf(stderr, "sigwait: %s\n", strerror(e)); exit(1); }
}

static void send_sig(pthread_t t, int sig) {
  int e = pthread_kill(t, sig);
  if (e != 0) { fprintf(stderr, "pthread_kill: %s\n", strerror(e)); exit(1); }
}

static void* worker(void* arg) {
  (void)arg;
  const long a_iters = ms_iters(1.0, scaleA);
  for (long i = 0; i < total; i++) {
    wait_sig(&req_set);
    SPIN(a_iters); // @line:A
    send_sig(main_th, SIGUSR2);
  }
  return NULL;
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  total = n_items > 0 ? n_items : 600;
  const long b_iters = ms_iters(0.5, scaleB);
  sigset_t both;
  sigemptyset(&both);
  sigaddset(&both, SIGUSR1);
  sigaddset(&both, SIGUSR2);
  int e = pthread_sigmask(SIG_BLOCK, &both, NULL);
  if (e != 0) { fprintf(stderr, "pthread_sigmask: %s\n", strerror(e)); return 1; }
  sigemptyset(&req_set);
  sigaddset(&req_set, SIGUSR1);
  sigemptyset(&rep_set);
  sigaddset(&rep_set, SIGUSR2);
  main_th = pthread_self();

  uint64_t t0 = now_ns();
  pthread_t th;
  if (pthread_create(&th, NULL, worker, NULL) != 0) { perror("pthread_create"); return 1; }
  for (long i = 0; i < total; i++) {
    SPIN(b_iters); // @line:B
    send_sig(th, SIGUSR1);
    wait_sig(&rep_set);
    COZ_PROGRESS_NAMED("item");
  }
  pthread_join(th, NULL);
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
