/* A minimal check macro for the C tests: prints the failed condition and exits non-zero. */
#ifndef BUGU_TEST_CHECK_H
#define BUGU_TEST_CHECK_H
#include <stdio.h>
#include <stdlib.h>
#include "bugu.h"
#define CHECK(cond)                                                                              \
  do {                                                                                           \
    if (!(cond)) {                                                                               \
      fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__, __LINE__, #cond,  \
              bugu_last_error_message());                                                        \
      exit(1);                                                                                   \
    }                                                                                            \
  } while (0)
#endif
