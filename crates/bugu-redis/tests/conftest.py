"""Shared fixtures and helpers of the bugu-redis integration tests.

Every test talks to real ``redis-server`` processes that the tests start themselves: on free
loopback ports, with the module loaded, each in its own temporary directory. They never use the
system's service (port 6379). The module is ``$BUGU_REDIS_MODULE``, by default
``target/release/libbugu_redis.so`` under the repository root; ``scripts/test`` builds it and runs
this suite. The server is ``$BUGU_REDIS_SERVER``, by default ``redis-server`` on the ``PATH``: any
build of Redis or Valkey runs the same suite (``docs/redis.md``, "Servers verified").
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

REPO_ROOT = Path(__file__).resolve().parents[3]
MODULE = Path(os.environ.get("BUGU_REDIS_MODULE") or REPO_ROOT / "target/release/libbugu_redis.so")
SERVER = os.environ.get("BUGU_REDIS_SERVER") or "redis-server"
HOST = "127.0.0.1"

# Error texts as redis-py reports them: it strips a leading "ERR " from the wire text.
WRONG_ARITY = "wrong number of arguments"
WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
RESTORE_IN_PROGRESS = "restore in progress"

INFO_FIELDS = [
    "Size",
    "Number of buckets",
    "Number of filters",
    "Number of items inserted",
    "Number of items deleted",
    "Bucket size",
    "Expansion rate",
    "Max iterations",
    "Layout",
]
WRITE_COMMANDS = ["CF.RESERVE", "CF.ADD", "CF.ADDNX", "CF.INSERT", "CF.INSERTNX", "CF.DEL", "CF.LOADCHUNK"]
READ_COMMANDS = ["CF.EXISTS", "CF.MEXISTS", "CF.COUNT", "CF.INFO", "CF.SCANDUMP"]
# Server options for tests that read used_memory around a delete or a flush: Valkey frees
# deleted and flushed values in a background thread by default.
SYNCHRONOUS_FREES = ("--lazyfree-lazy-user-del", "no", "--lazyfree-lazy-user-flush", "no")
CHUNK_LIMIT = 1 << 20  # SCANDUMP's largest chunk (of filters up to 32 MiB)
POSITION_MASK = (1 << 41) - 1  # a dump iterator's position bits; the bits above name the dump
CRASH_MARKERS = ("Guru Meditation", "crashed by signal", "ASSERTION FAILED", "panicked", "argv[")


def pytest_configure(config):
    if not MODULE.is_file():
        raise pytest.UsageError(
            f"the bugu-redis module is not at {MODULE}: build it with "
            "`cargo build --release -p bugu-redis`, or point BUGU_REDIS_MODULE at it"
        )


def pytest_report_header(config):
    return f"bugu-redis module: {MODULE}"


# ------------------------------------------------------------------------------------------------
# Servers


_handed_out_ports: set[int] = set()


def free_port() -> int:
    """A loopback port that nothing listens on now (the kernel's pick for port 0), never 6379 and
    never one this session handed out before."""
    while True:
        with socket.socket() as s:
            s.bind((HOST, 0))
            port = s.getsockname()[1]
        if port != 6379 and port not in _handed_out_ports:
            _handed_out_ports.add(port)
            return port


class Server:
    """One ``redis-server`` with the module loaded, in its own directory, on its own port.

    ``args`` are extra ``--option value`` arguments; they come last, so they override the defaults
    (no RDB snapshots, no AOF). Restarts keep the port and the directory, hence the data files.
    """

    def __init__(self, directory: Path, *args, module: Path = MODULE):
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.args = [str(a) for a in args]
        self.module = module
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.down_on_purpose = False
        self._clients: list[redis.Redis] = []

    def __repr__(self):
        return f"<redis-server 127.0.0.1:{self.port} in {self.dir}>"

    @property
    def log(self) -> Path:
        return self.dir / "redis.log"

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def crashed(self) -> bool:
        """The process ended without this object stopping or killing it."""
        return self.proc is not None and not self.running and not self.down_on_purpose

    def command_line(self) -> list[str]:
        return [
            SERVER,
            "--port", str(self.port),
            "--bind", HOST,
            "--daemonize", "no",
            "--dir", str(self.dir),
            "--logfile", str(self.log),
            "--save", "",
            "--appendonly", "no",
            "--enable-debug-command", "yes",
            "--loadmodule", str(self.module),
            *self.args,
        ]  # fmt: skip

    def start(self, timeout: float = 60) -> Server:
        """Starts the process and waits until it answers PING (past loading its data)."""
        assert not self.running, f"{self} is already running"
        with open(self.dir / "stdout.log", "ab") as out:
            self.proc = subprocess.Popen(
                self.command_line(), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT
            )
        self.down_on_purpose = False
        probe = self._admin(socket_timeout=5, socket_connect_timeout=1)
        deadline = time.monotonic() + timeout
        try:
            while True:
                if not self.running:
                    raise RuntimeError(
                        f"{self} exited with status {self.proc.returncode} while starting:\n"
                        + self.log_tail()
                    )
                try:
                    if probe.ping():
                        return self
                except (redis.ConnectionError, redis.TimeoutError):  # not listening yet, or loading
                    pass
                if time.monotonic() > deadline:
                    self.kill()
                    raise RuntimeError(f"{self} did not answer PING in {timeout} s:\n{self.log_tail()}")
                time.sleep(0.02)
        finally:
            probe.close()

    def stop(self) -> None:
        """SHUTDOWN NOSAVE NOW (the AOF, if on, is flushed; no RDB is written), else SIGTERM, else
        SIGKILL."""
        self._close_clients()
        if not self.running:
            return
        self.down_on_purpose = True
        admin = self._admin(socket_timeout=10)
        try:
            admin.execute_command("SHUTDOWN", "NOSAVE", "NOW")
        except redis.RedisError:  # normally the connection closing under the reply
            pass
        finally:
            admin.close()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()

    def kill(self) -> None:
        """SIGKILL: no chance to flush or save anything."""
        if self.running:
            self.down_on_purpose = True
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=20)

    def restart(self) -> Server:
        self.stop()
        return self.start()

    def client(self, protocol: int = 2, **kwargs) -> redis.Redis:
        """A redis-py client without CF reply callbacks: replies come back as the protocol has them
        (bytes, ints, lists, RESP3 booleans and maps). It does not retry: a retried write could be
        applied twice, and a dead server should fail the test at once."""
        kwargs.setdefault("socket_timeout", 120)
        kwargs.setdefault("retry", Retry(NoBackoff(), 0))
        c = redis.Redis(host=HOST, port=self.port, protocol=protocol, **kwargs)
        self._clients.append(c)
        return c

    def info(self, section: str) -> dict:
        c = self._admin(socket_timeout=30)
        try:
            return c.info(section)
        finally:
            c.close()

    def log_tail(self, lines: int = 30) -> str:
        """The end of the log and of stdout/stderr (where a Rust panic goes), and the reason of a
        crash from Redis' bug report."""
        text = ""
        for path in (self.log, self.dir / "stdout.log"):
            if path.exists():
                log = path.read_text(errors="replace").splitlines()
                reasons = [line for line in log if any(m in line for m in CRASH_MARKERS)]
                text += f"--- {path}\n" + "\n".join(reasons[:10] + ["..."] + log[-lines:]) + "\n"
        return text

    def _admin(self, **kwargs) -> redis.Redis:
        """A client that does not retry (redis-py's default backs off for seconds on a closed port)."""
        return redis.Redis(host=HOST, port=self.port, retry=Retry(NoBackoff(), 0), **kwargs)

    def _close_clients(self) -> None:
        for c in self._clients:
            c.close()
        self._clients.clear()


@pytest.fixture
def start_server(tmp_path):
    """``start_server(*args)`` starts a server for this test; every one is stopped afterwards, and
    the test fails if one of them died on its own."""
    servers: list[Server] = []

    def start(*args, name: str | None = None) -> Server:
        server = Server(tmp_path / (name or f"server{len(servers)}"), *args)
        servers.append(server)
        return server.start()

    yield start
    crashed = [s for s in servers if s.crashed]
    for s in servers:
        s.stop()
    if crashed:
        pytest.fail("redis-server died during the test:\n" + "\n".join(s.log_tail() for s in crashed))


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory):
    """One server for a whole test file; the ``r`` fixture empties it before each test."""
    server = Server(tmp_path_factory.mktemp("shared"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def protocol(request) -> int:
    return request.param


@pytest.fixture
def r(shared_server, protocol) -> redis.Redis:
    """A raw client (see ``Server.client``) of the shared server, emptied for this test."""
    if not shared_server.running:  # an earlier test crashed it, and failed for it
        shared_server.start()
    client = shared_server.client(protocol)
    client.flushall()
    yield client
    client.close()
    if shared_server.crashed:
        pytest.fail(f"redis-server died during this test:\n{shared_server.log_tail()}")


# ------------------------------------------------------------------------------------------------
# Replies


class Resp:
    """The shape of the module's replies under one protocol: RESP3 has booleans where RESP2 has
    integers."""

    def __init__(self, protocol: int):
        self.protocol = protocol

    def bool(self, value: bool):
        """CF.ADD, CF.ADDNX, CF.EXISTS, CF.MEXISTS' elements, CF.DEL."""
        return bool(value) if self.protocol == 3 else int(value)

    def bools(self, values) -> list:
        return [self.bool(v) for v in values]

    def inserted(self, values) -> list:
        """CF.INSERT: per item 1 (added) or -1 (not added) in RESP2, True or False in RESP3."""
        return [bool(v) if self.protocol == 3 else (1 if v else -1) for v in values]


@pytest.fixture
def resp(protocol) -> Resp:
    return Resp(protocol)


def typed(value):
    """``value`` with the type of every scalar spelt out, so that True differs from 1 and b"1".
    Maps keep their order."""
    if isinstance(value, (list, tuple)):
        return [typed(v) for v in value]
    if isinstance(value, dict):
        return ("map", [(typed(k), typed(v)) for k, v in value.items()])
    return (type(value).__name__, value)


def same(actual, expected) -> bool:
    """Equal, with the same types (a RESP3 boolean is not the integer 1)."""
    return typed(actual) == typed(expected)


def assert_reply(actual, expected) -> None:
    """Equal, with the same types (a RESP3 boolean is not the integer 1)."""
    assert typed(actual) == typed(expected), f"reply {actual!r}, expected {expected!r}"


def error_of(client: redis.Redis, *args) -> str:
    """The text of the error reply the command must give (as redis-py has it: no leading "ERR ")."""
    with pytest.raises(redis.ResponseError) as caught:
        client.execute_command(*args)
    return str(caught.value)


def wire_reply_line(port: int, *args) -> bytes:
    """The first line of the command's reply exactly as the server sends it (RESP2), e.g.
    b"-ERR not found": redis-py cannot tell "-ERR x" from "-x"."""
    parts = [a if isinstance(a, bytes) else str(a).encode() for a in args]
    request = b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)
    with socket.create_connection((HOST, port), timeout=30) as s:
        s.sendall(request)
        received = b""
        while b"\r\n" not in received:
            data = s.recv(65536)
            if not data:
                break
            received += data
    return received.split(b"\r\n", 1)[0]


def wait_until(predicate, what: str, timeout: float = 30, interval: float = 0.05):
    """Polls ``predicate`` until it returns something true, which is returned."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


# ------------------------------------------------------------------------------------------------
# CF commands


def items(prefix: str, count: int) -> list[str]:
    return [f"{prefix}:{i}" for i in range(count)]


def batched(values, size: int):
    for i in range(0, len(values), size):
        yield values[i : i + size]


def reserve(client: redis.Redis, key, capacity, **options) -> None:
    """CF.RESERVE with options given as keywords (``bucketsize=4``), which must reply OK."""
    args = [f for name, value in options.items() for f in (name.upper(), value)]
    assert_reply(client.execute_command("CF.RESERVE", key, capacity, *args), b"OK")


def pipelined(client: redis.Redis, commands) -> list:
    """Runs the commands in one round trip; an error reply comes back as its exception."""
    pipe = client.pipeline(transaction=False)
    for command in commands:
        pipe.execute_command(*command)
    return pipe.execute(raise_on_error=False)


def cf_info(client: redis.Redis, key) -> dict[str, int]:
    """CF.INFO as {field: value} in reply order, from RESP2's flat array or RESP3's map."""
    reply = client.execute_command("CF.INFO", key)
    pairs = reply.items() if isinstance(reply, dict) else zip(reply[::2], reply[1::2])
    return {k.decode() if isinstance(k, bytes) else k: v for k, v in pairs}


def scandump(client: redis.Redis, key) -> list[tuple[int, bytes]]:
    """Every (iterator, data) pair of CF.SCANDUMP, from iterator 0 until it replies [0, nil]."""
    chunks: list[tuple[int, bytes]] = []
    iterator = 0
    while True:
        reply = client.execute_command("CF.SCANDUMP", key, iterator)
        assert isinstance(reply, list) and len(reply) == 2, f"SCANDUMP replied {reply!r:.200}"
        iterator, data = reply
        if iterator == 0:
            assert data is None, f"SCANDUMP's last reply must be [0, nil], got [0, {data!r:.100}]"
            return chunks
        assert isinstance(data, bytes) and 0 < len(data) <= CHUNK_LIMIT, f"chunk {len(chunks)}"
        assert len(chunks) < 100_000, "SCANDUMP does not end"
        chunks.append((iterator, data))


def loadchunks(client: redis.Redis, key, chunks) -> None:
    for iterator, data in chunks:
        assert client.execute_command("CF.LOADCHUNK", key, iterator, data) == b"OK"


def snapshot(client: redis.Redis, key) -> tuple[dict[str, int], list[tuple[int, bytes]]]:
    """What must be equal between two identical filters: CF.INFO and the SCANDUMP chunks, each
    with its position (without the stamp that names the dump, which differs from key to key; a
    LOADCHUNK of these chunks takes them as chunks of a dump without a stamp)."""
    return cf_info(client, key), [(it & POSITION_MASK, data) for it, data in scandump(client, key)]


def insert_all(client: redis.Redis, key, values, batch: int = 10_000) -> None:
    """CF.INSERT in batches; every item must be added."""
    for chunk in batched(values, batch):
        reply = client.execute_command("CF.INSERT", key, "ITEMS", *chunk)
        refused = [v for v, ok in zip(chunk, reply) if ok not in (1, True)]
        assert len(reply) == len(chunk) and not refused, f"not added: {refused[:5]}"


def mexists_all(client: redis.Redis, key, values, batch: int = 10_000) -> list[bool]:
    found: list[bool] = []
    for chunk in batched(values, batch):
        reply = client.execute_command("CF.MEXISTS", key, *chunk)
        assert len(reply) == len(chunk)
        found += [bool(v) for v in reply]
    return found


def assert_all_found(client: redis.Redis, key, values) -> None:
    missing = [v for v, ok in zip(values, mexists_all(client, key, values)) if not ok]
    assert not missing, f"{len(missing)} false negatives in {key!r}, e.g. {missing[:5]}"


def populate(client: redis.Redis, prefix: str = "cf:") -> dict[str, list[str]]:
    """Writes a varied set of filters with every write command and returns, per key, the items it
    must hold: reserved with options and grown, created by CF.ADD and grown, filled by CF.INSERTNX
    and CF.ADDNX, bucket size 8 with repeated copies, a full EXPANSION 0 filter, an empty one,
    some deletions, one-table filters (reserved with deletions, and created by CF.INSERT), and
    copies made with SCANDUMP/LOADCHUNK."""
    present: dict[str, list[str]] = {}

    key = prefix + "reserved"
    reserve(client, key, 1000, bucketsize=4, expansion=2, maxiterations=100)
    values = items(key, 3000)
    insert_all(client, key, values, batch=500)
    deleted = pipelined(client, [("CF.DEL", key, v) for v in values[:300]])
    assert all(x in (0, 1) for x in deleted), deleted  # 0: see test_del_in_a_grown_filter
    present[key] = [v for v, x in zip(values, deleted) if x != 1] + values[300:]

    key = prefix + "grown"
    values = items(key, 4000)
    assert all(x in (1, True) for x in pipelined(client, [("CF.ADD", key, v) for v in values]))
    present[key] = values

    key = prefix + "nx"
    values = items(key, 1500)
    assert (
        client.execute_command("CF.INSERTNX", key, "CAPACITY", 2000, "ITEMS", *values[:1000]).count(1) >= 990
    )
    pipelined(client, [("CF.ADDNX", key, v) for v in values[500:]])
    present[key] = values

    key = prefix + "bucket8"
    reserve(client, key, 2000, bucketsize=8, errorrate=0.001)
    values = items(key, 1500)
    insert_all(client, key, values, batch=500)
    assert all(x in (1, True) for x in pipelined(client, [("CF.ADD", key, "dup")] * 5))
    present[key] = values + ["dup"]

    key = prefix + "full"
    reserve(client, key, 64, expansion=0)
    values = items(key, 400)
    replies = pipelined(client, [("CF.ADD", key, v) for v in values])
    assert any(isinstance(x, redis.ResponseError) for x in replies), "the EXPANSION 0 filter never filled"
    present[key] = [v for v, x in zip(values, replies) if not isinstance(x, Exception)]

    key = prefix + "empty"
    reserve(client, key, 100)
    present[key] = []

    key = prefix + "one-table"
    reserve(client, key, 500, growth="ONETABLE", errorrate=0.001)
    values = items(key, 3000)
    insert_all(client, key, values, batch=500)
    deleted = pipelined(client, [("CF.DEL", key, v) for v in values[:300]])
    assert all(x in (1, True) for x in deleted), "a one-table filter refused a removal"
    present[key] = values[300:]

    key = prefix + "one-table-auto"
    values = items(key, 2500)
    for chunk in batched(values, 500):
        reply = client.execute_command("CF.INSERT", key, "GROWTH", "ONETABLE", "ITEMS", *chunk)
        assert all(x in (1, True) for x in reply)
    present[key] = values

    key = prefix + "copy"
    loadchunks(client, key, scandump(client, prefix + "reserved"))
    present[key] = present[prefix + "reserved"]

    key = prefix + "one-table-copy"
    loadchunks(client, key, scandump(client, prefix + "one-table"))
    present[key] = present[prefix + "one-table"]
    return present


def snapshots(client: redis.Redis, keys) -> dict:
    return {key: snapshot(client, key) for key in keys}


# ------------------------------------------------------------------------------------------------
# DUMP payloads


def _crc64_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x95AC9329AC4BC9B5 if crc & 1 else 0)
        table.append(crc)
    return table


CRC64_TABLE = _crc64_table()


def crc64(data: bytes) -> int:
    """Redis' CRC-64 (Jones, reflected), which seals DUMP payloads."""
    crc = 0
    for byte in data:
        crc = CRC64_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc


def seal(body: bytes, version: bytes) -> bytes:
    return body + version + crc64(body + version).to_bytes(8, "little")
