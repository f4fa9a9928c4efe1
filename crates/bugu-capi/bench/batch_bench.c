/* Batches against one-by-one calls, for each key kind on both handles: n keys (random 64-bit
 * integers, or 17-byte strings "k" + 16 hex digits, as strings and as bytes) inserted into a
 * fresh bugu_filter for n keys, or a bugu_growable starting at n/4 (so it grows to three levels),
 * then the n present keys looked up. Three runs of each; prints the median ns per key.
 * Usage: batch_bench N   (scripts/bench-capi builds and runs it) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "bugu.h"
#include "common.h"

enum { BYTES = 0, STR = 1, U64 = 2 };
static const char *const KIND[] = {"bytes", "str", "u64"};

static size_t n;
static uint64_t *ints;
static const char **strs;
static const void **ptrs;
static size_t *lens;
static bool *found;
static bugu_status *results;

typedef struct {
  bugu_filter *f;
  bugu_growable *g;
} handle;

static void ok(bugu_status status) {
  if (status != BUGU_OK) {
    fprintf(stderr, "%s\n", bugu_last_error_message());
    exit(1);
  }
}

static handle fresh(int growable) {
  handle h = {NULL, NULL};
  ok(growable ? bugu_growable_new(n / 4, 0.001, &h.g) : bugu_filter_new(n, 0.001, &h.f));
  return h;
}

static void insert_one_by_one(handle h, int kind) {
  for (size_t i = 0; i < n; i++) {
    if (h.f) {
      ok(kind == BYTES ? bugu_filter_insert(h.f, ptrs[i], lens[i])
         : kind == STR ? bugu_filter_insert_str(h.f, strs[i])
                       : bugu_filter_insert_u64(h.f, ints[i]));
    } else {
      ok(kind == BYTES ? bugu_growable_insert(h.g, ptrs[i], lens[i])
         : kind == STR ? bugu_growable_insert_str(h.g, strs[i])
                       : bugu_growable_insert_u64(h.g, ints[i]));
    }
  }
}

static void insert_batched(handle h, int kind) {
  if (h.f) {
    ok(kind == BYTES ? bugu_filter_insert_batch(h.f, ptrs, lens, n, results)
       : kind == STR ? bugu_filter_insert_str_batch(h.f, strs, n, results)
                     : bugu_filter_insert_u64_batch(h.f, ints, n, results));
  } else {
    ok(kind == BYTES ? bugu_growable_insert_batch(h.g, ptrs, lens, n, results)
       : kind == STR ? bugu_growable_insert_str_batch(h.g, strs, n, results)
                     : bugu_growable_insert_u64_batch(h.g, ints, n, results));
  }
}

static void contains_one_by_one(handle h, int kind) {
  for (size_t i = 0; i < n; i++) {
    if (h.f) {
      ok(kind == BYTES ? bugu_filter_contains(h.f, ptrs[i], lens[i], &found[i])
         : kind == STR ? bugu_filter_contains_str(h.f, strs[i], &found[i])
                       : bugu_filter_contains_u64(h.f, ints[i], &found[i]));
    } else {
      ok(kind == BYTES ? bugu_growable_contains(h.g, ptrs[i], lens[i], &found[i])
         : kind == STR ? bugu_growable_contains_str(h.g, strs[i], &found[i])
                       : bugu_growable_contains_u64(h.g, ints[i], &found[i]));
    }
  }
}

static void contains_batched(handle h, int kind) {
  if (h.f) {
    ok(kind == BYTES ? bugu_filter_contains_batch(h.f, ptrs, lens, n, found)
       : kind == STR ? bugu_filter_contains_str_batch(h.f, strs, n, found)
                     : bugu_filter_contains_u64_batch(h.f, ints, n, found));
  } else {
    ok(kind == BYTES ? bugu_growable_contains_batch(h.g, ptrs, lens, n, found)
       : kind == STR ? bugu_growable_contains_str_batch(h.g, strs, n, found)
                     : bugu_growable_contains_u64_batch(h.g, ints, n, found));
  }
}

/* ns per key of inserting then looking up the n keys, one by one or batched. */
static void measure(int growable, int kind, int batched, double *insert, double *contains) {
  handle h = fresh(growable);
  double t = now();
  (batched ? insert_batched : insert_one_by_one)(h, kind);
  *insert = (now() - t) / n;
  t = now();
  (batched ? contains_batched : contains_one_by_one)(h, kind);
  *contains = (now() - t) / n;
  for (size_t i = 0; i < n; i++) {
    if (!found[i]) {
      fprintf(stderr, "a false negative\n");
      exit(1);
    }
  }
  bugu_filter_free(h.f);
  bugu_growable_free(h.g);
}

int main(int argc, char **argv) {
  n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
  ints = malloc(n * sizeof *ints);
  strs = malloc(n * sizeof *strs);
  ptrs = malloc(n * sizeof *ptrs);
  lens = malloc(n * sizeof *lens);
  found = malloc(n * sizeof *found);
  results = malloc(n * sizeof *results);
  char *text = malloc(n * 18);
  uint64_t state = 42;
  for (size_t i = 0; i < n; i++) {
    ints[i] = splitmix(&state);
    snprintf(text + 18 * i, 18, "k%016llx", (unsigned long long)ints[i]);
    strs[i] = ptrs[i] = text + 18 * i;
    lens[i] = 17;
  }
  for (int growable = 0; growable < 2; growable++) {
    for (int kind = BYTES; kind <= U64; kind++) {
      double insert[2][RUNS], contains[2][RUNS];
      for (int run = 0; run < RUNS; run++) {
        for (int batched = 0; batched < 2; batched++) {
          measure(growable, kind, batched, &insert[batched][run], &contains[batched][run]);
        }
      }
      printf("bugu_%-8s %-5s n=%-9zu insert 1-by-1 %6.1f batched %6.1f  contains 1-by-1 %6.1f batched %6.1f ns/key\n",
             growable ? "growable" : "filter", KIND[kind], n, median(insert[0]), median(insert[1]),
             median(contains[0]), median(contains[1]));
    }
  }
  free(text);
  free(ints);
  free(strs);
  free(ptrs);
  free(lens);
  free(found);
  free(results);
  return 0;
}
