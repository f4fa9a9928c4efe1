"""CF.SCANDUMP cuts every chunk from the live filter: a dump keeps no copy between its calls (on a
replica, or past maxmemory, as anywhere), and a write during a dump makes its next call fail
instead of mixing two filters."""

import redis

from conftest import error_of, insert_all, items, loadchunks, reserve, scandump, snapshot

DUMP_CHANGED = "the filter changed since this CF.SCANDUMP began"


def used_memory(client) -> int:
    return client.info("memory")["used_memory"]


def test_unfinished_dumps_keep_no_memory(start_server):
    c = start_server().client()
    keys = [f"big{i}" for i in range(10)]
    for key in keys:
        reserve(c, key, 2_000_000)  # about 3.6 MB each
    sizes = {key: c.memory_usage(key) for key in keys}
    before = used_memory(c)
    for key in keys:  # the header and the first data chunk, then nothing
        iterator, _ = c.execute_command("CF.SCANDUMP", key, 0)
        c.execute_command("CF.SCANDUMP", key, iterator)
    for _ in range(20):
        scandump(c, keys[0])
    grown = used_memory(c) - before
    assert grown < 1 << 20, f"used_memory grew by {grown} bytes over {len(keys)} unfinished dumps"
    assert {key: c.memory_usage(key) for key in keys} == sizes


def test_a_write_during_a_dump_fails_it(start_server):
    c = start_server().client()
    reserve(c, "k", 3_000_000)
    insert_all(c, "k", items("k", 5000))
    before = snapshot(c, "k")
    started = []
    iterator = 0
    for _ in range(2):
        iterator, data = c.execute_command("CF.SCANDUMP", "k", iterator)
        started.append((iterator, data))
    assert c.execute_command("CF.ADD", "k", "written during the dump") == 1
    after = snapshot(c, "k")
    assert before[1][1] != after[1][1], "the write changed no byte of the first data chunk"
    assert error_of(c, "CF.SCANDUMP", "k", iterator).startswith(DUMP_CHANGED)
    # The chunks it gave, completed by a dump begun after the write, never restore: the next
    # chunk names another dump.
    rest = scandump(c, "k")[len(started) :]
    loadchunks(c, "copy", started)
    message = error_of(c, "CF.LOADCHUNK", "copy", *rest[0])
    assert message.startswith("this chunk is from another CF.SCANDUMP"), message
    # Chunks without a dump's stamp, spliced from the two states at every chunk: a restore either
    # fails (bugu's checksum) or gives one of the two filters, never a third.
    for split in range(1, len(before[1])):
        c.delete("copy")
        mixed = before[1][:split] + after[1][split:]
        try:
            loadchunks(c, "copy", mixed)
        except redis.ResponseError as e:
            assert str(e) == "Couldn't load chunk!", f"split at {split}: {e}"
            continue
        assert snapshot(c, "copy") in (before, after), f"split at {split}: a third filter"
