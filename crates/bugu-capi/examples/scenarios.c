/* Two scenarios in C against the bugu library, printing their counts.
 *
 * Database front: a filter of the user ids present in a table answers "certainly absent" for most
 * lookups of missing ids, so only the rest reach the database.
 * CDN cache: an object is cached on its second request only (one-hit wonders never take cache
 * space); a growable filter remembers the URLs seen once, with no size fixed in advance.
 *
 * Build: cargo build --release -p bugu-capi
 *        gcc -O2 -Icrates/bugu-capi/include crates/bugu-capi/examples/scenarios.c \
 *            target/release/libbugu_capi.a -lpthread -ldl -lm -o scenarios && ./scenarios */
#include <stdint.h>
#include <stdio.h>
#include "bugu.h"

static uint64_t next(uint64_t *state) { /* splitmix64 */
  uint64_t z = (*state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static int fail(const char *what) {
  fprintf(stderr, "%s: %s\n", what, bugu_last_error_message());
  return 1;
}

static int database_front(void) {
  enum { ROWS = 200000, LOOKUPS = 400000 };
  bugu_filter *users = NULL;
  if (bugu_filter_new(ROWS, 0.001, &users) != BUGU_OK) return fail("database front");
  /* The table holds the even ids below 2 * ROWS. */
  for (uint64_t id = 0; id < 2 * ROWS; id += 2) {
    if (bugu_filter_insert_u64(users, id) != BUGU_OK) return fail("insert");
  }
  uint64_t state = 1, to_database = 0, present = 0, false_positives = 0;
  for (int i = 0; i < LOOKUPS; i++) {
    uint64_t id = next(&state) % (4 * ROWS);
    bool maybe = false;
    if (bugu_filter_contains_u64(users, id, &maybe) != BUGU_OK) return fail("contains");
    if (!maybe) continue; /* certainly absent: no query */
    to_database++;
    int in_table = id < 2 * ROWS && id % 2 == 0;
    present += in_table;
    false_positives += !in_table;
  }
  printf("database front: %d lookups, %llu reached the database (%llu present, %llu false positives), "
         "%llu answered by the filter alone\n",
         LOOKUPS, (unsigned long long)to_database, (unsigned long long)present,
         (unsigned long long)false_positives, (unsigned long long)(LOOKUPS - to_database));
  bugu_filter_free(users);
  return 0;
}

static int cdn_cache(void) {
  enum { REQUESTS = 500000, POPULAR = 2000, LONG_TAIL = 1000000 };
  bugu_growable *seen_once = NULL;
  bugu_filter *cached = NULL;
  if (bugu_growable_new(1000, 0.001, &seen_once) != BUGU_OK) return fail("seen-once filter");
  if (bugu_filter_new(LONG_TAIL, 0.001, &cached) != BUGU_OK) return fail("cache index");
  uint64_t state = 7, hits = 0, admitted = 0, one_hit_skipped = 0;
  char url[64];
  for (int i = 0; i < REQUESTS; i++) {
    /* Half the requests go to a few popular objects, half to a long tail. */
    uint64_t r = next(&state);
    uint64_t object = (r & 1) ? r % POPULAR : POPULAR + (r >> 1) % LONG_TAIL;
    snprintf(url, sizeof url, "/objects/%llu.jpg", (unsigned long long)object);
    bool in_cache = false, added = false;
    if (bugu_filter_contains_str(cached, url, &in_cache) != BUGU_OK) return fail("cache lookup");
    if (in_cache) {
      hits++;
      continue;
    }
    if (bugu_growable_insert_unique_str(seen_once, url, &added) != BUGU_OK) return fail("seen-once insert");
    if (added) {
      one_hit_skipped++; /* first request: remember it, do not cache */
    } else {
      if (bugu_filter_insert_str(cached, url) != BUGU_OK) return fail("cache insert");
      admitted++;
    }
  }
  bugu_stats stats;
  if (bugu_growable_stats(seen_once, &stats) != BUGU_OK) return fail("stats");
  printf("cdn cache: %d requests, %llu hits, %llu objects admitted on a second request, "
         "%llu first requests not cached; seen-once filter: %zu items in %zu levels, %.1f bits/item, "
         "false-positive rate under %.2g (target %.2g)\n",
         REQUESTS, (unsigned long long)hits, (unsigned long long)admitted, (unsigned long long)one_hit_skipped,
         stats.items, stats.levels, stats.bits_per_item, stats.false_positive_rate_bound,
         stats.target_false_positive_rate);
  bugu_growable_free(seen_once);
  bugu_filter_free(cached);
  return 0;
}

int main(void) { return database_front() || cdn_cache(); }
