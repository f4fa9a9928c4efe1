"""bugu: cuckoo filters for Python.

A cuckoo filter is a compact set that answers "have I seen this key?" with no false negatives,
a false-positive rate you choose, and deletion. The classes speak the ``set`` vocabulary::

    import bugu

    seen = bugu.CuckooFilter(1_000_000, false_positive_rate=0.001)
    seen.add("user_42")
    seen.update(range(1000))
    assert "user_42" in seen and 7 in seen
    seen.discard("user_42")
    seen.save("seen.bugu")  # readable by the bugu command, Rust and Redis

Keys are ``str`` (its UTF-8 bytes), ``bytes``/``bytearray``/``memoryview``, or ``int`` (a
64-bit integer, 8 bytes little-endian): the same rule as every other bugu front end.
"""

from ._bugu import (
    ConcurrentFilter,
    CorruptFilterError,
    CuckooFilter,
    ExpandingFilter,
    FilterFullError,
    FilterView,
    GrowableFilter,
    __version__,
    open,
)

__all__ = [
    "ConcurrentFilter",
    "CorruptFilterError",
    "CuckooFilter",
    "ExpandingFilter",
    "FilterFullError",
    "FilterView",
    "GrowableFilter",
    "__version__",
    "open",
]
