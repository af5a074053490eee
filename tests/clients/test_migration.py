"""Moving a running redis-server onto Vessel without downtime, as docs/replication.md describes
it: Vessel replicates the Redis master under write load, the writers are paused, Vessel is
promoted once it has every byte, the writers move to it, and the old Redis follows the new master
with a partial resynchronization. Every acknowledged write must be on Vessel."""
import threading
import time

import pytest
import redis

from conftest import RedisProcess, VesselProcess

WRITERS = 3


def poll(condition, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


class Writer(threading.Thread):
    """Writes INCR, RPUSH and XADD in a loop to whichever server `target` names, and records what
    was acknowledged. A refused or cut write is retried on the current target."""

    def __init__(self, index, target):
        super().__init__(daemon=True)
        self.index = index
        self.target = target  # a one-element list shared by all writers: the port to write to
        self.acked = 0
        self.stop = threading.Event()
        self.errors = []

    def run(self):
        client, port = None, None
        n = 0
        while not self.stop.is_set():
            if port != self.target[0]:
                port = self.target[0]
                client = redis.Redis(port=port, socket_timeout=30)
            n = self.acked + 1
            try:
                pipe = client.pipeline(transaction=True)
                pipe.incr(f"counter:{self.index}")
                pipe.rpush(f"log:{self.index}", n)
                pipe.xadd(f"events:{self.index}", {"n": n})
                pipe.execute()
                self.acked = n
            except (redis.exceptions.ConnectionError, redis.exceptions.ReadOnlyError,
                    redis.exceptions.TimeoutError):
                client = redis.Redis(port=self.target[0], socket_timeout=30)
                port = self.target[0]
                time.sleep(0.005)
            except redis.exceptions.ResponseError as e:
                self.errors.append(str(e))
                return


def fill(m):
    m.set("plain", "v")
    m.set("with:ttl", "v", ex=3600)
    m.hset("hash", mapping={f"f{i}": i for i in range(200)})
    m.sadd("set", *range(100))
    m.sadd("set:words", *[f"w{i}" for i in range(50)])
    m.zadd("zset", {f"m{i}": i / 3 for i in range(300)})
    m.rpush("list", *[f"e{i}" for i in range(1000)])
    m.xadd("stream", {"a": 1, "b": 2})
    m.xgroup_create("stream", "g", id="0")
    m.xreadgroup("g", "c1", {"stream": ">"})
    m.execute_command("FUNCTION", "LOAD",
                      "#!lua name=lib\nredis.register_function('hello', "
                      "function() return 'hi' end)")
    m.select(3)
    m.set("in:db3", "x")
    m.select(0)


@pytest.fixture
def servers():
    started = []
    yield started
    for s in started:
        s.stop()


def test_live_migration_from_redis_keeps_every_acknowledged_write(servers):
    source = RedisProcess(args=("--enable-debug-command", "yes"))
    servers.append(source)
    m = redis.Redis(port=source.port, decode_responses=True)
    fill(m)

    target = [source.port]
    writers = [Writer(i, target) for i in range(WRITERS)]
    for w in writers:
        w.start()
    assert poll(lambda: all(w.acked > 20 for w in writers))

    # 1. Vessel replicates the running master under load.
    vessel = VesselProcess(args=("--replicaof", f"127.0.0.1 {source.port}",
                                 "--enable-debug-command", "yes"))
    servers.append(vessel)
    v = redis.Redis(port=vessel.port, decode_responses=True)
    assert poll(lambda: v.info("replication").get("master_link_status") == "up")
    before = [w.acked for w in writers]
    assert poll(lambda: all(w.acked > b + 20 for w, b in zip(writers, before)))

    # 2. Writes paused on the source; Vessel has every byte of its stream.
    assert m.execute_command("CLIENT", "PAUSE", "30000", "WRITE")
    offset = m.info("replication")["master_repl_offset"]
    assert poll(lambda: v.info("replication")["slave_repl_offset"] == offset)

    # 3. Vessel promoted, clients moved, the source's paused clients cut (their commands never
    # ran), and the source follows Vessel from where it stopped.
    assert v.execute_command("REPLICAOF", "NO", "ONE")
    target[0] = vessel.port
    m.execute_command("CLIENT", "KILL", "TYPE", "normal")
    assert m.execute_command("REPLICAOF", "127.0.0.1", str(vessel.port))
    m.execute_command("CLIENT", "UNPAUSE")
    assert poll(lambda: m.info("replication").get("master_link_status") == "up")
    assert v.info("stats")["sync_partial_ok"] == 1, "the old master continued its own history"

    at_switch = [w.acked for w in writers]
    assert poll(lambda: all(w.acked > a + 20 for w, a in zip(writers, at_switch)))
    for w in writers:
        w.stop.set()
    for w in writers:
        w.join(timeout=30)
        assert not w.errors, w.errors

    # Every acknowledged write is on Vessel, in order and exactly once (a transaction whose
    # reply was lost to the cut connection ran either wholly or not at all: at most one more).
    for w in writers:
        i = w.index
        count = int(v.get(f"counter:{i}"))
        assert w.acked <= count <= w.acked + 1
        assert v.lrange(f"log:{i}", 0, -1) == [str(n) for n in range(1, count + 1)]
        entries = v.xrange(f"events:{i}")
        assert [e[1]["n"] for e in entries] == [str(n) for n in range(1, count + 1)]

    # What was there before the load came across too.
    assert v.get("plain") == "v" and 0 < v.ttl("with:ttl") <= 3600
    assert v.hlen("hash") == 200 and v.scard("set") == 100 and v.zcard("zset") == 300
    assert v.xinfo_groups("stream")[0]["pending"] == 1
    assert v.fcall("hello", 0) == "hi"
    v.select(3)
    assert v.get("in:db3") == "x"
    v.select(0)

    # The old Redis, now Vessel's replica, holds the same data (DEBUG DIGEST-VALUE is Redis's
    # digest on both; a stream's leaves out its groups, which compare by XINFO GROUPS).
    offset = v.info("replication")["master_repl_offset"]
    assert poll(lambda: m.info("replication")["slave_repl_offset"] == offset)
    assert m.dbsize() == v.dbsize()
    for key in v.scan_iter(count=1000):
        assert (m.execute_command("DEBUG", "DIGEST-VALUE", key) ==
                v.execute_command("DEBUG", "DIGEST-VALUE", key)), key
        if v.type(key) == "stream":
            assert m.xinfo_groups(key) == v.xinfo_groups(key), key
