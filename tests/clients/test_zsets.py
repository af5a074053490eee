"""Sorted sets with redis-py (Debian's python3-redis), unchanged, against vessel-server: a game
leaderboard (ZINCRBY, ZREVRANGE WITH SCORES, ZREVRANK, ZSCORE, ZCOUNT, ZUNIONSTORE of daily
boards), a delay queue whose due jobs several workers claim (ZRANGEBYSCORE + ZREM, and ZPOPMIN),
each job processed exactly once, and a few geo lookups."""
import random
import threading
import time

import redis


def client(vessel):
    return redis.Redis(port=vessel.port, decode_responses=True)


def pairs(reply):
    """[(member, score)] from a WITHSCORES reply, parsed or flat (redis-py parses some)."""
    if reply and not isinstance(reply[0], (list, tuple)):
        reply = list(zip(reply[0::2], reply[1::2]))
    return [(m, float(s)) for m, s in reply]


def run_threads(threads):
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
        assert not t.is_alive(), "a worker did not finish"


def test_leaderboard(r, vessel):
    rnd = random.Random(7)
    players = [f"player:{i}" for i in range(500)]  # beyond 128 members: a skiplist
    expected = {p: 0 for p in players}
    lock = threading.Lock()

    def game_server(seed):
        c = client(vessel)
        g = random.Random(seed)
        pipe = c.pipeline(transaction=False)
        for _ in range(2000):
            p = g.choice(players)
            points = g.randint(1, 50)
            pipe.zincrby("board", points, p)
            with lock:
                expected[p] += points
        pipe.execute()

    run_threads([threading.Thread(target=game_server, args=(s,)) for s in range(4)])
    ranking = sorted(expected.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    assert r.zcard("board") == len([p for p in players if expected[p] > 0])
    top = r.zrevrange("board", 0, 9, withscores=True)
    assert [(m, int(s)) for m, s in top] == [(m, s) for m, s in ranking[:10]]
    for _ in range(50):
        p = rnd.choice(players)
        if expected[p] == 0:
            continue
        assert r.zscore("board", p) == expected[p]
        rank = r.zrevrank("board", p)
        assert ranking[rank][0] == p
    assert r.zcount("board", 1000, "+inf") == sum(1 for s in expected.values() if s >= 1000)
    around = r.zrevrange("board", 100, 104)
    assert around == [m for m, _ in ranking[100:105]]
    assert r.object("encoding", "board") == "skiplist"

    # Weekly board from daily ones, with weights; a plain set of banned players subtracted.
    r.zadd("day:1", {"a": 10, "b": 20, "c": 5})
    r.zadd("day:2", {"a": 7, "c": 30, "d": 1})
    assert r.zunionstore("week", {"day:1": 1, "day:2": 2}) == 4
    assert r.zrevrange("week", 0, -1, withscores=True) == [
        ("c", 65.0), ("a", 24.0), ("b", 20.0), ("d", 2.0)]
    r.sadd("banned", "c")
    assert pairs(r.zdiff(["week", "banned"], withscores=True)) == [
        ("d", 2.0), ("b", 20.0), ("a", 24.0)]
    assert pairs(r.zinter(["week", "day:2"], aggregate="MIN", withscores=True)) == [
        ("d", 1.0), ("a", 7.0), ("c", 30.0)]


def test_delay_queue(r, vessel):
    jobs = [f"job:{i}" for i in range(3000)]
    now = time.time()
    # Due times spread over the next 1.5 seconds, some already due.
    r.zadd("delayed", {j: now - 1 + (i % 250) / 100.0 for i, j in enumerate(jobs)})
    done = []
    done_lock = threading.Lock()

    def worker(use_pop):
        c = client(vessel)
        while True:
            if use_pop:
                # ZPOPMIN takes the earliest job; put it back if it is not due yet.
                got = c.zpopmin("delayed")
                if not got:
                    return
                job, due = got[0]
                if due > time.time():
                    c.zadd("delayed", {job: due})
                    time.sleep(0.01)
                    continue
            else:
                due_jobs = c.zrangebyscore("delayed", "-inf", time.time(), start=0, num=5)
                if not due_jobs:
                    if c.zcard("delayed") == 0:
                        return
                    time.sleep(0.01)
                    continue
                job = due_jobs[0]
                if c.zrem("delayed", job) != 1:
                    continue  # another worker claimed it first
            with done_lock:
                done.append(job)

    run_threads([threading.Thread(target=worker, args=(i % 2 == 0,)) for i in range(6)])
    assert len(done) == len(jobs), "a job was lost or processed twice"
    assert sorted(done) == sorted(jobs)
    assert r.exists("delayed") == 0


def test_geo_lookups(r, vessel):
    r.geoadd("stores", [13.361389, 38.115556, "palermo", 15.087269, 37.502669, "catania"])
    assert r.geodist("stores", "palermo", "catania", unit="km") == 166.2742
    assert r.geohash("stores", "palermo") == ["sqc8b49rny0"]
    lon, lat = r.geopos("stores", "palermo")[0]
    assert abs(lon - 13.361389) < 1e-5 and abs(lat - 38.115556) < 1e-5
    near = r.geosearch("stores", longitude=15, latitude=37, radius=200, unit="km", withdist=True,
                       sort="ASC")
    assert near == [["catania", 56.4413], ["palermo", 190.4424]]
    assert r.georadiusbymember("stores", "palermo", 100, unit="km") == ["palermo"]
