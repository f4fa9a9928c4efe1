/* The C API: every key form and operation, the key encoding, stats, dump, files and buffers,
 * NULLs, a full filter, the growable filter. */
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include "check.h"

static int count_slots(void *context, size_t level, size_t index, const uint32_t *slots, size_t n) {
  (void)level; (void)index;
  for (size_t i = 0; i < n; i++) *(size_t *)context += slots[i] != 0;
  return 0;
}

static int stop_at_first(void *context, size_t level, size_t index, const uint32_t *slots, size_t n) {
  (void)level; (void)index; (void)slots; (void)n;
  ++*(int *)context;
  return 1;
}

static void test_keys(void) {
  bugu_filter *f = NULL;
  CHECK(bugu_filter_new(1000, 0.001, &f) == BUGU_OK && f != NULL);
  bool found = true, added = false, removed = false;
  size_t count = 99;
  /* One key, one meaning: a string is its bytes, an integer 8 little-endian bytes. */
  CHECK(bugu_filter_insert_str(f, "apple") == BUGU_OK);
  CHECK(bugu_filter_contains(f, "apple", 5, &found) == BUGU_OK && found);
  CHECK(bugu_filter_insert_u64(f, 7) == BUGU_OK);
  const unsigned char seven[8] = {7, 0, 0, 0, 0, 0, 0, 0};
  CHECK(bugu_filter_contains(f, seven, 8, &found) == BUGU_OK && found);
  CHECK(bugu_filter_contains_i64(f, 7, &found) == BUGU_OK && found);
  CHECK(bugu_filter_insert_i64(f, -1) == BUGU_OK);
  CHECK(bugu_filter_contains_u64(f, UINT64_MAX, &found) == BUGU_OK && found);
  CHECK(bugu_filter_contains_str(f, "pear", &found) == BUGU_OK && !found);
  /* Copies, unique inserts, counts and removal. */
  CHECK(bugu_filter_insert_str(f, "apple") == BUGU_OK);
  CHECK(bugu_filter_count_str(f, "apple", &count) == BUGU_OK && count == 2);
  CHECK(bugu_filter_insert_unique_str(f, "apple", &added) == BUGU_OK && !added);
  CHECK(bugu_filter_insert_unique(f, "kiwi", 4, &added) == BUGU_OK && added);
  CHECK(bugu_filter_remove_str(f, "apple", &removed) == BUGU_OK && removed);
  CHECK(bugu_filter_remove_str(f, "apple", &removed) == BUGU_OK && removed);
  CHECK(bugu_filter_remove_str(f, "apple", &removed) == BUGU_OK && !removed);
  CHECK(bugu_filter_contains_str(f, "apple", &found) == BUGU_OK && !found);
  CHECK(bugu_filter_remove_u64(f, 7, NULL) == BUGU_OK);
  CHECK(bugu_filter_count_u64(f, 7, &count) == BUGU_OK && count == 0);
  /* The empty key is a key. */
  CHECK(bugu_filter_insert(f, NULL, 0) == BUGU_OK);
  CHECK(bugu_filter_contains_str(f, "", &found) == BUGU_OK && found);

  bugu_stats stats;
  CHECK(bugu_filter_stats(f, &stats) == BUGU_OK);
  CHECK(stats.items == 3 && stats.capacity == 1000 && stats.levels == 1 && stats.bucket_size == 4);
  CHECK(stats.false_positive_rate_bound <= 0.001 && stats.load_factor > 0.0 && stats.buckets > 0);
  /* A fixed filter has no target; the rate expected at its load is under the bound. */
  CHECK(stats.target_false_positive_rate == 0.0);
  CHECK(stats.expected_false_positive_rate > 0.0 &&
        stats.expected_false_positive_rate <= stats.false_positive_rate_bound);
  size_t slots = 0;
  CHECK(bugu_filter_dump_buckets(f, count_slots, &slots) == BUGU_OK && slots == 3);
  int calls = 0;
  CHECK(bugu_filter_dump_buckets(f, stop_at_first, &calls) == BUGU_OK && calls == 1);

  /* Buffers: ask the size, refuse a short buffer, round trip. */
  size_t need = 0;
  CHECK(bugu_filter_to_buffer(f, NULL, 0, &need) == BUGU_BUFFER_TOO_SMALL && need > 0);
  unsigned char *buffer = malloc(need);
  size_t written = 0;
  CHECK(bugu_filter_to_buffer(f, buffer, need - 1, &written) == BUGU_BUFFER_TOO_SMALL && written == need);
  CHECK(bugu_filter_to_buffer(f, buffer, need, &written) == BUGU_OK && written == need);
  bugu_filter *copy = NULL;
  CHECK(bugu_filter_from_buffer(buffer, written, &copy) == BUGU_OK);
  CHECK(bugu_filter_contains_str(copy, "kiwi", &found) == BUGU_OK && found);
  CHECK(bugu_filter_contains_i64(copy, -1, &found) == BUGU_OK && found);
  bugu_filter_free(copy);
  free(buffer);

  /* Files. */
  char path[64];
  snprintf(path, sizeof path, "/tmp/bugu-capi-api-%d.bugu", (int)getpid());
  CHECK(bugu_filter_save(f, path) == BUGU_OK);
  CHECK(bugu_filter_load(path, &copy) == BUGU_OK);
  CHECK(bugu_filter_contains_str(copy, "kiwi", &found) == BUGU_OK && found);
  bugu_filter_free(copy);
  bugu_growable *wrong = NULL;
  CHECK(bugu_growable_load(path, &wrong) == BUGU_CORRUPT && wrong == NULL);
  unlink(path);
  CHECK(bugu_filter_load(path, &copy) == BUGU_CORRUPT || bugu_filter_load(path, &copy) == BUGU_IO);
  CHECK(bugu_filter_save(f, "/nonexistent-dir/x.bugu") == BUGU_IO);
  bugu_filter_free(f);
}

static void test_config_and_batches(void) {
  bugu_config config = bugu_config_default(10000);
  config.fingerprint_bits = 16;
  config.bucket_size = 2;
  config.seed = 42;
  bugu_filter *f = NULL;
  CHECK(bugu_filter_new_with(&config, &f) == BUGU_OK);
  bugu_stats stats;
  CHECK(bugu_filter_stats(f, &stats) == BUGU_OK && stats.fingerprint_bits == 16 && stats.bucket_size == 2);
  uint64_t keys[1000];
  bugu_status results[1000];
  bool found[1000];
  for (int i = 0; i < 1000; i++) keys[i] = (uint64_t)i * 7919u;
  CHECK(bugu_filter_insert_u64_batch(f, keys, 1000, results) == BUGU_OK);
  for (int i = 0; i < 1000; i++) CHECK(results[i] == BUGU_OK);
  CHECK(bugu_filter_contains_u64_batch(f, keys, 1000, found) == BUGU_OK);
  for (int i = 0; i < 1000; i++) {
    bool one = false;
    CHECK(found[i]);
    CHECK(bugu_filter_contains_u64(f, keys[i], &one) == BUGU_OK && one);
  }
  CHECK(bugu_filter_insert_u64_batch(f, NULL, 0, NULL) == BUGU_OK);
  CHECK(bugu_filter_insert_u64_batch(f, NULL, 3, NULL) == BUGU_INVALID_ARGUMENT);
  CHECK(bugu_filter_contains_u64_batch(f, keys, 3, NULL) == BUGU_INVALID_ARGUMENT);
  bugu_filter_free(f);
  /* Bad configurations are refused with a message. */
  config.false_positive_rate = 0.01;
  CHECK(bugu_filter_new_with(&config, &f) == BUGU_INVALID_ARGUMENT);
  CHECK(strstr(bugu_last_error_message(), "not both") != NULL);
  CHECK(bugu_filter_new(0, 0.01, &f) == BUGU_INVALID_ARGUMENT);
  CHECK(strstr(bugu_last_error_message(), "capacity") != NULL);
  CHECK(bugu_filter_new(100, 1.5, &f) == BUGU_INVALID_ARGUMENT);
  CHECK(bugu_filter_new(100, 0.01, NULL) == BUGU_INVALID_ARGUMENT);
  CHECK(bugu_filter_new_with(NULL, &f) == BUGU_INVALID_ARGUMENT);
}

static void test_nulls(void) {
  bool found;
  size_t count;
  bugu_stats stats;
  CHECK(bugu_filter_insert(NULL, "a", 1) == BUGU_INVALID_ARGUMENT);
  CHECK(strstr(bugu_last_error_message(), "NULL") != NULL);
  CHECK(bugu_filter_contains_str(NULL, "a", &found) == BUGU_INVALID_ARGUMENT);
  CHECK(bugu_filter_count_u64(NULL, 1, &count) == BUGU_INVALID_ARGUMENT);
  CHECK(bugu_filter_stats(NULL, &stats) == BUGU_INVALID_ARGUMENT);
  CHECK(bugu_growable_insert_u64(NULL, 1) == BUGU_INVALID_ARGUMENT);
  bugu_filter *f = NULL;
  CHECK(bugu_filter_new(100, 0.01, &f) == BUGU_OK);
  CHECK(bugu_filter_insert(f, NULL, 5) == BUGU_INVALID_ARGUMENT);
  CHECK(bugu_filter_insert_str(f, NULL) == BUGU_INVALID_ARGUMENT);
  CHECK(bugu_filter_contains_str(f, "a", NULL) == BUGU_INVALID_ARGUMENT);
  CHECK(bugu_filter_stats(f, NULL) == BUGU_INVALID_ARGUMENT);
  CHECK(bugu_filter_dump_buckets(f, NULL, NULL) == BUGU_INVALID_ARGUMENT);
  CHECK(bugu_filter_save(f, NULL) == BUGU_INVALID_ARGUMENT);
  CHECK(bugu_filter_load(NULL, &f) == BUGU_INVALID_ARGUMENT);
  CHECK(bugu_filter_stats(f, &stats) == BUGU_OK && stats.items == 0);
  bugu_filter_free(f);
  bugu_filter_free(NULL);
  bugu_growable_free(NULL);
}

static void test_full(void) {
  bugu_filter *f = NULL;
  CHECK(bugu_filter_new(100, 0.01, &f) == BUGU_OK);
  uint64_t stored = 0;
  bugu_status status = BUGU_OK;
  while ((status = bugu_filter_insert_u64(f, stored)) == BUGU_OK) stored++;
  CHECK(status == BUGU_FULL && stored >= 100);
  bugu_stats stats;
  CHECK(bugu_filter_stats(f, &stats) == BUGU_OK && stats.items == stored);
  for (uint64_t i = 0; i < stored; i++) {
    bool found = false;
    CHECK(bugu_filter_contains_u64(f, i, &found) == BUGU_OK && found);
  }
  bugu_filter_free(f);
  /* The copy limit: 2 x bucket size copies of one key. */
  CHECK(bugu_filter_new(1000, 0.01, &f) == BUGU_OK);
  for (int i = 0; i < 8; i++) CHECK(bugu_filter_insert_str(f, "again") == BUGU_OK);
  CHECK(bugu_filter_insert_str(f, "again") == BUGU_COPY_LIMIT);
  bugu_filter_free(f);
}

static void test_growable(void) {
  bugu_growable *g = NULL;
  CHECK(bugu_growable_new(100, 0.001, &g) == BUGU_OK);
  for (uint64_t i = 0; i < 10000; i++) CHECK(bugu_growable_insert_u64(g, i) == BUGU_OK);
  bugu_stats stats;
  CHECK(bugu_growable_stats(g, &stats) == BUGU_OK);
  CHECK(stats.items == 10000 && stats.levels > 1 && stats.target_false_positive_rate == 0.001);
  CHECK(stats.false_positive_rate_bound < stats.target_false_positive_rate);
  CHECK(stats.expected_false_positive_rate <= stats.false_positive_rate_bound);
  for (uint64_t i = 0; i < 10000; i++) {
    bool found = false;
    CHECK(bugu_growable_contains_u64(g, i, &found) == BUGU_OK && found);
  }
  CHECK(bugu_growable_insert_str(g, "x") == BUGU_OK);
  bool removed = false;
  CHECK(bugu_growable_remove_str(g, "x", &removed) == BUGU_OK && removed);
  size_t need = 0;
  CHECK(bugu_growable_to_buffer(g, NULL, 0, &need) == BUGU_BUFFER_TOO_SMALL);
  unsigned char *buffer = malloc(need);
  CHECK(bugu_growable_to_buffer(g, buffer, need, &need) == BUGU_OK);
  bugu_growable *copy = NULL;
  CHECK(bugu_growable_from_buffer(buffer, need, &copy) == BUGU_OK);
  bool found = false;
  CHECK(bugu_growable_contains_i64(copy, 9999, &found) == BUGU_OK && found);
  size_t slots = 0;
  CHECK(bugu_growable_dump_buckets(copy, count_slots, &slots) == BUGU_OK && slots == 10000);
  bugu_filter *wrong = NULL;
  CHECK(bugu_filter_from_buffer(buffer, need, &wrong) == BUGU_CORRUPT);
  free(buffer);
  bugu_growable_free(copy);
  bugu_growable_free(g);
  CHECK(bugu_growable_new(0, 0.001, &g) == BUGU_INVALID_ARGUMENT);
}

int main(void) {
  test_keys();
  test_config_and_batches();
  test_nulls();
  test_full();
  test_growable();
  puts("api: ok");
  return 0;
}
