// Both headers compile as C++ and link from a C++ program.
#include "bugu.h"
#include "cuckoo_filter.h"
#include <cstdio>
#include <string>

int main() {
  bugu_filter *filter = nullptr;
  if (bugu_filter_new(100, 0.01, &filter) != BUGU_OK) return 1;
  std::string key = "c++";
  bool found = false;
  if (bugu_filter_insert(filter, key.data(), key.size()) != BUGU_OK) return 1;
  if (bugu_filter_contains_str(filter, "c++", &found) != BUGU_OK || !found) return 1;
  if (cf_contains_str(filter, "c++") != 1) return 1;
  bugu_filter_free(filter);
  std::puts("header.cpp: ok");
  return 0;
}
