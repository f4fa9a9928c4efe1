"""bugu against rbloom, pyprobables' CuckooFilter and a Python set: 10^6 str keys and 10^6 int
keys, inserts and lookups per second one by one and in batches, measured false-positive rate and
memory. Prints a table per key type and the targets, met or missed; then how two threads
calling contains_many at once scale over one.

Run (a venv with the bugu wheel, rbloom and pyprobables; not needed by the tests):

    python3 -m venv target/bench-venv
    target/bench-venv/bin/pip install target/wheels/bugu-py/*.whl rbloom==1.5.4 pyprobables==0.7.0
    target/bench-venv/bin/python crates/bugu-py/bench/bench.py

Each figure is the median of --repeats timed runs (pyprobables, pure Python: one run), every
structure measured in the same run, so the ratios compare like with like on a noisy machine.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import math
import statistics
import sys
import threading
import time
import tracemalloc

import bugu
import rbloom
from probables import CuckooFilter as ProbablesCuckoo

P = 0.001


def timed(work, repeats: int) -> float:
    """The median seconds of `work()` (each call gets a fresh structure from `work` itself)."""
    times = []
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def python_bytes(build):
    """What `build()` allocates through Python's allocator, and its result."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    made = build()
    used = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return made, used


class Row:
    def __init__(self, name, setting):
        self.name, self.setting = name, setting
        self.add1 = self.add_batch = self.in1 = self.in_batch = math.nan
        self.fpr = math.nan
        self.memory = 0


def measure(key_kind: str, n: int, repeats: int):
    if key_kind == "str":
        keys = [f"user:{i}" for i in range(n)]
        absent = [f"nobody:{i}" for i in range(n)]
    else:
        keys = list(range(n))
        absent = list(range(-n, 0))
    rows = []

    def bugu_row(name, setting, make):
        row = Row(name, setting)

        def one_by_one():
            f = make()
            add = f.add
            for key in keys:
                add(key)

        row.add1 = n / timed(one_by_one, repeats)
        row.add_batch = n / timed(lambda: make().update(keys), repeats)
        f = make()
        f.update(keys)
        row.in1 = n / timed(lambda: [key in f for key in keys], repeats)
        row.in_batch = n / timed(lambda: f.contains_many(keys), repeats)
        assert all(f.contains_many(keys))
        row.fpr = sum(f.contains_many(absent)) / n
        row.memory = f.memory_bytes
        rows.append(row)
        return row

    bugu_main = bugu_row("bugu.CuckooFilter", f"p={P}", lambda: bugu.CuckooFilter(n, P))
    bugu_row("bugu.CuckooFilter", "32-bit fp (as pyprobables' 4 bytes)", lambda: bugu.CuckooFilter(n, fingerprint_bits=32))
    bugu_row("bugu.GrowableFilter", f"p={P}, from n/16", lambda: bugu.GrowableFilter(n // 16, P))

    def rbloom_row(setting, rate):
        row = Row("rbloom.Bloom", setting)

        def one_by_one():
            b = rbloom.Bloom(n, rate)
            add = b.add
            for key in keys:
                add(key)

        row.add1 = n / timed(one_by_one, repeats)
        row.add_batch = n / timed(lambda: rbloom.Bloom(n, rate).update(keys), repeats)
        b = rbloom.Bloom(n, rate)
        b.update(keys)
        row.in1 = n / timed(lambda: [key in b for key in keys], repeats)
        row.in_batch = row.in1  # no batch lookup: the `in` loop is rbloom's way
        row.fpr = sum(key in b for key in absent) / n
        row.memory = b.size_in_bits // 8
        rows.append(row)
        return row

    rbloom_main = rbloom_row(f"p={P}", P)
    rbloom_same = rbloom_row(f"p=bugu's measured {bugu_main.fpr:.5f}", max(bugu_main.fpr, 1e-6))

    # pyprobables sizes by buckets (of 4 slots) and hashes str(key); pure Python, so one run. Its
    # default 4-byte fingerprints: with narrower ones (init_error_rate(0.001) picks 13 bits, or
    # finger_size=2) version 0.7.0 stops counting adds and answers True to absent keys.
    buckets = math.ceil(n / 4 / 0.95)
    row = Row("pyprobables.CuckooFilter", f"32-bit fp, {buckets} buckets")

    def probables_add():
        f = ProbablesCuckoo(capacity=buckets, finger_size=4)
        for key in keys:
            f.add(str(key))
        return f

    gc.collect()
    start = time.perf_counter()
    probables, row.memory = python_bytes(probables_add)
    row.add1 = n / (time.perf_counter() - start)
    row.add_batch = row.add1  # no batch insert
    start = time.perf_counter()
    assert all(probables.check(str(key)) for key in keys)
    row.in1 = row.in_batch = n / (time.perf_counter() - start)
    row.fpr = sum(probables.check(str(key)) for key in absent) / n
    rows.append(row)
    probables_row = row
    del probables

    row = Row("set", "exact")

    def set_add():
        s = set()
        add = s.add
        for key in keys:
            add(key)

    row.add1 = n / timed(set_add, repeats)
    row.add_batch = n / timed(lambda: set().update(keys), repeats)
    s = set(keys)
    row.in1 = row.in_batch = n / timed(lambda: [key in s for key in keys], repeats)
    row.fpr = 0.0
    row.memory = sys.getsizeof(s) + (0 if key_kind == "int" and n <= 256 else sum(map(sys.getsizeof, keys)))
    rows.append(row)
    return rows, bugu_main, rbloom_main, rbloom_same, probables_row


def mops(value: float) -> str:
    return f"{value / 1e6:7.2f}"


def report(key_kind, rows):
    print(f"\n{key_kind} keys (M = millions of keys per second; memory in bytes, bits per key)")
    print(f"{'structure':26} {'setting':36} {'add 1x1':>8} {'add batch':>9} {'in 1x1':>8} {'in batch':>8} "
          f"{'meas. fpr':>10} {'memory':>12} {'bits/key':>8}")
    for row in rows:
        print(f"{row.name:26} {row.setting:36} {mops(row.add1):>8} {mops(row.add_batch):>9} {mops(row.in1):>8} "
              f"{mops(row.in_batch):>8} {row.fpr:10.6f} {row.memory:12,d} {row.memory * 8 / N:8.2f}")


def targets(key_kind, bugu_main, rbloom_main, rbloom_same, probables):
    checks = [
        ("add 1x1 >= rbloom add 1x1", bugu_main.add1 / rbloom_main.add1, 1.0),
        ("in 1x1 >= rbloom in 1x1", bugu_main.in1 / rbloom_main.in1, 1.0),
        ("add 1x1 >= 20x pyprobables", bugu_main.add1 / probables.add1, 20.0),
        ("in 1x1 >= 20x pyprobables", bugu_main.in1 / probables.in1, 20.0),
        ("update >= 2x rbloom update", bugu_main.add_batch / rbloom_main.add_batch, 2.0),
        ("contains_many >= 2x rbloom in loop", bugu_main.in_batch / rbloom_main.in1, 2.0),
        ("memory < rbloom at bugu's measured fpr", rbloom_same.memory / bugu_main.memory, 1.0 + 1e-9),
    ]
    print(f"targets, {key_kind} keys (ratio = bugu's figure over the peer's; memory: rbloom's bytes over bugu's)")
    for name, ratio, goal in checks:
        print(f"  {name:40} {ratio:7.2f}x  {'met' if ratio >= goal else 'MISSED'}")


def thread_scaling(repeats: int):
    """contains_many from two threads at once over one: the time ratio (1.0 when the GIL is released
    and two cores are free, 2.0 when serialised), beside hashlib's, which releases the GIL over large
    inputs and so shows whether the machine gave two cores at all."""

    def timed_in_threads(work, threads: int) -> float:
        barrier = threading.Barrier(threads + 1)
        started = [threading.Thread(target=lambda: (barrier.wait(), work())) for _ in range(threads)]
        for thread in started:
            thread.start()
        barrier.wait()
        start = time.perf_counter()
        for thread in started:
            thread.join()
        return time.perf_counter() - start

    f = bugu.CuckooFilter(8 * 10**6)
    keys = list(range(2 * 10**6))
    f.update(keys)
    data = bytes(64 * 10**6)
    rows = []
    for name, work in (("contains_many", lambda: f.contains_many(keys)),
                       ("hashlib.sha256 (control)", lambda: hashlib.sha256(data).digest())):
        ratios = [timed_in_threads(work, 2) / timed_in_threads(work, 1) for _ in range(repeats)]
        rows.append((name, statistics.median(ratios), ratios))
    print("\ntwo threads at once, time over one thread's (1.00 = both cores used; 2.00 = serialised)")
    for name, median, ratios in rows:
        print(f"  {name:26} {median:5.2f}x   runs: {', '.join(f'{r:.2f}' for r in ratios)}")


N = 0

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keys", type=int, default=10**6)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    N = args.keys
    print(f"bugu {bugu.__version__}, rbloom 1.5.4, pyprobables 0.7.0, Python {sys.version.split()[0]}; "
          f"{N:,} keys, medians of {args.repeats} runs (pyprobables: 1)")
    for kind in ("str", "int"):
        rows, main, rb, rb_same, prob = measure(kind, N, args.repeats)
        report(kind, rows)
        targets(kind, main, rb, rb_same, prob)
    thread_scaling(args.repeats)
