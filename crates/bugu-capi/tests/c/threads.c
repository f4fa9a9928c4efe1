/* Eight threads insert and query one bugu_filter at once, with no lock of their own: no key a
 * thread inserted ever reads absent, and every insert is counted. */
#include <pthread.h>
#include <stdint.h>
#include "check.h"

enum { THREADS = 8, PER_THREAD = 20000 };
static bugu_filter *shared;

static void *work(void *arg) {
  uint64_t base = (uint64_t)(uintptr_t)arg * PER_THREAD;
  for (uint64_t i = 0; i < PER_THREAD; i++) {
    CHECK(bugu_filter_insert_u64(shared, base + i) == BUGU_OK);
    bool found = false;
    CHECK(bugu_filter_contains_u64(shared, base + i, &found) == BUGU_OK && found);
    if (i % 64 == 0) {
      for (uint64_t j = 0; j <= i; j += 97) {
        CHECK(bugu_filter_contains_u64(shared, base + j, &found) == BUGU_OK && found);
      }
    }
  }
  return NULL;
}

int main(void) {
  CHECK(bugu_filter_new(THREADS * PER_THREAD, 0.001, &shared) == BUGU_OK);
  pthread_t threads[THREADS];
  for (uintptr_t t = 0; t < THREADS; t++) CHECK(pthread_create(&threads[t], NULL, work, (void *)t) == 0);
  for (int t = 0; t < THREADS; t++) CHECK(pthread_join(threads[t], NULL) == 0);
  bugu_stats stats;
  CHECK(bugu_filter_stats(shared, &stats) == BUGU_OK && stats.items == THREADS * PER_THREAD);
  for (uint64_t k = 0; k < THREADS * PER_THREAD; k++) {
    bool found = false;
    CHECK(bugu_filter_contains_u64(shared, k, &found) == BUGU_OK && found);
  }
  bugu_filter_free(shared);
  puts("threads: ok");
  return 0;
}
