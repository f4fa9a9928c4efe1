/* cuckoo_filter.h: the common cf_* shape of C cuckoo filters, as thin inline wrappers over bugu.h.
 * A program written against that shape switches by changing its include and link line (-lbugu_capi).
 * Every function is safe from many threads at once on one filter: no mutex is needed.
 * Conventions: cf_insert* returns 0 on success and -1 on failure; cf_contains* 1 or 0;
 * cf_delete* 0 when a copy was removed and -1 otherwise. bugu_last_error_message() says why. */
#ifndef BUGU_CUCKOO_FILTER_H
#define BUGU_CUCKOO_FILTER_H

#include <stdio.h>
#include "bugu.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef bugu_filter cuckoo_filter_t;

/* A filter for `expected` items at false-positive rate `fpr`; NULL on failure. */
static inline cuckoo_filter_t *cf_create(uint32_t expected, double fpr) {
  bugu_filter *filter = NULL;
  return bugu_filter_new(expected, fpr, &filter) == BUGU_OK ? filter : NULL;
}

static inline void cf_destroy(cuckoo_filter_t *cf) { bugu_filter_free(cf); }

static inline int cf_insert(cuckoo_filter_t *cf, const void *data, size_t len) {
  return bugu_filter_insert(cf, data, len) == BUGU_OK ? 0 : -1;
}

static inline int cf_contains(const cuckoo_filter_t *cf, const void *data, size_t len) {
  bool found = false;
  return bugu_filter_contains(cf, data, len, &found) == BUGU_OK && found ? 1 : 0;
}

static inline int cf_delete(cuckoo_filter_t *cf, const void *data, size_t len) {
  bool removed = false;
  return bugu_filter_remove(cf, data, len, &removed) == BUGU_OK && removed ? 0 : -1;
}

static inline int cf_insert_str(cuckoo_filter_t *cf, const char *s) {
  return bugu_filter_insert_str(cf, s) == BUGU_OK ? 0 : -1;
}

static inline int cf_contains_str(const cuckoo_filter_t *cf, const char *s) {
  bool found = false;
  return bugu_filter_contains_str(cf, s, &found) == BUGU_OK && found ? 1 : 0;
}

static inline int cf_delete_str(cuckoo_filter_t *cf, const char *s) {
  bool removed = false;
  return bugu_filter_remove_str(cf, s, &removed) == BUGU_OK && removed ? 0 : -1;
}

static inline int cf_insert_int(cuckoo_filter_t *cf, int64_t value) {
  return bugu_filter_insert_i64(cf, value) == BUGU_OK ? 0 : -1;
}

static inline int cf_contains_int(const cuckoo_filter_t *cf, int64_t value) {
  bool found = false;
  return bugu_filter_contains_i64(cf, value, &found) == BUGU_OK && found ? 1 : 0;
}

static inline int cf_delete_int(cuckoo_filter_t *cf, int64_t value) {
  bool removed = false;
  return bugu_filter_remove_i64(cf, value, &removed) == BUGU_OK && removed ? 0 : -1;
}

/* Items stored (0 for a NULL filter). */
static inline size_t cf_size(const cuckoo_filter_t *cf) {
  bugu_stats stats;
  return bugu_filter_stats(cf, &stats) == BUGU_OK ? stats.items : 0;
}

/* Stored items over slots (0 for a NULL filter). */
static inline double cf_load_factor(const cuckoo_filter_t *cf) {
  bugu_stats stats;
  return bugu_filter_stats(cf, &stats) == BUGU_OK ? stats.load_factor : 0.0;
}

/* Prints the filter's statistics to standard output. */
static inline void cf_stats(const cuckoo_filter_t *cf) {
  bugu_stats s;
  if (bugu_filter_stats(cf, &s) != BUGU_OK) {
    printf("cuckoo filter: %s\n", bugu_last_error_message());
    return;
  }
  printf("cuckoo filter: %zu items, capacity %zu, %zu buckets x %zu slots of %u bits\n", s.items, s.capacity,
         s.buckets, s.bucket_size, (unsigned)s.fingerprint_bits);
  printf("  load %.2f%%, %.2f bits/item, false-positive rate <= %.6f, %zu bytes\n", s.load_factor * 100.0,
         s.bits_per_item, s.false_positive_rate_bound, s.memory_bytes);
}

#ifdef __cplusplus
}
#endif

#endif /* BUGU_CUCKOO_FILTER_H */
