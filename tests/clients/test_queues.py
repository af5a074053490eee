"""Job queues on lists with redis-py (Debian's python3-redis), unchanged, against vessel-server:
a BLPOP work queue with several workers, and a reliable BLMOVE queue with acknowledgements and
recovery of a crashed worker's job."""
import threading
import time

import redis


def client(vessel):
    return redis.Redis(port=vessel.port, decode_responses=True)


def run_threads(threads):
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
        assert not t.is_alive(), "a worker did not finish"


def test_blpop_work_queue(r, vessel):
    jobs = [f"job-{i}" for i in range(3000)]
    done = []
    done_lock = threading.Lock()
    producer_finished = threading.Event()

    def worker():
        c = client(vessel)
        while True:
            item = c.blpop(["jobs:high", "jobs"], timeout=0.2)
            if item is None:
                if producer_finished.is_set() and c.llen("jobs") == 0 and c.llen("jobs:high") == 0:
                    return
                continue
            queue, job = item
            assert queue in ("jobs", "jobs:high")
            with done_lock:
                done.append(job)

    def producer():
        c = client(vessel)
        for i in range(0, len(jobs), 7):
            batch = jobs[i:i + 7]
            if i % 5 == 0:
                c.rpush("jobs:high", *batch)  # some jobs through the priority queue
            else:
                c.rpush("jobs", *batch)
        producer_finished.set()

    run_threads([threading.Thread(target=worker) for _ in range(6)] +
                [threading.Thread(target=producer)])
    assert len(done) == len(jobs), "a job was lost or processed twice"
    assert sorted(done) == sorted(jobs)
    assert r.exists("jobs", "jobs:high") == 0


def test_blpop_timeout_and_wakeup(r, vessel):
    start = time.monotonic()
    assert r.blpop("empty", timeout=0.2) is None
    assert time.monotonic() - start >= 0.15
    got = []
    waiter = threading.Thread(target=lambda: got.append(client(vessel).brpop("wake", timeout=5)))
    waiter.start()
    deadline = time.monotonic() + 5
    while r.info("clients")["blocked_clients"] != 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    r.lpush("wake", "a", "b")
    waiter.join(timeout=5)
    assert got == [("wake", "a")]
    assert r.lrange("wake", 0, -1) == ["b"]


def test_blmove_reliable_queue(r, vessel):
    jobs = [f"task-{i}" for i in range(500)]
    r.rpush("pending", *jobs)
    done = []
    done_lock = threading.Lock()

    def worker(crash_after=None):
        c = client(vessel)
        handled = 0
        while True:
            job = c.blmove("pending", "processing", 0.2, "LEFT", "RIGHT")
            if job is None:
                return
            if crash_after is not None and handled == crash_after:
                return  # crashed while holding the job: it stays in "processing"
            with done_lock:
                done.append(job)
            assert c.lrem("processing", 1, job) == 1  # acknowledge
            handled += 1

    run_threads([threading.Thread(target=worker, args=(10,))] +
                [threading.Thread(target=worker) for _ in range(4)])
    # The crashed worker's job is still in "processing", never acknowledged.
    stuck = r.lrange("processing", 0, -1)
    assert len(stuck) == 1 and stuck[0] not in done
    assert r.llen("pending") == 0
    # Recovery: a reaper moves unacknowledged jobs back, a healthy worker finishes them.
    while r.lmove("processing", "pending", "RIGHT", "LEFT") is not None:
        pass
    run_threads([threading.Thread(target=worker)])
    assert sorted(done) == sorted(jobs), "every job processed exactly once"
    assert r.exists("pending", "processing") == 0


def test_brpoplpush_queue_and_circular_list(r, vessel):
    r.rpush("q", "a", "b", "c")
    assert r.brpoplpush("q", "work", timeout=1) == "c"
    assert r.rpoplpush("q", "work") == "b"
    assert r.lrange("work", 0, -1) == ["b", "c"]
    # A circular list: every element visited once per turn, nothing lost.
    r.rpush("ring", *[str(i) for i in range(10)])
    seen = [r.lmove("ring", "ring", "LEFT", "RIGHT") for _ in range(10)]
    assert seen == [str(i) for i in range(10)]
    assert r.lrange("ring", 0, -1) == [str(i) for i in range(10)]
    assert r.brpoplpush("nothing", "work", timeout=0.05) is None


def test_list_commands_through_pipelines(r):
    with r.pipeline() as p:
        p.rpush("l", "a", "b", "c").lpush("l", "z").lrange("l", 0, -1).lpos("l", "b")
        p.linsert("l", "before", "b", "a2").lindex("l", 2).lset("l", 0, "Z").lrem("l", 0, "c")
        p.ltrim("l", 0, 2).lpop("l", 2).rpop("l").llen("l")
        assert p.execute() == [3, 4, ["z", "a", "b", "c"], 2, 5, "a2", True, 1, True,
                               ["Z", "a"], "a2", 0]
    assert r.exists("l") == 0
    with r.pipeline(transaction=False) as p:
        p.rpush("m", "1").blpop("m", timeout=1).blpop("m", timeout=0.05)
        assert p.execute() == [1, ("m", "1"), None]
