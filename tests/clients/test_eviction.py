"""maxmemory and its eviction policies, run against vessel and, with the same assertions, against
a real redis-server: memory stays near the limit, each policy picks the keys Redis would (only
keys with an expiry for volatile-*, rarely the recently or frequently used ones for LRU/LFU),
and noeviction refuses writes with Redis's error. Eviction is approximate in both servers (it
samples keys), so the assertions are statistical with wide margins."""
import time

import pytest
import redis

VALUE = "v" * 1000
OOM = "OOM command not allowed when used memory > 'maxmemory'."


@pytest.fixture(params=["vessel", "redis"])
def server(request, vessel, reference):
    port = vessel.port if request.param == "vessel" else reference.port
    client = redis.Redis(port=port, decode_responses=True)
    client.config_set("maxmemory", 0)
    client.config_set("maxmemory-policy", "noeviction")
    client.flushall()
    client.config_resetstat()
    yield client
    client.config_set("maxmemory", 0)
    client.config_set("maxmemory-policy", "noeviction")
    client.flushall()
    client.close()


def used(client):
    return client.info("memory")["used_memory"]


def limit_above_current(client, extra):
    """Sets maxmemory to the current usage plus `extra` bytes."""
    client.config_set("maxmemory", used(client) + extra)


def write(client, prefix, n, ex=None):
    """SETs n keys of 1 KB; returns the errors of the refused writes."""
    pipe = client.pipeline(transaction=False)
    for i in range(n):
        pipe.set(f"{prefix}:{i}", VALUE, ex=ex)
    return [str(r) for r in pipe.execute(raise_on_error=False) if isinstance(r, Exception)]


def surviving(client, prefix, n):
    pipe = client.pipeline(transaction=False)
    for i in range(n):
        pipe.exists(f"{prefix}:{i}")
    return sum(pipe.execute())


def test_policies_are_configurable(server):
    for policy in ["volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
                   "allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"]:
        server.config_set("maxmemory-policy", policy)
        assert server.config_get("maxmemory-policy") == {"maxmemory-policy": policy}
        assert server.info("memory")["maxmemory_policy"] == policy
    with pytest.raises(redis.ResponseError, match="must be one of the following: volatile-lru"):
        server.config_set("maxmemory-policy", "lru")
    server.config_set("maxmemory-samples", 10)
    assert server.config_get("maxmemory-samples") == {"maxmemory-samples": "10"}
    server.config_set("maxmemory-samples", 5)


def test_noeviction_refuses_writes_and_serves_reads(server):
    write(server, "base", 100)
    limit_above_current(server, 1 << 20)
    refused = write(server, "more", 3000)
    assert refused and set(refused) == {OOM}
    assert server.get("base:0") == VALUE  # reads and deletes still work
    assert server.delete("base:0") == 1
    assert server.info("stats")["evicted_keys"] == 0


@pytest.mark.parametrize("policy", ["allkeys-lru", "allkeys-lfu", "allkeys-random"])
def test_allkeys_policies_keep_memory_near_the_limit(server, policy):
    server.config_set("maxmemory-policy", policy)
    limit_above_current(server, 2 << 20)
    limit = int(server.config_get("maxmemory")["maxmemory"])
    assert write(server, "k", 8000) == []  # nothing refused: keys are evicted instead
    assert server.info("stats")["evicted_keys"] > 0
    assert server.dbsize() < 8000
    assert used(server) < limit * 1.1


@pytest.mark.parametrize("policy", ["volatile-lru", "volatile-lfu", "volatile-random",
                                    "volatile-ttl"])
def test_volatile_policies_evict_only_keys_with_an_expiry(server, policy):
    server.config_set("maxmemory-policy", policy)
    write(server, "keep", 1000)
    limit_above_current(server, 2 << 20)
    assert write(server, "temp", 4000, ex=3600) == []
    assert server.info("stats")["evicted_keys"] > 0
    assert surviving(server, "keep", 1000) == 1000
    # With no key left that has an expiry, nothing can be evicted: writes are refused.
    server.delete(*[f"temp:{i}" for i in range(4000)])
    refused = write(server, "fill", 4000)
    assert refused and set(refused) == {OOM}
    assert surviving(server, "keep", 1000) == 1000


def test_volatile_ttl_evicts_the_soonest_expiry_first(server):
    server.config_set("maxmemory-policy", "volatile-ttl")
    limit_above_current(server, 2 << 20)
    pipe = server.pipeline(transaction=False)
    for i in range(4000):
        pipe.set(f"t:{i}", VALUE, ex=10000 + i)  # later keys expire later
    pipe.execute()
    early = surviving(server, "t", 1000)
    late = sum(server.exists(f"t:{i}") for i in range(3000, 4000))
    assert late > 900 and early < 300, (early, late)


def test_lru_keeps_recently_used_keys(server):
    server.config_set("maxmemory-policy", "allkeys-lru")
    write(server, "old", 3000)
    time.sleep(2.1)  # the LRU clock has one-second resolution in both servers
    for i in range(0, 3000, 3):
        server.get(f"old:{i}")  # a third of the old keys is used again
    limit_above_current(server, 1 << 20)
    write(server, "new", 2000)
    used_again = sum(server.exists(f"old:{i}") for i in range(0, 3000, 3))
    untouched = sum(server.exists(f"old:{i}") for i in range(3000) if i % 3 != 0)
    evicted = server.info("stats")["evicted_keys"]
    assert evicted > 500
    assert used_again > 900, used_again
    assert 2000 - untouched > 0.8 * evicted, (untouched, evicted)  # mostly the idle keys


def test_lfu_keeps_frequently_used_keys(server):
    server.config_set("maxmemory-policy", "allkeys-lfu")
    write(server, "k", 3000)
    pipe = server.pipeline(transaction=False)
    for _ in range(20):
        for i in range(0, 3000, 3):
            pipe.get(f"k:{i}")
    pipe.execute()
    limit_above_current(server, 1 << 20)
    write(server, "new", 2000)
    hot = sum(server.exists(f"k:{i}") for i in range(0, 3000, 3))
    assert hot > 900, hot
    survivor = next(f"k:{i}" for i in range(0, 3000, 3) if server.exists(f"k:{i}"))
    assert server.object("freq", survivor) > 5  # new keys start at 5 in both servers


def test_idle_time_follows_redis_access_rules(server):
    server.set("read", "x")
    server.set("probed", "x")
    server.set("touched", "x")
    server.set("renamed", "x")
    time.sleep(2.1)
    server.get("read")
    server.ttl("probed")
    server.type("probed")
    server.exists("probed")  # TTL, TYPE and EXISTS do not count as accesses
    server.touch("touched")
    server.rename("renamed", "renamed2")  # an access too
    assert server.object("idletime", "read") < 2
    assert server.object("idletime", "probed") >= 2
    assert server.object("idletime", "touched") < 2
    assert server.object("idletime", "renamed2") < 2
