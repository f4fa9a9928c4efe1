#!/usr/bin/env python3
"""Ground-truth generator for RedisBloom cuckoo-filter (type MBbloomCF) data.

Usage:
    python3 generate.py /path/to/redisbloom.so [--redis-server redis-server]

Run from any directory; the outputs are written next to this script, and every
run first deletes the outputs of the previous run (keys.json, dump.rdb,
appendonlydir/, *.dump, *.payload), so it is idempotent.  README.md and this
file are never touched.  Needs redis-py (tested with redis==8.1.0) and a
redis-server binary (tested with 7.0.15).  It starts its own redis-server
instances on free loopback ports, in temporary directories, and stops them.

Outputs (see README.md):
  dump.rdb          SAVE of all keys before the follow-up operations
  appendonlydir/    AOF made by BGREWRITEAOF (aof-use-rdb-preamble no), same state
  <key>.dump        CF.SCANDUMP records: <q iterator><q length><chunk bytes> ...
  <key>.payload     raw DUMP payload of <key>
  v3-<key>.payload  hand-made encoding-version-3 DUMP payload (restored as v3:<key>)
  keys.json         how every key was built and what RedisBloom answered
"""

import hashlib
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

import redis

HERE = os.path.dirname(os.path.abspath(__file__))
N_ABSENT = 100000
BATCH = 1000

# --------------------------------------------------------------------------
# Small format helpers (written from the format description, not from Redis).

_POLY_REFLECTED = 0x95AC9329AC4BC9B5  # Jones polynomial 0xad93d23594c935a9, bit-reversed
_CRC_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ _POLY_REFLECTED if _c & 1 else _c >> 1
    _CRC_TABLE.append(_c)


def crc64(data, crc=0):
    t = _CRC_TABLE
    for b in data:
        crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


assert crc64(b"123456789") == 0xE9C6D914C4B8D9CA


def lzf_decompress(src, out_len):
    out = bytearray()
    i = 0
    n = len(src)
    while i < n:
        ctrl = src[i]
        i += 1
        if ctrl < 32:
            run = ctrl + 1
            out += src[i:i + run]
            i += run
        else:
            ln = ctrl >> 5
            if ln == 7:
                ln += src[i]
                i += 1
            ref = len(out) - ((ctrl & 0x1F) << 8) - src[i] - 1
            i += 1
            for k in range(ln + 2):
                out.append(out[ref + k])
    if len(out) != out_len:
        raise ValueError("lzf length mismatch %d != %d" % (len(out), out_len))
    return bytes(out)


def rdb_len_encode(v):
    if v < 1 << 6:
        return bytes([v])
    if v < 1 << 14:
        return bytes([0x40 | (v >> 8), v & 0xFF])
    if v < 1 << 32:
        return b"\x80" + struct.pack(">I", v)
    return b"\x81" + struct.pack(">Q", v)


class RdbReader:
    def __init__(self, buf):
        self.buf = buf
        self.pos = 0

    def byte(self):
        b = self.buf[self.pos]
        self.pos += 1
        return b

    def take(self, n):
        if self.pos + n > len(self.buf):
            raise ValueError("truncated")
        b = self.buf[self.pos:self.pos + n]
        self.pos += n
        return b

    def length(self):
        """Returns (value, is_encoded)."""
        b = self.byte()
        kind = b >> 6
        if kind == 0:
            return b & 0x3F, False
        if kind == 1:
            return ((b & 0x3F) << 8) | self.byte(), False
        if kind == 3:
            return b & 0x3F, True
        if b == 0x80:
            return struct.unpack(">I", self.take(4))[0], False
        if b == 0x81:
            return struct.unpack(">Q", self.take(8))[0], False
        raise ValueError("bad length byte %#x" % b)

    def string(self):
        """Returns (bytes, encoding name, raw encoded slice)."""
        start = self.pos
        v, enc = self.length()
        if not enc:
            data, how = self.take(v), "plain"
        elif v == 0:
            data, how = str(struct.unpack("<b", self.take(1))[0]).encode(), "int8"
        elif v == 1:
            data, how = str(struct.unpack("<h", self.take(2))[0]).encode(), "int16"
        elif v == 2:
            data, how = str(struct.unpack("<i", self.take(4))[0]).encode(), "int32"
        elif v == 3:
            clen, _ = self.length()
            ulen, _ = self.length()
            data, how = lzf_decompress(self.take(clen), ulen), "lzf"
        else:
            raise ValueError("bad string encoding %d" % v)
        return data, how, self.buf[start:self.pos]


CHARSET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def module_type_id(name, encver):
    v = 0
    for ch in name:
        v = (v << 6) | CHARSET.index(ch)
    return (v << 10) | encver


def decode_module_id(mid):
    name = "".join(CHARSET[(mid >> (10 + 6 * (8 - j))) & 63] for j in range(9))
    return name, mid & 1023


def parse_payload(payload):
    """Parse a DUMP payload of a module value; returns a dict of facts."""
    body, trailer = payload[:-10], payload[-10:]
    rdbver = struct.unpack("<H", trailer[:2])[0]
    crc = struct.unpack("<Q", trailer[2:])[0]
    if crc64(payload[:-8]) != crc:
        raise ValueError("CRC mismatch")
    r = RdbReader(body)
    rdb_type = r.byte()
    mid, enc = r.length()
    assert not enc
    id_bytes = body[1:r.pos]
    name, encver = decode_module_id(mid)
    fields = []
    while True:
        op, _ = r.length()
        if op == 0:
            break
        if op == 2:
            v, e = r.length()
            assert not e
            fields.append(("u", v, None, None))
        elif op == 5:
            data, how, raw = r.string()
            fields.append(("s", data, how, raw))
        else:
            raise ValueError("unexpected module opcode %d" % op)
    if r.pos != len(body):
        raise ValueError("trailing bytes in value")
    return dict(rdb_type=rdb_type, module_id=mid, module_id_bytes=id_bytes, type_name=name,
                encver=encver, rdb_version=rdbver, crc=crc, fields=fields)


def cf_from_fields(p):
    f = p["fields"]
    u = [x[1] for x in f if x[0] == "u"]
    if p["encver"] >= 4:
        nf, nb, ni, nd, bs, mi, ex = u[:7]
        subs = []
        k = 7
        for i in range(nf):
            assert f[k][0] == "u" and f[k + 1][0] == "s"
            subs.append(dict(num_buckets=f[k][1], data=f[k + 1][1], encoding=f[k + 1][2],
                             raw=f[k + 1][3]))
            k += 2
        assert k == len(f)
    else:
        nf, nb, ni = u[:3]
        nd, bs, mi, ex = 0, 2, 20, 1
        subs = [dict(num_buckets=nb, data=x[1], encoding=x[2], raw=x[3]) for x in f[3:]]
        assert len(subs) == nf
    return dict(num_filters=nf, num_buckets=nb, num_items=ni, num_deletes=nd, bucket_size=bs,
                max_iterations=mi, expansion=ex, subs=subs)


def craft_v3(payload_v4):
    p = parse_payload(payload_v4)
    cf = cf_from_fields(p)
    assert p["encver"] == 4 and p["type_name"] == "MBbloomCF"
    assert cf["bucket_size"] == 2 and cf["max_iterations"] == 20 and cf["expansion"] == 1
    assert cf["num_deletes"] == 0
    assert all(s["num_buckets"] == cf["num_buckets"] for s in cf["subs"])
    out = bytes([p["rdb_type"]]) + rdb_len_encode(module_type_id("MBbloomCF", 3))
    for v in (cf["num_filters"], cf["num_buckets"], cf["num_items"]):
        out += rdb_len_encode(2) + rdb_len_encode(v)
    for s in cf["subs"]:
        out += rdb_len_encode(5) + s["raw"]  # the string exactly as Redis stored it
    out += rdb_len_encode(0)
    out += struct.pack("<H", p["rdb_version"])
    out += struct.pack("<Q", crc64(out))
    return out


# --------------------------------------------------------------------------
# Server handling


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    def __init__(self, module, server_bin, workdir, extra=()):
        self.port = free_port()
        self.dir = workdir
        args = [server_bin, "--port", str(self.port), "--bind", "127.0.0.1",
                "--dir", workdir, "--save", "", "--loadmodule", module,
                "--logfile", os.path.join(workdir, "redis.log"), "--daemonize", "no"]
        args += list(extra)
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.r = redis.Redis(host="127.0.0.1", port=self.port, protocol=2,
                             decode_responses=False, socket_timeout=120)
        deadline = time.time() + 60
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("redis-server exited; see %s/redis.log" % workdir)
            if time.time() > deadline:
                raise RuntimeError("redis-server did not start; see %s/redis.log" % workdir)
            try:
                if self.r.info("persistence").get("loading", 0) == 0:
                    break
            except (redis.ConnectionError, redis.BusyLoadingError):
                pass
            time.sleep(0.05)
        if self.proc.poll() is not None:
            raise RuntimeError("redis-server exited; see %s/redis.log" % workdir)

    def stop(self):
        try:
            self.r.execute_command("SHUTDOWN", "NOSAVE")
        except redis.ConnectionError:
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def run_batch(r, cmds):
    """Run commands in pipelines; errors are returned as ResponseError objects."""
    out = []
    for i in range(0, len(cmds), BATCH):
        p = r.pipeline(transaction=False)
        for c in cmds[i:i + BATCH]:
            p.execute_command(*c)
        out += p.execute(raise_on_error=False)
    return out


def norm(v):
    if isinstance(v, Exception):
        return {"error": str(v)}
    if isinstance(v, bytes):
        return v.decode("utf-8", "backslashreplace")
    if isinstance(v, list):
        return [norm(x) for x in v]
    return v


def non_one(replies):
    """Compact record of replies that were not integer 1: {index: reply}."""
    return {str(i): norm(v) for i, v in enumerate(replies) if not (v == 1 and isinstance(v, int))}


def reply_string(replies):
    """'1'/'0' per reply; '-' for -1; 'E' for an error (text in the errors dict)."""
    s, errs = [], {}
    for i, v in enumerate(replies):
        if isinstance(v, Exception):
            s.append("E")
            errs[str(i)] = str(v)
        elif v == 1:
            s.append("1")
        elif v == 0:
            s.append("0")
        elif v == -1:
            s.append("-")
        else:
            s.append("?")
            errs[str(i)] = norm(v)
    return {"s": "".join(s), "errors": errs}


def cf_info(r, key):
    a = r.execute_command("CF.INFO", key)
    return {norm(a[i]): a[i + 1] for i in range(0, len(a), 2)}


def absent_present(r, key):
    present = []
    for start in range(0, N_ABSENT, BATCH):
        items = [b"absent:%d" % i for i in range(start, start + BATCH)]
        rep = r.execute_command("CF.MEXISTS", key, *items)
        present += [start + j for j, v in enumerate(rep) if v == 1]
    return present


def scandump(r, key):
    recs = []
    it = 0
    while True:
        it, data = r.execute_command("CF.SCANDUMP", key, it)
        if it == 0:
            assert data is None
            break
        recs.append((it, data))
    return recs


def items_absent(r, key, prefix, n):
    out = []
    for start in range(0, n, BATCH):
        items = [b"%s:%d" % (prefix.encode(), i) for i in range(start, min(n, start + BATCH))]
        rep = r.execute_command("CF.MEXISTS", key, *items)
        out += [start + j for j, v in enumerate(rep) if v == 0]
    return out


def raw_command(port, *args):
    """Send one command on a plain socket and return the raw reply line (to see the exact
    error text on the wire, which redis-py may shorten, e.g. by dropping 'ERR ')."""
    msg = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        msg += b"$%d\r\n%s\r\n" % (len(a), a)
    with socket.create_connection(("127.0.0.1", port)) as sk:
        sk.sendall(msg)
        buf = b""
        while not buf.endswith(b"\r\n"):
            buf += sk.recv(4096)
    return buf


def counts(r, key, prefix):
    c1 = run_batch(r, [("CF.COUNT", key, "%s:%d" % (prefix, i)) for i in range(300)])
    c2 = run_batch(r, [("CF.COUNT", key, "absent:%d" % i) for i in range(100)])
    return {"items_0_299": c1, "absent_0_99": c2}


# --------------------------------------------------------------------------
# Key definitions

KEYS = [
    dict(name="reserved-b2", reserve=["20000"], n=15000),
    dict(name="grown-e1-b2", reserve=["1000", "EXPANSION", "1"], n=6000),
    dict(name="grown-e2-b4", reserve=["1000", "BUCKETSIZE", "4", "EXPANSION", "2"], n=20000),
    dict(name="bucket1-e2", reserve=["1000", "BUCKETSIZE", "1", "EXPANSION", "2"], n=5000),
    dict(name="deleted-e2-b2", reserve=["2000", "EXPANSION", "2"], n=10000,
         delete=lambda i: i % 4 == 1, delete_rule="i % 4 == 1"),
    dict(name="auto", reserve=None, n=3000, dup=100),
    dict(name="full-e0", reserve=["1000", "EXPANSION", "0"], n=1200),
    dict(name="maxiter5-b4",
         reserve=["3000", "BUCKETSIZE", "4", "MAXITERATIONS", "5", "EXPANSION", "4"], n=12000),
    dict(name="empty", reserve=["1000"], n=0),
    dict(name="exp8-b2", reserve=["500", "EXPANSION", "8"], n=8000),
    dict(name="exp3", reserve=["500", "EXPANSION", "3"], n=8000),
]
V3_SOURCES = ["reserved-b2", "grown-e1-b2"]


def build_key(r, k):
    name = k["name"]
    rec = {"name": name, "item_prefix": name, "n_items": k["n"], "commands": []}
    if k["reserve"] is not None:
        rec["reserve_args"] = k["reserve"]
        rep = r.execute_command("CF.RESERVE", name, *k["reserve"])
        rec["commands"].append({"cmd": ["CF.RESERVE", name] + k["reserve"], "reply": norm(rep)})
    else:
        rec["reserve_args"] = None
    rep = run_batch(r, [("CF.ADD", name, "%s:%d" % (name, i)) for i in range(k["n"])])
    if k["n"]:
        rec["commands"].append({"cmd": "CF.ADD %s {name}:{i} for i in range(%d)" % (name, k["n"])})
    rec["add_replies"] = non_one(rep)
    if k.get("dup"):
        rep = run_batch(r, [("CF.ADD", name, "%s:%d" % (name, i)) for i in range(k["dup"])])
        rec["commands"].append(
            {"cmd": "CF.ADD %s {name}:{i} for i in range(%d) (second time)" % (name, k["dup"])})
        rec["duplicates"] = {"items": list(range(k["dup"])), "add_replies": non_one(rep)}
    if k.get("delete"):
        idx = [i for i in range(k["n"]) if k["delete"](i)]
        rep = run_batch(r, [("CF.DEL", name, "%s:%d" % (name, i)) for i in idx])
        rec["commands"].append(
            {"cmd": "CF.DEL %s {name}:{i} for i in range(%d) if %s (in increasing i)"
                    % (name, k["n"], k["delete_rule"])})
        rec["deleted"] = {"rule": k["delete_rule"], "indices": idx, "replies": reply_string(rep)}
    return rec


def payload_facts(payload):
    p = parse_payload(payload)
    cf = cf_from_fields(p)
    assert p["rdb_type"] == 7  # RDB_TYPE_MODULE_2
    assert p["module_id"] == module_type_id(p["type_name"], p["encver"])
    assert p["module_id_bytes"] == rdb_len_encode(p["module_id"])
    return p, cf, {
        "payload_len": len(payload),
        "rdb_type": p["rdb_type"],
        "module_id_hex": "%016x" % p["module_id"],
        "module_id_rdb_bytes_hex": p["module_id_bytes"].hex(),
        "type_name": p["type_name"],
        "encver": p["encver"],
        "rdb_version": p["rdb_version"],
        "crc64_hex": "%016x" % p["crc"],
        "unsigned_fields": [x[1] for x in p["fields"] if x[0] == "u"],
        "sub_filters": [{"num_buckets": s["num_buckets"], "bytes": len(s["data"]),
                         "string_encoding": s["encoding"], "stored_bytes": len(s["raw"])}
                        for s in cf["subs"]],
    }


def check_payload_vs_scandump(cf, info, recs):
    assert cf["num_filters"] == info["Number of filters"]
    assert cf["num_buckets"] == info["Number of buckets"]
    assert cf["num_items"] == info["Number of items inserted"]
    assert cf["num_deletes"] == info["Number of items deleted"]
    assert cf["bucket_size"] == info["Bucket size"]
    assert cf["expansion"] == info["Expansion rate"]
    assert cf["max_iterations"] == info["Max iterations"]
    for s in cf["subs"]:
        assert len(s["data"]) == s["num_buckets"] * cf["bucket_size"]
    if not recs:
        return
    it, hdr = recs[0]
    assert it == 1 and len(hdr) == 38
    h = struct.unpack("<QQQQHHH", hdr)
    assert h == (cf["num_items"], cf["num_buckets"], cf["num_deletes"], cf["num_filters"],
                 cf["bucket_size"], cf["max_iterations"], cf["expansion"]), h
    data = b"".join(c for _, c in recs[1:])
    assert data == b"".join(s["data"] for s in cf["subs"])
    pos = 1
    for it, c in recs[1:]:
        pos += len(c)
        assert it == pos


def write_scandump(path, recs):
    with open(path, "wb") as f:
        for it, c in recs:
            f.write(struct.pack("<qq", it, len(c)))
            f.write(c)


def scandump_digest(recs):
    h = hashlib.sha256()
    for it, c in recs:
        h.update(struct.pack("<q", it))
        h.update(c)
    return h.hexdigest()


def followup(r, name, prefix, n):
    fu = {}
    rep = run_batch(r, [("CF.ADD", name, "more:%s:%d" % (name, j)) for j in range(n)])
    fu["a_add_more"] = {"m": n, "non1": non_one(rep)}
    idx = [i for i in range(n) if i % 3 == 0]
    rep = run_batch(r, [("CF.DEL", name, "%s:%d" % (prefix, i)) for i in idx])
    fu["b_del_i_mod3_0"] = reply_string(rep)
    rep = run_batch(r, [("CF.ADDNX", name, "%s:%d" % (prefix, i)) for i in range(200)])
    fu["c_addnx_items_0_199"] = reply_string(rep)
    rep = run_batch(r, [("CF.ADDNX", name, "nx:%s:%d" % (name, j)) for j in range(200)])
    fu["c_addnx_nx_0_199"] = reply_string(rep)
    try:
        rep = r.execute_command("CF.INSERT", name, "ITEMS",
                                *["ins:%s:%d" % (name, j) for j in range(50)])
    except redis.ResponseError as e:
        rep = e
    fu["d_insert_50"] = norm(rep)
    fu["e_info"] = cf_info(r, name)
    return fu


def wait_rewrite(r):
    for _ in range(6000):
        p = r.info("persistence")
        if p["aof_rewrite_in_progress"] == 0 and p["aof_rewrite_scheduled"] == 0:
            return p
        time.sleep(0.05)
    raise RuntimeError("AOF rewrite did not finish")


def wipe_outputs():
    for fn in os.listdir(HERE):
        p = os.path.join(HERE, fn)
        if fn == "appendonlydir" and os.path.isdir(p):
            shutil.rmtree(p)
        elif fn in ("keys.json", "dump.rdb") or fn.endswith(".dump") or fn.endswith(".payload"):
            os.remove(p)


def verify_reload(module, server_bin, keys, mode, tmp_root):
    d = tempfile.mkdtemp(prefix="verify-%s-" % mode, dir=tmp_root)
    if mode == "rdb":
        shutil.copy(os.path.join(HERE, "dump.rdb"), os.path.join(d, "dump.rdb"))
        extra = ["--dbfilename", "dump.rdb", "--appendonly", "no"]
    else:
        shutil.copytree(os.path.join(HERE, "appendonlydir"), os.path.join(d, "appendonlydir"))
        extra = ["--appendonly", "yes", "--appenddirname", "appendonlydir",
                 "--aof-use-rdb-preamble", "no"]
    s = Server(module, server_bin, d, extra)
    try:
        r = s.r
        names = sorted(x.decode() for x in r.keys("*"))
        assert names == sorted(k["name"] for k in keys), names
        for k in keys:
            name = k["name"]
            assert cf_info(r, name) == k["info"], (mode, name)
            assert absent_present(r, name) == k["absent_present"], (mode, name)
            assert counts(r, name, k["item_prefix"]) == k["counts"], (mode, name)
            assert items_absent(r, name, k["item_prefix"], k["n_items"]) == k["items_absent"]
            assert scandump_digest(scandump(r, name)) == k["scandump_sha256"], (mode, name)
            assert hashlib.sha256(r.dump(name)).hexdigest() == k["dump_sha256"], (mode, name)
    finally:
        s.stop()
    shutil.rmtree(d, ignore_errors=True)
    print("verify %s: %d keys reloaded, INFO/absent/counts/SCANDUMP/DUMP all match"
          % (mode, len(keys)))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    module = os.path.abspath(sys.argv[1])
    server_bin = "redis-server"
    if len(sys.argv) >= 4 and sys.argv[2] == "--redis-server":
        server_bin = sys.argv[3]
    wipe_outputs()
    tmp_root = tempfile.mkdtemp(prefix="rbgen-")
    srv = Server(module, server_bin, tmp_root,
                 ["--appendonly", "yes", "--aof-use-rdb-preamble", "no",
                  "--appenddirname", "appendonlydir"])
    try:
        r = srv.r
        env = {}
        for m in r.execute_command("MODULE", "LIST"):
            d = {norm(m[i]): norm(m[i + 1]) for i in range(0, len(m), 2)}
            if d.get("name") == "bf":
                env["module_name"], env["module_ver"] = d["name"], d["ver"]
        env["redis_version"] = r.info("server")["redis_version"]
        env["module_file_sha256"] = hashlib.sha256(open(module, "rb").read()).hexdigest()

        recs = []
        for k in KEYS:
            recs.append(build_key(r, k))
            print("built", k["name"], flush=True)

        payloads = {rec["name"]: r.dump(rec["name"]) for rec in recs}

        # Hand-made encoding-version-3 payloads, proven by RESTORE.
        for src in V3_SOURCES:
            v3 = craft_v3(payloads[src])
            with open(os.path.join(HERE, "v3-%s.payload" % src), "wb") as f:
                f.write(v3)
            name = "v3:" + src
            rep = r.execute_command("RESTORE", name, 0, v3)
            srcrec = next(x for x in recs if x["name"] == src)
            recs.append({"name": name, "item_prefix": src, "n_items": srcrec["n_items"],
                         "reserve_args": None,
                         "commands": [{"cmd": ["RESTORE", name, "0", "<v3-%s.payload>" % src],
                                       "reply": norm(rep)}],
                         "add_replies": {}, "v3_source": src, "v3_payload": "v3-%s.payload" % src,
                         "v3_payload_facts": payload_facts(v3)[2]})
            payloads[name] = r.dump(name)

        for rec in recs:
            name = rec["name"]
            rec["info"] = cf_info(r, name)
            rec["absent_present"] = absent_present(r, name)
            rec["counts"] = counts(r, name, rec["item_prefix"])
            rec["items_absent"] = items_absent(r, name, rec["item_prefix"], rec["n_items"])
            sd = scandump(r, name)
            rec["scandump_chunks"] = len(sd)
            rec["scandump_sha256"] = scandump_digest(sd)
            if not sd:
                rec["scandump_note"] = "CF.SCANDUMP %s 0 answered [0, nil] at once" % name
            pl = payloads[name]
            rec["dump_sha256"] = hashlib.sha256(pl).hexdigest()
            p, cf, facts = payload_facts(pl)
            check_payload_vs_scandump(cf, rec["info"], sd)
            rec["payload_facts"] = facts
            if "v3_source" in rec:
                rec["redump_equals_source_payload"] = pl == payloads[rec["v3_source"]]
            else:
                write_scandump(os.path.join(HERE, "%s.dump" % name), sd)
                with open(os.path.join(HERE, "%s.payload" % name), "wb") as f:
                    f.write(pl)
            print("recorded", name, rec["info"], flush=True)

        # RDB
        r.execute_command("SAVE")
        shutil.copy(os.path.join(tmp_root, "dump.rdb"), os.path.join(HERE, "dump.rdb"))
        # AOF rewrite in command form
        wait_rewrite(r)
        r.execute_command("BGREWRITEAOF")
        time.sleep(0.1)
        pers = wait_rewrite(r)
        assert pers["aof_last_bgrewrite_status"] == "ok", pers
        shutil.copytree(os.path.join(tmp_root, "appendonlydir"),
                        os.path.join(HERE, "appendonlydir"))
        aof_files = sorted(os.listdir(os.path.join(HERE, "appendonlydir")))
        loadchunks = 0
        for fn in aof_files:
            with open(os.path.join(HERE, "appendonlydir", fn), "rb") as f:
                loadchunks += f.read().count(b"CF.LOADCHUNK")
        assert loadchunks > 0
        env["aof_files"] = aof_files
        env["aof_loadchunk_count"] = loadchunks
        print("aof", aof_files, "CF.LOADCHUNK x", loadchunks)

        # Follow-ups (after all files above were written)
        for rec in recs:
            name = rec["name"]
            rec["followup"] = followup(r, name, rec["item_prefix"], rec["n_items"])
            rec["absent_present_after"] = absent_present(r, name)
            sd = scandump(r, name)
            rec["scandump_sha256_after"] = scandump_digest(sd)
            rec["scandump_chunks_after"] = len(sd)
            print("followup", name, rec["followup"]["e_info"], flush=True)

        # Exact wire form of the "Filter is full" error, on a throw-away key.
        r.execute_command("CF.RESERVE", "probe-full", 4, "EXPANSION", 0)
        wire = []
        for i in range(100):
            line = raw_command(srv.port, "CF.ADD", "probe-full", "probe:%d" % i)
            if line.startswith(b"-"):
                wire.append({"cmd": "CF.ADD probe-full probe:%d" % i, "reply": norm(line)})
                break
        wire.append({"cmd": "CF.INSERT probe-full ITEMS probe:0 probe:999",
                     "reply": norm(raw_command(srv.port, "CF.INSERT", "probe-full", "ITEMS",
                                               "probe:0", "probe:999"))[:60]})
        env["wire_examples"] = wire
        r.delete("probe-full")
    finally:
        srv.stop()

    doc = {
        "generator": "generate.py",
        "environment": env,
        "conventions": {
            "items": "item i of a key is the UTF-8 bytes of f'{item_prefix}:{i}' for i in "
                     "range(n_items); item_prefix is the key name except for v3:* keys, "
                     "whose prefix is the source key",
            "absent_present": "sorted i in range(100000) for which CF.EXISTS key "
                              "f'absent:{i}' answers 1 (asked with CF.MEXISTS x1000)",
            "counts": "CF.COUNT of f'{item_prefix}:{i}' for i in range(300) (whether or not "
                      "i < n_items) and of f'absent:{i}' for i in range(100)",
            "add_replies": "CF.ADD replies that were not integer 1, {index: reply}; an error "
                           "reply is {'error': text}, text = the wire error line without the "
                           "leading '-' (see environment.wire_examples)",
            "items_absent": "sorted i in range(n_items) for which CF.EXISTS key "
                            "f'{item_prefix}:{i}' answers 0 (before the follow-ups)",
            "reply_string": "{'s': one char per reply ('1', '0', '-' for -1, 'E' for an "
                            "error), 'errors': {index: text}}",
            "dump_files": "<key>.dump = records of <int64 LE iterator><int64 LE length>"
                          "<chunk>, for every CF.SCANDUMP reply from iterator 0 up to "
                          "(excluding) the final [0, nil]; the first record is the 38-byte "
                          "header with iterator 1",
            "scandump_sha256": "sha256 over the same replies of <int64 LE iterator><chunk> "
                               "(no length field)",
            "followup": "after dump.rdb/appendonlydir/.dump/.payload were written, per key "
                        "in order: (a) CF.ADD key f'more:{name}:{j}' for j in range(n_items); "
                        "(b) CF.DEL key f'{item_prefix}:{i}' for i in range(n_items) if "
                        "i % 3 == 0; (c) CF.ADDNX key f'{item_prefix}:{i}' for i in "
                        "range(200), then CF.ADDNX key f'nx:{name}:{j}' for j in range(200); "
                        "(d) CF.INSERT key ITEMS f'ins:{name}:{j}' for j in range(50); "
                        "(e) CF.INFO; then absent_present_after and SCANDUMP digest",
            "resp": "all replies are RESP2",
        },
        "keys": recs,
    }
    with open(os.path.join(HERE, "keys.json"), "w") as f:
        json.dump(doc, f, separators=(",", ":"), sort_keys=False)
        f.write("\n")

    verify_reload(module, server_bin, recs, "rdb", tmp_root)
    verify_reload(module, server_bin, recs, "aof", tmp_root)
    shutil.rmtree(tmp_root, ignore_errors=True)
    print("done")


if __name__ == "__main__":
    main()
