"""RESTORE hands a DUMP payload's bytes to the module's RDB loader, whatever made them: a payload
whose Redis checksum is valid but whose content is not a whole saved filter is refused and leaves
no key. The payloads are forged here as an attacker would: the module's string rewritten, then
sealed with Redis' own RDB version and CRC-64."""

import pytest
import redis

from conftest import insert_all, items, reserve, seal, snapshot

RDB_TYPE_MODULE_2 = 7
OPCODE_EOF, OPCODE_STRING = 0, 5
TRAILER = 16  # the current encoding's state, stamp and checksum after the filter's bytes


def read_length(data: bytes, at: int) -> tuple[int, int]:
    """An RDB length at ``at``: (value, offset after it)."""
    kind = data[at] >> 6
    if kind == 0:
        return data[at] & 0x3F, at + 1
    if kind == 1:
        return ((data[at] & 0x3F) << 8) | data[at + 1], at + 2
    size = {0x80: 4, 0x81: 8}[data[at]]  # an encoded (compressed) string fails here
    return int.from_bytes(data[at + 1 : at + 1 + size], "big"), at + 1 + size


def length(n: int) -> bytes:
    if n < 1 << 6:
        return bytes([n])
    if n < 1 << 14:
        return bytes([0x40 | n >> 8, n & 0xFF])
    if n < 1 << 32:
        return b"\x80" + n.to_bytes(4, "big")
    return b"\x81" + n.to_bytes(8, "big")


def parse(payload: bytes) -> tuple[int, bytes, bytes]:
    """A DUMP payload of a filter: (module id, the module's one string, RDB version)."""
    body, version = payload[:-10], payload[-10:-8]
    assert body[0] == RDB_TYPE_MODULE_2
    module_id, at = read_length(body, 1)
    opcode, at = read_length(body, at)
    assert opcode == OPCODE_STRING
    size, at = read_length(body, at)
    saved, at = body[at : at + size], at + size
    assert body[at:] == bytes([OPCODE_EOF]), "one string, then the end"
    return module_id, saved, version


def forge(module_id: int, encoding: int, saved: bytes, version: bytes) -> bytes:
    """A payload of this module string, under this RDB encoding version, with a valid seal."""
    module_id = (module_id & ~0x3FF) | encoding  # the low 10 bits name the encoding version
    body = bytes([RDB_TYPE_MODULE_2]) + length(module_id) + bytes([OPCODE_STRING])
    return seal(body + length(len(saved)) + saved + bytes([OPCODE_EOF]), version)


@pytest.fixture
def source(start_server):
    c = start_server("--rdbcompression", "no").client()  # the module's string as it is
    reserve(c, "k", 1000, bucketsize=4)
    insert_all(c, "k", items("k", 2000))
    module_id, saved, version = parse(c.dump("k"))
    encoding = module_id & 0x3FF
    content = saved[:-TRAILER] if encoding else saved  # the header and the filter's bytes
    assert c.restore("copy", 0, forge(module_id, encoding, saved, version)) == b"OK"
    assert snapshot(c, "copy") == snapshot(c, "k"), "the forger's tools are wrong"
    return c, module_id, encoding, saved, content, version


def test_restore_refuses_a_forged_length(source):
    c, module_id, encoding, saved, content, version = source
    cut = content[: len(content) // 2]  # the header announces twice what follows
    forged = [(0, cut), (encoding, cut), (encoding, cut + saved[-TRAILER:])]
    accepted = []
    for number, (forged_encoding, string) in enumerate(forged):
        try:
            c.restore(f"forged{number}", 0, forge(module_id, forged_encoding, string, version))
            accepted.append(number)
        except redis.ResponseError as e:
            assert "Bad data format" in str(e), e
    assert not accepted, f"forged payloads restored: {accepted}"
    assert c.keys("forged*") == []


def test_restore_of_an_earlier_builds_filter(source):
    """Encoding version 0 (the header and the bytes, without a trailer) still loads when whole."""
    c, module_id, _, _, content, version = source
    assert c.restore("legacy", 0, forge(module_id, 0, content, version)) == b"OK"
    assert snapshot(c, "legacy") == snapshot(c, "k")
