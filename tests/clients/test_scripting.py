"""Scripting with redis-py (Debian's python3-redis), unchanged, against vessel-server and a
reference redis-server: register_script / Script objects (EVALSHA with the NOSCRIPT fallback),
FUNCTION libraries and FCALL, scripts in pipelines and transactions, and SHUTDOWN NOSAVE while a
script is stuck."""
import threading
import time

import pytest
import redis

from conftest import VesselProcess


@pytest.fixture
def both(vessel, reference):
    clients = [redis.Redis(port=s.port, decode_responses=True) for s in (vessel, reference)]
    for c in clients:
        c.flushall()
        c.script_flush()
        c.function_flush()
    yield clients
    for c in clients:
        c.close()


def test_register_script_and_script_objects(both):
    results = []
    for c in both:
        incr_by = c.register_script(
            "local v = redis.call('incrby', KEYS[1], ARGV[1]) "
            "redis.call('expire', KEYS[1], ARGV[2]) return v")
        out = [incr_by(keys=["counter"], args=[5, 100]), incr_by(keys=["counter"], args=[2, 100])]
        # After SCRIPT FLUSH the Script object reloads itself on NOSCRIPT.
        c.script_flush()
        out.append(incr_by(keys=["counter"], args=[1, 100]))
        out.append(c.script_exists(incr_by.sha))
        out.append(c.ttl("counter") > 0)
        # A Script in a pipeline (redis-py loads it first).
        pipe = c.pipeline()
        incr_by(keys=["counter"], args=[10, 100], client=pipe)
        pipe.get("counter")
        out.append(pipe.execute())
        results.append(out)
    assert results[0] == results[1]
    assert results[0][:3] == [5, 7, 8]


def test_eval_in_transaction_and_errors(both):
    results = []
    for c in both:
        out = []
        pipe = c.pipeline(transaction=True)
        pipe.eval("return redis.call('set', KEYS[1], ARGV[1])", 1, "k", "v")
        pipe.eval("return redis.call('get', KEYS[1])", 1, "k")
        out.append(pipe.execute())
        with pytest.raises(redis.exceptions.ResponseError) as e:
            c.eval("return redis.call('incr', KEYS[1])", 1, "k")
        out.append(str(e.value))
        with pytest.raises(redis.exceptions.NoScriptError):
            c.evalsha("0" * 40, 0)
        out.append(c.eval("return {1, 'two', {3}}", 0))
        out.append(c.eval_ro("return redis.call('get', KEYS[1])", 1, "k"))
        results.append(out)
    assert results[0] == results[1]


def test_functions_with_redis_py(both):
    code = ("#!lua name=counters\n"
            "redis.register_function('bump', function(keys, args) "
            "return redis.call('incrby', keys[1], args[1]) end)\n"
            "redis.register_function{function_name='peek', flags={'no-writes'}, "
            "callback=function(keys) return redis.call('get', keys[1]) end}\n")
    results = []
    for c in both:
        out = [c.function_load(code), c.fcall("bump", 1, "n", 3), c.fcall_ro("peek", 1, "n")]
        lib = c.function_list()[0]  # RESP2: a flat list of fields and values
        out.append(sorted(f[1] for f in lib[lib.index("functions") + 1]))
        dump = c.function_dump()
        c.function_flush()
        out.append(c.function_restore(dump))
        out.append(c.fcall("bump", 1, "n", 1))
        results.append(out)
    assert results[0] == results[1]
    # A payload made by one server restores on the other.
    v, r = both
    assert v.function_restore(r.function_dump(), "REPLACE")
    assert r.function_restore(v.function_dump(), "REPLACE")


def test_shutdown_nosave_stops_a_stuck_script():
    server = VesselProcess(threads=2)
    try:
        c = redis.Redis(port=server.port, decode_responses=True)
        c.config_set("busy-reply-threshold", 100)

        def spin():
            try:
                redis.Redis(port=server.port).eval(
                    "redis.call('set', 'x', 1) while true do end", 0)
            except redis.exceptions.RedisError:
                pass  # killed by SHUTDOWN NOSAVE, or the connection closed

        t = threading.Thread(target=spin)
        t.start()
        time.sleep(0.5)
        # The script wrote: it cannot be killed; plain SHUTDOWN is refused; NOSAVE stops it all.
        for _ in range(8):  # a connection on another worker than the script's answers
            probe = redis.Redis(port=server.port, socket_timeout=1, decode_responses=True)
            try:
                with pytest.raises(redis.exceptions.ResponseError, match="UNKILLABLE"):
                    probe.script_kill()
                break
            except redis.exceptions.TimeoutError:
                continue
        with pytest.raises(redis.exceptions.ResponseError, match="BUSY"):
            probe.shutdown()
        try:
            probe.shutdown(nosave=True)
        except redis.exceptions.ConnectionError:
            pass
        server.proc.wait(timeout=10)
        t.join(timeout=10)
        assert not t.is_alive()
    finally:
        server.stop()


def test_sigterm_stops_a_server_with_a_looping_script():
    server = VesselProcess(threads=2)
    t = threading.Thread(target=lambda: _swallow(lambda: redis.Redis(port=server.port).eval(
        "while true do end", 0)))
    t.start()
    time.sleep(0.3)
    server.proc.terminate()
    assert server.proc.wait(timeout=10) == 0
    t.join(timeout=10)


def _swallow(fn):
    try:
        fn()
    except redis.exceptions.RedisError:
        pass
