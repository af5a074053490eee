"""Streams with redis-py (Debian's python3-redis), unchanged, against vessel-server: an event log
read in pages (XADD with MAXLEN ~, XRANGE / XREVRANGE with COUNT and exclusive bounds), a work
queue consumed by a consumer group on several threads with blocking XREADGROUP, XACK, and
XAUTOCLAIM of what a crashed worker left pending: every job is processed, by one worker (or
again by the reaper, which claims what stays pending too long)."""
import threading
import time

import redis


def client(vessel):
    return redis.Redis(port=vessel.port, decode_responses=True)


def test_event_log_pages(r):
    ids = [r.xadd("events", {"type": "click", "n": str(i)}, maxlen=1000, approximate=True)
           for i in range(1500)]
    assert 1000 <= r.xlen("events") <= 1500
    first = r.xrange("events", count=1)[0]
    assert first[0] in ids
    page, seen, cursor = None, 0, "-"
    while True:
        page = r.xrange("events", min=cursor, count=100)
        if not page:
            break
        seen += len(page)
        cursor = "(" + page[-1][0]
    assert seen == r.xlen("events")
    last = r.xrevrange("events", count=1)[0]
    assert last == (ids[-1], {"type": "click", "n": "1499"})
    info = r.xinfo_stream("events")
    assert info["length"] == seen and info["last-generated-id"] == ids[-1]


def test_work_queue_with_group(r, vessel):
    r.xgroup_create("jobs", "workers", id="$", mkstream=True)
    total, done, lock = 600, {}, threading.Lock()  # job -> the names that handled it

    def worker(name, crash_after=None):
        c = client(vessel)
        handled = 0
        while True:
            with lock:
                if len(done) >= total:
                    return
            reply = c.xreadgroup("workers", name, {"jobs": ">"}, count=5, block=100)
            for _, entries in reply or []:
                for entry_id, fields in entries:
                    if crash_after is not None and handled >= crash_after:
                        return  # dies with entries pending
                    with lock:
                        done.setdefault(fields["job"], []).append(name)
                    c.xack("jobs", "workers", entry_id)
                    handled += 1

    def reaper():
        c = client(vessel)
        while True:
            with lock:
                if len(done) >= total:
                    return
            _, claimed, _ = c.xautoclaim("jobs", "workers", "reaper", min_idle_time=1000,
                                         start_id="0-0", count=10)
            for entry_id, fields in claimed:
                with lock:
                    done.setdefault(fields["job"], []).append("reaper")
                c.xack("jobs", "workers", entry_id)
            time.sleep(0.05)

    threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(3)]
    threads.append(threading.Thread(target=worker, args=("crashy", 7)))
    threads.append(threading.Thread(target=reaper))
    for t in threads:
        t.start()
    producer = client(vessel)
    for i in range(total):
        producer.xadd("jobs", {"job": str(i)})
    for t in threads:
        t.join(timeout=60)
        assert not t.is_alive(), "a worker did not finish"
    assert sorted(done, key=int) == [str(i) for i in range(total)]
    for job, names in done.items():  # the group delivers a job to one worker only
        assert len([n for n in names if n != "reaper"]) <= 1, (job, names)
    assert r.xpending("jobs", "workers")["pending"] == 0
    groups = r.xinfo_groups("jobs")
    assert groups[0]["name"] == "workers" and groups[0]["lag"] == 0
