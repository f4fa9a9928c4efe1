/* What the C benchmarks share: random keys, a clock, and the median of RUNS timings. */
#ifndef BUGU_BENCH_COMMON_H
#define BUGU_BENCH_COMMON_H
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

enum { RUNS = 3 };

static uint64_t splitmix(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v) {
  qsort(v, RUNS, sizeof *v, by_value);
  return v[RUNS / 2];
}
#endif
