"""redis-py (Debian's python3-redis), unchanged, against vessel-server."""
import threading

import redis


def test_strings_and_keys(r):
    assert r.set("k", "v") is True
    assert r.get("k") == "v"
    assert r.set("k", "w", nx=True) is None
    assert r.set("k", "w", xx=True, ex=100) is True
    assert 90 <= r.ttl("k") <= 100
    assert r.incr("n") == 1 and r.incrby("n", 10) == 11 and r.decr("n") == 10
    assert r.incrbyfloat("f", 1.5) == 1.5
    assert r.mset({"a": "1", "b": "2"}) is True
    assert r.mget("a", "b", "nokey") == ["1", "2", None]
    assert r.exists("a", "b", "nokey") == 2
    assert r.type("a") == "string"
    assert r.rename("a", "c") is True
    assert r.delete("b", "c") == 2
    assert r.append("s", "abc") == 3 and r.getrange("s", 0, 1) == "ab"
    assert r.expire("s", 10) is True and r.persist("s") is True
    assert r.dbsize() == 4  # k n f s


def test_transaction_pipeline(r):
    # redis-py's default pipeline() is a MULTI/EXEC transaction.
    with r.pipeline() as p:
        p.set("x", 1).incr("x").get("x")
        assert p.execute() == [True, 2, "2"]
    # A runtime error inside EXEC is reported for its command only.
    with r.pipeline() as p:
        p.set("s", "text").incr("s").set("t", "ok")
        results = p.execute(raise_on_error=False)
        assert results[0] is True and isinstance(results[1], redis.ResponseError)
    assert r.get("t") == "ok"


def test_watch_optimistic_locking(r):
    r.set("balance", 100)

    def withdraw(amount):
        with r.pipeline() as p:
            while True:
                try:
                    p.watch("balance")
                    current = int(p.get("balance"))
                    p.multi()
                    p.set("balance", current - amount)
                    p.execute()
                    return
                except redis.WatchError:
                    continue

    threads = [threading.Thread(target=withdraw, args=(1,)) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert r.get("balance") == "80"


def test_plain_pipeline_and_scan_iter(r):
    with r.pipeline(transaction=False) as p:
        for i in range(1000):
            p.set(f"item:{i}", i)
        assert all(p.execute())
    assert sorted(r.scan_iter("item:*", count=100)) == sorted(f"item:{i}" for i in range(1000))
    assert len(r.keys("item:1??")) == 100


def test_connection_commands(r):
    assert r.ping() is True
    assert r.echo("hi") == "hi"
    assert r.client_setname("py") is True
    assert r.client_getname() == "py"
    assert any(c["name"] == "py" for c in r.client_list())
    assert r.config_get("maxmemory") == {"maxmemory": "0"}
    info = r.info()
    assert info["redis_version"] == "7.0.15" and "connected_clients" in info
    assert isinstance(r.time()[0], int)
    assert r.select(1) is True


def test_errors_are_exceptions(r):
    r.set("s", "x")
    try:
        r.incr("s")
    except redis.ResponseError as e:
        assert "not an integer" in str(e)
    else:
        raise AssertionError("INCR on text must fail")
