"""redis-py's ``r.cf()`` API against the module, in both protocols.

``r.cf()`` installs redis-py's CF reply callbacks on the client: CF.RESERVE becomes True, CF.INFO a
``CFInfo`` (RESP2, or RESP3 with ``legacy_responses=False``; RESP3's default keeps the raw map).
"""

import pytest
import redis
from redis.commands.bf.info import CFInfo

from conftest import CHUNK_LIMIT, INFO_FIELDS, assert_reply, batched, items

INFO_ATTRIBUTES = [
    "size",
    "bucketNum",
    "filterNum",
    "insertedNum",
    "deletedNum",
    "bucketSize",
    "expansionRate",
    "maxIteration",
]


@pytest.fixture
def cf(r):
    return r.cf()


def info_of(cf, key, protocol) -> dict:
    """cf.info's attributes; checks the reply type redis-py gives for the protocol."""
    reply = cf.info(key)
    if protocol == 3:
        assert isinstance(reply, dict) and [k.decode() for k in reply] == INFO_FIELDS, reply
        reply = CFInfo(reply)
    assert isinstance(reply, CFInfo)
    return {name: getattr(reply, name) for name in INFO_ATTRIBUTES}


def test_reserve_with_every_option_and_info(cf, protocol):
    assert cf.reserve("k", 1000, bucket_size=3, max_iterations=50, expansion=3) is True
    assert cf.reserve("plain", 500) is True
    with pytest.raises(redis.ResponseError, match="^item exists$"):
        cf.reserve("k", 10)
    info = info_of(cf, "k", protocol)
    assert info["size"] > 0 and info["bucketNum"] * info["bucketSize"] >= 1000
    assert {k: v for k, v in info.items() if k not in ("size", "bucketNum")} == {
        "filterNum": 1,
        "insertedNum": 0,
        "deletedNum": 0,
        "bucketSize": 4,
        "expansionRate": 4,
        "maxIteration": 50,
    }
    plain = info_of(cf, "plain", protocol)
    assert (plain["bucketSize"], plain["expansionRate"], plain["maxIteration"]) == (2, 1, 20)


def test_info_object_under_resp3_unified_responses(shared_server):
    client = shared_server.client(3, legacy_responses=False)
    client.flushall()
    cf = client.cf()
    cf.reserve("k", 1000, bucket_size=8, expansion=2, max_iterations=10)
    cf.add("k", "a")
    cf.add("k", "b")
    cf.delete("k", "a")
    info = cf.info("k")
    assert isinstance(info, CFInfo)
    assert (
        info.filterNum,
        info.insertedNum,
        info.deletedNum,
        info.bucketSize,
        info.expansionRate,
        info.maxIteration,
    ) == (1, 1, 1, 8, 2, 10)


def test_add_addnx_exists_mexists_delete_count(cf, resp):
    assert_reply(cf.add("k", "a"), resp.bool(True))
    assert_reply(cf.add("k", "a"), resp.bool(True))
    assert_reply(cf.addnx("k", "a"), resp.bool(False))
    assert_reply(cf.addnx("k", "b"), resp.bool(True))
    assert_reply(cf.exists("k", "b"), resp.bool(True))
    assert_reply(cf.exists("k", "c"), resp.bool(False))
    assert_reply(cf.mexists("k", "a", "b", "c"), resp.bools([True, True, False]))
    assert_reply(cf.count("k", "a"), 2)
    assert_reply(cf.delete("k", "a"), resp.bool(True))
    assert_reply(cf.count("k", "a"), 1)
    assert_reply(cf.delete("k", "a"), resp.bool(True))
    assert_reply(cf.delete("k", "a"), resp.bool(False))
    assert_reply(cf.exists("k", "a"), resp.bool(False))
    with pytest.raises(redis.ResponseError, match="^Not found$"):
        cf.delete("missing", "a")
    assert_reply(cf.exists("missing", "a"), resp.bool(False))
    assert_reply(cf.count("missing", "a"), 0)


def test_insert_and_insertnx(cf, resp, protocol):
    assert_reply(cf.insert("k", ["a", "b"]), resp.inserted([1, 1]))
    assert_reply(cf.insert("k", ["c"], nocreate=True), resp.inserted([1]))
    assert_reply(cf.insert("big", ["a"], capacity=50_000), resp.inserted([1]))
    info = info_of(cf, "big", protocol)
    assert info["bucketNum"] * info["bucketSize"] >= 50_000
    with pytest.raises(redis.ResponseError, match="^not found$"):
        cf.insert("missing", ["a"], nocreate=True)
    assert_reply(cf.insertnx("k", ["a", "d", "d"]), [0, 1, 0])
    assert_reply(cf.insertnx("k", ["e"], nocreate=True), [1])
    assert_reply(cf.insertnx("nx", ["a"], capacity=10), [1])
    with pytest.raises(redis.ResponseError, match="^not found$"):
        cf.insertnx("missing", ["a"], nocreate=True)
    assert_reply(cf.mexists("k", "a", "b", "c", "d", "e"), resp.bools([True] * 5))
    assert info_of(cf, "k", protocol)["insertedNum"] == 5


def test_scandump_loadchunk_larger_than_a_chunk(cf, protocol):
    values = items("py", 1_500_000)
    for batch in batched(values, 10_000):
        assert all(x in (1, True) for x in cf.insert("src", batch, capacity=1_600_000))
    chunks = []
    iterator = 0
    while True:
        iterator, data = cf.scandump("src", iterator)
        if iterator == 0:
            assert data is None
            break
        assert 0 < len(data) <= CHUNK_LIMIT
        chunks.append((iterator, data))
    assert len(chunks) >= 2 and sum(len(d) for _, d in chunks) > CHUNK_LIMIT
    for iterator, data in chunks:
        assert cf.loadchunk("copy", iterator, data) in (b"OK", True)
    for batch in batched(values, 10_000):
        found = cf.mexists("copy", *batch)
        assert all(found), f"false negatives in the copy near {batch[0]}"
    assert info_of(cf, "copy", protocol) == info_of(cf, "src", protocol)
    assert info_of(cf, "src", protocol)["insertedNum"] == len(values)
