"""redis-py's pub/sub against vessel and, with the same assertions, a real redis-server: the PubSub
object (listen, get_message, run_in_thread) unchanged, keyspace notifications (including
evictions), and client tracking redirected to a RESP2 subscriber on __redis__:invalidate."""
import threading
import time

import pytest
import redis


@pytest.fixture(params=["vessel", "redis"])
def port(request, vessel, reference):
    return vessel.port if request.param == "vessel" else reference.port


@pytest.fixture
def r(port):
    client = redis.Redis(port=port, decode_responses=True)
    client.flushall()
    yield client
    client.config_set("notify-keyspace-events", "")
    client.config_set("maxmemory", 0)
    client.config_set("maxmemory-policy", "noeviction")
    client.flushall()
    client.close()


def messages(p, n, timeout=5.0):
    """The next n messages of PubSub p (get_message with a timeout)."""
    out = []
    deadline = time.time() + timeout
    while len(out) < n and time.time() < deadline:
        m = p.get_message(timeout=0.1)
        if m is not None:
            out.append(m)
    return out


def test_subscribe_publish_get_message(r):
    p = r.pubsub()
    p.subscribe("news", "sport")
    p.psubscribe("n*")
    assert messages(p, 3) == [
        {"type": "subscribe", "pattern": None, "channel": "news", "data": 1},
        {"type": "subscribe", "pattern": None, "channel": "sport", "data": 2},
        {"type": "psubscribe", "pattern": None, "channel": "n*", "data": 3},
    ]
    assert r.publish("news", "hello") == 2
    assert r.publish("sport", "goal") == 1
    got = messages(p, 3)
    assert {"type": "message", "pattern": None, "channel": "news", "data": "hello"} in got
    assert {"type": "pmessage", "pattern": "n*", "channel": "news", "data": "hello"} in got
    assert got[-1] == {"type": "message", "pattern": None, "channel": "sport", "data": "goal"}
    assert r.pubsub_channels() == ["news", "sport"] or sorted(r.pubsub_channels()) == [
        "news", "sport"]
    assert r.pubsub_numsub("news", "none") == [("news", 1), ("none", 0)]
    assert r.pubsub_numpat() == 1
    p.unsubscribe("news")
    p.punsubscribe()
    assert [m["type"] for m in messages(p, 2)] == ["unsubscribe", "punsubscribe"]
    assert r.publish("news", "gone") == 0
    p.ping()  # a subscribed RESP2 connection: the ["pong", ""] array
    assert messages(p, 1) == [{"type": "pong", "pattern": None, "channel": None, "data": ""}]
    p.close()


def test_listen(r):
    p = r.pubsub(ignore_subscribe_messages=True)
    p.subscribe("feed")
    received = []

    def consume():
        for m in p.listen():
            if m["type"] == "message":
                received.append(m["data"])
                if m["data"] == "stop":
                    return

    t = threading.Thread(target=consume)
    t.start()
    while r.pubsub_numsub("feed")[0][1] == 0:
        time.sleep(0.01)
    for i in range(500):
        r.publish("feed", str(i))
    r.publish("feed", "stop")
    t.join(timeout=10)
    assert received == [str(i) for i in range(500)] + ["stop"]
    p.close()


def test_run_in_thread(r):
    got = []
    done = threading.Event()

    def handler(m):
        got.append((m["channel"], m["data"]))
        if m["data"] == "last":
            done.set()

    p = r.pubsub()
    p.subscribe(**{"a": handler})
    p.psubscribe(**{"b.*": handler})
    worker = p.run_in_thread(sleep_time=0.01)
    while r.pubsub_numpat() == 0 or r.pubsub_numsub("a")[0][1] == 0:
        time.sleep(0.01)
    r.publish("a", "1")
    r.publish("b.x", "2")
    r.publish("c", "nobody")
    r.publish("a", "last")
    assert done.wait(10)
    worker.stop()
    worker.join(timeout=10)
    assert got == [("a", "1"), ("b.x", "2"), ("a", "last")]
    p.close()


def test_keyspace_notifications(r):
    r.config_set("notify-keyspace-events", "KEA")
    assert r.config_get("notify-keyspace-events") == {"notify-keyspace-events": "AKE"}
    r.config_set("notify-keyspace-events", "Kgx")
    p = r.pubsub()
    p.psubscribe("__keyspace@0__:*")
    messages(p, 1)
    r.mset({"a": "1", "b": "2"})
    r.delete("a")
    r.expire("b", 100)
    r.persist("b")
    r.rename("b", "c")
    r.pexpire("c", 10)
    got = [(m["channel"], m["data"]) for m in messages(p, 7)]
    assert got == [("__keyspace@0__:a", "del"), ("__keyspace@0__:b", "expire"),
                   ("__keyspace@0__:b", "persist"), ("__keyspace@0__:b", "rename_from"),
                   ("__keyspace@0__:c", "rename_to"), ("__keyspace@0__:c", "expire"),
                   ("__keyspace@0__:c", "expired")]
    p.close()


def test_eviction_events(r):
    """Each evicted key is announced once, on __keyevent@0__:evicted."""
    r.config_set("notify-keyspace-events", "Ee")
    p = r.pubsub()
    p.subscribe("__keyevent@0__:evicted")
    messages(p, 1)
    r.config_resetstat()
    r.config_set("maxmemory-policy", "allkeys-random")
    r.config_set("maxmemory", r.info("memory")["used_memory"] + 200_000)
    pipe = r.pipeline(transaction=False)
    for i in range(2000):
        pipe.set(f"k{i}", "v" * 1000)
    pipe.execute()
    r.config_set("maxmemory", 0)
    evicted = r.info("stats")["evicted_keys"]
    assert evicted > 0
    got = messages(p, evicted)
    keys = [m["data"] for m in got]
    assert len(keys) == evicted and len(set(keys)) == evicted
    assert not any(r.exists(k) for k in keys)
    assert messages(p, 1, timeout=0.3) == []
    p.close()


def test_tracking_redirect_to_subscriber(r, port):
    sub = redis.Redis(port=port, decode_responses=True)
    p = sub.pubsub()
    p.subscribe("__redis__:invalidate")
    messages(p, 1)
    # The id of the subscribed connection: ask CLIENT LIST for the one in pub/sub mode.
    line = next(l for l in r.execute_command("CLIENT", "LIST").splitlines() if "flags=P" in l)
    target = int(line.split()[0][3:])
    reader = redis.Redis(port=port, decode_responses=True, single_connection_client=True)
    assert reader.execute_command("CLIENT", "TRACKING", "ON", "REDIRECT", target) == "OK"
    assert reader.execute_command("CLIENT", "GETREDIR") == target
    reader.get("cached")
    r.set("cached", "new")
    got = messages(p, 1)
    assert got == [{"type": "message", "pattern": None, "channel": "__redis__:invalidate",
                    "data": ["cached"]}]
    r.flushall()
    assert messages(p, 1) == [{"type": "message", "pattern": None,
                               "channel": "__redis__:invalidate", "data": None}]
    reader.close()
    p.close()
    sub.close()
