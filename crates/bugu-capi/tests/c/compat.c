/* The compatibility header: the cf_* shape and its return conventions. */
#include "cuckoo_filter.h"
#include "check.h"

int main(void) {
  cuckoo_filter_t *cf = cf_create(1000, 0.001);
  CHECK(cf != NULL);
  CHECK(cf_insert(cf, "abc", 3) == 0);
  CHECK(cf_contains(cf, "abc", 3) == 1);
  CHECK(cf_contains_str(cf, "abc") == 1); /* a string is its bytes */
  CHECK(cf_delete(cf, "abc", 3) == 0);
  CHECK(cf_delete(cf, "abc", 3) == -1);
  CHECK(cf_contains(cf, "abc", 3) == 0);
  CHECK(cf_insert_str(cf, "user_1") == 0 && cf_contains_str(cf, "user_1") == 1);
  CHECK(cf_delete_str(cf, "user_1") == 0 && cf_delete_str(cf, "user_1") == -1);
  CHECK(cf_insert_int(cf, -42) == 0 && cf_contains_int(cf, -42) == 1);
  CHECK(cf_insert_int(cf, 5) == 0 && cf_size(cf) == 2);
  CHECK(cf_load_factor(cf) > 0.0 && cf_load_factor(cf) < 0.01);
  CHECK(cf_delete_int(cf, -42) == 0 && cf_size(cf) == 1);
  cf_stats(cf);
  CHECK(cf_insert(NULL, "a", 1) == -1 && cf_contains(NULL, "a", 1) == 0 && cf_delete(NULL, "a", 1) == -1);
  CHECK(cf_insert(cf, NULL, 3) == -1 && cf_size(NULL) == 0);
  CHECK(cf_create(0, 0.01) == NULL && cf_create(10, 2.0) == NULL);
  for (int i = 0; i < 8; i++) CHECK(cf_insert_str(cf, "again") == 0);
  CHECK(cf_insert_str(cf, "again") == -1); /* the ninth copy of one key */
  cf_destroy(cf);
  puts("compat: ok");
  return 0;
}
