"""Every CF.* command's replies and errors, under RESP2 and RESP3, as raw replies.

The ``r`` fixture is a client of one server shared by this file, emptied before each test and
parametrized over both protocols; ``resp`` says what the replies look like under that protocol.
"""

import time

import pytest
import redis

from conftest import (
    INFO_FIELDS,
    POSITION_MASK,
    READ_COMMANDS,
    RESTORE_IN_PROGRESS,
    WRITE_COMMANDS,
    WRONG_ARITY,
    WRONGTYPE,
    assert_all_found,
    assert_reply,
    cf_info,
    error_of,
    insert_all,
    items,
    loadchunks,
    mexists_all,
    pipelined,
    reserve,
    same,
    scandump,
    snapshot,
    wire_reply_line,
)

COPIES_ERROR = "too many copies of this item (use CF.ADDNX)"


# ------------------------------------------------------------------------------------------------
# CF.RESERVE


def test_reserve_creates_an_empty_filter(r, protocol):
    reserve(r, "k", 1000)
    assert r.type("k") != b"none"
    raw = r.execute_command("CF.INFO", "k")
    if protocol == 3:
        assert isinstance(raw, dict)
    else:
        assert isinstance(raw, list) and len(raw) == 2 * len(INFO_FIELDS)
    info = cf_info(r, "k")
    assert list(info) == INFO_FIELDS
    assert info["Layout"] in (b"bugu-chain", "bugu-chain")  # a string, after RedisBloom's numbers
    assert all(type(v) is int for k, v in info.items() if k != "Layout"), info
    assert info["Size"] > 0
    assert info["Number of buckets"] * info["Bucket size"] >= 1000
    assert (info["Number of filters"], info["Number of items inserted"], info["Number of items deleted"]) == (
        1,
        0,
        0,
    )
    assert (info["Bucket size"], info["Expansion rate"], info["Max iterations"]) == (2, 1, 20)
    assert error_of(r, "CF.RESERVE", "k", 1000) == "item exists"
    assert error_of(r, "CF.RESERVE", "k", 10, "BUCKETSIZE", 4) == "item exists"
    assert cf_info(r, "k") == info


def test_reserve_options_any_order_later_wins(r):
    reserve(r, "a", 1000, maxiterations=50, expansion=3, bucketsize=3)
    assert_reply(
        r.execute_command(
            "CF.RESERVE", "b", 1000, "BUCKETSIZE", 2, "EXPANSION", 1, "BUCKETSIZE", 8, "EXPANSION", 2
        ),
        b"OK",
    )
    a, b = cf_info(r, "a"), cf_info(r, "b")
    assert (a["Bucket size"], a["Expansion rate"], a["Max iterations"]) == (4, 4, 50)
    assert (b["Bucket size"], b["Expansion rate"], b["Max iterations"]) == (8, 2, 20)


def test_reserve_error_rate_sets_the_fingerprint_size(r):
    reserve(r, "default", 10_000)
    reserve(r, "explicit", 10_000, errorrate=0.01)
    reserve(r, "coarse", 10_000, errorrate=0.1)
    reserve(r, "fine", 10_000, errorrate=0.0001)
    reserve(r, "finest", 10_000, errorrate=0.000001)
    size = {k: cf_info(r, k)["Size"] for k in ("default", "explicit", "coarse", "fine", "finest")}
    assert size["default"] == size["explicit"]
    assert size["coarse"] < size["default"] < size["fine"] < size["finest"], size


@pytest.mark.parametrize(
    "requested, used",
    [(1, 2), (2, 2), (3, 4), (4, 4), (5, 8), (8, 8), (100, 8), (255, 8)],
)
def test_reserve_bucket_size_mapping(r, requested, used):
    reserve(r, "k", 1000, bucketsize=requested)
    info = cf_info(r, "k")
    assert info["Bucket size"] == used
    assert info["Number of buckets"] * used >= 1000


@pytest.mark.parametrize(
    "requested, used",
    [(0, 0), (1, 1), (2, 2), (3, 4), (5, 8), (1000, 1024), (32767, 32768), (32768, 32768)],
)
def test_reserve_expansion_rounds_up_to_a_power_of_two(r, requested, used):
    reserve(r, "k", 1000, expansion=requested)
    assert cf_info(r, "k")["Expansion rate"] == used


@pytest.mark.parametrize("iterations", [1, 65535])
def test_reserve_max_iterations_bounds(r, iterations):
    reserve(r, "k", 1000, maxiterations=iterations)
    assert cf_info(r, "k")["Max iterations"] == iterations


def test_reserve_smallest_capacity(r, resp):
    reserve(r, "k", 1)
    assert_reply(r.execute_command("CF.ADD", "k", "a"), resp.bool(True))
    assert_reply(r.execute_command("CF.EXISTS", "k", "a"), resp.bool(True))


BAD_RESERVE = [
    *[([c], "Bad capacity") for c in (-1, 0, 2**30 + 1, 2**31, 2**64, "abc", "1.5", "", "1e3")],
    *[([100, "BUCKETSIZE", b], "Bad bucket size") for b in (0, 256, -1, "abc", 2**64)],
    *[([100, "MAXITERATIONS", m], "Bad max iterations") for m in (0, 65536, -1, "x")],
    *[([100, "EXPANSION", e], "Bad expansion") for e in (-1, 32769, "x", 2**64)],
    *[([100, "ERRORRATE", p], "Bad error rate") for p in (0, 1, "abc", -0.1, 1.5, 1e-20, "nan", "inf", "")],
    ([100, "FOO", 1], "Unknown argument received"),
    ([100, "BUCKETSIZE", 2, "CAPACITY", 3], "Unknown argument received"),
    ([100, "BUCKETSIZE"], WRONG_ARITY),
    ([100, "EXPANSION", 2, "MAXITERATIONS"], WRONG_ARITY),
    ([100, "ERRORRATE"], WRONG_ARITY),
]


@pytest.mark.parametrize("args, message", BAD_RESERVE, ids=[repr(a) for a, _ in BAD_RESERVE])
def test_reserve_rejects(r, args, message):
    text = error_of(r, "CF.RESERVE", "k", *args)
    if message == WRONG_ARITY:
        assert text.startswith(WRONG_ARITY)
    else:
        assert text == message
    assert r.exists("k") == 0


# ------------------------------------------------------------------------------------------------
# Arity, types, missing keys


ARITY_CASES = [
    ("CF.RESERVE",),
    ("CF.RESERVE", "k"),
    ("CF.ADD",),
    ("CF.ADD", "k"),
    ("CF.ADD", "k", "a", "b"),
    ("CF.ADDNX",),
    ("CF.ADDNX", "k"),
    ("CF.ADDNX", "k", "a", "b"),
    *[
        (command, *args)
        for command in ("CF.INSERT", "CF.INSERTNX")
        for args in [
            (),
            ("k",),
            ("k", "ITEMS"),
            ("k", "NOCREATE"),
            ("k", "CAPACITY", 100),
            ("k", "CAPACITY", 100, "ITEMS"),
            ("k", "CAPACITY"),
        ]
    ],
    ("CF.EXISTS",),
    ("CF.EXISTS", "k"),
    ("CF.EXISTS", "k", "a", "b"),
    ("CF.MEXISTS",),
    ("CF.MEXISTS", "k"),
    ("CF.DEL",),
    ("CF.DEL", "k"),
    ("CF.DEL", "k", "a", "b"),
    ("CF.COUNT",),
    ("CF.COUNT", "k"),
    ("CF.COUNT", "k", "a", "b"),
    ("CF.INFO",),
    ("CF.INFO", "k", "x"),
    ("CF.SCANDUMP",),
    ("CF.SCANDUMP", "k"),
    ("CF.SCANDUMP", "k", 0, 0),
    ("CF.LOADCHUNK",),
    ("CF.LOADCHUNK", "k"),
    ("CF.LOADCHUNK", "k", 1),
    ("CF.LOADCHUNK", "k", 1, "data", "x"),
]


@pytest.mark.parametrize("command", ARITY_CASES, ids=lambda c: " ".join(map(str, c)))
def test_wrong_arity(r, command):
    reserve(r, "k", 100, bucketsize=4)
    r.execute_command("CF.ADD", "k", "a")
    before = snapshot(r, "k")
    assert error_of(r, *command).startswith(WRONG_ARITY)
    assert snapshot(r, "k") == before
    missing = tuple("missing" if a == "k" else a for a in command)
    assert error_of(r, *missing).startswith(WRONG_ARITY)
    assert r.exists("missing") == 0


def header_chunk(r):
    """The first SCANDUMP chunk (the header) of a small filter."""
    reserve(r, "header-source", 100)
    return scandump(r, "header-source")[0]


@pytest.mark.parametrize(
    "command",
    [
        ("CF.ADD", "s", "a"),
        ("CF.ADDNX", "s", "a"),
        ("CF.INSERT", "s", "ITEMS", "a"),
        ("CF.INSERT", "s", "NOCREATE", "ITEMS", "a"),
        ("CF.INSERTNX", "s", "ITEMS", "a"),
        ("CF.EXISTS", "s", "a"),
        ("CF.MEXISTS", "s", "a", "b"),
        ("CF.DEL", "s", "a"),
        ("CF.COUNT", "s", "a"),
        ("CF.INFO", "s"),
        ("CF.SCANDUMP", "s", 0),
        ("CF.LOADCHUNK", "s", "HEADER"),
    ],
    ids=lambda c: c[0],
)
def test_wrong_type(r, command):
    if command[-1] == "HEADER":
        command = ("CF.LOADCHUNK", "s", *header_chunk(r))
    r.set("s", "a string")
    assert error_of(r, *command) == WRONGTYPE
    assert r.get("s") == b"a string"


def test_reserve_on_a_key_of_another_type(r):
    # The spec lists both "item exists" (key exists) and WRONGTYPE (key holds a string) for
    # CF.RESERVE; either way the string must stay.
    r.set("s", "a string")
    assert error_of(r, "CF.RESERVE", "s", 100) in ("item exists", WRONGTYPE)
    assert r.get("s") == b"a string"


def test_missing_key(r, resp):
    assert_reply(r.execute_command("CF.EXISTS", "m", "a"), resp.bool(False))
    assert_reply(r.execute_command("CF.MEXISTS", "m", "a", "b"), resp.bools([False, False]))
    assert_reply(r.execute_command("CF.COUNT", "m", "a"), 0)
    assert error_of(r, "CF.DEL", "m", "a") == "Not found"
    assert error_of(r, "CF.INFO", "m") == "not found"
    assert error_of(r, "CF.SCANDUMP", "m", 0) == "not found"
    for command in ("CF.INSERT", "CF.INSERTNX"):
        assert error_of(r, command, "m", "NOCREATE", "ITEMS", "a") == "not found"
        assert error_of(r, command, "m", "CAPACITY", 100, "NOCREATE", "ITEMS", "a", "b") == "not found"
    assert error_of(r, "CF.LOADCHUNK", "m", 2, b"\x00" * 64) == "Invalid position"
    assert r.exists("m") == 0


def test_error_texts_on_the_wire(shared_server):
    """redis-py strips "ERR "; the wire must carry it where the spec says so."""
    c = shared_server.client()
    c.flushall()
    port = shared_server.port
    reserve(c, "k", 100)
    assert wire_reply_line(port, "CF.RESERVE", "k", 100) == b"-ERR item exists"
    assert wire_reply_line(port, "CF.INFO", "m") == b"-ERR not found"
    assert wire_reply_line(port, "CF.SCANDUMP", "m", 0) == b"-ERR not found"
    assert wire_reply_line(port, "CF.INSERT", "m", "NOCREATE", "ITEMS", "a") == b"-ERR not found"
    assert wire_reply_line(port, "CF.ADD", "k").startswith(b"-ERR wrong number of arguments")
    lines = [wire_reply_line(port, "CF.ADD", "k", "same") for _ in range(20)]
    assert lines[-1] == b"-ERR " + COPIES_ERROR.encode(), lines
    reserve(c, "big", 3_000_000)
    header = scandump(c, "big")[0]
    assert c.execute_command("CF.LOADCHUNK", "restoring", *header) == b"OK"
    assert wire_reply_line(port, "CF.EXISTS", "restoring", "a").startswith(b"-ERR restore in progress")


# ------------------------------------------------------------------------------------------------
# CF.ADD, CF.ADDNX, CF.EXISTS, CF.MEXISTS, CF.COUNT, CF.DEL


def test_add_creates_a_default_filter(r, resp):
    assert_reply(r.execute_command("CF.ADD", "k", "a"), resp.bool(True))
    assert r.type("k") != b"none"
    info = cf_info(r, "k")
    assert (info["Bucket size"], info["Expansion rate"], info["Max iterations"]) == (2, 1, 20)
    assert (info["Number of filters"], info["Number of items inserted"], info["Number of items deleted"]) == (
        1,
        1,
        0,
    )
    assert info["Number of buckets"] * info["Bucket size"] >= 1024
    # The default capacity is 1024: that many distinct items fit without a second filter.
    values = items("fill", 1023)
    assert_reply(pipelined(r, [("CF.ADD", "k", v) for v in values]), [resp.bool(True)] * len(values))
    info = cf_info(r, "k")
    assert (info["Number of filters"], info["Number of items inserted"]) == (1, 1024)
    assert_all_found(r, "k", ["a", *values])


def test_add_exists_count_del(r, resp):
    for _ in range(3):
        assert_reply(r.execute_command("CF.ADD", "k", "a"), resp.bool(True))
    assert_reply(r.execute_command("CF.EXISTS", "k", "a"), resp.bool(True))
    assert_reply(r.execute_command("CF.EXISTS", "k", "b"), resp.bool(False))
    assert_reply(r.execute_command("CF.MEXISTS", "k", "b", "a", "c"), resp.bools([False, True, False]))
    assert_reply(r.execute_command("CF.COUNT", "k", "a"), 3)  # nothing else is stored: exactly 3
    assert_reply(r.execute_command("CF.COUNT", "k", "b"), 0)
    for left in (2, 1, 0):
        assert_reply(r.execute_command("CF.DEL", "k", "a"), resp.bool(True))
        assert_reply(r.execute_command("CF.COUNT", "k", "a"), left)
    assert_reply(r.execute_command("CF.DEL", "k", "a"), resp.bool(False))
    assert_reply(r.execute_command("CF.EXISTS", "k", "a"), resp.bool(False))
    info = cf_info(r, "k")
    assert (info["Number of items inserted"], info["Number of items deleted"]) == (0, 3)


def test_addnx(r, resp):
    reserve(r, "k", 1000)
    assert_reply(r.execute_command("CF.ADDNX", "k", "a"), resp.bool(True))
    assert_reply(r.execute_command("CF.ADDNX", "k", "a"), resp.bool(False))
    assert_reply(r.execute_command("CF.ADDNX", "k", "b"), resp.bool(True))
    assert_reply(r.execute_command("CF.COUNT", "k", "a"), 1)
    assert cf_info(r, "k")["Number of items inserted"] == 2


def test_binary_and_empty_items(r, resp):
    values = [b"", b"\x00", b"\x00\x01\xff\xfe", "ünïcødé", b"\r\n*1\r\n$1\r\nx\r\n", b"x" * 100_000]
    for v in values:
        assert_reply(r.execute_command("CF.ADD", "k", v), resp.bool(True))
    assert_reply(r.execute_command("CF.MEXISTS", "k", *values), resp.bools([True] * len(values)))
    assert_reply(r.execute_command("CF.DEL", "k", b""), resp.bool(True))
    assert_reply(r.execute_command("CF.EXISTS", "k", b"\x00"), resp.bool(True))


def test_info_after_a_known_sequence(r, resp):
    reserve(r, "k", 1000, bucketsize=3, expansion=3, maxiterations=50)
    values = items("v", 10)
    for v in values:
        assert_reply(r.execute_command("CF.ADD", "k", v), resp.bool(True))
    assert_reply(r.execute_command("CF.ADDNX", "k", values[0]), resp.bool(False))
    assert_reply(r.execute_command("CF.ADDNX", "k", values[1]), resp.bool(False))
    assert_reply(r.execute_command("CF.ADDNX", "k", "new"), resp.bool(True))
    assert_reply(r.execute_command("CF.ADD", "k", "new"), resp.bool(True))
    for v in values[:3]:
        assert_reply(r.execute_command("CF.DEL", "k", v), resp.bool(True))
    assert_reply(r.execute_command("CF.DEL", "k", "never added"), resp.bool(False))
    info = cf_info(r, "k")
    assert list(info) == INFO_FIELDS
    assert info["Size"] > 0 and info["Number of buckets"] * 4 >= 1000
    assert {k: v for k, v in info.items() if k not in ("Size", "Number of buckets")} == {
        "Layout": b"bugu-chain",
        "Number of filters": 1,
        "Number of items inserted": 9,
        "Number of items deleted": 3,
        "Bucket size": 4,
        "Expansion rate": 4,
        "Max iterations": 50,
    }


def test_del_in_a_grown_filter(r, resp):
    """CF.DEL of an added item removes one copy and replies 1, however many sub-filters the filter
    has, except when fingerprints matching it sit in several sub-filters: one of them may be
    another item's, so nothing is removed and the reply is 0 (docs/redis.md). Such refusals are
    rare, leave the item present, and the counters stay exact. Deleting it again works once its
    lookalikes are gone, except for two items that are each other's lookalikes in two sub-filters:
    both stay, as false positives."""
    reserve(r, "k", 1000, bucketsize=4, expansion=2)
    values = items("del", 3000)
    insert_all(r, "k", values, batch=500)
    assert cf_info(r, "k")["Number of filters"] > 1
    replies = pipelined(r, [("CF.DEL", "k", v) for v in values])
    refused = [v for v, x in zip(values, replies) if not same(x, resp.bool(True))]
    assert len(refused) <= len(values) // 100, f"{len(refused)} of {len(values)} deletes refused"
    info = cf_info(r, "k")
    assert (info["Number of items inserted"], info["Number of items deleted"]) == (
        len(refused),
        len(values) - len(refused),
    )
    # A refused item stays present; deleting the refused ones again, round after round, takes
    # each whose lookalikes have gone, until a round takes none.
    while True:
        for v in refused:
            assert_reply(r.execute_command("CF.EXISTS", "k", v), resp.bool(True))
        replies = pipelined(r, [("CF.DEL", "k", v) for v in refused])
        still = [v for v, x in zip(refused, replies) if not same(x, resp.bool(True))]
        if len(still) == len(refused):
            break
        refused = still
    # What stays are mutual lookalikes: a handful at most, present, and counted exactly.
    assert len(refused) <= len(values) // 500, f"{refused} stay"
    for v in refused:
        assert_reply(r.execute_command("CF.EXISTS", "k", v), resp.bool(True))
    info = cf_info(r, "k")
    assert (info["Number of items inserted"], info["Number of items deleted"]) == (
        len(refused),
        len(values) - len(refused),
    )


def test_del_never_removes_another_item(r):
    reserve(r, "k", 1000, expansion=2)
    values = items("keep", 6000)
    insert_all(r, "k", values, batch=500)
    pipelined(r, [("CF.DEL", "k", v) for v in values[::2]])
    assert_all_found(r, "k", values[1::2])


# ------------------------------------------------------------------------------------------------
# CF.INSERT, CF.INSERTNX


def test_insert(r, resp):
    assert_reply(r.execute_command("CF.INSERT", "k", "ITEMS", "a", "b", "c"), resp.inserted([1, 1, 1]))
    info = cf_info(r, "k")
    assert (info["Bucket size"], info["Expansion rate"], info["Max iterations"]) == (2, 1, 20)
    assert info["Number of buckets"] * 2 >= 1024 and info["Number of items inserted"] == 3
    assert_reply(r.execute_command("CF.INSERT", "k", "NOCREATE", "ITEMS", "d"), resp.inserted([1]))
    assert_reply(
        r.execute_command("CF.INSERT", "k", "CAPACITY", 100, "NOCREATE", "ITEMS", "e"), resp.inserted([1])
    )
    # Everything after ITEMS is an item, even option names.
    assert_reply(
        r.execute_command("CF.INSERT", "k", "ITEMS", "ITEMS", "NOCREATE", "CAPACITY"),
        resp.inserted([1, 1, 1]),
    )
    assert_reply(
        r.execute_command("CF.MEXISTS", "k", "a", "b", "c", "d", "e", "ITEMS", "NOCREATE", "CAPACITY"),
        resp.bools([True] * 8),
    )
    assert cf_info(r, "k")["Number of items inserted"] == 8


def test_insert_capacity_only_when_creating(r, resp):
    assert_reply(r.execute_command("CF.INSERT", "big", "CAPACITY", 50_000, "ITEMS", "a"), resp.inserted([1]))
    info = cf_info(r, "big")
    assert info["Number of buckets"] * info["Bucket size"] >= 50_000
    assert_reply(r.execute_command("CF.INSERT", "big", "CAPACITY", 10, "ITEMS", "b"), resp.inserted([1]))
    assert cf_info(r, "big")["Number of buckets"] == info["Number of buckets"]
    assert_reply(r.execute_command("CF.INSERTNX", "nx", "CAPACITY", 50_000, "ITEMS", "a"), [1])
    assert cf_info(r, "nx")["Number of buckets"] == info["Number of buckets"]


@pytest.mark.parametrize("command", ["CF.INSERT", "CF.INSERTNX"])
@pytest.mark.parametrize(
    "options, message",
    [
        (["FOO"], "Unknown argument received"),
        (["CAPACITY", 100, "BUCKETSIZE", 4], "Unknown argument received"),
        (["CAPACITY", "abc"], "Bad capacity"),
        (["CAPACITY", 0], "Bad capacity"),
        (["CAPACITY", -1], "Bad capacity"),
        (["CAPACITY", 2**30 + 1], "Bad capacity"),
    ],
)
def test_insert_rejects(r, command, options, message):
    assert error_of(r, command, "k", *options, "ITEMS", "a") == message
    assert r.exists("k") == 0


def test_insertnx(r):
    # Integers in both protocols: 1 added, 0 may exist already, -1 not added.
    assert_reply(r.execute_command("CF.INSERTNX", "k", "ITEMS", "a", "b", "a"), [1, 1, 0])
    assert_reply(r.execute_command("CF.INSERTNX", "k", "NOCREATE", "ITEMS", "a", "c"), [0, 1])
    assert cf_info(r, "k")["Number of items inserted"] == 3


# ------------------------------------------------------------------------------------------------
# Full filters, expansion, copies


def test_full_filter_without_expansion(r, resp):
    reserve(r, "k", 100, expansion=0)
    added, misses = [], 0
    for item in items("full", 100_000):
        try:
            reply = r.execute_command("CF.ADD", "k", item)
        except redis.ResponseError as e:
            assert str(e) == "Filter is full"
            misses += 1
            if misses == 50:
                break
            continue
        assert_reply(reply, resp.bool(True))
        added.append(item)
    else:
        pytest.fail("an EXPANSION 0 filter of capacity 100 never filled")
    assert len(added) >= 100
    info = cf_info(r, "k")
    assert (info["Number of filters"], info["Number of items inserted"]) == (1, len(added))
    assert_all_found(r, "k", added)

    fresh = items("fresh", 30)
    reply = r.execute_command("CF.INSERT", "k", "ITEMS", *fresh)
    yes, no = resp.inserted([1, 0])
    assert all(same(x, yes) or same(x, no) for x in reply) and any(same(x, no) for x in reply), reply
    accepted = [v for v, x in zip(fresh, reply) if same(x, yes)]
    assert cf_info(r, "k")["Number of items inserted"] == len(added) + len(accepted)
    reply = r.execute_command("CF.INSERTNX", "k", "ITEMS", *items("fresher", 30))
    assert all(type(x) is int and x in (1, 0, -1) for x in reply) and -1 in reply
    assert cf_info(r, "k")["Number of filters"] == 1
    assert_all_found(r, "k", added + accepted)


def test_expansion(r, resp):
    values = items("grow", 5000)
    assert_reply(pipelined(r, [("CF.ADD", "k", v) for v in values]), [resp.bool(True)] * len(values))
    info = cf_info(r, "k")
    assert info["Number of filters"] > 1 and info["Number of items inserted"] == 5000
    assert_all_found(r, "k", values)
    reserve(r, "k2", 100, expansion=3)
    insert_all(r, "k2", items("grow2", 3000), batch=500)
    assert cf_info(r, "k2")["Number of filters"] > 1
    assert_all_found(r, "k2", items("grow2", 3000))


@pytest.mark.parametrize("bucket_size, slots", [(None, 2), (4, 4), (100, 8)])
def test_same_item_many_times(r, resp, bucket_size, slots):
    if bucket_size is not None:
        reserve(r, "k", 1024, bucketsize=bucket_size)
    started = time.monotonic()
    replies = pipelined(r, [("CF.ADD", "k", "same")] * 100)
    added = sum(1 for x in replies if not isinstance(x, Exception))
    assert slots <= added <= 2 * slots, replies
    assert_reply(replies[:added], [resp.bool(True)] * added)
    assert all(isinstance(x, redis.ResponseError) and str(x) == COPIES_ERROR for x in replies[added:])
    memory = r.memory_usage("k")
    replies = pipelined(r, [("CF.ADD", "k", "same")] * 5000)
    assert all(isinstance(x, redis.ResponseError) and str(x) == COPIES_ERROR for x in replies)
    assert time.monotonic() - started < 10
    assert r.memory_usage("k") == memory < 64 * 1024
    assert_reply(r.execute_command("CF.COUNT", "k", "same"), added)
    assert_reply(r.execute_command("CF.INSERT", "k", "ITEMS", "same", "same"), resp.inserted([0, 0]))
    assert_reply(r.execute_command("CF.ADDNX", "k", "same"), resp.bool(False))
    info = cf_info(r, "k")
    assert (info["Number of filters"], info["Number of items inserted"]) == (1, added)


def test_no_false_negatives_and_false_positive_rate(r):
    reserve(r, "k", 20_000)
    present = items("in", 20_000)
    insert_all(r, "k", present, batch=2000)
    assert_all_found(r, "k", present)
    absent = items("out", 100_000)
    rate = sum(mexists_all(r, "k", absent)) / len(absent)
    assert rate < 0.01, f"false-positive rate {rate:.4f}"


# ------------------------------------------------------------------------------------------------
# CF.SCANDUMP, CF.LOADCHUNK


@pytest.fixture
def big_dump(r):
    """SCANDUMP chunks of a filter too big for one chunk (key "big")."""
    reserve(r, "big", 3_000_000)
    insert_all(r, "big", items("big", 5000))
    chunks = scandump(r, "big")
    assert len(chunks) >= 3 and sum(len(d) for _, d in chunks) > 2 * (1 << 20)
    return chunks


def test_scandump_loadchunk_round_trip(r):
    reserve(r, "src", 3000, bucketsize=4, expansion=2)
    values = items("rt", 10_000)
    insert_all(r, "src", values, batch=1000)
    for v in values[:100]:
        r.execute_command("CF.DEL", "src", v)
    chunks = scandump(r, "src")
    assert chunks[0][0] & POSITION_MASK == 1
    assert scandump(r, "src") == chunks
    loadchunks(r, "dst", chunks)
    assert snapshot(r, "dst") == snapshot(r, "src")
    assert_all_found(r, "dst", values[100:])
    # The first chunk never replaces a filter (as RedisBloom's); a restore in progress restarts.
    reserve(r, "other", 10, bucketsize=8)
    r.execute_command("CF.ADD", "other", "x")
    before = snapshot(r, "other")
    assert error_of(r, "CF.LOADCHUNK", "other", *chunks[0]) == "item exists"
    assert snapshot(r, "other") == before
    loadchunks(r, "restarted", chunks[:-1])
    loadchunks(r, "restarted", chunks)
    assert snapshot(r, "restarted") == snapshot(r, "src")
    # The copy is independent of its source.
    before = snapshot(r, "src")
    r.execute_command("CF.ADD", "dst", "only in dst")
    assert snapshot(r, "src") == before


def test_scandump_of_an_empty_filter(r):
    reserve(r, "k", 10)
    chunks = scandump(r, "k")
    loadchunks(r, "copy", chunks)
    assert snapshot(r, "copy") == snapshot(r, "k")


@pytest.mark.parametrize("iterator", [-1, "abc", "1.5", "", 2**63, 2**64, 10**20, 999_999_999])
def test_scandump_invalid_position(r, iterator):
    reserve(r, "k", 100)
    assert error_of(r, "CF.SCANDUMP", "k", iterator) == "Invalid position"


def test_scandump_rejects_iterators_it_did_not_return(r, big_dump):
    returned = {0} | {iterator for iterator, _ in big_dump}
    last = big_dump[-1][0]
    replies = {}
    for iterator in (2, big_dump[1][0] + 1, big_dump[1][0] - 1, last - 1, last + 1):
        assert iterator not in returned
        try:
            reply = r.execute_command("CF.SCANDUMP", "big", iterator)
            replies[iterator] = [x if not isinstance(x, bytes) else f"{len(x)} bytes" for x in reply]
        except redis.ResponseError as e:
            if str(e) != "Invalid position":
                replies[iterator] = str(e)
    assert not replies, f"not refused with Invalid position: {replies}"


def test_loadchunk_restore_in_progress(r, resp, big_dump):
    loadchunks(r, "dst", big_dump[:1])
    for command in [
        ("CF.ADD", "dst", "a"),
        ("CF.ADDNX", "dst", "a"),
        ("CF.INSERT", "dst", "ITEMS", "a"),
        ("CF.INSERTNX", "dst", "ITEMS", "a"),
        ("CF.EXISTS", "dst", "a"),
        ("CF.MEXISTS", "dst", "a", "b"),
        ("CF.DEL", "dst", "a"),
        ("CF.COUNT", "dst", "a"),
        ("CF.INFO", "dst"),
        ("CF.SCANDUMP", "dst", 0),
    ]:
        assert error_of(r, *command).startswith(RESTORE_IN_PROGRESS), command
    # CF.RESERVE's own rule (the key exists: "item exists") fits as well as "restore in progress".
    reserve_error = error_of(r, "CF.RESERVE", "dst", 100)
    assert reserve_error == "item exists" or reserve_error.startswith(RESTORE_IN_PROGRESS)
    loadchunks(r, "dst", big_dump[1:])
    assert snapshot(r, "dst") == snapshot(r, "big")
    assert_all_found(r, "dst", items("big", 5000))
    assert_reply(r.execute_command("CF.ADD", "dst", "a"), resp.bool(True))


def test_loadchunk_out_of_order(r, big_dump):
    (first, data0), (second, data1), (third, data2) = big_dump[:3]
    assert error_of(r, "CF.LOADCHUNK", "dst", second, data1) == "Invalid position"
    assert r.exists("dst") == 0
    loadchunks(r, "dst", big_dump[:1])
    for iterator, data in [
        (third, data2),
        (first + 12345, data1),
        (-1, data1),
        (0, data1),
        ("abc", data1),
        (2**64, data1),
    ]:
        assert error_of(r, "CF.LOADCHUNK", "dst", iterator, data) == "Invalid position"
        assert error_of(r, "CF.EXISTS", "dst", "a").startswith(RESTORE_IN_PROGRESS)
    loadchunks(r, "dst", big_dump[1:])
    assert snapshot(r, "dst") == snapshot(r, "big")


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda h: b"not a header at all",
        lambda h: b"",
        lambda h: h[:5],
        lambda h: bytes([h[0] ^ 0xFF]) + h[1:],
        lambda h: b"\x00" * len(h),
    ],
    ids=["text", "empty", "truncated", "bad-first-byte", "zeros"],
)
def test_loadchunk_invalid_header(r, big_dump, corrupt):
    iterator, header = big_dump[0]
    loadchunks(r, "dst", big_dump[:2])
    saved = r.dump("dst")
    assert error_of(r, "CF.LOADCHUNK", "dst", iterator, corrupt(header)) == "Invalid header"
    assert r.dump("dst") == saved
    assert error_of(r, "CF.LOADCHUNK", "missing", iterator, corrupt(header)) == "Invalid header"
    assert r.exists("missing") == 0


def test_loadchunk_corrupt_last_chunk(r, big_dump):
    loadchunks(r, "dst", big_dump[:-1])
    iterator, data = big_dump[-1]
    corrupt = data[:-1] + bytes([data[-1] ^ 0x01])
    assert error_of(r, "CF.LOADCHUNK", "dst", iterator, corrupt) == "Couldn't load chunk!"
    assert error_of(r, "CF.EXISTS", "dst", "a").startswith(RESTORE_IN_PROGRESS)
    loadchunks(r, "dst", big_dump[-1:])
    assert snapshot(r, "dst") == snapshot(r, "big")


# ------------------------------------------------------------------------------------------------
# Command flags


def test_command_flags_and_keys(shared_server):
    c = shared_server.client()
    infos = {
        name.upper(): info
        for name, info in c.execute_command("COMMAND", "INFO", *WRITE_COMMANDS, *READ_COMMANDS).items()
    }
    # Writes that may allocate are refused over maxmemory; CF.DEL frees memory, so it may run
    # there (as RedisBloom's). CF.SCANDUMP is not `fast`: each call writes the filter's bytes up to
    # the end of the chunk it sends.
    expected = {name: {"write", "denyoom"} for name in WRITE_COMMANDS}
    expected["CF.DEL"] = {"write", "fast"}
    expected.update({name: {"readonly", "fast"} for name in READ_COMMANDS})
    expected["CF.SCANDUMP"] = {"readonly"}
    wrong = {}
    for name, wanted in expected.items():
        flags = set(infos[name]["flags"])
        other = "readonly" if "write" in wanted else "write"
        if not wanted <= flags or other in flags or (name == "CF.DEL" and "denyoom" in flags):
            wrong[name] = sorted(flags)
    assert not wrong, f"flags differ from {expected}: {wrong}"
    for name in WRITE_COMMANDS + READ_COMMANDS:
        info = infos[name]
        assert (info["first_key_pos"], info["last_key_pos"], info["step_count"]) == (1, 1, 1), name
    for command in [
        ("CF.MEXISTS", "k", "a", "b"),
        ("CF.INSERT", "k", "CAPACITY", 5, "ITEMS", "a", "b"),
        ("CF.LOADCHUNK", "k", 1, "x"),
        ("CF.RESERVE", "k", 100, "BUCKETSIZE", 4),
    ]:
        assert [k.decode() if isinstance(k, bytes) else k for k in c.command_getkeys(*command)] == ["k"]


def test_writes_are_denied_when_out_of_memory(r, resp):
    reserve(r, "k", 100)
    r.execute_command("CF.ADD", "k", "a")
    header = scandump(r, "k")[0]
    accepted = {}
    r.config_set("maxmemory", 1)
    try:
        for command in [
            ("CF.RESERVE", "k2", 100),
            ("CF.ADD", "k", "b"),
            ("CF.ADDNX", "k", "b"),
            ("CF.INSERT", "k", "ITEMS", "b"),
            ("CF.INSERTNX", "k", "ITEMS", "b"),
            ("CF.LOADCHUNK", "k2", *header),
        ]:
            try:
                accepted[command[0]] = r.execute_command(*command)
            except redis.OutOfMemoryError:
                pass
        assert not accepted, f"writes accepted over maxmemory: {accepted}"
        assert_reply(r.execute_command("CF.EXISTS", "k", "a"), resp.bool(True))
        assert cf_info(r, "k")["Number of items inserted"] == 1
        # A delete frees memory: it runs over maxmemory.
        assert_reply(r.execute_command("CF.DEL", "k", "a"), resp.bool(True))
        assert cf_info(r, "k")["Number of items inserted"] == 0
    finally:
        r.config_set("maxmemory", 0)
    assert r.exists("k2") == 0
