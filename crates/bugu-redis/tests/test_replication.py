"""Writes replicate verbatim (LOADCHUNK chunk by chunk): a replica answers exactly like its
primary, for data sent in the initial sync and for data written afterwards."""

import pytest
import redis

from conftest import (
    RESTORE_IN_PROGRESS,
    error_of,
    insert_all,
    items,
    loadchunks,
    mexists_all,
    populate,
    reserve,
    scandump,
    snapshot,
    wait_until,
)


def replicate(primary, replica) -> None:
    """Makes ``replica`` a replica of ``primary`` and waits until their link is up."""
    replica.client().replicaof("127.0.0.1", primary.port)

    def linked():
        info = replica.info("replication")
        return info.get("master_link_status") == "up" and not info.get("master_sync_in_progress")

    wait_until(linked, "the replica's link to come up", timeout=60)


def test_replica_answers_like_its_primary(start_server):
    primary = start_server("--repl-diskless-sync-delay", 0, name="primary")
    replica = start_server(name="replica")
    p, rep = primary.client(), replica.client()

    present = populate(p, prefix="sync:")  # reaches the replica in the full sync's RDB
    replicate(primary, replica)

    present.update(populate(p, prefix="stream:"))  # reaches it as the command stream
    p.execute_command("CF.INSERT", "stream:grown", "CAPACITY", 10, "NOCREATE", "ITEMS", "late")
    present["stream:grown"].append("late")
    # A restore in progress reaches the replica chunk by chunk.
    reserve(p, "stream:big", 3_000_000)
    present["stream:big"] = items("stream:big", 2000)
    insert_all(p, "stream:big", present["stream:big"])
    chunks = scandump(p, "stream:big")
    assert len(chunks) >= 2
    loadchunks(p, "stream:loading", chunks[:1])
    assert p.wait(1, 5000) == 1
    assert error_of(rep, "CF.EXISTS", "stream:loading", "x").startswith(RESTORE_IN_PROGRESS)
    loadchunks(p, "stream:loading", chunks[1:])
    present["stream:loading"] = present["stream:big"]
    assert p.wait(1, 5000) == 1

    assert sorted(rep.keys("*")) == sorted(p.keys("*"))
    absent = items("absent", 2000)
    for key, values in present.items():
        assert snapshot(rep, key) == snapshot(p, key), key
        probe = values + absent
        found = mexists_all(p, key, probe)
        assert all(found[: len(values)]), key
        assert mexists_all(rep, key, probe) == found, key

    # The replica serves reads and refuses writes.
    assert rep.execute_command("CF.EXISTS", "stream:grown", "late") == 1
    with pytest.raises(redis.ReadOnlyError):
        rep.execute_command("CF.ADD", "stream:grown", "on the replica")


def test_a_header_chunk_never_replaces_a_filter(start_server):
    """CF.LOADCHUNK's first chunk on a key that holds a filter is refused (as RedisBloom's), so
    nothing of it reaches the replica: both keep the filter."""
    primary = start_server("--repl-diskless-sync-delay", 0, name="primary")
    replica = start_server(name="replica")
    p, rep = primary.client(), replica.client()
    replicate(primary, replica)
    values = items("live", 3000)
    reserve(p, "live", 1000, bucketsize=4)
    insert_all(p, "live", values)
    reserve(p, "source", 10)
    header = scandump(p, "source")[0]
    assert p.wait(1, 5000) == 1
    before = snapshot(rep, "live")
    assert before == snapshot(p, "live")
    for iterator in (header[0], 1):  # this dump's header, and one without a stamp
        assert error_of(p, "CF.LOADCHUNK", "live", iterator, header[1]) == "item exists"
    p.execute_command("CF.ADD", "after", "x")  # once the replica has it, it has everything before
    assert p.wait(1, 5000) == 1
    assert rep.execute_command("CF.EXISTS", "after", "x") == 1
    assert snapshot(rep, "live") == before == snapshot(p, "live")
    assert all(mexists_all(rep, "live", values))
