/* Prints its argv, one argument per line as [index]=value, and exits: the test checks that the
   program got exactly the arguments typed after whatif's `---`. Usage: print_args [ARGS...]. */
#include <stdio.h>

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) printf("[%d]=%s\n", i, argv[i]);
  return 0;
}
