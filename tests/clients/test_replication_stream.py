"""The replication stream, command by command, against redis-server 7.0's: a raw replica attached
with SYNC reads what each server propagates for the same commands (relative expiries as absolute
times, blocking pops as their non-blocking forms, GETDEL as DEL, scripts and transactions as
MULTI/EXEC, PUBLISH, ...). Absolute times differ by the milliseconds between the two runs, so
numbers that are times compare as one token."""
import os
import re
import socket
import threading
import time

import pytest
import redis

from conftest import RedisProcess, VesselProcess


class RawReplica:
    """A replica that speaks just enough of the protocol: SYNC, skip the RDB, read commands."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = b""
        self.sock.sendall(b"SYNC\r\n")
        while True:  # newlines while the master prepares the snapshot, then $<len>
            line = self._line().lstrip(b"\n")  # a bare newline has no CR: it leads a line
            if line.startswith(b"$"):
                break
        self._take(int(line[1:]))

    def _fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("master closed the link")
        self.buf += data

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, _, self.buf = self.buf.partition(b"\r\n")
        return line

    def _take(self, n):
        while len(self.buf) < n:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def command(self):
        line = self._line()
        assert line.startswith(b"*"), line
        args = []
        for _ in range(int(line[1:])):
            n = int(self._line()[1:])
            args.append(self._take(n + 2)[:-2].decode("latin-1"))
        return args

    def until(self, marker_key):
        """The commands up to the SET of `marker_key`, without PINGs and redundant SELECTs."""
        out, db = [], 0
        while True:
            cmd = self.command()
            name = cmd[0].upper()
            if name == "PING":
                continue
            if name == "SELECT":
                if int(cmd[1]) != db:
                    db = int(cmd[1])
                    out.append(["SELECT", cmd[1]])
                continue
            if name == "SET" and cmd[1] == marker_key:
                return out
            out.append(normalize(cmd))


def normalize(cmd):
    now_ms = time.time() * 1000
    out = [cmd[0].upper()]
    for a in cmd[1:]:
        if re.fullmatch(r"\d{13}", a) and abs(int(a) - now_ms) < 10 * 86400 * 1000:
            a = "<time>"
        out.append(a)
    return out


@pytest.fixture(scope="module")
def pair():
    ref = RedisProcess(args=("--repl-diskless-sync", "no"))
    ves = VesselProcess()
    yield ref, ves
    ref.stop()
    ves.stop()


def run_case(port, setup, commands, waiter=None):
    """Runs setup (not compared), then commands; returns what the replica read for commands."""
    c = redis.Redis(port=port)
    c.flushall()
    replica = RawReplica(port)
    for cmd in setup:
        c.execute_command(*cmd)
    c.set("marker:start", 1)
    replica.until("marker:start")
    blocked = None
    if waiter is not None:
        blocked = threading.Thread(target=lambda: redis.Redis(port=port).execute_command(*waiter))
        blocked.start()
        assert poll_blocked(c)
    for cmd in commands:
        if cmd[0] == "MULTI":
            pipe = c.pipeline(transaction=True)
            for sub in cmd[1:]:
                pipe.execute_command(*sub)
            pipe.execute()
        else:
            try:
                c.execute_command(*cmd)
            except redis.exceptions.ResponseError:
                pass
    if blocked is not None:
        blocked.join(timeout=10)
    c.set("marker:end", 1)
    return replica.until("marker:end")


def poll_blocked(c):
    deadline = time.time() + 10
    while time.time() < deadline:
        if c.info("clients")["blocked_clients"] > 0:
            return True
        time.sleep(0.01)
    return False


CASES = {
    "timed SET": ([], [["SET", "a", "1", "EX", "100"], ["SET", "b", "1", "PX", "100000"],
                       ["SET", "c", "1", "EXAT", "4000000000"], ["SET", "d", "1", "GET", "EX", "9"],
                       ["SETEX", "e", "100", "v"], ["PSETEX", "f", "100000", "v"],
                       ["SET", "g", "1", "KEEPTTL"], ["SET", "a", "2", "NX", "EX", "5"]]),
    "expiry commands": ([["SET", "k", "v"], ["SET", "gone", "v"]],
                        [["EXPIRE", "k", "100"], ["PEXPIRE", "k", "200000", "GT"],
                         ["EXPIREAT", "k", "4000000000"], ["PEXPIREAT", "k", "4000000000000"],
                         ["EXPIRE", "k", "1", "NX"], ["PERSIST", "k"],
                         ["EXPIRE", "gone", "-1"], ["EXPIRE", "missing", "10"]]),
    "GETEX GETDEL GETSET": ([["SET", "a", "1"], ["SET", "b", "1", "EX", "100"], ["SET", "c", "1"]],
                            [["GETEX", "a", "EX", "100"], ["GETEX", "b", "PERSIST"],
                             ["GETEX", "a"], ["GETEX", "c", "PXAT", "1000"], ["GETDEL", "a"],
                             ["GETDEL", "missing"], ["GETSET", "s", "v"]]),
    "float increments": ([], [["INCRBYFLOAT", "f", "1.5"], ["HINCRBYFLOAT", "h", "x", "2.5"]]),
    "SPOP": ([["SADD", "one", "m"], ["SADD", "s2", "m"]], [["SPOP", "one"], ["SPOP", "s2", "5"]]),
    "list pops": ([["RPUSH", "l", "a", "b", "c", "d", "e"], ["RPUSH", "m", "x"]],
                  [["BLPOP", "l", "0"], ["BRPOP", "l", "0"], ["LMPOP", "1", "l", "LEFT"],
                   ["BLMPOP", "0", "1", "l", "RIGHT", "COUNT", "5"],
                   ["BLMOVE", "m", "n", "LEFT", "RIGHT", "0"], ["BRPOPLPUSH", "n", "m", "0"]]),
    "zset pops": ([["ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"]],
                  [["BZPOPMIN", "z", "0"], ["BZPOPMAX", "z", "0"], ["ZMPOP", "1", "z", "MIN"],
                   ["BZMPOP", "0", "1", "z", "MAX", "COUNT", "3"]]),
    "transactions and scripts": ([], [
        ["MULTI", ["SET", "t1", "1"], ["INCR", "t2"], ["SET", "t3", "1", "EX", "100"]],
        ["EVAL", "redis.call('set', KEYS[1], 'x'); redis.call('expire', KEYS[1], 100)", "1",
         "sk"],
        ["EVAL", "return redis.call('get', KEYS[1])", "1", "sk"],
        ["PUBLISH", "ch", "hi"]]),
    "databases and pub/sub in transactions": ([], [
        ["MULTI", ["SET", "x", "1"], ["PUBLISH", "ch", "m"], ["SELECT", "2"], ["SET", "y", "1"],
         ["SELECT", "0"]],
        ["EVAL", "redis.call('publish', 'ch', 'm'); redis.call('set', KEYS[1], '1')", "1", "z"],
        ["MULTI", ["GET", "x"], ["SET", "x", "2", "NX"]],
        ["MULTI", ["SET", "lone", "1"], ["GET", "lone"]],
        ["MULTI", ["XADD", "st", "1-1", "f", "v"], ["XGROUP", "CREATE", "st", "g", "0"],
         ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "st", ">"]],
        ["SWAPDB", "0", "3"], ["FLUSHDB"], ["MOVE", "nothing", "1"]]),
    "RESTORE": ([["SET", "src", "v"]], [["RESTORE", "r1", "100000", "<dump src>"],
                                        ["RESTORE", "r2", "0", "<dump src>"]]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_stream_matches_redis(pair, case):
    setup, commands = CASES[case]
    streams = []
    for server in pair:
        if case == "RESTORE":
            c = redis.Redis(port=server.port)
            c.flushall()
            c.set("src", "v")
            payload = c.dump("src")
            commands = [[a if a != "<dump src>" else payload for a in cmd] for cmd in commands]
        streams.append(run_case(server.port, setup, commands))
    if case == "RESTORE":  # the payload is binary: compare its place, not its bytes
        streams = [[[a if i != 3 else "<payload>" for i, a in enumerate(cmd)] for cmd in s]
                   for s in streams]
    assert streams[1] == streams[0]


def test_blocked_pop_served_by_a_push(pair):
    streams = [run_case(s.port, [], [["RPUSH", "q", "job"]], waiter=["BLPOP", "q", "0"])
               for s in pair]
    assert streams[1] == streams[0]


def diskless_sync(port, replicas):
    """`replicas` raw replicas that offer capa eof ask for a full synchronization at once; each
    returns its +FULLRESYNC offset, the RDB between $EOF:<mark> and the mark, and the first
    command after it (sent only once the replica acknowledges, as Redis does)."""
    socks = []
    for _ in range(replicas):
        s = socket.create_connection(("127.0.0.1", port), timeout=20)
        s.sendall(b"REPLCONF capa eof capa psync2\r\n")
        assert s.recv(5) == b"+OK\r\n"  # PSYNC behind unsent replies is refused
        s.sendall(b"PSYNC ? -1\r\n")
        socks.append(s)
    readers, offsets = [], []
    for s in socks:
        r = RawReplica.__new__(RawReplica)
        r.sock, r.buf = s, b""
        while True:  # newlines while the master waits for more replicas, then +FULLRESYNC
            line = r._line().lstrip(b"\n")
            if line.startswith(b"+FULLRESYNC"):
                break
        readers.append(r)
        offsets.append(int(line.split()[2]))
    redis.Redis(port=port).set("after", "1")  # past the snapshot's point: in the stream
    out = []
    for r, s, offset in zip(readers, socks, offsets):
        head = r._line().lstrip(b"\n")
        assert head.startswith(b"$EOF:") and len(head) == 45, head
        mark = head[5:]
        while mark not in r.buf:
            r._fill()
        rdb, _, r.buf = r.buf.partition(mark)
        assert r.buf == b""  # nothing follows the mark before the replica's ACK
        # ACKs as a replica sends them (Redis counts only one that comes once it marked the
        # replica online, a moment after the transfer), until the stream flows.
        s.settimeout(0.2)
        deadline = time.time() + 20
        while not r.buf and time.time() < deadline:
            s.sendall(b"*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$1\r\n0\r\n")
            try:
                r._fill()
            except TimeoutError:
                pass
        s.settimeout(20)
        cmds = []
        while not cmds or cmds[-1][0].upper() != "SET":
            cmd = r.command()
            if cmd[0].upper() not in ("PING", "SELECT", "REPLCONF"):
                cmds.append(cmd)
        out.append((offset, rdb, cmds[-1]))
        s.close()
    return out


@pytest.mark.parametrize("kind", ["redis", "vessel"])
def test_diskless_sync_is_shared_by_replicas_that_ask_together(kind):
    args = ("--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "1")
    server = RedisProcess(args=args) if kind == "redis" else VesselProcess(args=args)
    try:
        c = redis.Redis(port=server.port)
        for i in range(100):
            c.set(f"k{i}", i)
        got = diskless_sync(server.port, 2)
        # One snapshot for both: the same offset and the same bytes, an RDB with the keys.
        assert got[0][0] == got[1][0]
        assert got[0][1] == got[1][1]
        assert got[0][1].startswith(b"REDIS0010") and b"k99" in got[0][1]
        assert got[0][2] == got[1][2] == ["SET", "after", "1"]
    finally:
        server.stop()


@pytest.mark.parametrize("kind", ["redis", "vessel"])
def test_a_stuck_diskless_replica_is_dropped_and_the_others_finish(kind):
    """Two replicas share a diskless payload; one stops reading. It is dropped after
    repl-timeout, and the other one gets the whole payload instead of waiting for it forever."""
    args = ("--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "1",
            "--repl-timeout", "2")
    server = RedisProcess(args=args) if kind == "redis" else VesselProcess(args=args)
    try:
        c = redis.Redis(port=server.port)
        pipe = c.pipeline(transaction=False)
        for i in range(400):  # 40 MB that do not compress: far more than the sockets hold
            pipe.set(f"big:{i}", os.urandom(100_000))
        pipe.execute()
        socks = []
        for _ in range(2):
            s = socket.create_connection(("127.0.0.1", server.port), timeout=60)
            s.sendall(b"REPLCONF capa eof capa psync2\r\n")
            assert s.recv(5) == b"+OK\r\n"
            s.sendall(b"PSYNC ? -1\r\n")
            socks.append(s)
        stuck, good = socks  # `stuck` never reads again
        r = RawReplica.__new__(RawReplica)
        r.sock, r.buf = good, b""
        while not r._line().lstrip(b"\n").startswith(b"+FULLRESYNC"):
            pass
        mark = r._line().lstrip(b"\n")[5:]
        assert len(mark) == 40
        received = 0
        while mark not in r.buf[-80:]:
            received += len(r.buf)
            r.buf = r.buf[-80:]
            received -= len(r.buf)
            r._fill()
        assert received > 39_000_000  # every value arrived
        assert poll(lambda: c.info("replication")["connected_slaves"] == 1, 30)
        stuck.close()
        good.close()
    finally:
        server.stop()


def poll(condition, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("kind", ["redis", "vessel"])
def test_a_replica_asking_during_a_disk_snapshot_shares_it(kind):
    """A replica that asks while another one's snapshot is written to disk attaches to it (Redis's
    "Waiting for end of BGSAVE for SYNC"): one snapshot serves both, and both get every write."""
    args = ("--repl-diskless-sync", "no")
    server = RedisProcess(args=args) if kind == "redis" else VesselProcess(args=args)
    replicas = []
    try:
        c = redis.Redis(port=server.port, decode_responses=True)
        pipe = c.pipeline(transaction=False)
        for i in range(1000):
            pipe.set(f"k{i}", i)
        pipe.execute()
        c.config_set("rdb-key-save-delay", 2000)  # 2 ms per key: the snapshot takes 2 s
        assert c.config_get("rdb-key-save-delay") == {"rdb-key-save-delay": "2000"}
        assert "rdb-key-save-delay" not in c.config_get("rdb-*")  # a hidden setting
        replicas.append(RedisProcess(args=("--replicaof", "127.0.0.1", str(server.port))))
        assert poll(lambda: "wait_bgsave" in str(c.info("replication").get("slave0")))
        c.set("during", "1")
        replicas.append(VesselProcess(args=("--replicaof", f"127.0.0.1 {server.port}")))
        clients = [redis.Redis(port=r.port, decode_responses=True) for r in replicas]
        offset = lambda: c.info("replication")["master_repl_offset"]
        assert poll(lambda: all(r.info("replication").get("slave_repl_offset") == offset()
                                for r in clients), 30)
        assert c.info("persistence")["rdb_saves"] == 1
        assert c.info("stats")["sync_full"] == 2
        for r in clients:
            assert r.dbsize() == 1001 and r.get("during") == "1" and r.get("k999") == "999"
    finally:
        for p in replicas + [server]:
            p.stop()
