"""Slot migration on Vessel cluster nodes, compared with redis-server 7.0: CLUSTER SETSLOT's states
and errors, the -ASK / ASKING / -TRYAGAIN routing of an open slot, MIGRATE (single keys, KEYS,
COPY, REPLACE) between Vessel and redis-server both ways, and `redis-cli --cluster reshard` on
clusters of Vessel nodes alone and of both kinds. The servers and clusters come from
test_vessel_cluster.py's fixtures."""
import os
import re
import subprocess
import tempfile

import pytest
import redis
from redis.cluster import RedisCluster
from redis.connection import Connection

from test_vessel_cluster import (_pings, cluster_state, create_cluster, free_cluster_port,
                                 make_nodes, reply, wait_for)

assert make_nodes  # a fixture used by name


def crc16(data):
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def tag_for_slot(slot):
    """A hash tag whose keys live in `slot`."""
    i = 0
    while crc16(f"t{i}".encode()) % 16384 != slot:
        i += 1
    return f"t{i}"


def myid(node):
    return node.client().execute_command("CLUSTER", "MYID")


def own_slot(node):
    """The first slot the node serves."""
    me = myid(node)
    return min(r[0] for r in node.client().execute_command("CLUSTER", "SLOTS") if r[2][2] == me)


def myself_line(node):
    for line in node.client().execute_command("CLUSTER", "NODES").splitlines():
        if "myself" in line:
            return line
    raise AssertionError("no myself line")


def normalize(replies, own):
    """The replies with the node's own slot number written OWN (each node has its own)."""
    return [re.sub(rf"(ASK |slot |hashslot ){own}\b", r"\1OWN", g) if isinstance(g, str) else
            [re.sub(rf"\[{own}-", "[OWN-", x) for x in g] if isinstance(g, list) else g
            for g in replies]


def transcript(port, commands):
    """Replies of `commands` sent one after the other on one connection (ASKING lasts one
    command of its connection)."""
    conn = Connection(port=port, decode_responses=True)
    out = []
    for cmd in commands:
        conn.send_command(*cmd)
        try:
            out.append(conn.read_response())
        except redis.exceptions.ResponseError as e:
            out.append(f"ERR:{e}")
    conn.disconnect()
    return out


@pytest.fixture
def mixed(make_nodes):
    """A cluster of two redis-server nodes and a Vessel node, up and agreeing."""
    r1, r2, v = make_nodes("redis", "redis", "vessel")
    create_cluster([r1, r2, v])
    for n in (r1, r2, v):
        wait_for(lambda: cluster_state(n) == "cluster_state:ok", "cluster_state:ok")
    return r1, r2, v


def test_setslot_matches_redis(mixed):
    """The same SETSLOT rows on a redis-server node and on the Vessel node (each with a slot of
    its own and one of the other redis node): the same replies, the same brackets in CLUSTER
    NODES and nodes.conf."""
    r1, r2, v = mixed
    r2_id = myid(r2)
    other = own_slot(r2)
    nobody = "0" * 40
    results = []
    for node in (r1, v):
        own = own_slot(node)
        c = node.client()
        tag = tag_for_slot(own)
        rows = [("CLUSTER", "SETSLOT", "x", "STABLE"), ("CLUSTER", "SETSLOT", "16384", "STABLE"),
                ("CLUSTER", "SETSLOT", "-1", "STABLE"), ("CLUSTER", "SETSLOT", own),
                ("CLUSTER", "SETSLOT", other, "MIGRATING", r2_id),
                ("CLUSTER", "SETSLOT", own, "IMPORTING", r2_id),
                ("CLUSTER", "SETSLOT", own, "MIGRATING", nobody),
                ("CLUSTER", "SETSLOT", other, "IMPORTING", nobody),
                ("CLUSTER", "SETSLOT", other, "NODE", nobody),
                ("CLUSTER", "SETSLOT", other, "BOGUS", r2_id),
                ("CLUSTER", "SETSLOT", other, "STABLE", "extra"),
                ("CLUSTER", "SETSLOT", other, "NODE"),
                ("CLUSTER", "SETSLOT", own, "MIGRATING", r2_id),
                ("CLUSTER", "SETSLOT", other, "IMPORTING", r2_id)]
        got = [reply(c, *row) for row in rows]
        got.append(sorted(t for t in myself_line(node).split(" ") if t.startswith("[")))
        assert c.execute_command("CLUSTER", "SAVECONFIG")
        conf = open(os.path.join(node.dir, "nodes.conf")).read()
        got.append(f"[{own}->-{r2_id}]" in conf and f"[{other}-<-{r2_id}]" in conf)
        got += [reply(c, "CLUSTER", "SETSLOT", own, "STABLE"),
                reply(c, "CLUSTER", "SETSLOT", other, "STABLE")]
        got.append("[" in myself_line(node))
        # A key in the slot: giving it away is refused.
        c.set(f"{{{tag}}}k", "1")
        got += [reply(c, "CLUSTER", "SETSLOT", own, "NODE", r2_id), c.delete(f"{{{tag}}}k")]
        results.append(normalize(got, own))
    assert results[0] == results[1]
    assert {f"[OWN->-{r2_id}]", f"[{other}-<-{r2_id}]"} in [set(g) for g in results[1]
                                                           if isinstance(g, list)]


def test_ask_asking_tryagain_match_redis(mixed):
    """A slot migrating away from each node and one importing into it, with keys present and
    missing: the same -ASK, -TRYAGAIN, -MOVED and ASKING answers on both kinds."""
    r1, r2, v = mixed
    r2_id = myid(r2)
    r2_addr = f"127.0.0.1:{r2.port}"
    other = own_slot(r2)
    otag = tag_for_slot(other)
    results = []
    for node in (r1, v):
        c = node.client()
        own = own_slot(node)
        tag = tag_for_slot(own)
        c.set(f"{{{tag}}}here", "v")
        c.execute_command("CLUSTER", "SETSLOT", own, "MIGRATING", r2_id)
        c.execute_command("CLUSTER", "SETSLOT", other, "IMPORTING", r2_id)
        here, gone, gone2 = f"{{{tag}}}here", f"{{{tag}}}gone", f"{{{tag}}}gone2"
        there, there2 = f"{{{otag}}}a", f"{{{otag}}}b"
        got = transcript(node.port, [
            ("GET", here), ("GET", gone), ("SET", gone, "x"), ("MGET", here, gone),
            ("MGET", gone, gone2), ("MGET", here, here), ("EXISTS", here),
            ("GET", there), ("ASKING",), ("GET", there), ("GET", there),
            ("ASKING",), ("SET", there, "1"), ("GET", there),
            ("ASKING",), ("MGET", there, there2), ("ASKING",), ("MGET", there, there),
            ("ASKING",), ("PING",), ("GET", there),
            ("RESTORE-ASKING", there2, "0", redis.Redis(port=node.port).dump(here)), ("ASKING",), ("GET", there2),
            ("ASKING",), ("MULTI",), ("SET", there, "2"), ("GET", there), ("EXEC",),
            ("GET", there), ("ASKING",), ("DEL", there, there2)])
        c.execute_command("CLUSTER", "SETSLOT", own, "STABLE")
        c.execute_command("CLUSTER", "SETSLOT", other, "STABLE")
        c.delete(here)
        results.append(normalize(got, own))
    assert results[0] == results[1]
    assert f"ERR:ASK OWN {r2_addr}" in results[1]
    assert "ERR:TRYAGAIN Multiple keys request during rehashing of slot" in results[1]


def start_plain(kind, threads=2):
    port = free_cluster_port()
    d = tempfile.mkdtemp(prefix=f"migrate-{kind}-")
    if kind == "vessel":
        argv = [os.environ["VESSEL_SERVER"], "--port", str(port), "--dir", d, "--threads",
                str(threads), "--log-level", "warn"]
    else:
        argv = ["redis-server", "--port", str(port), "--dir", d, "--save", "", "--logfile",
                "/dev/null"]
    proc = subprocess.Popen(argv)
    c = redis.Redis(port=port, decode_responses=True)
    wait_for(lambda: _pings(c), f"{kind} serving")
    return proc, port


def test_migrate_matches_redis_both_ways():
    """MIGRATE from a redis-server and from a Vessel server to the same target, for a target of
    each kind: the same replies, and the keys end where redis-server puts them."""
    procs = []
    try:
        servers = {k: start_plain(k) for k in ("redis", "vessel")}
        targets = {k: start_plain(k) for k in ("redis", "vessel")}
        procs = [p for p, _ in (*servers.values(), *targets.values())]
        closed = free_cluster_port()
        for target in ("redis", "vessel"):
            tport = targets[target][1]
            tc = redis.Redis(port=tport, decode_responses=True)
            answers = {}
            for source in ("redis", "vessel"):
                sport = servers[source][1]
                sc = redis.Redis(port=sport, decode_responses=True)
                tc.flushall()
                sc.flushall()
                sc.set("s", "v", px=100000)
                sc.rpush("l", "a", "b", "c")
                sc.hset("h", mapping={"f": "1", "g": "2"})
                sc.sadd("set", "x", "y")
                host = ("127.0.0.1", tport)
                got = []
                m = lambda *a: reply(sc, "MIGRATE", *host, *a)
                got.append(m("s", 0, 5000))
                got += [sc.exists("s"), tc.get("s"), 0 < tc.pttl("s") <= 100000]
                got.append(m("s", 0, 5000))  # NOKEY
                sc.set("s", "new")
                got.append(m("s", 0, 5000))  # BUSYKEY from the target
                got += [sc.get("s"), tc.get("s")]
                got.append(m("s", 0, 5000, "COPY", "REPLACE"))
                got += [sc.get("s"), tc.get("s"), tc.pttl("s")]
                got.append(m("", 0, 5000, "KEYS", "l", "h", "nokey"))
                got += [sc.exists("l", "h"), tc.lrange("l", 0, -1), tc.hgetall("h")]
                got.append(m("", 0, 5000, "REPLACE", "KEYS", "s", "set"))
                got += [sc.exists("s", "set"), tc.get("s"), sorted(tc.smembers("set"))]
                got.append(m("", 0, 5000, "KEYS", "nokey", "nokey2"))
                got.append(m("x", 0, 5000, "KEYS", "s"))
                got.append(m("s", 0, 5000, "BOGUS"))
                got.append(m("s", 0, 5000, "AUTH"))
                got.append(m("s", "x", 5000))
                got.append(m("s", 0, "x"))
                sc.set("a", "1")
                got.append(m("a", 0, 5000, "AUTH", "pw"))
                got.append(m("a", 0, 5000, "AUTH2", "u", "pw"))
                got.append(m("a", 99, 5000))
                got.append(reply(sc, "MIGRATE", "127.0.0.1", closed, "a", 0, 1000))
                got.append(sc.get("a"))
                got.append(m("a", 0, 0))
                got += [sc.exists("a"), tc.get("a")]
                answers[source] = got
            assert answers["vessel"] == answers["redis"], target
            assert answers["vessel"][0] is True or answers["vessel"][0] == "OK"
    finally:
        for p in procs:
            p.terminate()
            p.wait(timeout=10)


@pytest.mark.parametrize("target_kind", ["redis", "vessel"])
def test_migrate_caches_connections_as_redis(target_kind):
    """Two MIGRATEs to one target share one connection; one the target closed is replaced on the
    next MIGRATE without an error; an idle one is closed after 10 seconds. The same from a
    redis-server source and from a Vessel source."""
    procs = []
    try:
        target_proc, tport = start_plain(target_kind)
        procs.append(target_proc)
        sources = {}
        for kind in ("redis", "vessel"):
            proc, port = start_plain(kind)
            procs.append(proc)
            sources[kind] = redis.Redis(port=port, decode_responses=True)
        tc = redis.Redis(port=tport, decode_responses=True)

        def clients():
            return tc.info("clients")["connected_clients"]

        def migrate_links():
            # The target's connections whose last command was the RESTORE of a MIGRATE (a count
            # of all clients would also see a probe's connection that closes meanwhile).
            return sum(1 for c in tc.client_list() if c["cmd"] in ("restore", "restore-asking"))
        got = {}
        for kind, sc in sources.items():
            sc.mset({"a": "1", "b": "2", "c": "3"})
            before = migrate_links()
            out = [reply(sc, "MIGRATE", "127.0.0.1", tport, k, 0, 5000) for k in ("a", "b")]
            out.append(migrate_links() - before)  # one cached connection
            tc.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
            out.append(reply(sc, "MIGRATE", "127.0.0.1", tport, "c", 0, 5000))
            out += [sc.exists("a", "b", "c"), sorted(tc.mget("a", "b", "c"))]
            tc.delete("a", "b", "c")
            got[kind] = out
        assert got["vessel"] == got["redis"]
        assert got["vessel"][2] == 1 and got["vessel"][3] == "OK"
        # Both sources' cached connections are closed once idle for 10 seconds.
        wait_for(lambda: clients() == 1, "idle connections closed", timeout=30)
    finally:
        for p in procs:
            p.terminate()
            p.wait(timeout=10)


def test_migrate_does_not_stall_other_clients():
    """While a MIGRATE waits for a target that does not answer, the other clients of the source's
    worker are served; the MIGRATE then times out with IOERR and keeps the key."""
    import socket
    import threading
    procs = []
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(1)
    try:
        proc, port = start_plain("vessel", threads=1)
        procs.append(proc)
        c = redis.Redis(port=port, decode_responses=True)
        c.set("k", "v")
        result = {}

        def run():
            result["r"] = reply(redis.Redis(port=port, decode_responses=True), "MIGRATE",
                                "127.0.0.1", silent.getsockname()[1], "k", 0, 2000)
        t = threading.Thread(target=run)
        t.start()
        wait_for(lambda: "cmd=migrate" in c.execute_command("CLIENT", "LIST"), "MIGRATE waits")
        assert c.ping() and c.get("k") == "v"
        t.join(10)
        assert result["r"] == "ERR:IOERR error or timeout reading to target instance"
        assert c.get("k") == "v"
    finally:
        silent.close()
        for p in procs:
            p.terminate()
            p.wait(timeout=10)


def test_migrate_keeps_a_key_written_meanwhile():
    """A target that answers only once told to: a key written on the source while its MIGRATE
    waits stays there (the target got the older value), the others go; MIGRATE inside MULTI runs
    on the worker and answers in EXEC, as redis-server."""
    import socket
    import threading
    procs = []
    target = socket.socket()
    target.bind(("127.0.0.1", 0))
    target.listen(1)
    go = threading.Event()

    def serve():
        conn, _ = target.accept()
        data = b""
        while data.count(b"RESTORE") < 2 or not data.endswith(b"\r\n"):
            data += conn.recv(65536)
        go.wait(10)
        conn.sendall(b"+OK\r\n+OK\r\n+OK\r\n")  # SELECT, then both RESTOREs
        conn.close()
    try:
        proc, port = start_plain("vessel")
        procs.append(proc)
        c = redis.Redis(port=port, decode_responses=True)
        c.set("a", "1")
        c.set("b", "2")
        server = threading.Thread(target=serve)
        server.start()
        result = {}

        def run():
            result["r"] = reply(redis.Redis(port=port, decode_responses=True), "MIGRATE",
                                "127.0.0.1", target.getsockname()[1], "", 0, 5000, "KEYS", "a",
                                "b")
        t = threading.Thread(target=run)
        t.start()
        wait_for(lambda: "cmd=migrate" in c.execute_command("CLIENT", "LIST"), "MIGRATE waits")
        c.set("b", "changed")
        go.set()
        t.join(10)
        server.join(10)
        assert result["r"] == "OK"
        assert c.exists("a") == 0 and c.get("b") == "changed"
        # Inside MULTI, against a real server of each kind.
        rproc, rport = start_plain("redis")
        procs.append(rproc)
        answers = []
        for sport in (port, rport):
            src = redis.Redis(port=sport, decode_responses=True)
            src.set("m", "1")
            redis.Redis(port=rport if sport == port else port).delete("m")
            pipe = src.pipeline(transaction=True)
            pipe.execute_command("MIGRATE", "127.0.0.1", rport if sport == port else port, "m",
                                 0, 5000)
            pipe.execute_command("MIGRATE", "127.0.0.1", rport if sport == port else port, "m",
                                 0, 5000)
            answers.append([str(x) for x in pipe.execute(raise_on_error=False)] +
                           [src.exists("m")])
        assert answers[0] == answers[1]
        assert answers[0][0] in ("OK", "True") and answers[0][1] == "NOKEY"
    finally:
        target.close()
        for p in procs:
            p.terminate()
            p.wait(timeout=10)


def test_open_slots_survive_a_restart(mixed):
    """The migrating and importing states are in nodes.conf and come back with the node."""
    r1, r2, v = mixed
    r2_id = myid(r2)
    own, other = own_slot(v), own_slot(r2)
    c = v.client()
    c.execute_command("CLUSTER", "SETSLOT", own, "MIGRATING", r2_id)
    c.execute_command("CLUSTER", "SETSLOT", other, "IMPORTING", r2_id)
    before = sorted(t for t in myself_line(v).split(" ") if t.startswith("["))
    assert before == sorted([f"[{own}->-{r2_id}]", f"[{other}-<-{r2_id}]"])
    v.stop()
    assert v.start()
    assert sorted(t for t in myself_line(v).split(" ") if t.startswith("[")) == before
    tag = tag_for_slot(own)
    wait_for(lambda: cluster_state(v) == "cluster_state:ok", "cluster_state:ok")
    with pytest.raises(redis.exceptions.ResponseError, match=f"^ASK {own} 127.0.0.1:{r2.port}$"):
        v.client().get(f"{{{tag}}}x")


def node_id_of(node):
    return node.client().execute_command("CLUSTER", "MYID")


@pytest.mark.parametrize("kinds", [("vessel", "vessel", "vessel"), ("vessel", "redis", "vessel"),
                                   ("redis", "vessel", "redis")])
def test_reshard(make_nodes, kinds):
    """redis-cli --cluster reshard moves 100 slots from node 0 to node 1, then from node 1 to node
    2 (in the mixed cluster: Vessel to redis-server, then redis-server to Vessel): every key is
    still there, on the owner of its slot, and --cluster check is clean."""
    nodes = make_nodes(*kinds)
    create_cluster(nodes)
    for n in nodes:
        wait_for(lambda: cluster_state(n) == "cluster_state:ok", "cluster_state:ok")
    rc = RedisCluster(host="127.0.0.1", port=nodes[0].port, decode_responses=True)
    for i in range(2000):
        rc.set(f"key:{i}", f"value:{i}")
    rc.close()

    def clean():
        check = subprocess.run(["redis-cli", "--cluster", "check", f"127.0.0.1:{nodes[2].port}"],
                               capture_output=True, text=True, timeout=60)
        return (check.returncode == 0 and "[WARNING]" not in check.stdout and
                "[OK] All nodes agree about slots configuration." in check.stdout and
                "[OK] All 16384 slots covered." in check.stdout)

    for src, dst in ((0, 1), (1, 2)):
        out = subprocess.run(
            ["redis-cli", "--cluster", "reshard", f"127.0.0.1:{nodes[0].port}",
             "--cluster-from", node_id_of(nodes[src]), "--cluster-to", node_id_of(nodes[dst]),
             "--cluster-slots", "100", "--cluster-yes"],
            capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "[ERR]" not in out.stdout, out.stdout
        wait_for(clean, "a clean --cluster check")
    assert [slot_count(n) for n in nodes] == [5361, 5462, 5561]
    check_all_keys(nodes)
    # --cluster rebalance evens them out again (moving slots both ways between the kinds).
    out = subprocess.run(["redis-cli", "--cluster", "rebalance", f"127.0.0.1:{nodes[1].port}",
                          "--cluster-threshold", "1"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "[ERR]" not in out.stdout, out.stdout
    wait_for(clean, "a clean --cluster check")
    assert sorted(slot_count(n) for n in nodes) == [5461, 5461, 5462]
    check_all_keys(nodes)


def slot_count(node):
    me = myid(node)
    return sum(r[1] - r[0] + 1 for r in node.client().execute_command("CLUSTER", "SLOTS")
               if r[2][2] == me)


def check_all_keys(nodes):
    rc = RedisCluster(host="127.0.0.1", port=nodes[2].port, decode_responses=True)
    for i in range(2000):
        assert rc.get(f"key:{i}") == f"value:{i}"
    rc.close()
    total = 0
    for n in nodes:
        c = n.client()
        total += c.dbsize()
        assert "[" not in myself_line(n)
    assert total == 2000
