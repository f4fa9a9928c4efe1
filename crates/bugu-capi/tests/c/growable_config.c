/* bugu_growable_config: the defaults, every setting taking effect, and bad settings refused with
 * BUGU_INVALID_ARGUMENT and a message naming them. */
#include <string.h>
#include "check.h"

static bugu_stats stats_of(const bugu_growable *g) {
  bugu_stats stats;
  CHECK(bugu_growable_stats(g, &stats) == BUGU_OK);
  return stats;
}

/* Inserts the keys [from, to) one by one; the status of the first that fails, else BUGU_OK. */
static bugu_status fill(bugu_growable *g, uint64_t from, uint64_t to) {
  for (uint64_t key = from; key < to; key++) {
    bugu_status status = bugu_growable_insert_u64(g, key);
    if (status != BUGU_OK) return status;
  }
  return BUGU_OK;
}

static bugu_growable *built(const bugu_growable_config *config) {
  bugu_growable *g = NULL;
  CHECK(bugu_growable_new_with(config, &g) == BUGU_OK && g != NULL);
  return g;
}

/* The bytes of a filter holding the keys [0, 100). */
static size_t bytes_of(const bugu_growable_config *config, unsigned char *buffer, size_t capacity) {
  bugu_growable *g = built(config);
  CHECK(fill(g, 0, 100) == BUGU_OK);
  size_t written = 0;
  CHECK(bugu_growable_to_buffer(g, buffer, capacity, &written) == BUGU_OK);
  bugu_growable_free(g);
  return written;
}

static void refused(const bugu_growable_config *config, const char *message) {
  bugu_growable *g = (bugu_growable *)1;
  CHECK(bugu_growable_new_with(config, &g) == BUGU_INVALID_ARGUMENT);
  CHECK(g == (bugu_growable *)1);
  if (strstr(bugu_last_error_message(), message) == NULL) {
    fprintf(stderr, "expected \"%s\" in \"%s\"\n", message, bugu_last_error_message());
    exit(1);
  }
}

int main(void) {
  bugu_growable_config config = bugu_growable_config_default(100);
  CHECK(config.initial_capacity == 100 && config.false_positive_rate == 0.001);
  CHECK(config.growth_factor == 2 && config.tightening == BUGU_TIGHTENING_GEOMETRIC);
  CHECK(config.tightening_ratio > 0.0 && config.tightening_ratio < 1.0);
  CHECK(config.max_capacity == 0 && config.max_levels == 0 && config.bucket_size == 4);
  CHECK(config.eviction_limit == 500 && config.seed == 0);

  /* The growth factor: the second level is four times the first. */
  config.growth_factor = 4;
  bugu_growable *g = built(&config);
  CHECK(stats_of(g).capacity == 100 && stats_of(g).levels == 1);
  CHECK(fill(g, 0, 300) == BUGU_OK);
  CHECK(stats_of(g).levels == 2 && stats_of(g).capacity == 500);
  CHECK(stats_of(g).false_positive_rate_bound < 0.001);
  bugu_growable_free(g);

  /* Bucket size, P-series tightening, a limit on levels. */
  config = bugu_growable_config_default(100);
  config.bucket_size = 8;
  config.tightening = BUGU_TIGHTENING_PSERIES;
  config.max_levels = 2;
  config.false_positive_rate = 0.01;
  g = built(&config);
  CHECK(stats_of(g).bucket_size == 8);
  CHECK(fill(g, 0, 100000) == BUGU_FULL);
  CHECK(stats_of(g).levels == 2 && stats_of(g).false_positive_rate_bound < 0.01);
  bugu_growable_free(g);

  /* A maximum capacity. */
  config = bugu_growable_config_default(100);
  config.max_capacity = 250;
  g = built(&config);
  CHECK(fill(g, 0, 250) == BUGU_OK && fill(g, 250, 251) == BUGU_FULL);
  CHECK(stats_of(g).items == 250 && stats_of(g).capacity == 250);
  bugu_growable_free(g);

  /* The seed and the eviction limit: the same settings give the same bytes; another seed
   * other bytes. */
  static unsigned char a[1 << 16], b[1 << 16];
  config = bugu_growable_config_default(1000);
  config.eviction_limit = 50;
  size_t len = bytes_of(&config, a, sizeof a);
  CHECK(bytes_of(&config, b, sizeof b) == len && memcmp(a, b, len) == 0);
  config.seed = 7;
  CHECK(bytes_of(&config, b, sizeof b) == len && memcmp(a, b, len) != 0);

  /* Bad settings. */
  config = bugu_growable_config_default(100);
  config.growth_factor = 1;
  refused(&config, "growth factor");
  config = bugu_growable_config_default(100);
  config.tightening = 7;
  refused(&config, "tightening must be");
  config.tightening = BUGU_TIGHTENING_GEOMETRIC;
  config.tightening_ratio = 1.5;
  refused(&config, "tightening ratio");
  config = bugu_growable_config_default(100);
  config.bucket_size = 3;
  refused(&config, "bucket");
  config = bugu_growable_config_default(0);
  refused(&config, "capacity");
  config = bugu_growable_config_default(100);
  config.false_positive_rate = 0.0;
  refused(&config, "rate");
  config = bugu_growable_config_default(100);
  config.max_capacity = 50;
  refused(&config, "maximum capacity 50");
  config = bugu_growable_config_default(100);
  config.eviction_limit = 1 << 20;
  refused(&config, "eviction");
  refused(NULL, "config is NULL");
  config = bugu_growable_config_default(100);
  CHECK(bugu_growable_new_with(&config, NULL) == BUGU_INVALID_ARGUMENT);
  printf("growable_config: ok\n");
  return 0;
}
