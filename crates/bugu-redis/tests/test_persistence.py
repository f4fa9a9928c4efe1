"""Filters survive RDB (DEBUG RELOAD, SAVE and restart), the AOF (fsync always and SIGKILL, and a
rewrite), COPY, RENAME and DUMP/RESTORE unchanged; MEMORY USAGE accounts for them."""

import re
import threading

import pytest
import redis

from conftest import (
    RESTORE_IN_PROGRESS,
    assert_all_found,
    cf_info,
    error_of,
    insert_all,
    items,
    loadchunks,
    populate,
    reserve,
    scandump,
    snapshot,
    snapshots,
    wait_until,
)


def assert_unchanged(client, before: dict, present: dict) -> None:
    assert sorted(k.decode() for k in client.keys("*")) == sorted(before)
    for key, snap in before.items():
        assert snapshot(client, key) == snap, key
        assert_all_found(client, key, present[key])


def test_debug_reload(start_server):
    client = start_server().client()
    present = populate(client)
    before = snapshots(client, present)
    assert client.execute_command("DEBUG", "RELOAD") in (b"OK", True)
    assert_unchanged(client, before, present)


def test_save_and_restart(start_server):
    server = start_server()
    client = server.client()
    present = populate(client)
    before = snapshots(client, present)
    assert client.save()
    server.restart()
    assert_unchanged(server.client(), before, present)


def test_aof_fsync_always_survives_sigkill(start_server):
    server = start_server("--appendonly", "yes", "--appendfsync", "always")
    client = server.client()
    reserve(client, "aof:reserved", 300, bucketsize=4, expansion=2)
    acked = {"aof:reserved": [], "aof:auto": []}  # items acknowledged as added (and not deleted)
    in_flight = 5  # at most this many items of an unacknowledged command may have been applied
    failures = []

    def writer():
        w = server.client()  # no retries: the connection error ends the loop
        try:
            for i in range(10**9):
                key = list(acked)[i % 2]
                if i % 10 == 9:
                    batch = items(f"{key}:batch{i}", 5)
                    reply = w.execute_command("CF.INSERT", key, "ITEMS", *batch)
                    acked[key] += [v for v, x in zip(batch, reply) if x == 1]
                elif i % 7 == 6 and acked[key]:
                    victim = acked[key].pop(0)  # not checked unless the delete is refused
                    if w.execute_command("CF.DEL", key, victim) == 0:  # see test_del_in_a_grown_filter
                        acked[key].append(victim)
                else:
                    item = f"{key}:{i}"
                    assert w.execute_command("CF.ADD", key, item) == 1
                    acked[key].append(item)
        except redis.ConnectionError:
            pass
        except Exception as e:  # reported by the test
            failures.append(e)

    thread = threading.Thread(target=writer)
    thread.start()
    wait_until(
        lambda: sum(map(len, acked.values())) >= 1500 or not thread.is_alive(),
        "1500 acknowledged adds",
        timeout=120,
    )
    assert thread.is_alive(), f"the writer stopped before the kill: {failures}"
    server.kill()
    thread.join(timeout=60)
    assert not thread.is_alive() and not failures, failures
    server.start()
    client = server.client()
    for key, values in acked.items():
        assert_all_found(client, key, values)
        stored = cf_info(client, key)["Number of items inserted"]
        assert len(values) <= stored <= len(values) + in_flight, key


def rewrite_aof(server) -> bytes:
    """BGREWRITEAOF, waits for it to finish, returns the new base file's bytes."""
    done = server.info("persistence")["aof_rewrites"] + 1
    server.client().bgrewriteaof()

    def finished():
        info = server.info("persistence")
        return (
            info["aof_rewrites"] >= done
            and not info["aof_rewrite_in_progress"]
            and not info["aof_rewrite_scheduled"]
        )

    wait_until(finished, "BGREWRITEAOF to finish", timeout=120)
    assert server.info("persistence")["aof_last_bgrewrite_status"] == "ok"
    manifest = (server.dir / "appendonlydir" / "appendonly.aof.manifest").read_text()
    (base,) = re.findall(r"^file (\S+) seq \d+ type b$", manifest, re.M)
    return (server.dir / "appendonlydir" / base).read_bytes()


@pytest.mark.parametrize("preamble", ["no", "yes"], ids=["commands", "rdb-preamble"])
def test_aof_rewrite_and_restart(start_server, preamble):
    server = start_server("--appendonly", "yes", "--aof-use-rdb-preamble", preamble)
    client = server.client()
    present = populate(client)
    reserve(client, "cf:big", 1_500_000)
    present["cf:big"] = items("cf:big", 100_000)
    insert_all(client, "cf:big", present["cf:big"])
    big_chunks = len(scandump(client, "cf:big"))
    assert big_chunks >= 2
    base = rewrite_aof(server)
    if preamble == "no":  # the module's AOF rewrite callback wrote the filters as LOADCHUNK commands
        assert len(re.findall(rb"(?i)\bcf\.loadchunk\b", base)) >= big_chunks + len(present) - 1
    # Writes after the rewrite go to the incremental file, on top of the rewritten base.
    extra = items("cf:after", 500)
    insert_all(client, "cf:big", extra)
    present["cf:big"] += extra
    client.execute_command("CF.DEL", "cf:grown", present["cf:grown"].pop())
    before = snapshots(client, present)
    server.restart()
    assert_unchanged(server.client(), before, present)


def test_restore_in_progress_survives_reload_and_rewrite(start_server):
    server = start_server("--appendonly", "yes", "--aof-use-rdb-preamble", "no")
    client = server.client()
    reserve(client, "source", 3_000_000)
    insert_all(client, "source", items("source", 10_000))
    chunks = scandump(client, "source")
    assert len(chunks) >= 3
    loadchunks(client, "restoring", chunks[:2])
    assert client.execute_command("DEBUG", "RELOAD") in (b"OK", True)
    assert error_of(client, "CF.EXISTS", "restoring", "x").startswith(RESTORE_IN_PROGRESS)
    rewrite_aof(server)
    server.restart()
    client = server.client()
    assert error_of(client, "CF.EXISTS", "restoring", "x").startswith(RESTORE_IN_PROGRESS)
    loadchunks(client, "restoring", chunks[2:])
    assert snapshot(client, "restoring") == snapshot(client, "source")


def change(client, key, values) -> None:
    """Changes the filter: adds an item, or deletes one when it is full."""
    try:
        client.execute_command("CF.ADD", key, "changed")
    except redis.ResponseError as e:
        assert str(e) == "Filter is full"
        assert client.execute_command("CF.DEL", key, values[0]) == 1


def test_copy(start_server):
    client = start_server().client()
    present = populate(client)
    for key in present:
        before = snapshot(client, key)
        assert client.copy(key, key + ":copy")
        assert snapshot(client, key + ":copy") == before
        change(client, key + ":copy", present[key])
        assert snapshot(client, key + ":copy") != before
        assert snapshot(client, key) == before, "COPY shares state with its source"
    assert not client.copy("cf:grown", "cf:empty")  # exists, no REPLACE
    assert client.copy("cf:grown", "cf:empty", replace=True)
    assert snapshot(client, "cf:empty") == snapshot(client, "cf:grown")


def test_rename(start_server):
    client = start_server().client()
    present = populate(client)
    for key in present:
        before = snapshot(client, key)
        assert client.rename(key, key + ":renamed")
        assert client.exists(key) == 0
        assert snapshot(client, key + ":renamed") == before
        assert_all_found(client, key + ":renamed", present[key])
    before = snapshot(client, "cf:grown:renamed")
    assert client.rename("cf:grown:renamed", "cf:empty:renamed")  # over another filter
    assert snapshot(client, "cf:empty:renamed") == before


def test_dump_restore(start_server):
    client = start_server().client()
    present = populate(client)
    for key in present:
        before = snapshot(client, key)
        payload = client.dump(key)
        assert client.restore(key + ":restored", 0, payload)
        assert snapshot(client, key + ":restored") == before
        assert_all_found(client, key + ":restored", present[key])
        with pytest.raises(redis.ResponseError, match="BUSYKEY"):
            client.restore(key, 0, payload)
    assert client.restore("cf:empty", 0, client.dump("cf:grown"), replace=True)
    assert snapshot(client, "cf:empty") == snapshot(client, "cf:grown")


def test_memory_usage(start_server):
    client = start_server().client()
    reserve(client, "million", 10**6)
    usage = client.memory_usage("million")
    assert usage > 10**6 and usage >= cf_info(client, "million")["Size"]
    present = populate(client)
    for key in present:
        assert client.memory_usage(key) >= cf_info(client, key)["Size"] > 0, key
    small, grown = client.memory_usage("cf:empty"), client.memory_usage("cf:grown")
    assert small < grown < usage
