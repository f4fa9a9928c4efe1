"""Hostile input, seeded by BUGU_HOSTILE_SEED: mutated LOADCHUNK payloads, random argument lists for
every command, corrupt DUMP payloads. After every case the server still answers PING and a
reference filter created at the start still answers exactly as before.

A failure names the seed and the case; rerun with the same seed to reproduce it.
"""

import os
import random

import pytest
import redis

from conftest import (
    POSITION_MASK,
    READ_COMMANDS,
    RESTORE_IN_PROGRESS,
    WRITE_COMMANDS,
    WRONGTYPE,
    cf_info,
    error_of,
    insert_all,
    items,
    loadchunks,
    mexists_all,
    reserve,
    scandump,
    seal,
    snapshot,
)

SEED = int(os.environ.get("BUGU_HOSTILE_SEED", "1729"))
LOADCHUNK_ERRORS = {"Invalid position", "Invalid header", "Couldn't load chunk!"}
ITEM_EXISTS = "item exists"  # a header sent to a key that holds a filter
ANY = None  # a mutation that may be accepted or refused (with one of LOADCHUNK_ERRORS)


def describe(args) -> str:
    return " ".join(repr(a)[:60] for a in args)


def attempt(client, label: str, *args):
    """The command's reply, or its error reply as a ResponseError; a dropped connection or a
    timeout fails the test (the server died or hung)."""
    try:
        return client.execute_command(*args)
    except redis.ResponseError as e:
        return e
    except (redis.ConnectionError, redis.TimeoutError) as e:
        pytest.fail(f"seed {SEED}, {label}: no reply to {describe(args)} ({e!r})")


class Reference:
    """A filter no case touches; ``check`` runs after every case."""

    def __init__(self, client):
        self.client = client
        reserve(client, "ref", 500, bucketsize=4, expansion=2)
        self.items = items("ref", 700)
        insert_all(self.client, "ref", self.items)
        self.info = cf_info(client, "ref")
        self.chunks = scandump(client, "ref")
        self.cases = 0

    def check(self, label: str) -> None:
        self.cases += 1
        try:
            assert self.client.ping()
            assert cf_info(self.client, "ref") == self.info, f"seed {SEED}, {label}: the reference changed"
            sample = self.items[self.cases % 14 :: 14]  # all of them every 14 cases
            assert all(mexists_all(self.client, "ref", sample)), (
                f"seed {SEED}, {label}: the reference lost items"
            )
            if self.cases % 100 == 0:
                assert scandump(self.client, "ref") == self.chunks, (
                    f"seed {SEED}, {label}: the reference changed"
                )
        except (redis.ConnectionError, redis.TimeoutError) as e:
            pytest.fail(f"seed {SEED}, {label}: the server stopped answering ({e!r})")


def make_sources(client) -> list[tuple[dict, list]]:
    """(CF.INFO, SCANDUMP chunks) of small filters of every shape."""
    reserve(client, "src:tiny", 1)
    reserve(client, "src:b4", 500, bucketsize=4)
    insert_all(client, "src:b4", items("b4", 400))
    insert_all(client, "src:grown", items("grown", 3000), batch=500)
    reserve(client, "src:b8", 200, bucketsize=8, expansion=4, maxiterations=7)
    insert_all(client, "src:b8", items("b8", 1000), batch=100)
    reserve(client, "src:full", 50, expansion=0)
    for v in items("full", 200):
        attempt(client, "making sources", "CF.ADD", "src:full", v)
    return [snapshot(client, k) for k in ("src:tiny", "src:b4", "src:grown", "src:b8", "src:full")]


def key_state(client, key):
    kind = client.type(key)
    if kind == b"none":
        return ("none",)
    if kind == b"string":
        return ("string", client.get(key))
    return ("filter", client.dump(key))  # a restore in progress too, which answers no CF.INFO


def bad_iterators(rng, expected: int, chunks) -> list:
    pool = [0, -1, -2**63, 2**63 - 1, 2**63, 2**64, 10**30, "abc", "", "1.5", "1e3", "0x1",
            expected + 1, expected - 1, 2 * expected + 7, rng.getrandbits(62),
            *(it for it, _ in chunks)]  # fmt: skip
    return [it for it in pool if it != expected and not is_header(it)]


def is_header(iterator) -> bool:
    """Whether LOADCHUNK takes a chunk sent with this iterator for a header."""
    return isinstance(iterator, int) and iterator >= 0 and iterator & POSITION_MASK == 1


def mutate(rng, chunks, j: int):
    """A wrong version of chunk ``j``: (iterator, data, the error it must get or ANY)."""
    iterator, data = chunks[j]
    kinds = ["flip", "truncate", "extend", "random-header", "iterator"]
    if len(chunks) > 2 or (len(chunks) == 2 and j == 0):
        kinds.append("swap")
    kind = rng.choice(kinds)
    if kind == "flip":
        mutated = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            mutated[rng.randrange(len(mutated))] ^= rng.randint(1, 255)
        return iterator, bytes(mutated), ANY
    if kind == "truncate":
        return iterator, data[: rng.randrange(len(data))], ANY
    if kind == "extend":
        return iterator, data + rng.randbytes(rng.randint(1, 64)), ANY
    if kind == "random-header":
        return 1, rng.randbytes(rng.randint(0, 300)), "Invalid header"
    if kind == "iterator":
        return rng.choice(bad_iterators(rng, iterator, chunks)), data, "Invalid position"
    k = rng.choice([k for k in range(1, len(chunks)) if k != j])  # chunk 0 would restart the load
    return *chunks[k], "Invalid position"


def loadchunk_case(client, rng, label: str, source, other_sources) -> None:
    """Loads ``source`` into key "t" with one chunk replaced by a mutation: a refused chunk leaves
    the key as it was, after which the correct chunk goes on; whatever was accepted, loading the
    correct dump from its header afterwards gives the source's filter."""
    info, chunks = source
    setup = rng.choices(["missing", "restoring", "filter", "string"], weights=[9, 6, 3, 2])[0]
    client.delete("t")
    if setup == "restoring":
        other = rng.choice(other_sources)[1]
        loadchunks(client, "t", other[: rng.randrange(1, len(other))])
    elif setup == "filter":
        loadchunks(client, "t", rng.choice(other_sources)[1])
    elif setup == "string":
        client.set("t", "a string")
    before = key_state(client, "t")
    j = 0 if setup in ("string", "filter") else rng.randrange(len(chunks))
    loadchunks(client, "t", chunks[:j])
    iterator, data, expected = mutate(rng, chunks, j)
    if setup == "restoring" and j == 0 and not is_header(iterator):
        expected = ANY  # a chunk in place of the header may fit the other restore in progress
    label += f", {setup} target, chunk {j} of {len(chunks)} sent as ({iterator!r}, {len(data)} bytes)"
    reply = attempt(client, label, "CF.LOADCHUNK", "t", iterator, data)

    if setup in ("string", "filter"):  # nothing replaces them
        assert isinstance(reply, redis.ResponseError), f"{label}: the {setup} was overwritten"
        assert str(reply) in LOADCHUNK_ERRORS | {WRONGTYPE, ITEM_EXISTS}, f"{label}: {reply}"
        assert key_state(client, "t") == before, label
        return
    if isinstance(reply, redis.ResponseError):
        if expected is ANY:
            assert str(reply) in LOADCHUNK_ERRORS, f"{label}: {reply}"
        else:
            assert str(reply) == expected, f"{label}: {reply}"
        if j == 0:
            assert key_state(client, "t") == before, f"{label}: a refused header changed the key"
        else:
            assert error_of(client, "CF.EXISTS", "t", "x").startswith(RESTORE_IN_PROGRESS), label
        loadchunks(client, "t", chunks[j:])
    else:
        assert reply == b"OK" and expected is ANY, f"{label}: accepted, expected {expected!r}"
        for iterator, data in chunks[j + 1 :]:
            reply = attempt(client, label, "CF.LOADCHUNK", "t", iterator, data)
            if isinstance(reply, redis.ResponseError):
                assert str(reply) in LOADCHUNK_ERRORS, f"{label}: {reply}"
                break
        else:  # every chunk accepted: a working filter, or one still waiting for its bytes
            reply = attempt(client, label, "CF.INFO", "t")
            if isinstance(reply, redis.ResponseError):
                assert str(reply).startswith(RESTORE_IN_PROGRESS), f"{label}: {reply}"
            else:
                scandump(client, "t")
                attempt(client, label, "CF.MEXISTS", "t", "a", "b")
                client.delete("t")  # a finished filter: a header would not replace it
        loadchunks(client, "t", chunks)  # a header (re)starts a load in progress
    assert snapshot(client, "t") == (info, chunks), f"{label}: the load did not give the source's filter"


def test_mutated_loadchunk_payloads(start_server):
    client = start_server().client(socket_timeout=30)
    rng = random.Random(SEED)
    reference = Reference(client)
    sources = make_sources(client)
    for n in range(1500):
        source = rng.choice(sources)
        others = [s for s in sources if s is not source]
        label = f"LOADCHUNK case {n}"
        loadchunk_case(client, rng, label, source, others)
        reference.check(label)
    # A few cases with a dump of several 1 MiB chunks.
    reserve(client, "src:big", 1_500_000)
    insert_all(client, "src:big", items("big", 20_000))
    big = snapshot(client, "src:big")
    assert len(big[1]) >= 3
    for n in range(20):
        label = f"big LOADCHUNK case {n}"
        loadchunk_case(client, rng, label, big, sources)
        reference.check(label)


# ------------------------------------------------------------------------------------------------
# Random argument lists


OPTIONS = ["CAPACITY", "BUCKETSIZE", "MAXITERATIONS", "EXPANSION", "ERRORRATE", "NOCREATE", "ITEMS"]
NUMBERS = [0, 1, 2, 3, 4, 5, 7, 8, 9, 16, 100, 255, 256, 1000, 32768, 32769, 65535, 65536,
           -1, -2**31, 2**30 + 1, 2**31, 2**32, 2**63 - 1, 2**63, 2**64, -2**63, 10**30,
           "1e3", "0.5", "0.01", "0.001", "1e-300", "1e-9", "nan", "inf", "-inf", "-0", "0x10", " 5", "5 ",
           "1.0"]  # fmt: skip
HOSTILE_KEYS = ["h1", "h2", "hs", "hm"]
ARGUMENTS_AFTER_KEY = {
    "CF.ADD": 1,
    "CF.ADDNX": 1,
    "CF.EXISTS": 1,
    "CF.DEL": 1,
    "CF.COUNT": 1,
    "CF.INFO": 0,
    "CF.SCANDUMP": 1,
    "CF.LOADCHUNK": 2,
}


def token(rng):
    roll = rng.random()
    if roll < 0.3:
        name = rng.choice(OPTIONS)
        return name if rng.random() < 0.8 else "".join(rng.choice((c.lower(), c)) for c in name)
    if roll < 0.6:
        return rng.choice(NUMBERS)
    if roll < 0.8:
        return rng.randbytes(rng.randint(0, 40))
    if roll < 0.95:
        return rng.choice(["", "a", "t", "\x00", "ITEMS", "-", "*", "\r\n"])  # never "ref"
    return rng.randint(-(2**70), 2**70)


def capacity(rng):
    """Mostly a valid capacity, never one between 65536 and 2^30 (up to gigabytes of table)."""
    if rng.random() < 0.7:
        return rng.choice([1, 2, 3, 10, 100, 1000, 65536])
    return rng.choice([n for n in NUMBERS if not isinstance(n, int) or n < 1 or n > 2**30])


def random_command(rng, chunks) -> list:
    """A CF command with random arguments: mostly of the right shape, so that the checks behind
    the argument count and the option parser get their share."""
    command = rng.choice(WRITE_COMMANDS + READ_COMMANDS)
    keys = HOSTILE_KEYS + (["ref"] if command in READ_COMMANDS else [])
    args = [command]
    if rng.random() < 0.9:
        args.append(rng.choice(keys))
    if command == "CF.LOADCHUNK" and rng.random() < 0.5:
        iterator, data = rng.choice(chunks)
        args += [
            rng.choice([iterator, token(rng)]),
            rng.choice([data, data[: rng.randrange(len(data))], token(rng)]),
        ]
    elif command in ("CF.RESERVE", "CF.INSERT", "CF.INSERTNX") and rng.random() < 0.6:
        if command == "CF.RESERVE":
            args.append(capacity(rng))
            options = ["BUCKETSIZE", "MAXITERATIONS", "EXPANSION", "ERRORRATE"]
        else:
            options = ["CAPACITY", "NOCREATE"]
        for _ in range(rng.randint(0, 3)):
            name = rng.choice(options) if rng.random() < 0.9 else rng.choice(OPTIONS)
            if name == "CAPACITY":
                args += [name, capacity(rng)]
            elif name == "NOCREATE":
                args.append(name)
            else:
                args += [name, rng.choice(NUMBERS)]
        if command != "CF.RESERVE":
            args += ["ITEMS", *(token(rng) for _ in range(rng.randint(0, 8)))]
    elif command in ARGUMENTS_AFTER_KEY and rng.random() < 0.7:
        args += [token(rng) for _ in range(ARGUMENTS_AFTER_KEY[command])]
    else:
        args += [token(rng) for _ in range(rng.choice([0, 1, 1, 2, 3, 4, 6, 9]))]
    return args


def reset_hostile_keys(client, rng, chunks) -> None:
    client.delete(*HOSTILE_KEYS)
    client.set("hs", "a string")
    if rng.random() < 0.5:  # a restore in progress for the random commands to meet
        client.execute_command("CF.LOADCHUNK", "h2", *rng.choice(chunks))


def test_random_arguments(start_server, protocol):
    server = start_server()
    client = server.client(protocol, socket_timeout=30)
    rng = random.Random(SEED * 10 + protocol)
    reference = Reference(client)
    chunks = [chunk for _, source in make_sources(client) for chunk in source]
    headers = [c for c in chunks if is_header(c[0])]
    for n in range(2500):
        if n % 25 == 0:
            reset_hostile_keys(client, rng, headers)
        args = random_command(rng, chunks)
        label = f"RESP{protocol} case {n}: {describe(args)}"
        attempt(client, label, *args)
        reference.check(label)


# ------------------------------------------------------------------------------------------------
# Corrupt DUMP payloads (beyond the CF commands: RESTORE hands any bytes to the module's RDB loader)


def test_restore_of_corrupt_dump_payloads(start_server):
    client = start_server().client(socket_timeout=30)
    client.set("plain", "x")
    payload = client.dump("plain")
    assert seal(payload[:-10], payload[-10:-8]) == payload, "the CRC-64 here is not Redis'"
    rng = random.Random(SEED + 7)
    reference = Reference(client)
    make_sources(client)
    payloads = [client.dump(k) for k in ("src:tiny", "src:b4", "src:grown", "src:b8", "src:full", "ref")]
    for n in range(400):
        payload = rng.choice(payloads)
        body, version = bytearray(payload[:-10]), payload[-10:-8]
        kind = rng.choice(["flip", "truncate", "extend", "zeros"])
        if kind == "flip":
            for _ in range(rng.randint(1, 4)):
                body[rng.randrange(1, len(body))] ^= rng.randint(1, 255)
        elif kind == "truncate":
            del body[rng.randrange(1, len(body)) :]
        elif kind == "extend":
            body += rng.randbytes(rng.randint(1, 64))
        else:
            start = rng.randrange(1, len(body))
            end = min(len(body), start + rng.randint(1, 16))
            body[start:end] = bytes(end - start)
        label = f"RESTORE case {n} ({kind})"
        reply = attempt(client, label, "RESTORE", "restored", 0, seal(bytes(body), version), "REPLACE")
        if not isinstance(reply, redis.ResponseError):  # accepted: the filter must answer
            for command in (
                ("CF.INFO", "restored"),
                ("CF.MEXISTS", "restored", "a", "b"),
                ("CF.SCANDUMP", "restored", 0),
            ):
                attempt(client, label, *command)
        reference.check(label)
