/* Files across front ends. `cli_file write PATH KEY...` saves a filter holding the string keys;
 * `cli_file check PATH KEY...` loads one (saved by the bugu command) and exits 0 if every key may
 * be present, 1 if one is absent. `growable` variants use bugu_growable. */
#include <string.h>
#include "check.h"

int main(int argc, char **argv) {
  CHECK(argc >= 3);
  int growable = strstr(argv[1], "growable") != NULL;
  if (strncmp(argv[1], "write", 5) == 0) {
    if (growable) {
      bugu_growable *g = NULL;
      CHECK(bugu_growable_new(10, 0.001, &g) == BUGU_OK);
      for (int i = 3; i < argc; i++) CHECK(bugu_growable_insert_str(g, argv[i]) == BUGU_OK);
      CHECK(bugu_growable_save(g, argv[2]) == BUGU_OK);
      bugu_growable_free(g);
    } else {
      bugu_filter *f = NULL;
      CHECK(bugu_filter_new(1000, 0.001, &f) == BUGU_OK);
      for (int i = 3; i < argc; i++) CHECK(bugu_filter_insert_str(f, argv[i]) == BUGU_OK);
      CHECK(bugu_filter_save(f, argv[2]) == BUGU_OK);
      bugu_filter_free(f);
    }
    return 0;
  }
  int absent = 0;
  bugu_filter *f = NULL;
  bugu_growable *g = NULL;
  CHECK(growable ? bugu_growable_load(argv[2], &g) == BUGU_OK : bugu_filter_load(argv[2], &f) == BUGU_OK);
  for (int i = 3; i < argc; i++) {
    bool found = false;
    CHECK(growable ? bugu_growable_contains_str(g, argv[i], &found) == BUGU_OK
                   : bugu_filter_contains_str(f, argv[i], &found) == BUGU_OK);
    absent += !found;
  }
  bugu_filter_free(f);
  bugu_growable_free(g);
  return absent ? 1 : 0;
}
