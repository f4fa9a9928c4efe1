"""One key, one meaning: keys the `bugu` command adds to a filter file, loaded into Redis with
CF.LOADCHUNK, answer CF.EXISTS / CF.MEXISTS exactly as the command answers its lines (false
positives included: the same key reaches the same fingerprint); and keys added with CF.INSERT are
found by the command in a CF.SCANDUMP of them.

The command is ``$BUGU_CLI``, by default ``target/debug/bugu`` (``cargo test --workspace``, which
``scripts/test`` runs first, builds it).
"""

from __future__ import annotations

import os
import struct
import subprocess
from pathlib import Path

import pytest

from conftest import REPO_ROOT, batched, cf_info, loadchunks, scandump

CLI = Path(os.environ.get("BUGU_CLI") or REPO_ROOT / "target/debug/bugu")

PRESENT = [f"用户_{i}" if i % 3 == 0 else f"user_{i}" for i in range(5_000)]
ABSENT = [f"nobody_{i}" for i in range(5_000)]


@pytest.fixture(scope="module")
def cli() -> Path:
    assert CLI.exists(), f"the bugu command is not built at {CLI}: run `cargo build -p bugu-cli`"
    return CLI


def lines(keys) -> bytes:
    return "".join(f"{key}\n" for key in keys).encode()


def cli_present(cli: Path, file: Path, probes: list[str], tmp_path: Path) -> list[bool]:
    """What `bugu check` says of each probe: the lines it prints back are present."""
    probe_list = tmp_path / "probes.txt"
    probe_list.write_bytes(lines(probes))
    done = subprocess.run([cli, "check", file, "--input", probe_list], capture_output=True, check=False)
    assert done.returncode in (0, 1), done.stderr
    printed = set(done.stdout.decode().split("\n"))
    return [probe in printed for probe in probes]


def test_keys_the_cli_adds_answer_in_redis_as_in_the_cli(r, cli, tmp_path):
    # A Redis filter's bytes (settings Redis accepts back), to which the command adds the keys.
    r.delete("empty", "from-cli")
    r.execute_command("CF.RESERVE", "empty", 500, "EXPANSION", 2)
    (_, header), *data = scandump(r, "empty")
    file = tmp_path / "users.bugu"
    file.write_bytes(b"".join(chunk for _, chunk in data))
    source = tmp_path / "present.txt"
    source.write_bytes(lines(PRESENT))
    subprocess.run([cli, "add", file, "--input", source], check=True, capture_output=True)
    body = file.read_bytes()

    # Restored as a dump without a stamp: the header (with the new length), then the bytes.
    chunks = [(1, header[:24] + struct.pack("<Q", len(body)))]
    for start in range(0, len(body), 1 << 16):
        chunk = body[start : start + (1 << 16)]
        chunks.append((start + len(chunk) + 1, chunk))
    loadchunks(r, "from-cli", chunks)
    assert cf_info(r, "from-cli")["Number of filters"] > 1, "the filter grew in the command"

    probes = PRESENT + ABSENT
    expected = cli_present(cli, file, probes, tmp_path)
    assert all(expected[: len(PRESENT)])
    answers = []
    for batch in batched(probes, 1_000):
        answers += [bool(a) for a in r.execute_command("CF.MEXISTS", "from-cli", *batch)]
    assert answers == expected
    assert all(bool(r.execute_command("CF.EXISTS", "from-cli", key)) for key in PRESENT[:100])
    r.delete("empty", "from-cli")


def test_keys_added_in_redis_are_found_by_the_cli_in_its_dump(r, cli, tmp_path):
    r.delete("from-redis")
    r.execute_command("CF.RESERVE", "from-redis", 1_000)
    for batch in batched(PRESENT, 1_000):
        r.execute_command("CF.INSERT", "from-redis", "ITEMS", *batch)
    body = b"".join(data for _, data in scandump(r, "from-redis")[1:])
    file = tmp_path / "from-redis.bugu"
    file.write_bytes(body)

    probes = PRESENT + ABSENT
    expected = []
    for batch in batched(probes, 1_000):
        expected += [bool(a) for a in r.execute_command("CF.MEXISTS", "from-redis", *batch)]
    assert all(expected[: len(PRESENT)])
    assert cli_present(cli, file, probes, tmp_path) == expected
    r.delete("from-redis")
