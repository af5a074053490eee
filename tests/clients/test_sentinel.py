"""Debian's redis-sentinel 7.0, unchanged, managing groups of vessel-server nodes and mixed groups
of vessel-server and redis-server nodes: three Sentinels watch a master and two replicas, the
master is killed with SIGKILL, a replica is promoted, the other follows it, redis-py's
Sentinel(...).master_for(...) reconnects to the new master, and every write that WAIT
acknowledged before the kill is there. A replica with replica-priority 0 is never promoted.
SENTINEL FAILOVER with the master alive turns the old master into a replica of the new one.

Every process gets a free port and a directory of its own, and is stopped by pid at the end,
whatever happened."""
import os
import shutil
import signal
import subprocess
import tempfile
import time

import pytest
import redis
from redis.sentinel import Sentinel

from conftest import free_port

SENTINEL = "/usr/bin/redis-sentinel"
GROUP = "grp"
DOWN_AFTER_MS = 1500
FAILOVER_TIMEOUT_MS = 10000


def wait_for(cond, timeout, what):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        try:
            last = cond()
            if last:
                return last
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError,
                redis.exceptions.ResponseError) as e:
            last = e
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


class Node:
    """A vessel-server or redis-server process on a free port, in a directory of its own."""

    def __init__(self, kind, group, replicaof=None, priority=None):
        self.kind = kind
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix=f"sentinel-{kind}-")
        group.dirs.append(self.dir)
        if kind == "vessel":
            args = [os.environ["VESSEL_SERVER"], "--port", str(self.port), "--bind", "127.0.0.1",
                    "--threads", "2", "--save", "", "--dir", self.dir,
                    "--repl-diskless-sync-delay", "0", "--log.file", os.path.join(self.dir, "server.log")]
            if replicaof is not None:
                args += ["--replicaof", f"127.0.0.1 {replicaof.port}"]
            if priority is not None:
                args += ["--replica-priority", str(priority)]
        else:
            args = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                    "--appendonly", "no", "--dir", self.dir, "--repl-diskless-sync-delay", "0",
                    "--logfile", os.path.join(self.dir, "server.log")]
            if replicaof is not None:
                args += ["--replicaof", "127.0.0.1", str(replicaof.port)]
            if priority is not None:
                args += ["--replica-priority", str(priority)]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        group.procs.append(self.proc)
        wait_for(lambda: self.proc.poll() is None and self.client().ping(), 15,
                 f"{kind} on port {self.port} to serve")

    def client(self):
        return redis.Redis(port=self.port, socket_timeout=2, decode_responses=True)

    def info(self):
        return self.client().info("replication")

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def __repr__(self):
        return f"{self.kind}:{self.port}"


class Group:
    """The processes of one test, stopped by pid whatever happens."""

    def __init__(self):
        self.procs, self.dirs, self.sentinel_ports = [], [], []

    def sentinel(self, master):
        port = free_port()
        d = tempfile.mkdtemp(prefix="sentinel-")
        self.dirs.append(d)
        conf = os.path.join(d, "sentinel.conf")
        with open(conf, "w") as f:
            f.write(f"port {port}\nbind 127.0.0.1\ndir {d}\n"
                    f"logfile {os.path.join(d, 'sentinel.log')}\n"
                    f"sentinel monitor {GROUP} 127.0.0.1 {master.port} 2\n"
                    f"sentinel down-after-milliseconds {GROUP} {DOWN_AFTER_MS}\n"
                    f"sentinel failover-timeout {GROUP} {FAILOVER_TIMEOUT_MS}\n"
                    f"sentinel parallel-syncs {GROUP} 2\n")
        self.procs.append(subprocess.Popen([SENTINEL, conf], stdout=subprocess.DEVNULL,
                                           stderr=subprocess.DEVNULL))
        self.sentinel_ports.append(port)
        return port

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass

    def logs(self):
        out = []
        for d in self.dirs:
            for name in ("sentinel.log", "server.log"):
                path = os.path.join(d, name)
                if os.path.exists(path):
                    with open(path, errors="replace") as f:
                        lines = f.readlines()[-25:]
                    out.append(f"==== {path}\n" + "".join(lines))
        return "\n".join(out)


@pytest.fixture
def group():
    if not os.path.exists(SENTINEL):
        pytest.fail(f"{SENTINEL} is missing (Debian package redis-sentinel; scripts/deps.sh)")
    g = Group()
    yield g
    g.stop()
    print(g.logs())  # pytest shows it when the test failed
    for d in g.dirs:
        shutil.rmtree(d, ignore_errors=True)


def sentinel_state(port):
    return redis.Redis(port=port, socket_timeout=2, decode_responses=True).sentinel_master(GROUP)


def start_sentinels(group, master, replicas):
    """Three Sentinels over master; returns once each knows both replicas and the other two."""
    ports = [group.sentinel(master) for _ in range(3)]
    for p in ports:
        wait_for(lambda: (sentinel_state(p)["num-slaves"] == len(replicas)
                          and sentinel_state(p)["num-other-sentinels"] == 2), 30,
                 f"sentinel {p} to see the replicas and the other sentinels")
    return ports


def in_sync(master, replica):
    """The replica's link is up and it applied the master's whole stream so far."""
    mi, ri = master.info(), replica.info()
    return (ri.get("master_link_status") == "up" and ri.get("master_port") == master.port
            and ri.get("slave_repl_offset") == mi.get("master_repl_offset"))


def acknowledged_writes(client, n, replicas):
    """n writes in batches, each batch acknowledged by every replica (WAIT); returns them."""
    written = {}
    for batch in range(n // 20):
        pipe = client.pipeline(transaction=False)
        for i in range(20):
            k = f"k:{batch}:{i}"
            written[k] = f"v{batch * 20 + i}"
            pipe.set(k, written[k])
        pipe.rpush("log", *[f"{batch}:{i}" for i in range(20)])
        pipe.execute()
        assert client.execute_command("WAIT", replicas, 5000) == replicas
    return written


def failover(group, master, replicas, expect_promoted, sentinels):
    """Kills master and returns (the promoted replica, the other one) once Sentinel reports the
    new master, the promoted node is a master and the other replica follows it."""
    master.kill()
    by_port = {r.port: r for r in replicas}
    sentinel = Sentinel([("127.0.0.1", p) for p in sentinels], socket_timeout=2)

    def switched():
        host, port = sentinel.discover_master(GROUP)
        return port != master.port and port

    port = wait_for(switched, 40, "Sentinel to switch the master")
    promoted = by_port[port]
    if expect_promoted is not None:
        assert promoted is expect_promoted, f"promoted {promoted}, expected {expect_promoted}"
    (other,) = [r for r in replicas if r is not promoted]
    wait_for(lambda: promoted.info()["role"] == "master", 10, f"{promoted} to be a master")
    wait_for(lambda: in_sync(promoted, other), 30, f"{other} to follow {promoted}")
    return promoted, other


def check_group(group, master, replicas, expect_promoted=None):
    wait_for(lambda: all(in_sync(master, r) for r in replicas), 30, "the replicas to sync")
    sentinels = start_sentinels(group, master, replicas)
    sentinel = Sentinel([("127.0.0.1", p) for p in sentinels], socket_timeout=2)
    client = sentinel.master_for(GROUP, socket_timeout=2, decode_responses=True)
    assert client.ping()
    written = acknowledged_writes(client, 200, len(replicas))

    promoted, other = failover(group, master, replicas, expect_promoted, sentinels)

    # The client finds the new master by itself (its first command may meet the dead link).
    def write_after():
        try:
            return client.set("after:failover", "1")
        except (redis.exceptions.ConnectionError, redis.exceptions.ReadOnlyError):
            return False

    wait_for(write_after, 20, "master_for's client to write to the new master")
    assert client.connection_pool.get_master_address()[1] == promoted.port
    for node in (promoted, other):
        c = node.client()
        wait_for(lambda: c.get("after:failover") == "1", 10, f"the write after on {node}")
        values = c.mget(list(written))
        missing = [k for k, v in zip(written, values) if v != written[k]]
        assert not missing, f"{node} lost acknowledged writes: {missing[:10]}"
        assert c.llen("log") == len(written)
    # Sentinel's view: the other replica is the new master's.
    replicas_seen = wait_for(
        lambda: [r for r in sentinel.discover_slaves(GROUP) if r[1] == other.port], 20,
        "Sentinel to list the other replica under the new master")
    assert replicas_seen == [("127.0.0.1", other.port)]
    return promoted, other


def test_vessel_group_fails_over(group):
    master = Node("vessel", group)
    replicas = [Node("vessel", group, replicaof=master) for _ in range(2)]
    promoted, other = check_group(group, master, replicas)
    # The new master's INFO as Sentinel reads it.
    info = promoted.info()
    assert info["connected_slaves"] >= 1
    assert info["slave0"]["port"] == other.port and info["slave0"]["state"] == "online"
    assert other.info()["master_link_status"] == "up"


def test_mixed_group_promotes_vessel(group):
    """A redis-server master; its vessel replica is promoted (the redis-server replica has
    replica-priority 0) and the redis-server replica follows vessel."""
    master = Node("redis", group)
    vessel = Node("vessel", group, replicaof=master)
    redis_replica = Node("redis", group, replicaof=master, priority=0)
    check_group(group, master, [vessel, redis_replica], expect_promoted=vessel)


def test_mixed_group_promotes_redis(group):
    """A vessel master; its redis-server replica is promoted (the vessel replica has
    replica-priority 0, which INFO reports as slave_priority:0) and vessel follows it."""
    master = Node("vessel", group)
    redis_replica = Node("redis", group, replicaof=master)
    vessel = Node("vessel", group, replicaof=master, priority=0)
    assert vessel.info()["slave_priority"] == 0
    check_group(group, master, [redis_replica, vessel], expect_promoted=redis_replica)


def test_manual_failover_demotes_the_live_master(group):
    """SENTINEL FAILOVER with the master alive: Sentinel promotes a replica, reconfigures the
    other, and turns the old vessel master into a replica of the new one with its MULTI, SLAVEOF,
    CONFIG REWRITE, CLIENT KILL, EXEC transaction."""
    master = Node("vessel", group)
    replicas = [Node("vessel", group, replicaof=master) for _ in range(2)]
    wait_for(lambda: all(in_sync(master, r) for r in replicas), 30, "the replicas to sync")
    sentinels = start_sentinels(group, master, replicas)
    sentinel = Sentinel([("127.0.0.1", p) for p in sentinels], socket_timeout=2)
    client = sentinel.master_for(GROUP, socket_timeout=2, decode_responses=True)
    written = acknowledged_writes(client, 100, len(replicas))
    admin = redis.Redis(port=sentinels[0], socket_timeout=2, decode_responses=True)
    assert admin.execute_command("SENTINEL", "FAILOVER", GROUP) in (True, "OK")

    def switched():
        return sentinel.discover_master(GROUP)[1] != master.port

    wait_for(switched, 40, "Sentinel to switch the master")
    by_port = {r.port: r for r in replicas}
    promoted = by_port[sentinel.discover_master(GROUP)[1]]
    (other,) = [r for r in replicas if r is not promoted]
    wait_for(lambda: in_sync(promoted, other), 30, f"{other} to follow {promoted}")
    wait_for(lambda: in_sync(promoted, master), 40, f"the old master {master} to follow")
    with pytest.raises(redis.exceptions.ReadOnlyError):
        master.client().set("x", "1")
    for node in (promoted, other, master):
        c = node.client()
        values = c.mget(list(written))
        assert [k for k, v in zip(written, values) if v != written[k]] == [], f"{node} lost writes"
