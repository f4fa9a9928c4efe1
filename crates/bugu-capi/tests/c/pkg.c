/* Built with the flags `pkg-config --cflags --libs bugu` gives, against an installed copy. */
#include <stdio.h>
#include <bugu.h>
#include <cuckoo_filter.h>

int main(void) {
  cuckoo_filter_t *cf = cf_create(1000, 0.001);
  bool found = false;
  if (cf == NULL || cf_insert_str(cf, "installed") != 0) return 1;
  bugu_filter *f = NULL;
  if (bugu_filter_new(100, 0.01, &f) != BUGU_OK || bugu_filter_insert_str(f, "installed") != BUGU_OK) return 1;
  if (bugu_filter_contains_str(f, "installed", &found) != BUGU_OK || !found) return 1;
  if (cf_contains_str(cf, "installed") != 1) return 1;
  bugu_filter_free(f);
  cf_destroy(cf);
  printf("pkg: ok\n");
  return 0;
}
