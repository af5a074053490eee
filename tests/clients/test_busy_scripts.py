"""A script that does not end, beside everything that needs the whole server: no connection
ever stops being answered (BUSY past busy-reply-threshold, as Redis answers), SCRIPT KILL and
SHUTDOWN NOSAVE work from any connection, with one worker or several, and the work that met the
script (a background save of the save rules, FLUSHALL, a transaction, ...) runs once it ends.
Transactions that meet a busy script behave as Redis 7.0's, checked against a redis-server."""
import socket
import threading
import time

import pytest
import redis

from conftest import RedisProcess, VesselProcess

LOOP = "while true do end"
BUSY = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."


def start_loop(port, script=LOOP, keys=()):
    """Runs a script that loops on its own connection; returns (thread, result list)."""
    out = []

    def run():
        try:
            out.append(redis.Redis(port=port, decode_responses=True).eval(
                script, len(keys), *keys))
        except redis.exceptions.RedisError as e:
            out.append(e)

    t = threading.Thread(target=run)
    t.start()
    return t, out


def raw(port, *commands, timeout=5.0):
    """Sends RESP commands on a new connection, returns the raw reply bytes of each (one line
    each: these tests only read simple replies)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    replies = []
    try:
        f = s.makefile("rb")
        for cmd in commands:
            s.sendall(b"".join([b"*%d\r\n" % len(cmd)] +
                               [b"$%d\r\n%s\r\n" % (len(a), a.encode()) for a in cmd]))
            replies.append(f.readline().decode().rstrip("\r\n"))
    finally:
        s.close()
    return replies


def wait_busy(port, deadline_s=10.0):
    """Waits until a fresh connection is answered BUSY (the script passed the threshold)."""
    end = time.time() + deadline_s
    while time.time() < end:
        if raw(port, ["PING"])[0].startswith("-BUSY"):
            return
        time.sleep(0.02)
    raise AssertionError("the script never became busy")


def every_connection_answers(port, n=8):
    """n new connections (the kernel spreads them over the workers) each get an answer to PING
    within the timeout: BUSY while the script runs."""
    for _ in range(n):
        assert raw(port, ["PING"], timeout=5.0)[0] in ("-" + BUSY, "+PONG")


@pytest.fixture(params=[1, 2], ids=["one-worker", "two-workers"])
def server(request, tmp_path):
    s = VesselProcess(threads=request.param,
                      args=("--dir", str(tmp_path), "--busy-reply-threshold", "200",
                            "--enable-debug-command", "yes"))
    yield s
    s.stop()


def test_every_connection_is_answered_and_script_kill_works_anywhere(server):
    t, out = start_loop(server.port)
    wait_busy(server.port)
    every_connection_answers(server.port)
    # MULTI is allowed while busy; a queued command is refused, and so is EXEC (as in Redis).
    assert raw(server.port, ["MULTI"], ["SET", "a", "1"], ["EXEC"]) == [
        "+OK", "-" + BUSY, "-EXECABORT Transaction discarded because of: " + BUSY]
    assert raw(server.port, ["SCRIPT", "KILL"]) == ["+OK"]
    t.join(timeout=10)
    assert not t.is_alive()
    assert str(out[0]).startswith("Script killed by user with SCRIPT KILL")
    assert raw(server.port, ["PING"]) == ["+PONG"]


@pytest.mark.parametrize("op", [
    ["FLUSHALL"], ["FLUSHDB"], ["SWAPDB", "0", "1"], ["BGSAVE"], ["BGREWRITEAOF"], ["SAVE"],
    ["KEYS", "*"], ["SCAN", "0"], ["RANDOMKEY"], ["DEBUG", "DIGEST"],
    ["EVAL", "return redis.call('get', 'undeclared')", "0"],
    ["SET", "k", "v"], ["WATCH", "k"], ["CONFIG", "SET", "appendonly", "yes"],
    ["CONFIG", "SET", "maxmemory", "0"], ["CONFIG", "SET", "maxmemory-policy", "noeviction"],
    ["ACL", "SETUSER", "someone", "on", "+@all"], ["ACL", "DELUSER", "nobody"],
    ["FUNCTION", "FLUSH"], ["SCRIPT", "FLUSH"], ["CLIENT", "PAUSE", "10"], ["DEBUG", "RELOAD"],
    ["MOVE", "k", "1"], ["COPY", "k", "k2", "DB", "1"], ["DEBUG", "SLEEP", "0"],
])
def test_runaway_script_beside_whole_keyspace_work(server, op):
    c = redis.Redis(port=server.port, decode_responses=True)
    c.set("k", "1")
    # The operation meets the script before the threshold (it waits, without blocking its
    # worker) or after it (BUSY); either way everyone is answered and nothing hangs.
    t, out = start_loop(server.port, keys=("k",))
    time.sleep(0.05)
    result = []
    waiter = threading.Thread(target=lambda: result.append(raw(server.port, op, timeout=30.0)))
    waiter.start()
    wait_busy(server.port)
    every_connection_answers(server.port)
    assert raw(server.port, ["SCRIPT", "KILL"]) == ["+OK"]
    t.join(timeout=10)
    waiter.join(timeout=30)
    assert not t.is_alive() and not waiter.is_alive()
    assert result and result[0][0], result
    assert raw(server.port, ["PING"]) == ["+PONG"]


def test_save_rules_with_a_runaway_script(tmp_path):
    for threads in (1, 2):
        s = VesselProcess(threads=threads, args=("--dir", str(tmp_path), "--save", "1 1",
                                                 "--busy-reply-threshold", "200"))
        try:
            c = redis.Redis(port=s.port, decode_responses=True)
            c.set("a", "1")
            t, out = start_loop(s.port)
            time.sleep(2.5)  # the save rule's second passes while the script runs
            every_connection_answers(s.port)
            assert raw(s.port, ["SCRIPT", "KILL"]) == ["+OK"]
            t.join(timeout=10)
            assert not t.is_alive()
            # The background save that waited for the script runs now.
            end = time.time() + 10
            while c.info("persistence")["rdb_changes_since_last_save"] != 0:
                assert time.time() < end, "the save never ran"
                time.sleep(0.05)
        finally:
            s.stop()


def test_shutdown_nosave_from_any_connection(tmp_path):
    for threads in (1, 2):
        s = VesselProcess(threads=threads, args=("--dir", str(tmp_path),
                                                 "--busy-reply-threshold", "200"))
        try:
            t, out = start_loop(s.port, "redis.call('set', 'x', 1) " + LOOP)
            wait_busy(s.port)
            assert raw(s.port, ["SCRIPT", "KILL"])[0].startswith("-UNKILLABLE")
            assert raw(s.port, ["SHUTDOWN"]) == ["-" + BUSY]
            try:
                raw(s.port, ["SHUTDOWN", "NOSAVE"])
            except (ConnectionError, OSError):
                pass
            s.proc.wait(timeout=10)
            t.join(timeout=10)
            assert not t.is_alive()
        finally:
            s.stop()


@pytest.fixture
def pair(tmp_path):
    """vessel (two workers) and redis-server, both with a short busy threshold."""
    v = VesselProcess(threads=2, args=("--dir", str(tmp_path), "--busy-reply-threshold", "200"))
    r = RedisProcess()
    redis.Redis(port=r.port).config_set("busy-reply-threshold", 200)
    yield v, r
    v.stop()
    r.stop()


def test_transactions_meet_a_busy_script_as_in_redis(pair):
    results = []
    for s in pair:
        # A transaction opened before the script: EXEC while busy discards it with the error.
        early = socket.create_connection(("127.0.0.1", s.port), timeout=5)
        f = early.makefile("rb")
        early.sendall(b"*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$1\r\nt\r\n$1\r\n1\r\n")
        got = [f.readline(), f.readline()]
        t, out = start_loop(s.port)
        wait_busy(s.port)
        early.sendall(b"*1\r\n$4\r\nEXEC\r\n")
        got.append(f.readline())
        early.sendall(b"*1\r\n$4\r\nEXEC\r\n")  # out of MULTI now
        got.append(f.readline())
        # One opened while busy: MULTI is accepted, a queued command is refused, EXEC aborts.
        got += raw(s.port, ["MULTI"], ["GET", "t"], ["EXEC"])
        assert raw(s.port, ["SCRIPT", "KILL"]) == ["+OK"]
        t.join(timeout=10)
        got.append(redis.Redis(port=s.port).get("t"))  # no half of a transaction ran
        early.close()
        results.append([g.decode().rstrip("\r\n") if isinstance(g, bytes) else g for g in got])
    assert results[0] == results[1], results
    assert results[0][2].startswith("-EXECABORT Transaction discarded because of: BUSY")


def test_scripts_over_maxmemory_as_in_redis(pair):
    cases = [
        ("return redis.call('set', 'a', 'b')", 0),
        ("redis.call('get', 'x') return redis.call('set', 'a', 'b')", 0),
        ("redis.call('del', 'x') return redis.call('set', 'a', 'b')", 0),
        ("#!lua\nreturn redis.call('set', 'a', 'b')", 0),
        ("#!lua flags=allow-oom\nreturn redis.call('set', 'a', 'b')", 0),
        ("#!lua flags=no-writes\nreturn redis.call('get', 'a')", 0),
        ("return redis.call('get', 'a')", 0),
    ]
    results = []
    for s in pair:
        c = redis.Redis(port=s.port, decode_responses=True)
        c.config_set("maxmemory-policy", "noeviction")
        c.function_load("#!lua name=oom\n"
                        "redis.register_function('w', function() return redis.call('set', 'f', 1) end)\n"
                        "redis.register_function{function_name='ok', flags={'allow-oom'}, "
                        "callback=function() return redis.call('set', 'f', 2) end}", replace=True)
        c.config_set("maxmemory", 1)
        out = []
        for script, n in cases:
            try:
                out.append(c.eval(script, n))
            except redis.exceptions.ResponseError as e:
                out.append("error: " + str(e))
        for fn in ("w", "ok"):
            try:
                out.append(c.fcall(fn, 0))
            except redis.exceptions.ResponseError as e:
                out.append("error: " + str(e))
        c.config_set("maxmemory", 0)
        results.append(out)
    assert results[0] == results[1], results
    assert results[0][0].startswith("error: OOM")


def read_reply(f):
    """One RESP2 reply from a socket file, as Python values."""
    line = f.readline().decode().rstrip("\r\n")
    kind, rest = line[0], line[1:]
    if kind in "+-":
        return line
    if kind == ":":
        return int(rest)
    if kind == "$":
        n = int(rest)
        return None if n < 0 else f.read(n + 2)[:-2].decode()
    if kind == "*":
        n = int(rest)
        return None if n < 0 else [read_reply(f) for _ in range(n)]
    raise AssertionError(line)


def test_tracking_remembers_the_keys_of_scripts_that_read(pair):
    results = []
    for s in pair:
        redis.Redis(port=s.port).flushall()
        sub = socket.create_connection(("127.0.0.1", s.port), timeout=5)
        f = sub.makefile("rb")
        sub.sendall(b"*2\r\n$6\r\nCLIENT\r\n$2\r\nID\r\n")
        sub_id = read_reply(f)
        sub.sendall(b"*2\r\n$9\r\nSUBSCRIBE\r\n$20\r\n__redis__:invalidate\r\n")
        read_reply(f)
        reader = redis.Redis(port=s.port, decode_responses=True, single_connection_client=True)
        reader.execute_command("CLIENT", "TRACKING", "on", "REDIRECT", sub_id)
        writer = redis.Redis(port=s.port, decode_responses=True)
        writer.mset({"k1": 1, "k2": 1})
        reader.eval("redis.call('set', 'k3', 'x')", 2, "k1", "k2")  # no read: nothing tracked
        writer.mset({"k1": 2, "k2": 2})
        reader.eval("redis.call('get', 'k3')", 2, "k1", "k2")  # a read: the declared keys
        writer.mset({"k1": 3, "k2": 3})
        got = []
        while len(got) < 2:
            msg = read_reply(f)  # ["message", "__redis__:invalidate", [keys]]
            got += msg[2]
        results.append(sorted(got))
        sub.close()
    assert results[0] == results[1] == ["k1", "k2"], results
