"""A Vessel master with an append-only file killed with SIGKILL under write load and restarted
from the same directory: its replicas (a redis-server and a Vessel) reconnect and resynchronize,
and every write acknowledged before the kill is on the master and on both replicas."""
import signal
import tempfile
import threading
import time

import pytest
import redis

from conftest import RedisProcess, VesselProcess


def poll(condition, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if condition():
                return True
        except redis.exceptions.ConnectionError:
            pass
        time.sleep(0.02)
    return False


def in_sync(master, replica):
    if replica.info("replication").get("master_link_status") != "up":
        return False
    return (replica.info("replication")["slave_repl_offset"] ==
            master.info("replication")["master_repl_offset"])


def test_master_restarted_from_its_aof_keeps_every_acknowledged_write():
    master_dir = tempfile.mkdtemp(prefix="vessel-master-")
    args = ("--dir", master_dir, "--appendonly", "yes", "--appendfsync", "always",
            "--enable-debug-command", "yes")
    master = VesselProcess(args=args)
    port = master.port
    started = [master]
    try:
        m = redis.Redis(port=port, decode_responses=True)
        ours = RedisProcess(args=("--enable-debug-command", "yes", "--replicaof",
                                  "127.0.0.1", str(port)))
        started.append(ours)
        vessel_replica = VesselProcess(args=("--replicaof", f"127.0.0.1 {port}",
                                             "--enable-debug-command", "yes"))
        started.append(vessel_replica)
        replicas = [redis.Redis(port=ours.port, decode_responses=True),
                    redis.Redis(port=vessel_replica.port, decode_responses=True)]
        assert poll(lambda: all(in_sync(m, r) for r in replicas))

        # Writers: each write is acknowledged once WAIT says both replicas have it.
        acked = {}
        stop = threading.Event()

        def writer(i):
            c = redis.Redis(port=port, socket_timeout=5)
            n = 0
            while not stop.is_set():
                try:
                    c.rpush(f"log:{i}", n + 1)
                    c.hset(f"h:{i}", n + 1, "x" * 50)
                    if c.execute_command("WAIT", 2, 5000) == 2:
                        n += 1
                        acked[i] = n
                except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError):
                    return

        threads = [threading.Thread(target=writer, args=(i,)) for i in range(3)]
        for t in threads:
            t.start()
        assert poll(lambda: len(acked) == 3 and min(acked.values()) > 30)

        master.proc.send_signal(signal.SIGKILL)
        master.proc.wait(timeout=10)
        stop.set()
        for t in threads:
            t.join(timeout=10)
        for r in replicas:
            assert poll(lambda: r.info("replication")["master_link_status"] == "down")

        master = VesselProcess(args=args, port=port)
        started[0] = master
        m = redis.Redis(port=port, decode_responses=True)
        for i, n in acked.items():
            got = m.lrange(f"log:{i}", 0, -1)
            # Every acknowledged write is there; a write sent before the kill may be too.
            assert got[:n] == [str(k) for k in range(1, n + 1)]
            assert len(got) <= n + 1
        m.set("after:restart", 1)
        assert poll(lambda: all(in_sync(m, r) for r in replicas))
        digest = m.execute_command("DEBUG", "DIGEST")
        for r in replicas:
            assert r.get("after:restart") == "1"
            assert r.execute_command("DEBUG", "DIGEST") == digest
    finally:
        for s in started:
            s.stop()


@pytest.mark.parametrize("kind", ["redis", "vessel"])
def test_master_restarted_from_its_rdb_continues_its_replicas(kind):
    """A master saved by SHUTDOWN SAVE keeps its replication history in the RDB (repl-id,
    repl-offset): restarted, it takes it as its secondary id, and replicas that had all of it
    continue with a partial resynchronization, as from redis-server 7.0."""
    server = RedisProcess if kind == "redis" else VesselProcess
    master_dir = tempfile.mkdtemp(prefix=f"{kind}-master-")
    args = ("--dir", master_dir, "--repl-diskless-sync-delay", "0")
    master = server(args=args)
    port = master.port
    started = [master]
    try:
        m = redis.Redis(port=port, decode_responses=True)
        started.append(RedisProcess(args=("--replicaof", "127.0.0.1", str(port))))
        started.append(VesselProcess(args=("--replicaof", f"127.0.0.1 {port}")))
        replicas = [redis.Redis(port=p.port, decode_responses=True) for p in started[1:]]
        assert poll(lambda: all(in_sync(m, r) for r in replicas))
        for i in range(100):
            m.set(f"k{i}", i)
        m.select(2)
        m.incr("counter")
        assert m.wait(2, 5000) == 2
        old_id = m.info("replication")["master_replid"]
        old_offset = m.info("replication")["master_repl_offset"]
        m.shutdown(save=True)  # the connection closes: redis-py returns
        master.proc.wait(timeout=10)

        master = server(args=args, port=port)
        started[0] = master
        m = redis.Redis(port=port, decode_responses=True)
        info = m.info("replication")
        assert info["master_replid2"] == old_id
        # Redis 7.0 asks its replicas for their offsets (REPLCONF GETACK) before it saves.
        assert info["second_repl_offset"] >= old_offset + 1
        assert poll(lambda: m.info("replication")["connected_slaves"] == 2)
        stats = m.info("stats")
        assert (stats["sync_full"], stats["sync_partial_ok"]) == (0, 2)
        # The stream continues in the right database.
        m.select(2)
        m.incr("counter")
        assert poll(lambda: all(in_sync(m, r) for r in replicas))
        for r in replicas:
            r.select(2)
            assert r.get("counter") == "2"
            r.select(0)
            assert r.get("k99") == "99"
    finally:
        for p in started:
            p.stop()


@pytest.mark.parametrize("replica_kind", ["redis", "vessel"])
@pytest.mark.parametrize("master_kind", ["redis", "vessel"])
def test_replica_restarted_from_its_rdb_continues_from_its_offset(master_kind, replica_kind):
    """A replica saved by SHUTDOWN SAVE records its master's id, its offset and the database the
    stream is in: restarted, it asks to continue from there and gets the writes it missed with a
    partial resynchronization, as a redis-server 7.0 replica does."""
    master = (RedisProcess if master_kind == "redis" else VesselProcess)()
    replica_server = RedisProcess if replica_kind == "redis" else VesselProcess
    replica_dir = tempfile.mkdtemp(prefix=f"{replica_kind}-replica-")
    replica_args = ("--dir", replica_dir, "--replicaof", "127.0.0.1", str(master.port))
    replica = replica_server(args=replica_args)
    started = [master, replica]
    try:
        m = redis.Redis(port=master.port, decode_responses=True)
        r = redis.Redis(port=replica.port, decode_responses=True)
        assert poll(lambda: in_sync(m, r))
        m.select(3)  # the stream stays in database 3 from here on
        for i in range(100):
            m.rpush("log", i)
        m.incr("counter")
        assert m.wait(1, 5000) == 1
        r.shutdown(save=True)
        replica.proc.wait(timeout=10)

        for i in range(100, 150):  # missed by the replica: in the master's backlog
            m.rpush("log", i)
        m.incr("counter")
        replica = replica_server(args=replica_args, port=replica.port)
        started[1] = replica
        r = redis.Redis(port=replica.port, decode_responses=True)
        assert poll(lambda: in_sync(m, r))
        stats = m.info("stats")
        assert (stats["sync_full"], stats["sync_partial_ok"]) == (1, 1)
        m.incr("counter")  # no SELECT precedes it in the stream
        assert poll(lambda: in_sync(m, r))
        r.select(3)
        assert r.get("counter") == "3"
        assert r.lrange("log", 0, -1) == [str(i) for i in range(150)]
        r.select(0)
        assert r.dbsize() == 0
    finally:
        for p in started:
            p.stop()
