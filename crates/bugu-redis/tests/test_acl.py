"""ACL key permissions: every command declares what it does with its key (its key spec), so a user
allowed only to read keys (``%R~*``) runs every read and no write, and one allowed only to write
keys (``%W~*``) runs the writes and no read of the filter's items."""

import pytest
import redis

from conftest import READ_COMMANDS, WRITE_COMMANDS, insert_all, items, loadchunks, reserve, scandump

# One call of each command on key "k", which holds a filter (or on an empty key, for those that
# create one).
CALLS = {
    "CF.RESERVE": ("CF.RESERVE", "new", 100),
    "CF.ADD": ("CF.ADD", "k", "b"),
    "CF.ADDNX": ("CF.ADDNX", "k", "c"),
    "CF.INSERT": ("CF.INSERT", "k", "ITEMS", "d"),
    "CF.INSERTNX": ("CF.INSERTNX", "k", "ITEMS", "e"),
    "CF.DEL": ("CF.DEL", "k", "a"),
    "CF.LOADCHUNK": ("CF.LOADCHUNK", "restored", "HEADER"),
    "CF.EXISTS": ("CF.EXISTS", "k", "a"),
    "CF.MEXISTS": ("CF.MEXISTS", "k", "a", "z"),
    "CF.COUNT": ("CF.COUNT", "k", "a"),
    "CF.INFO": ("CF.INFO", "k"),
    "CF.SCANDUMP": ("CF.SCANDUMP", "k", 0),
}
KEY_SPECS = {
    "CF.RESERVE": {"OW", "insert"},
    "CF.ADD": {"RW", "insert"},
    "CF.ADDNX": {"RW", "insert"},
    "CF.INSERT": {"RW", "insert"},
    "CF.INSERTNX": {"RW", "insert"},
    "CF.DEL": {"RW", "delete"},
    "CF.LOADCHUNK": {"OW", "update"},
    "CF.EXISTS": {"RO", "access"},
    "CF.MEXISTS": {"RO", "access"},
    "CF.COUNT": {"RO", "access"},
    "CF.INFO": {"RO"},  # counters and settings, not the items
    "CF.SCANDUMP": {"RO", "access"},
}


def call(name: str, header) -> tuple:
    command = CALLS[name]
    return command[:-1] + tuple(header) if command[-1] == "HEADER" else command


def decoded(value):
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, list):
        return [decoded(v) for v in value]
    return value


@pytest.fixture
def server(start_server):
    server = start_server()
    admin = server.client()
    reserve(admin, "k", 1000)
    insert_all(admin, "k", ["a"] + items("acl", 100))
    reserve(admin, "source", 10)
    header = scandump(admin, "source")[0]
    for user, keys in [("reader", "%R~*"), ("writer", "%W~*")]:
        admin.execute_command("ACL", "SETUSER", user, "on", "nopass", "+@all", keys)
    return server, header


def test_every_command_declares_its_key_spec(server):
    server, header = server
    c = server.client()
    assert set(CALLS) == set(READ_COMMANDS + WRITE_COMMANDS) == set(KEY_SPECS)
    for name in CALLS:
        keys = decoded(c.execute_command("COMMAND GETKEYSANDFLAGS", *call(name, header)))
        assert [(key, set(flags)) for key, flags in keys] == [(call(name, header)[1], KEY_SPECS[name])], name


# CF.INFO reads only counters and settings (as SCARD or STRLEN do): a key pattern of either kind
# allows it, as Redis allows those.
@pytest.mark.parametrize(
    "user, allowed", [("reader", READ_COMMANDS), ("writer", WRITE_COMMANDS + ["CF.INFO"])]
)
def test_a_user_with_one_key_permission(server, user, allowed):
    server, header = server
    c = server.client(username=user, password="any")
    denied = {}
    for name in READ_COMMANDS + WRITE_COMMANDS:
        try:
            c.execute_command(*call(name, header))
            refused = False
        except redis.exceptions.NoPermissionError:
            refused = True
        if refused == (name in allowed):
            denied[name] = "refused" if refused else "allowed"
    assert not denied, f"{user}: {denied}"
    if user == "reader":  # a whole dump, restored by a user who may write
        chunks = scandump(c, "k")
        loadchunks(server.client(username="writer", password="any"), "copy", chunks)
        assert server.client().execute_command("CF.EXISTS", "copy", "a") == 1
