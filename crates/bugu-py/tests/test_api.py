"""The set vocabulary, keys, properties, statistics and errors of the four filter classes."""

from __future__ import annotations

import copy
import pickle

import pytest

import bugu

CLASSES = [bugu.CuckooFilter, bugu.GrowableFilter, bugu.ConcurrentFilter, bugu.ExpandingFilter]


@pytest.fixture(params=CLASSES, ids=lambda c: c.__name__)
def cls(request):
    return request.param


def test_add_contains_discard_remove(cls):
    f = cls(1_000)
    assert not f and len(f) == 0
    f.add("apple")
    assert "apple" in f and f and len(f) == 1
    assert "pear" not in f
    assert f.discard("apple") is True
    assert f.discard("apple") is False
    assert "apple" not in f
    f.add("apple")
    f.remove("apple")
    with pytest.raises(KeyError) as error:
        f.remove("apple")
    assert error.value.args == ("apple",)


def test_add_stores_copies_and_add_unique_does_not(cls):
    f = cls(1_000)
    for _ in range(3):
        f.add("k")
    assert f.count("k") == 3 and len(f) == 3
    assert f.add_unique("k") is False
    assert f.add_unique("other") is True and f.add_unique("other") is False
    assert f.count("other") == 1


def test_update_contains_many_remove_many(cls):
    f = cls(10_000)
    keys = [f"user_{i}" for i in range(5_000)]
    f.update(iter(keys))  # any iterable, not only lists
    assert len(f) == 5_000
    assert f.contains_many(keys) == [True] * 5_000
    absent = [f"nobody_{i}" for i in range(5_000)]
    answers = f.contains_many(absent)
    assert answers == [key in f for key in absent]
    assert sum(answers) < 50  # p = 0.001: about 5 expected
    assert f.remove_many(keys[:100]) == [True] * 100
    assert len(f) == 4_900
    assert f.contains_many(keys[100:]) == [True] * 4_900
    assert f.contains_many([]) == [] and f.remove_many(()) == []


def test_key_types_follow_the_one_encoding(cls):
    f = cls(1_000)
    f.add("text")
    # A str is its UTF-8 bytes; bytes-like objects are their bytes.
    for same in (b"text", bytearray(b"text"), memoryview(b"text")):
        assert same in f
    f.add(bytearray(b"\x00\xff"))
    assert b"\x00\xff" in f and memoryview(b"\x00\xff") in f
    f.add("用户")
    assert "用户".encode() in f
    # An int is its value as 8 little-endian bytes (two's complement): -1 and 2**64 - 1 are one key.
    f.add(-1)
    assert (2**64 - 1) in f and b"\xff" * 8 in f
    f.add(42)
    assert (42).to_bytes(8, "little") in f
    f.add(-(2**63))
    assert (2**63) in f
    flags = cls(100)
    flags.add(True)  # bool is an int: True is the key 1
    assert 1 in flags and (1).to_bytes(8, "little") in flags
    assert f.contains_many([b"text", 42, -1, "nobody"])[:3] == [True, True, True]


def test_bad_keys_raise_type_and_overflow_errors(cls):
    f = cls(100)
    for bad in (1.5, None, ("a",), object(), ["a"]):
        with pytest.raises(TypeError, match="a key must be str, bytes"):
            f.add(bad)
        with pytest.raises(TypeError):
            bad in f  # noqa: B015
    for big in (2**64, -(2**63) - 1, 10**30):
        with pytest.raises(OverflowError, match="from -2\\*\\*63 to 2\\*\\*64 - 1"):
            f.add(big)
    with pytest.raises(TypeError):
        f.update(["ok", 3.0])
    with pytest.raises(TypeError):
        f.update(5)  # not iterable
    with pytest.raises(OverflowError):
        f.contains_many([1, 2**70])
    # A str that cannot be UTF-8 (a lone surrogate) is refused, not mangled.
    with pytest.raises(UnicodeEncodeError):
        f.add("\ud800")
    # Keys are all read before any is added: a bad key in a batch adds nothing.
    assert len(f) == 0 and "ok" not in f


def test_properties_and_stats(cls):
    f = cls(10_000, 0.001)
    assert f.capacity >= 10_000 and f.bucket_size == 4
    assert f.false_positive_rate_bound <= 0.001
    growing = cls in (bugu.GrowableFilter, bugu.ExpandingFilter)
    assert f.target_false_positive_rate == (0.001 if growing else None)
    # A one-table filter's entries add address bits to a narrower fingerprint.
    assert f.fingerprint_bits >= (9 if cls is bugu.ExpandingFilter else 12)
    assert f.memory_bytes > 0 and f.seed == 0
    f.update(range(1_000))
    stats = f.stats()
    assert stats["items"] == 1_000
    assert stats["buckets"] > 0 and stats["bucket_size"] == 4
    assert 0 < stats["load_factor"] < 1
    assert stats["bits_per_item"] == pytest.approx(stats["memory_bytes"] * 8 / 1_000)
    assert 0 < stats["expected_false_positive_rate"] <= stats["false_positive_rate_bound"]
    assert stats["false_positive_rate_bound"] == f.false_positive_rate_bound
    assert stats["target_false_positive_rate"] == f.target_false_positive_rate
    assert stats["memory_bytes"] == f.memory_bytes
    # The library's Summary, under its names: one meaning for every class.
    assert set(stats) == {
        "kind",
        "items",
        "capacity",
        "max_capacity",
        "levels",
        "buckets",
        "bucket_size",
        "fingerprint_bits",
        "load_factor",
        "bits_per_item",
        "memory_bytes",
        "target_false_positive_rate",
        "false_positive_rate_bound",
        "expected_false_positive_rate",
    }
    kinds = {bugu.GrowableFilter: "growable", bugu.ExpandingFilter: "expanding"}
    assert stats["kind"] == kinds.get(cls, "cuckoo")  # a concurrent filter saves a fixed one's file
    assert stats["max_capacity"] == (2**32 if cls is bugu.ExpandingFilter else None)
    assert not hasattr(f, "false_positive_rate")  # it meant the target for some classes, the bound for others
    assert repr(f).startswith(f"bugu.{cls.__name__}(len=1000")


def test_table_filters_take_fingerprint_bits_and_seed():
    for cls in (bugu.CuckooFilter, bugu.ConcurrentFilter):
        f = cls(1_000, fingerprint_bits=16, bucket_size=8, seed=99)
        assert (f.fingerprint_bits, f.bucket_size, f.seed) == (16, 8, 99)


def test_configuration_errors_are_value_errors(cls):
    with pytest.raises(ValueError, match="capacity must be at least 1"):
        cls(0)
    with pytest.raises(ValueError, match="false-positive rate must be strictly between 0 and 1"):
        cls(100, 1.5)
    if cls is bugu.ExpandingFilter:
        with pytest.raises(TypeError):
            cls(100, bucket_size=4)  # its buckets are of 4 by design
        with pytest.raises(ValueError, match="below the initial capacity"):
            cls(100, max_items=10)
    else:
        with pytest.raises(ValueError, match="bucket size must be 2, 4 or 8"):
            cls(100, bucket_size=3)
    with pytest.raises(OverflowError):
        cls(-1)


def test_fingerprint_bits_errors():
    with pytest.raises(ValueError, match="fingerprint width must be between 4 and 32"):
        bugu.CuckooFilter(100, fingerprint_bits=40)
    with pytest.raises(TypeError):
        bugu.GrowableFilter(100, fingerprint_bits=12)  # chosen from the rate as it grows


def test_a_full_filter_raises_filter_full_error():
    f = bugu.CuckooFilter(100, bucket_size=2)
    with pytest.raises(bugu.FilterFullError, match="no room for another copy"):
        for _ in range(5):
            f.add("same")
    assert f.count("same") == 4  # the failed insert changed nothing
    with pytest.raises(bugu.FilterFullError, match="filter is full"):
        for i in range(100_000):
            f.add(i)
    before = len(f)
    with pytest.raises(bugu.FilterFullError, match="keys were not added"):
        f.update(range(10**6, 10**6 + 1_000))
    assert len(f) >= before
    capped = bugu.GrowableFilter(100, max_capacity=200)
    with pytest.raises(bugu.FilterFullError):
        capped.update(range(10_000))
    assert issubclass(bugu.FilterFullError, Exception)
    assert not issubclass(bugu.FilterFullError, ValueError)


def test_growable_filter_grows_under_its_target():
    f = bugu.GrowableFilter(1_000, 0.001)
    f.update(range(100_000))
    stats = f.stats()
    assert stats["levels"] > 1 and f.capacity >= 100_000
    assert f.false_positive_rate_bound < f.target_false_positive_rate == 0.001
    assert stats["max_capacity"] is None and bugu.GrowableFilter(100, max_capacity=1_000).stats()["max_capacity"] == 1_000
    assert all(f.contains_many(range(100_000)))
    misses = sum(f.contains_many(range(10**9, 10**9 + 100_000)))
    assert misses < 300  # under 0.001 of 100,000, with room for chance


def test_expanding_filter_grows_in_one_table_and_removes_exactly():
    f = bugu.ExpandingFilter(1_000, 0.001, max_items=10**6)
    f.update(range(100_000))
    stats = f.stats()
    assert stats["levels"] == 1 and f.capacity >= 100_000
    assert 0 < stats["expected_false_positive_rate"] <= f.false_positive_rate_bound < f.target_false_positive_rate == 0.001
    assert stats["max_capacity"] == 10**6
    assert all(f.contains_many(range(100_000)))
    misses = sum(f.contains_many(range(10**9, 10**9 + 100_000)))
    assert misses < 300  # under 0.001 of 100,000, with room for chance
    assert f.remove_many(range(0, 100_000, 2)) == [True] * 50_000
    assert all(f.contains_many(range(1, 100_000, 2)))  # no removal takes another key's entry
    capped = bugu.ExpandingFilter(100, max_items=1_000)
    with pytest.raises(bugu.FilterFullError, match="bound"):
        capped.update(range(100_000))


def test_clear_copy_and_pickle(cls):
    f = cls(1_000, seed=5)
    f.update(["a", "b", 3])
    for twin in (f.copy(), copy.copy(f), copy.deepcopy(f), pickle.loads(pickle.dumps(f))):
        assert type(twin) is cls and len(twin) == 3 and twin.seed == 5
        assert twin.contains_many(["a", "b", 3]) == [True] * 3
        twin.add("only in the twin")
        assert "only in the twin" not in f
    capacity = f.capacity
    f.clear()
    assert len(f) == 0 and "a" not in f and f.capacity == capacity and f.seed == 5
    f.add("again")
    assert "again" in f
