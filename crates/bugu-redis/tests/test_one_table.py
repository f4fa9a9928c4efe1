"""Keys made with GROWTH ONETABLE: the options, exact removals from a key grown from the default
capacity, what such a key costs against one reserved for its items, and its bytes read by the
`bugu` command (its other paths, persistence and replication among them, run in `populate`)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from conftest import (
    REPO_ROOT,
    batched,
    cf_info,
    error_of,
    insert_all,
    items,
    mexists_all,
    pipelined,
    reserve,
    scandump,
)

CLI = Path(os.environ.get("BUGU_CLI") or REPO_ROOT / "target/debug/bugu")
NOT_FOR_ONE_TABLE = "GROWTH ONETABLE takes BUCKETSIZE 3-4, EXPANSION 1-2 and no MAXITERATIONS"


def test_options(r):
    reserve(r, "one", 1000, growth="onetable")
    info = cf_info(r, "one")
    assert (info["Number of filters"], info["Bucket size"], info["Expansion rate"]) == (1, 4, 1)
    assert info["Max iterations"] == 20
    reserve(r, "four", 1000, bucketsize=3, expansion=2, growth="ONETABLE", errorrate=0.0001)
    assert cf_info(r, "four")["Expansion rate"] == 2
    reserve(r, "chain", 1000, growth="CHAIN", bucketsize=8)
    assert cf_info(r, "chain")["Bucket size"] == 8
    # Options that do not apply are refused, in either order.
    for options in [
        ("BUCKETSIZE", 2, "GROWTH", "ONETABLE"),
        ("GROWTH", "ONETABLE", "BUCKETSIZE", 8),
        ("GROWTH", "ONETABLE", "MAXITERATIONS", 20),
        ("EXPANSION", 0, "GROWTH", "ONETABLE"),
        ("GROWTH", "ONETABLE", "EXPANSION", 4),
    ]:
        assert error_of(r, "CF.RESERVE", "bad", 1000, *options) == NOT_FOR_ONE_TABLE, options
    assert error_of(r, "CF.RESERVE", "bad", 1000, "GROWTH", "ring") == "Bad growth (CHAIN or ONETABLE)"
    assert error_of(r, "CF.INSERT", "bad", "GROWTH", "ring", "ITEMS", "a") == "Bad growth (CHAIN or ONETABLE)"
    assert r.exists("bad") == 0
    # CF.INSERT creates one too; on an existing key the option changes nothing.
    r.execute_command("CF.INSERT", "made", "CAPACITY", 100, "GROWTH", "ONETABLE", "ITEMS", "a", "b")
    assert cf_info(r, "made")["Bucket size"] == 4
    r.execute_command("CF.INSERT", "chain", "GROWTH", "ONETABLE", "ITEMS", "a")
    assert cf_info(r, "chain")["Bucket size"] == 8


def test_grown_from_the_default_capacity_every_item_is_removed(r):
    # The chain grown the same way leaves some items behind (test_del_in_a_grown_filter).
    values = items("grown", 100_000)
    r.execute_command("CF.INSERT", "grown", "GROWTH", "ONETABLE", "ITEMS", "first")
    insert_all(r, "grown", values)
    assert cf_info(r, "grown")["Number of filters"] == 1
    assert all(mexists_all(r, "grown", values))
    for half in (values[::2], values[1::2]):
        for chunk in batched(half, 10_000):
            removed = pipelined(r, [("CF.DEL", "grown", v) for v in chunk])
            assert all(x in (1, True) for x in removed)
    info = cf_info(r, "grown")
    assert (info["Number of items inserted"], info["Number of items deleted"]) == (1, 100_000)
    assert mexists_all(r, "grown", ["first"]) == [True]


def test_memory_grown_against_reserved(start_server):
    # MEMORY USAGE counts what the allocator gave (each segment of the table whole, though its
    # pages are touched only as it fills), as used_memory does.
    client = start_server().client()
    values = items("m", 100_000)
    reserve(client, "reserved", 100_000)
    client.execute_command("CF.INSERT", "grown", "GROWTH", "ONETABLE", "ITEMS", "x")
    client.execute_command("CF.INSERT", "chain", "ITEMS", "x")
    for key in ("reserved", "grown", "chain"):
        insert_all(client, key, values)
    usage = {key: client.memory_usage(key) for key in ("reserved", "grown", "chain")}
    ratio = usage["grown"] / usage["reserved"]
    print(f"MEMORY USAGE at 10^5 items: {usage}, one table grown / reserved {ratio:.2f}")
    assert usage["grown"] < usage["chain"], usage
    assert ratio <= 1.4, usage


def test_memory_per_item_stays_bounded_through_growth(r):
    # The table is allocated an eighth of a doubling at a time, so what MEMORY USAGE counts
    # follows the items; a whole doubling at once would reach about 36 bits per item at the
    # start of each round.
    r.execute_command("CF.INSERT", "g", "GROWTH", "ONETABLE", "ITEMS", "x")
    values = items("g", 300_000)
    highest = 0.0
    for done, chunk in enumerate(batched(values, 5_000), start=1):
        insert_all(r, "g", chunk)
        if done * 5_000 >= 20_000:
            highest = max(highest, r.memory_usage("g") * 8 / (done * 5_000))
    print(f"highest MEMORY USAGE from 2 x 10^4 to 3 x 10^5 items: {highest:.2f} bits per item")
    assert highest <= 23, highest


def test_the_cli_reads_a_one_table_key(r, tmp_path):
    assert CLI.exists(), f"the bugu command is not built at {CLI}"
    values = [f"用户_{i}" for i in range(3000)]
    r.execute_command("CF.INSERT", "k", "GROWTH", "ONETABLE", "CAPACITY", 200, "ITEMS", *values)
    _, *data = scandump(r, "k")
    file = tmp_path / "k.bugu"
    file.write_bytes(b"".join(chunk for _, chunk in data))
    probes = values + [f"nobody_{i}" for i in range(3000)]
    (tmp_path / "probes.txt").write_text("".join(f"{p}\n" for p in probes), encoding="utf-8")
    done = subprocess.run(
        [CLI, "check", file, "--input", tmp_path / "probes.txt"], capture_output=True, check=False
    )
    assert done.returncode in (0, 1), done.stderr
    printed = set(done.stdout.decode().split("\n"))
    assert [p in printed for p in probes] == mexists_all(r, "k", probes)
    assert all(v in printed for v in values)
