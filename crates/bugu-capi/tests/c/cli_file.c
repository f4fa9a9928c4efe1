/* Files across front ends. `cli_file write PATH KEY...` saves a filter holding the string keys;
 * `cli_file check PATH KEY...` loads one (saved by the bugu command) and exits 0 if every key may
 * be present, 1 if one is absent. `growable` variants use bugu_growable. `batch` variants insert
 * and look up with the batch functions; `write-batch` also stores the integers 1, 2, 3 (a u64
 * batch) and -1 (an i64 batch), which the command finds as the hex of their 8 little-endian bytes. */
#include <string.h>
#include "check.h"

static const uint64_t unsigned_keys[3] = {1, 2, 3};
static const int64_t signed_keys[1] = {-1};

static void write_filter(const char *path, const char *const *keys, size_t n, int batch) {
  bugu_filter *f = NULL;
  CHECK(bugu_filter_new(1000, 0.001, &f) == BUGU_OK);
  if (batch) {
    CHECK(bugu_filter_insert_str_batch(f, keys, n, NULL) == BUGU_OK);
    CHECK(bugu_filter_insert_u64_batch(f, unsigned_keys, 3, NULL) == BUGU_OK);
    CHECK(bugu_filter_insert_i64_batch(f, signed_keys, 1, NULL) == BUGU_OK);
  } else {
    for (size_t i = 0; i < n; i++) CHECK(bugu_filter_insert_str(f, keys[i]) == BUGU_OK);
  }
  CHECK(bugu_filter_save(f, path) == BUGU_OK);
  bugu_filter_free(f);
}

static void write_growable(const char *path, const char *const *keys, size_t n, int batch) {
  bugu_growable *g = NULL;
  CHECK(bugu_growable_new(10, 0.001, &g) == BUGU_OK);
  if (batch) {
    CHECK(bugu_growable_insert_str_batch(g, keys, n, NULL) == BUGU_OK);
    CHECK(bugu_growable_insert_u64_batch(g, unsigned_keys, 3, NULL) == BUGU_OK);
    CHECK(bugu_growable_insert_i64_batch(g, signed_keys, 1, NULL) == BUGU_OK);
  } else {
    for (size_t i = 0; i < n; i++) CHECK(bugu_growable_insert_str(g, keys[i]) == BUGU_OK);
  }
  CHECK(bugu_growable_save(g, path) == BUGU_OK);
  bugu_growable_free(g);
}

/* How many of the keys are absent: one by one, or in one batch. */
static int absent(const char *path, const char *const *keys, size_t n, int growable, int batch) {
  bugu_filter *f = NULL;
  bugu_growable *g = NULL;
  CHECK(growable ? bugu_growable_load(path, &g) == BUGU_OK : bugu_filter_load(path, &f) == BUGU_OK);
  bool found[64];
  CHECK(n <= 64);
  if (batch) {
    CHECK(growable ? bugu_growable_contains_str_batch(g, keys, n, found) == BUGU_OK
                   : bugu_filter_contains_str_batch(f, keys, n, found) == BUGU_OK);
  }
  int missing = 0;
  for (size_t i = 0; i < n; i++) {
    if (!batch) {
      CHECK(growable ? bugu_growable_contains_str(g, keys[i], &found[i]) == BUGU_OK
                     : bugu_filter_contains_str(f, keys[i], &found[i]) == BUGU_OK);
    }
    missing += !found[i];
  }
  bugu_filter_free(f);
  bugu_growable_free(g);
  return missing;
}

int main(int argc, char **argv) {
  CHECK(argc >= 3);
  int growable = strstr(argv[1], "growable") != NULL;
  int batch = strstr(argv[1], "batch") != NULL;
  const char *const *keys = (const char *const *)argv + 3;
  size_t n = (size_t)argc - 3;
  if (strncmp(argv[1], "write", 5) == 0) {
    (growable ? write_growable : write_filter)(argv[2], keys, n, batch);
    return 0;
  }
  return absent(argv[2], keys, n, growable, batch) ? 1 : 0;
}
