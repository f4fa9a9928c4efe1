/* Batches on both handles: every key kind gives the answers of one-by-one calls and follows the
 * key encoding; a failing insert batch tries every key and reports each; bad arrays are refused
 * before anything is stored. The tests are written once, for a handle prefix, by BATCH_TESTS. */
#include <stdint.h>
#include <string.h>
#include "check.h"

#define N 2000

static size_t items_of_filter(const bugu_filter *f) {
  bugu_stats stats;
  CHECK(bugu_filter_stats(f, &stats) == BUGU_OK);
  return stats.items;
}

static size_t items_of_growable(const bugu_growable *g) {
  bugu_stats stats;
  CHECK(bugu_growable_stats(g, &stats) == BUGU_OK);
  return stats.items;
}

/* `H` is `filter` or `growable`; `f` a fresh handle with room for a few thousand keys. */
#define BATCH_TESTS(H)                                                                           \
  static void keys_##H(bugu_##H *f) {                                                           \
    static uint64_t u[N];                                                                        \
    static int64_t s[N];                                                                         \
    static bool found[N], removed[N];                                                            \
    static size_t counts[N];                                                                     \
    static bugu_status results[N];                                                               \
    bool one = false;                                                                            \
    for (size_t i = 0; i < N; i++) u[i] = i * 0x9E3779B97F4A7C15ull, s[i] = -(int64_t)i - 1;     \
    /* Integers: a u64 batch is found by the 8 little-endian bytes, one by one and batched. */   \
    memset(results, 0xff, sizeof results);                                                       \
    CHECK(bugu_##H##_insert_u64_batch(f, u, N, results) == BUGU_OK);                             \
    for (size_t i = 0; i < N; i++) CHECK(results[i] == BUGU_OK);                                 \
    CHECK(items_of_##H(f) == N);                                                                 \
    for (size_t i = 0; i < N; i += 97) {                                                         \
      unsigned char le[8];                                                                       \
      for (int b = 0; b < 8; b++) le[b] = (unsigned char)(u[i] >> (8 * b));                      \
      CHECK(bugu_##H##_contains(f, le, 8, &one) == BUGU_OK && one);                              \
      CHECK(bugu_##H##_contains_u64(f, u[i], &one) == BUGU_OK && one);                           \
    }                                                                                            \
    /* Signed keys sign-extend: -1 is UINT64_MAX. Lookups of absent keys answer as one by one. */ \
    CHECK(bugu_##H##_insert_i64_batch(f, s, 10, NULL) == BUGU_OK);                               \
    CHECK(bugu_##H##_contains_u64(f, UINT64_MAX, &one) == BUGU_OK && one);                       \
    CHECK(bugu_##H##_contains_i64_batch(f, s, N, found) == BUGU_OK);                             \
    size_t positives = 0;                                                                        \
    for (size_t i = 0; i < N; i++) {                                                             \
      CHECK(bugu_##H##_contains_i64(f, s[i], &one) == BUGU_OK && one == found[i]);               \
      CHECK(i >= 10 || found[i]);                                                                \
      positives += i >= 10 && found[i];                                                          \
    }                                                                                            \
    CHECK(positives < 20);                                                                       \
    /* Strings and bytes: one key, one meaning, the empty key included. */                       \
    const char *words[4] = {"alpha", "beta", "", "καφές"};                                       \
    const void *ptrs[4] = {"gamma", NULL, "\0\1", "alpha"};                                      \
    const size_t lens[4] = {5, 0, 2, 5};                                                         \
    CHECK(bugu_##H##_insert_str_batch(f, words, 4, results) == BUGU_OK);                         \
    CHECK(bugu_##H##_contains(f, "beta", 4, &one) == BUGU_OK && one);                            \
    CHECK(bugu_##H##_contains(f, "καφές", strlen("καφές"), &one) == BUGU_OK && one);             \
    CHECK(bugu_##H##_contains_str(f, "gamma", &one) == BUGU_OK && !one);                         \
    CHECK(bugu_##H##_insert_batch(f, ptrs, lens, 4, NULL) == BUGU_OK);                           \
    CHECK(bugu_##H##_contains_str(f, "gamma", &one) == BUGU_OK && one);                          \
    CHECK(bugu_##H##_contains_batch(f, ptrs, lens, 4, found) == BUGU_OK);                        \
    CHECK(found[0] && found[1] && found[2] && found[3]);                                         \
    /* Counts and removals: "alpha" and "" were stored twice, "beta" once. */                    \
    CHECK(bugu_##H##_count_str_batch(f, words, 4, counts) == BUGU_OK);                           \
    CHECK(counts[0] == 2 && counts[1] == 1 && counts[2] == 2 && counts[3] == 1);                 \
    CHECK(bugu_##H##_count_batch(f, ptrs, lens, 4, counts) == BUGU_OK);                          \
    CHECK(counts[0] == 1 && counts[1] == 2 && counts[2] == 1 && counts[3] == 2);                 \
    const char *twice[3] = {"beta", "beta", "alpha"};                                            \
    CHECK(bugu_##H##_remove_str_batch(f, twice, 3, removed) == BUGU_OK);                         \
    CHECK(removed[0] && !removed[1] && removed[2]);                                              \
    CHECK(bugu_##H##_count_str(f, "alpha", counts) == BUGU_OK && counts[0] == 1);                \
    CHECK(bugu_##H##_remove_batch(f, ptrs, lens, 4, NULL) == BUGU_OK);                           \
    CHECK(bugu_##H##_contains_str_batch(f, words, 4, found) == BUGU_OK);                         \
    CHECK(!found[0] && !found[1] && found[2] && found[3]);                                       \
    CHECK(bugu_##H##_remove_u64_batch(f, u, N, removed) == BUGU_OK);                             \
    for (size_t i = 0; i < N; i++) CHECK(removed[i]);                                            \
    CHECK(bugu_##H##_count_u64_batch(f, u, N, counts) == BUGU_OK);                               \
    for (size_t i = 0; i < N; i++) CHECK(counts[i] == 0);                                        \
    CHECK(bugu_##H##_remove_i64_batch(f, s, 10, NULL) == BUGU_OK);                               \
    CHECK(items_of_##H(f) == 2);                                                                 \
  }                                                                                              \
  static void refusals_##H(bugu_##H *f) {                                                        \
    const char *words[3] = {"a", NULL, "c"};                                                     \
    const void *ptrs[3] = {"a", NULL, "c"};                                                      \
    const size_t lens[3] = {1, 1, 1};                                                            \
    const uint64_t u[3] = {1, 2, 3};                                                             \
    bool found[3];                                                                               \
    size_t before = items_of_##H(f);                                                             \
    /* A NULL inside the array is refused before any key is stored, and named. */                \
    CHECK(bugu_##H##_insert_str_batch(f, words, 3, NULL) == BUGU_INVALID_ARGUMENT);              \
    CHECK(strstr(bugu_last_error_message(), "keys[1]") != NULL);                                 \
    CHECK(bugu_##H##_insert_batch(f, ptrs, lens, 3, NULL) == BUGU_INVALID_ARGUMENT);             \
    CHECK(strstr(bugu_last_error_message(), "keys[1]") != NULL);                                 \
    CHECK(items_of_##H(f) == before);                                                            \
    /* NULL arrays with a non-zero count. */                                                     \
    CHECK(bugu_##H##_insert_u64_batch(f, NULL, 3, NULL) == BUGU_INVALID_ARGUMENT);               \
    CHECK(bugu_##H##_insert_i64_batch(f, NULL, 1, NULL) == BUGU_INVALID_ARGUMENT);               \
    CHECK(bugu_##H##_insert_batch(f, ptrs, NULL, 3, NULL) == BUGU_INVALID_ARGUMENT);             \
    CHECK(bugu_##H##_contains_str_batch(f, NULL, 3, found) == BUGU_INVALID_ARGUMENT);            \
    CHECK(bugu_##H##_contains_u64_batch(f, u, 3, NULL) == BUGU_INVALID_ARGUMENT);                \
    CHECK(bugu_##H##_count_u64_batch(f, u, 3, NULL) == BUGU_INVALID_ARGUMENT);                   \
    CHECK(bugu_##H##_insert_u64_batch(NULL, u, 3, NULL) == BUGU_INVALID_ARGUMENT);               \
    CHECK(bugu_##H##_contains_u64_batch(NULL, u, 3, found) == BUGU_INVALID_ARGUMENT);            \
    CHECK(items_of_##H(f) == before);                                                            \
    /* An empty batch needs no arrays. */                                                        \
    CHECK(bugu_##H##_insert_batch(f, NULL, NULL, 0, NULL) == BUGU_OK);                           \
    CHECK(bugu_##H##_contains_str_batch(f, NULL, 0, NULL) == BUGU_OK);                           \
    CHECK(bugu_##H##_count_i64_batch(f, NULL, 0, NULL) == BUGU_OK);                              \
    CHECK(bugu_##H##_remove_u64_batch(f, NULL, 0, NULL) == BUGU_OK);                             \
  }

BATCH_TESTS(filter)
BATCH_TESTS(growable)

/* A batch past a fixed filter's room: every key is tried; the answer is the first failure, the
 * results say which keys were stored, and exactly those are in the filter. */
static void full_filter(void) {
  static uint64_t keys[N];
  static bugu_status results[N];
  bugu_filter *f = NULL;
  CHECK(bugu_filter_new(200, 0.01, &f) == BUGU_OK);
  for (size_t i = 0; i < N; i++) keys[i] = i;
  CHECK(bugu_filter_insert_u64_batch(f, keys, N, results) == BUGU_FULL);
  size_t stored = 0, first = N;
  for (size_t i = 0; i < N; i++) {
    CHECK(results[i] == BUGU_OK || results[i] == BUGU_FULL);
    if (results[i] == BUGU_OK) stored++;
    else if (first == N) first = i;
  }
  CHECK(first >= 200 && stored < N && stored == items_of_filter(f));
  char expected[64];
  snprintf(expected, sizeof expected, "key %zu of the batch", first);
  CHECK(strstr(bugu_last_error_message(), expected) != NULL);
  for (size_t i = 0; i < N; i++) {
    size_t count = 9;
    CHECK(bugu_filter_count_u64(f, keys[i], &count) == BUGU_OK);
    CHECK(results[i] != BUGU_OK || count >= 1);
  }
  bugu_filter_free(f);
}

/* A growable filter at its maximum: the keys up to it are stored, the rest fail. */
static void growable_at_its_maximum(void) {
  static uint64_t keys[300];
  static bugu_status results[300];
  bugu_growable_config config = bugu_growable_config_default(100);
  config.max_capacity = 250;
  bugu_growable *g = NULL;
  CHECK(bugu_growable_new_with(&config, &g) == BUGU_OK);
  for (size_t i = 0; i < 300; i++) keys[i] = i;
  CHECK(bugu_growable_insert_u64_batch(g, keys, 300, results) == BUGU_FULL);
  for (size_t i = 0; i < 300; i++) CHECK(results[i] == (i < 250 ? BUGU_OK : BUGU_FULL));
  CHECK(strstr(bugu_last_error_message(), "key 250 of the batch") != NULL);
  CHECK(items_of_growable(g) == 250);
  bugu_growable_free(g);
}

int main(void) {
  bugu_filter *f = NULL;
  CHECK(bugu_filter_new(N * 2, 0.001, &f) == BUGU_OK);
  keys_filter(f);
  refusals_filter(f);
  bugu_filter_free(f);
  /* A small first level: the batches make it grow. */
  bugu_growable *g = NULL;
  CHECK(bugu_growable_new(100, 0.001, &g) == BUGU_OK);
  keys_growable(g);
  refusals_growable(g);
  bugu_growable_free(g);
  full_filter();
  growable_at_its_maximum();
  printf("batch: ok\n");
  return 0;
}
