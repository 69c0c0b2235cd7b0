/* Shape: two processes over pipes. The program fork()s once at start. The parent produces items
 * (line A, ~1 ms each) and write()s a 16-byte record per item to a request pipe; the child read()s
 * records, computes on each (line B, ~0.6 ms) and write()s an 8-byte ack to a second pipe. The
 * parent keeps at most 3 items outstanding (blocking in poll()/read() on the ack pipe when it has
 * 3) and visits progress once per ack it reads. At the end the parent closes the request pipe,
 * collects the last acks and waitpid()s the child, which exits when it reads EOF.
 * Producer-bound, one CPU each: 1 ms an item. Expected at s=60%: A ~40% (0.4 ms producer, then the
 * 0.6 ms child sets the pace), B ~0%. */
#define _GNU_SOURCE
#include "common.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_OUTSTANDING 3

struct record { uint64_t seq, value; };

/* 1 when len bytes were read, 0 on EOF before any byte */
static int read_full(int fd, void* buf, size_t len) {
  char* p = buf;
  size_t got = 0;
  while (got < len) {
    ssize_t k = read(fd, p + got, len - got);
    if (k < 0) {
      if (errno == EINTR) continue;
      perror("read");
      _exit(1);
    }
    if (k == 0) {
      if (got == 0) return 0;
      fprintf(stderr, "short record\n");
      _exit(1);
    }
    got += (size_t)k;
  }
  return 1;
}

static void write_full(int fd, const void* buf, size_t len) {
  const char* p = buf;
  while (len > 0) {
    ssize_t k = write(fd, p, len);
    if (k < 0) {
      if (errno == EINTR) continue;
      perror("write");
      _exit(1);
    }
    p += k;
    len -= (size_t)k;
  }
}

static __attribute__((noinline, noreturn)) void child_main(int req_rd, int ack_wr, long b_iters) {
  struct record rec;
  while (read_full(req_rd, &rec, sizeof rec)) {
    SPIN(b_iters); // @line:B
    uint64_t ack = rec.seq;
    write_full(ack_wr, &ack, sizeof ack);
  }
  _exit(0);
}

int main(int argc, char** argv) {
  parse_args(argc, argv);
  const long n = n_items > 0 ? n_items : 900;
  const long a_iters = ms_iters(1.0, scaleA);
  const long b_iters = ms_iters(0.6, scaleB);
  int req[2], ack[2];
  if (pipe2(req, O_CLOEXEC) != 0 || pipe2(ack, O_CLOEXEC) != 0) { perror("pipe2"); return 1; }
  fflush(stdout);
  uint64_t t0 = now_ns();
  pid_t pid = fork();
  if (pid < 0) { perror("fork"); return 1; }
  if (pid == 0) {
    close(req[1]);
    close(ack[0]);
    child_main(req[0], ack[1], b_iters);
  }
  close(req[0]);
  close(ack[1]);

  long outstanding = 0, acked = 0;
  uint64_t expect = 0;
  for (long i = 0; i < n || outstanding > 0;) {
    /* block for an ack when the window is full or everything has been sent; else just drain */
    int must_wait = (outstanding >= MAX_OUTSTANDING || i == n);
    struct pollfd p = {.fd = ack[0], .events = POLLIN};
    int k = poll(&p, 1, must_wait ? -1 : 0);
    if (k < 0) {
      if (errno == EINTR) continue;
      perror("poll");
      return 1;
    }
    if (k > 0) {
      uint64_t a;
      if (!read_full(ack[0], &a, sizeof a)) { fprintf(stderr, "child closed early\n"); return 1; }
      if (a != expect) { fprintf(stderr, "ack %llu out of order\n", (unsigned long long)a); return 1; }
      expect++;
      outstanding--;
      acked++;
      COZ_PROGRESS_NAMED("item");
      continue; /* drain all that is ready before producing more */
    }
    if (i < n && outstanding < MAX_OUTSTANDING) {
      SPIN(a_iters); // @line:A
      struct record rec = {(uint64_t)i, (uint64_t)i * 2654435761u};
      write_full(req[1], &rec, sizeof rec);
      outstanding++;
      i++;
    }
  }
  close(req[1]); /* the child reads EOF and exits */
  int st;
  pid_t w;
  while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR) {}
  if (w != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) { fprintf(stderr, "child failed (status 0x%x)\n", st); return 1; }
  close(ack[0]);
  printf("acked=%ld\n", acked);
  printf("elapsed_ns=%llu\n", (unsigned long long)(now_ns() - t0));
  return 0;
}
