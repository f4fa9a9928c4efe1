/* The C API's cost per call: n random 64-bit keys into a bugu_filter for n keys (12-bit
 * fingerprints, buckets of 4), one by one and batched; lookups of the n present keys and of n
 * absent keys. Three runs of each; prints the median ns per key.
 * Usage: capi_bench N   (scripts/bench-capi builds and runs it) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "bugu.h"
#include "common.h"

static bugu_filter *fresh(size_t n) {
  bugu_config config = bugu_config_default(n);
  config.fingerprint_bits = 12;
  bugu_filter *f = NULL;
  if (bugu_filter_new_with(&config, &f) != BUGU_OK) {
    fprintf(stderr, "%s\n", bugu_last_error_message());
    exit(1);
  }
  return f;
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
  uint64_t *keys = malloc(n * sizeof *keys), *absent = malloc(n * sizeof *absent), state = 42;
  bool *found = malloc(n * sizeof *found);
  for (size_t i = 0; i < n; i++) keys[i] = splitmix(&state);
  for (size_t i = 0; i < n; i++) absent[i] = splitmix(&state);
  double insert[RUNS], present[RUNS], missing[RUNS], insert_batch[RUNS], present_batch[RUNS], missing_batch[RUNS];
  size_t hits = 0;
  for (int run = 0; run < RUNS; run++) {
    bugu_filter *f = fresh(n);
    double t = now();
    for (size_t i = 0; i < n; i++) {
      if (bugu_filter_insert_u64(f, keys[i]) != BUGU_OK) return 1;
    }
    insert[run] = (now() - t) / n;
    t = now();
    for (size_t i = 0; i < n; i++) {
      bool hit = false;
      bugu_filter_contains_u64(f, keys[i], &hit);
      hits += hit;
    }
    present[run] = (now() - t) / n;
    t = now();
    for (size_t i = 0; i < n; i++) {
      bool hit = false;
      bugu_filter_contains_u64(f, absent[i], &hit);
      hits += hit;
    }
    missing[run] = (now() - t) / n;
    bugu_filter_free(f);

    f = fresh(n);
    t = now();
    if (bugu_filter_insert_u64_batch(f, keys, n, NULL) != BUGU_OK) return 1;
    insert_batch[run] = (now() - t) / n;
    t = now();
    bugu_filter_contains_u64_batch(f, keys, n, found);
    present_batch[run] = (now() - t) / n;
    for (size_t i = 0; i < n; i++) hits += found[i];
    t = now();
    bugu_filter_contains_u64_batch(f, absent, n, found);
    missing_batch[run] = (now() - t) / n;
    for (size_t i = 0; i < n; i++) hits += found[i];
    bugu_filter_free(f);
  }
  printf("%-24s n=%-9zu insert %6.1f  contains(present) %6.1f  contains(absent) %6.1f ns/key\n", "bugu C API, 1-by-1", n,
         median(insert), median(present), median(missing));
  printf("%-24s n=%-9zu insert %6.1f  contains(present) %6.1f  contains(absent) %6.1f ns/key\n", "bugu C API, batched", n,
         median(insert_batch), median(present_batch), median(missing_batch));
  fprintf(stderr, "(hits: %zu)\n", hits);
  free(keys);
  free(absent);
  free(found);
  return 0;
}
