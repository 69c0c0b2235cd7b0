/* A library whose constructor calls syscall(3) before libwhatif.so's runs, as jemalloc, abseil and
   glog do with SYS_gettid: a library the program needs is initialised before the preloaded runtime. */
#include <sys/syscall.h>
#include <unistd.h>

long early_syscall_tid;

__attribute__((constructor)) static void early(void) { early_syscall_tid = syscall(SYS_gettid); }
