// Shared by the bench's C programs (fanoutFloor.c, wsSubscribers.c): one monotonic clock, read the same way
// in every process on the machine, and percentiles of a sample.
#ifndef CBENCH_H
#define CBENCH_H
#include <stdlib.h>
#include <time.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/** Nearest rank: the smallest value with at least p % of the sample at or below it (p99 of 32 is the largest). */
static double percentile(double *xs, int n, int p) {
  qsort(xs, n, sizeof(double), by_value);
  int rank = (p * n + 99) / 100;
  return xs[rank > 0 ? rank - 1 : 0];
}
#endif
