"""A master shutting down waits for its lagging replicas, as Redis 7.0's does: SHUTDOWN (and
SIGTERM) pause writes and wait up to shutdown-timeout for every replica to acknowledge the whole
stream; SHUTDOWN NOW does not wait; SHUTDOWN ABORT cancels. The same scenario runs against a
redis-server master and a Vessel master, with a replica of each kind stopped by SIGSTOP."""
import signal
import threading

import pytest
import redis

from conftest import RedisProcess, VesselProcess
from test_replication_restart import in_sync, poll

KINDS = {"redis": RedisProcess, "vessel": VesselProcess}
ERROR = "Errors trying to SHUTDOWN. Check logs."
# A master that waits an hour for its replica exits within a test's time only if it stops waiting
# for a reason: the replica caught up, or NOW.
LONG_WAIT = ("--shutdown-timeout", "3600")


class Pair:
    """A master and one replica, in sync."""

    def __init__(self, master_kind, replica_kind, master_args=()):
        self.master = KINDS[master_kind](args=master_args)
        self.replica = KINDS[replica_kind](
            args=("--replicaof", "127.0.0.1", str(self.master.port)))
        self.m = redis.Redis(port=self.master.port, decode_responses=True)
        self.r = redis.Redis(port=self.replica.port, decode_responses=True)
        assert poll(lambda: in_sync(self.m, self.r))

    def freeze_replica(self):
        self.replica.proc.send_signal(signal.SIGSTOP)

    def thaw_replica(self):
        self.replica.proc.send_signal(signal.SIGCONT)

    def shutdown(self):
        """SHUTDOWN on a connection of its own (redis-py's shutdown() hides the closed link)."""
        return redis.Redis(port=self.master.port).execute_command("SHUTDOWN")

    def shutdown_in_ms(self):
        return self.m.info("server").get("shutdown_in_milliseconds")

    def stop(self):
        self.thaw_replica()
        for p in (self.master, self.replica):
            if p.proc.poll() is None:
                p.proc.kill()
                p.proc.wait(timeout=10)


@pytest.fixture
def pairs():
    made = []

    def make(*args, **kwargs):
        made.append(Pair(*args, **kwargs))
        return made[-1]

    yield make
    for p in made:
        p.stop()


def in_background(fn):
    """Runs fn in a thread; the returned dict gets "result" or "error" when it ends."""
    out = {}

    def run():
        try:
            out["result"] = fn()
        except redis.exceptions.RedisError as e:
            out["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    out["thread"] = t
    return out


@pytest.mark.parametrize("replica_kind", ["redis", "vessel"])
@pytest.mark.parametrize("master_kind", ["redis", "vessel"])
def test_shutdown_waits_until_the_replica_has_every_write(pairs, master_kind, replica_kind):
    p = pairs(master_kind, replica_kind, master_args=LONG_WAIT)
    p.freeze_replica()
    assert p.m.set("last", "write")
    shutdown = in_background(p.shutdown)
    # The master waits (with writes paused) while the replica cannot acknowledge.
    assert poll(lambda: p.shutdown_in_ms() is not None)
    assert p.master.proc.poll() is None
    p.thaw_replica()
    assert p.master.proc.wait(timeout=20) == 0
    shutdown["thread"].join(timeout=10)
    assert "error" in shutdown  # no reply: the connection closes as the server stops
    assert p.r.get("last") == "write"


@pytest.mark.parametrize("master_kind", ["redis", "vessel"])
def test_shutdown_abort_resumes_writes_and_fails_the_waiting_shutdown(pairs, master_kind):
    p = pairs(master_kind, "redis")
    p.freeze_replica()
    p.m.set("before", "1")
    shutdown = in_background(p.shutdown)
    assert poll(lambda: p.shutdown_in_ms() is not None)
    # Writes are paused while the shutdown waits: this one stays unanswered until the abort.
    write = in_background(lambda: redis.Redis(port=p.master.port).set("during", "1"))
    assert not poll(lambda: "result" in write, timeout=0.5)
    assert p.m.get("during") is None

    with pytest.raises(redis.exceptions.ResponseError, match="syntax error"):
        p.m.execute_command("SHUTDOWN", "ABORT", "NOW")
    assert p.m.execute_command("SHUTDOWN", "ABORT") is True  # +OK
    shutdown["thread"].join(timeout=10)
    assert str(shutdown.get("error")) == ERROR
    write["thread"].join(timeout=10)
    assert write.get("result") is True
    assert p.shutdown_in_ms() is None
    assert p.master.proc.poll() is None
    with pytest.raises(redis.exceptions.ResponseError, match="No shutdown in progress."):
        p.m.execute_command("SHUTDOWN", "ABORT")


@pytest.mark.parametrize("master_kind", ["redis", "vessel"])
def test_shutdown_gives_up_on_the_replica_after_shutdown_timeout(pairs, master_kind):
    p = pairs(master_kind, "redis", master_args=("--shutdown-timeout", "1"))
    p.freeze_replica()
    p.m.set("lost", "1")
    in_background(p.shutdown)
    assert p.master.proc.wait(timeout=20) == 0


@pytest.mark.parametrize("master_kind", ["redis", "vessel"])
def test_shutdown_now_does_not_wait(pairs, master_kind):
    p = pairs(master_kind, "redis", master_args=LONG_WAIT)
    p.freeze_replica()
    p.m.set("lost", "1")
    with pytest.raises(redis.exceptions.ConnectionError):
        p.m.execute_command("SHUTDOWN", "NOW")
    assert p.master.proc.wait(timeout=20) == 0


@pytest.mark.parametrize("master_kind", ["redis", "vessel"])
def test_sigterm_waits_for_the_replica_too(pairs, master_kind):
    p = pairs(master_kind, "vessel", master_args=LONG_WAIT)
    p.freeze_replica()
    assert p.m.set("last", "write")
    p.master.proc.send_signal(signal.SIGTERM)
    assert poll(lambda: p.shutdown_in_ms() is not None)
    p.thaw_replica()
    assert p.master.proc.wait(timeout=20) == 0
    assert poll(lambda: p.r.get("last") == "write")


@pytest.mark.parametrize("master_kind", ["redis", "vessel"])
def test_shutdown_syntax(pairs, master_kind):
    p = pairs(master_kind, "redis")
    for args in (("SAVE", "NOSAVE"), ("NOSAVE", "SAVE"), ("ABORT", "FORCE"), ("NOW", "LATER")):
        with pytest.raises(redis.exceptions.ResponseError, match="syntax error"):
            p.m.execute_command("SHUTDOWN", *args)
    assert p.master.proc.poll() is None
