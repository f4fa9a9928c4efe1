"""Memory: what a filter costs the server, what MEMORY USAGE and CF.INFO Size report of it, and
how long reserving a large one keeps the server busy."""

from __future__ import annotations

import time

from conftest import cf_info, insert_all, items, reserve

LARGEST_CAPACITY = 1 << 30


def test_reserving_the_largest_capacity_does_not_block_the_server(start_server):
    # The table of 2^30 items is about 2 GiB. Written with zeros up front it kept the server busy
    # for seconds; asked of the allocator as zeroed memory, its pages are only mapped, and
    # faulted in as inserts touch them.
    client = start_server().client()
    used_before = client.info("memory")["used_memory"]
    started = time.monotonic()
    reserve(client, "largest", LARGEST_CAPACITY)
    elapsed = time.monotonic() - started
    assert elapsed < 0.5, f"CF.RESERVE of {LARGEST_CAPACITY} took {elapsed:.2f} s"
    size = cf_info(client, "largest")["Size"]
    assert size > 1 << 30
    # Untouched, the memory still counts: Redis accounts what it allocated, not what is resident.
    assert client.info("memory")["used_memory"] - used_before >= size
    values = items("x", 20)
    insert_all(client, "largest", values)
    assert all(client.execute_command("CF.MEXISTS", "largest", *values))
