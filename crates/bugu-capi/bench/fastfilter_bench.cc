// The same work as capi_bench.c through the C++ reference cuckoo filter of FastFilter's
// fastfilter_cpp (12-bit fingerprints, buckets of 4), compiled against a checkout given with -I
// (scripts/bench-capi); none of its code is in this repository.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <algorithm>
#include "cuckoofilter.h"

static uint64_t splitmix(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static double now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoull(argv[1], nullptr, 10) : 1000000;
  uint64_t *keys = new uint64_t[n], *absent = new uint64_t[n], state = 42;
  for (size_t i = 0; i < n; i++) keys[i] = splitmix(&state);
  for (size_t i = 0; i < n; i++) absent[i] = splitmix(&state);
  double insert[3], present[3], missing[3];
  size_t hits = 0;
  for (int run = 0; run < 3; run++) {
    auto *f = new cuckoofilter::CuckooFilter<uint64_t, 12>(n);
    double t = now();
    for (size_t i = 0; i < n; i++) {
      if (f->Add(keys[i]) != cuckoofilter::Ok) return 1;
    }
    insert[run] = (now() - t) / n;
    t = now();
    for (size_t i = 0; i < n; i++) hits += f->Contain(keys[i]) == cuckoofilter::Ok;
    present[run] = (now() - t) / n;
    t = now();
    for (size_t i = 0; i < n; i++) hits += f->Contain(absent[i]) == cuckoofilter::Ok;
    missing[run] = (now() - t) / n;
    delete f;
  }
  std::sort(insert, insert + 3);
  std::sort(present, present + 3);
  std::sort(missing, missing + 3);
  printf("%-24s n=%-9zu insert %6.1f  contains(present) %6.1f  contains(absent) %6.1f ns/key\n",
         "FastFilter C++ Cuckoo12", n, insert[1], present[1], missing[1]);
  fprintf(stderr, "(hits: %zu)\n", hits);
  delete[] keys;
  delete[] absent;
  return 0;
}
