"""The commands route in Redis Cluster: three primaries with the module, driven by redis-py's
RedisCluster, with filters on keys whose slots live on different nodes."""

import subprocess

import pytest
import redis
from redis.cluster import RedisCluster

from conftest import (
    HOST,
    assert_all_found,
    assert_reply,
    cf_info,
    free_port,
    insert_all,
    items,
    loadchunks,
    reserve,
    scandump,
    snapshot,
    wait_until,
)

KEYS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]


@pytest.fixture
def cluster_nodes(start_server, tmp_path):
    nodes = [
        start_server(
            "--cluster-enabled", "yes",
            "--cluster-config-file", tmp_path / f"node{i}" / "nodes.conf",
            "--cluster-port", free_port(),
            "--cluster-node-timeout", 5000,
            name=f"node{i}",
        )
        for i in range(3)
    ]  # fmt: skip
    create = subprocess.run(
        [
            "redis-cli",
            "--cluster",
            "create",
            *(f"{HOST}:{n.port}" for n in nodes),
            "--cluster-replicas",
            "0",
            "--cluster-yes",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert create.returncode == 0, create.stdout + create.stderr

    def all_ok():
        infos = [n.client().cluster("info") for n in nodes]
        return all(i["cluster_state"] == "ok" and int(i["cluster_known_nodes"]) == 3 for i in infos)

    wait_until(all_ok, "cluster_state:ok on every node", timeout=60)
    return nodes


@pytest.fixture
def rc(cluster_nodes, protocol):
    client = RedisCluster(host=HOST, port=cluster_nodes[0].port, protocol=protocol, socket_timeout=60)
    yield client
    client.close()


def test_filters_on_keys_in_different_slots(cluster_nodes, rc, resp):
    owner = {key: rc.get_node_from_key(key).port for key in KEYS}
    assert len(set(owner.values())) >= 2, owner
    present = {}
    for n, key in enumerate(KEYS):
        reserve(rc, key, 1000, bucketsize=2 + n, expansion=n + 1)
        values = items(key, 2000)
        assert_reply(rc.execute_command("CF.ADD", key, values[0]), resp.bool(True))
        assert_reply(rc.execute_command("CF.ADDNX", key, values[0]), resp.bool(False))
        insert_all(rc, key, values[1:1500], batch=500)
        reply = rc.execute_command("CF.INSERTNX", key, "NOCREATE", "ITEMS", *values[1500:])
        assert set(reply) <= {0, 1} and reply.count(1) >= 490, reply  # 0: may exist (a false positive)
        assert_reply(rc.execute_command("CF.EXISTS", key, values[7]), resp.bool(True))
        assert_reply(rc.execute_command("CF.MEXISTS", key, values[0], values[-1]), resp.bools([True, True]))
        assert_reply(rc.execute_command("CF.DEL", key, values[0]), resp.bool(True))
        assert_reply(rc.execute_command("CF.COUNT", key, values[1]), 1)
        info = cf_info(rc, key)
        assert (info["Number of items inserted"], info["Number of items deleted"]) == (
            1499 + reply.count(1),
            1,
        )
        present[key] = values[1:]

    # A copy through SCANDUMP/LOADCHUNK between keys on different nodes.
    source = KEYS[0]
    target = next(k for k in KEYS if owner[k] != owner[source]) + ":copy"
    loadchunks(rc, target, scandump(rc, source))
    assert snapshot(rc, target) == snapshot(rc, source)

    # Each key lives on its slot's node; the other nodes redirect, reads and writes alike.
    for key in KEYS:
        assert_all_found(rc, key, present[key])
        for node in cluster_nodes:
            direct = node.client()
            if node.port == owner[key]:
                assert direct.exists(key) == 1
                assert cf_info(direct, key) == cf_info(rc, key)
            else:
                for command in (("CF.EXISTS", key, "x"), ("CF.ADD", key, "x")):
                    with pytest.raises(redis.exceptions.MovedError):
                        direct.execute_command(*command)
