/* bugu_expanding: a filter grown in one table from 100 to 100,000 keys keeps every key, stays
 * under its target rate, removes exactly, and round-trips through a file and a buffer; bad
 * settings and NULL handles are refused, and growth past the declared maximum is BUGU_FULL.
 * `expanding write FILE KEY...` saves a filter of those keys; `expanding check FILE KEY...` exits
 * 0 if the file's filter holds every key, 1 if not (for files shared with the bugu command). */
#include <string.h>
#include <unistd.h>
#include "check.h"

static bugu_stats stats_of(const bugu_expanding *e) {
  bugu_stats stats;
  CHECK(bugu_expanding_stats(e, &stats) == BUGU_OK);
  return stats;
}

static int holds(const bugu_expanding *e, uint64_t key) {
  bool found = false;
  CHECK(bugu_expanding_contains_u64(e, key, &found) == BUGU_OK);
  return found;
}

static int with_file(const char *mode, const char *path, int n, char **keys) {
  bugu_expanding *e = NULL;
  if (strcmp(mode, "write") == 0) {
    CHECK(bugu_expanding_new(100, 0.001, &e) == BUGU_OK);
    for (int i = 0; i < n; i++) CHECK(bugu_expanding_insert_str(e, keys[i]) == BUGU_OK);
    CHECK(bugu_expanding_save(e, path) == BUGU_OK);
    bugu_expanding_free(e);
    return 0;
  }
  CHECK(strcmp(mode, "check") == 0 && bugu_expanding_load(path, &e) == BUGU_OK);
  int all = 1;
  for (int i = 0; i < n; i++) {
    bool found = false;
    CHECK(bugu_expanding_contains_str(e, keys[i], &found) == BUGU_OK);
    all &= found;
  }
  bugu_expanding_free(e);
  return all ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc >= 3) return with_file(argv[1], argv[2], argc - 3, argv + 3);
  const char *dir = "/tmp";
  bugu_expanding_config config = bugu_expanding_config_default(100);
  CHECK(config.initial_capacity == 100 && config.false_positive_rate == 0.001);
  CHECK(config.max_items == ((uint64_t)1 << 32) && config.seed == 0);

  bugu_expanding *e = NULL;
  CHECK(bugu_expanding_new(100, 0.001, &e) == BUGU_OK && e != NULL);
  for (uint64_t key = 0; key < 100000; key++) CHECK(bugu_expanding_insert_u64(e, key) == BUGU_OK);
  CHECK(bugu_expanding_insert_str(e, "alpha") == BUGU_OK);
  bugu_stats stats = stats_of(e);
  CHECK(stats.items == 100001 && stats.levels == 1 && stats.bucket_size == 4);
  CHECK(stats.capacity >= stats.items && stats.load_factor > 0.5 && stats.load_factor < 1.0);
  CHECK(stats.false_positive_rate_bound > 0.0 && stats.false_positive_rate_bound <= 0.001);
  CHECK(stats.target_false_positive_rate == 0.001);
  CHECK(stats.expected_false_positive_rate <= stats.false_positive_rate_bound);
  for (uint64_t key = 0; key < 100000; key++) CHECK(holds(e, key));
  size_t false_positives = 0;
  for (uint64_t key = 1000000000; key < 1000100000; key++) false_positives += holds(e, key);
  CHECK(false_positives < 300); /* under 0.001 of 100,000, with room for chance */

  /* Exact removal: every even key goes, every odd key stays. */
  for (uint64_t key = 0; key < 100000; key += 2) {
    bool removed = false;
    CHECK(bugu_expanding_remove_u64(e, key, &removed) == BUGU_OK && removed);
  }
  for (uint64_t key = 1; key < 100000; key += 2) CHECK(holds(e, key));

  /* A file and a buffer answer as the filter does. */
  char path[512];
  snprintf(path, sizeof path, "%s/bugu-expanding-%d.bugu", dir, (int)getpid());
  CHECK(bugu_expanding_save(e, path) == BUGU_OK);
  bugu_expanding *loaded = NULL;
  CHECK(bugu_expanding_load(path, &loaded) == BUGU_OK);
  remove(path);
  size_t written = 0;
  CHECK(bugu_expanding_to_buffer(e, NULL, 0, &written) == BUGU_BUFFER_TOO_SMALL && written > 0);
  unsigned char *bytes = malloc(written);
  CHECK(bytes != NULL && bugu_expanding_to_buffer(e, bytes, written, &written) == BUGU_OK);
  bugu_expanding *copy = NULL;
  CHECK(bugu_expanding_from_buffer(bytes, written, &copy) == BUGU_OK);
  for (uint64_t key = 0; key < 100000; key++) {
    CHECK(holds(loaded, key) == holds(e, key) && holds(copy, key) == holds(e, key));
  }
  CHECK(stats_of(copy).items == stats_of(e).items);
  /* Damaged bytes are refused. */
  bytes[written / 2] ^= 1;
  bugu_expanding *damaged = (bugu_expanding *)1;
  CHECK(bugu_expanding_from_buffer(bytes, written, &damaged) == BUGU_CORRUPT && damaged == (bugu_expanding *)1);
  free(bytes);

  /* Bad settings and NULL handles. */
  config.false_positive_rate = 1.5;
  bugu_expanding *bad = (bugu_expanding *)1;
  CHECK(bugu_expanding_new_with(&config, &bad) == BUGU_INVALID_ARGUMENT && bad == (bugu_expanding *)1);
  CHECK(strstr(bugu_last_error_message(), "false-positive rate") != NULL);
  CHECK(bugu_expanding_insert_u64(NULL, 1) == BUGU_INVALID_ARGUMENT);
  CHECK(bugu_expanding_stats(NULL, &stats) == BUGU_INVALID_ARGUMENT);

  /* Past the size it was declared for, an insert is refused and changes nothing. */
  config = bugu_expanding_config_default(100);
  config.max_items = 1000;
  bugu_expanding *capped = NULL;
  CHECK(bugu_expanding_new_with(&config, &capped) == BUGU_OK);
  bugu_status status = BUGU_OK;
  uint64_t key = 0;
  for (; key < 1000000 && status == BUGU_OK; key++) status = bugu_expanding_insert_u64(capped, key);
  CHECK(status == BUGU_FULL && key > 1000);
  CHECK(stats_of(capped).items == key - 1);

  bugu_expanding_free(capped);
  bugu_expanding_free(copy);
  bugu_expanding_free(loaded);
  bugu_expanding_free(e);
  bugu_expanding_free(NULL);
  puts("expanding: ok");
  return 0;
}
