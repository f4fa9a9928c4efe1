"""One key, one meaning: files written by the `bugu` command and by Rust (typed keys) answer the
same in Python, and files Python writes answer the same in them, false positives included."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import bugu

TEXT = [f"用户_{i}" if i % 3 == 0 else f"user_{i}" for i in range(3_000)]
ABSENT = [f"nobody_{i}" for i in range(20_000)]
INTS = [0, 1, 42, -1, -(2**63), 2**63, 2**64 - 1, 2**32, -(2**31)] + list(range(1_000, 2_000))


def lines(keys) -> bytes:
    return "".join(f"{key}\n" for key in keys).encode()


def hex_int(value: int) -> str:
    return (value % 2**64).to_bytes(8, "little").hex()


def cli_check(cli: Path, file: Path, probes: list[str], tmp_path: Path, *, hex_keys: bool = False) -> list[bool]:
    """What `bugu check` says of each probe (it prints back the present ones)."""
    probe_list = tmp_path / "probes.txt"
    probe_list.write_bytes(lines(probes))
    command = [cli, "check", file, "--input", probe_list] + (["--hex"] if hex_keys else [])
    done = subprocess.run(command, capture_output=True, check=False)
    assert done.returncode in (0, 1), done.stderr
    printed = set(done.stdout.decode().split("\n"))
    return [probe in printed for probe in probes]


KINDS = {
    "fixed": (["-n", "5000"], bugu.CuckooFilter),
    "growable": (["--growable", "-n", "500"], bugu.GrowableFilter),
    "one-table": (["--growable", "--one-table", "-n", "500"], bugu.ExpandingFilter),
}


@pytest.mark.parametrize("kind", KINDS)
def test_a_file_the_cli_writes_answers_the_same_in_python(cli, tmp_path, kind):
    file = tmp_path / "cli.bugu"
    options, cls = KINDS[kind]
    subprocess.run([cli, "create", file, *options, "--fpr", "0.01", "--seed", "11"], check=True)
    source = tmp_path / "keys.txt"
    source.write_bytes(lines(TEXT))
    subprocess.run([cli, "add", file, "--input", source], check=True, capture_output=True)
    numbers = tmp_path / "ints.txt"
    numbers.write_bytes(lines(hex_int(v) for v in INTS))
    subprocess.run([cli, "add", file, "--hex", "--input", numbers], check=True, capture_output=True)

    probes = TEXT + ABSENT
    expected = cli_check(cli, file, probes, tmp_path)
    assert all(expected[: len(TEXT)]) and 0 < sum(expected[len(TEXT) :]) < 0.03 * len(ABSENT)
    for f in (cls.load(file), bugu.open(file), cls.from_bytes(file.read_bytes())):
        assert f.contains_many(probes) == expected  # false positives included
        assert [key in f for key in probes[:2_000]] == expected[:2_000]
        assert all(f.contains_many(INTS)) and f.seed == 11
    int_probes = list(range(-5_000, 5_000))
    expected_ints = cli_check(cli, file, [hex_int(v) for v in int_probes], tmp_path, hex_keys=True)
    assert bugu.open(file).contains_many(int_probes) == expected_ints


@pytest.mark.parametrize("cls", [bugu.CuckooFilter, bugu.GrowableFilter, bugu.ConcurrentFilter, bugu.ExpandingFilter])
def test_a_file_python_writes_answers_the_same_in_the_cli(cli, tmp_path, cls):
    f = cls(5_000, 0.01, seed=5)
    f.update(TEXT)
    f.update(INTS)
    file = tmp_path / "python.bugu"
    f.save(file)
    probes = TEXT + ABSENT
    assert cli_check(cli, file, probes, tmp_path) == f.contains_many(probes)
    int_probes = list(range(-5_000, 5_000)) + INTS
    assert cli_check(cli, file, [hex_int(v) for v in int_probes], tmp_path, hex_keys=True) == f.contains_many(
        int_probes
    )
    # And the command changes it: keys it removes are gone in Python.
    gone = tmp_path / "gone.txt"
    gone.write_bytes(lines(TEXT[:100]))
    subprocess.run([cli, "remove", file, "--input", gone], check=True, capture_output=True)
    after = cls.load(file)
    assert len(after) == len(f) - 100
    assert after.contains_many(TEXT[100:]) == [True] * (len(TEXT) - 100)


def rust_keys(present: bool) -> list:
    """The keys of `examples/typed_keys.rs`, as Python values, in its order."""
    offset = 0 if present else 1_000_000
    keys = []
    for i in range(300):
        n = i + offset
        keys += [f"rust_{n}_é", bytes([0, 255, n % 256, (n // 256) % 256, 7]), 2**64 - 1 - n, -(n + 1) * 1_000_003, n * 7]
    return keys


def rust_check(typed_keys: Path, file: Path) -> list[bool]:
    done = subprocess.run([typed_keys, "check", file], capture_output=True, check=True)
    return [line == "1" for line in done.stdout.decode().split()]


def test_typed_keys_rust_writes_answer_the_same_in_python(typed_keys, tmp_path):
    file = tmp_path / "rust.bugu"
    subprocess.run([typed_keys, "write", file], check=True)
    probes = rust_keys(True) + rust_keys(False)
    expected = rust_check(typed_keys, file)
    assert len(expected) == len(probes) and all(expected[:1_500])
    assert bugu.CuckooFilter.load(file).contains_many(probes) == expected
    assert bugu.open(file).contains_many(probes) == expected
    assert bugu.open(file).seed == 7


@pytest.mark.parametrize("cls", [bugu.CuckooFilter, bugu.GrowableFilter])
def test_typed_keys_python_writes_answer_the_same_in_rust(typed_keys, tmp_path, cls):
    f = cls(200, 0.01) if cls is bugu.GrowableFilter else cls(2_000, 0.01)
    f.update(rust_keys(True))
    file = tmp_path / "python.bugu"
    f.save(file)
    probes = rust_keys(True) + rust_keys(False)
    assert rust_check(typed_keys, file) == f.contains_many(probes)
