/* Hostile bytes to load: every truncation, every single-byte change and random garbage are
 * refused or read as a valid filter, never a crash (the sanitizers watch). */
#include <stdint.h>
#include <string.h>
#include "check.h"

int main(void) {
  bugu_filter *f = NULL;
  CHECK(bugu_filter_new(64, 0.01, &f) == BUGU_OK);
  for (uint64_t i = 0; i < 40; i++) CHECK(bugu_filter_insert_u64(f, i) == BUGU_OK);
  size_t len = 0;
  CHECK(bugu_filter_to_buffer(f, NULL, 0, &len) == BUGU_BUFFER_TOO_SMALL);
  unsigned char *good = malloc(len);
  CHECK(bugu_filter_to_buffer(f, good, len, &len) == BUGU_OK);
  bugu_filter_free(f);

  for (size_t cut = 0; cut < len; cut++) {
    /* An exact-size heap copy, so that ASan catches any read past the end. */
    unsigned char *part = malloc(cut ? cut : 1);
    memcpy(part, good, cut);
    bugu_filter *out = NULL;
    CHECK(bugu_filter_from_buffer(part, cut, &out) == BUGU_CORRUPT && out == NULL);
    bugu_growable *g = NULL;
    CHECK(bugu_growable_from_buffer(part, cut, &g) == BUGU_CORRUPT && g == NULL);
    free(part);
  }
  size_t refused = 0;
  for (size_t at = 0; at < len; at++) {
    unsigned char *bad = malloc(len);
    memcpy(bad, good, len);
    bad[at] ^= 0x5a;
    bugu_filter *out = NULL;
    bugu_status status = bugu_filter_from_buffer(bad, len, &out);
    CHECK(status == BUGU_OK || status == BUGU_CORRUPT);
    refused += status == BUGU_CORRUPT;
    bugu_filter_free(out);
    free(bad);
  }
  CHECK(refused == len); /* the checksum covers every byte */
  uint64_t state = 0x9e3779b97f4a7c15u;
  for (int round = 0; round < 200; round++) {
    size_t n = (size_t)(state % 512);
    unsigned char *junk = malloc(n + 1);
    for (size_t i = 0; i < n; i++) {
      state ^= state << 13; state ^= state >> 7; state ^= state << 17;
      junk[i] = (unsigned char)state;
    }
    if (n >= 8) memcpy(junk, good, 8); /* past the magic, into the header */
    bugu_filter *out = NULL;
    CHECK(bugu_filter_from_buffer(junk, n, &out) != BUGU_OK);
    free(junk);
  }
  bugu_filter *out = NULL;
  CHECK(bugu_filter_from_buffer(NULL, 10, &out) == BUGU_INVALID_ARGUMENT);
  CHECK(bugu_filter_from_buffer(good, len, NULL) == BUGU_INVALID_ARGUMENT);
  free(good);
  puts("hostile: ok");
  return 0;
}
