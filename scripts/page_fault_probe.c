// Page-fault throughput of this host: map 256 MiB, write every page, unmap, for SECONDS (default 5); with a
// second argument 1 the same 256 MiB are written again and again instead (reused pages). Prints GB/s written.
// Build: cc -O2 -o page_fault_probe scripts/page_fault_probe.c. Run N at once to see whether a host shares the
// cost among processes (results/fuzz-gpus-h200x4/README.md: it does not, on the four-H200 machine).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(int argc, char** argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 5; size_t bytes = 256ul << 20; double touched = 0;
  int reuse = argc > 2 && atoi(argv[2]);
  char* keep = reuse ? mmap(0, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : 0;
  double start = now();
  while (now() - start < seconds) {
    char* p = reuse ? keep : mmap(0, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(p, 1, bytes);
    if (!reuse) munmap(p, bytes);
    touched += bytes;
  }
  printf("%.2f\n", touched / (now() - start) / 1e9);
  return 0;
}
