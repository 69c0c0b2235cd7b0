/* Linked with early_syscall_lib.c, whose constructor called syscall(SYS_gettid) before main (and
   before the preloaded runtime's constructor). Prints "early ok" when that call returned this
   thread's id. Usage: early_syscall. */
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

extern long early_syscall_tid;

int main(void) {
  long tid = syscall(SYS_gettid);
  if (early_syscall_tid != tid) {
    fprintf(stderr, "constructor's syscall gave %ld, main's %ld\n", early_syscall_tid, tid);
    return 1;
  }
  printf("early ok\n");
  return 0;
}
