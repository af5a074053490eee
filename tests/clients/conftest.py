"""Starts the built vessel-server (VESSEL_SERVER), and a reference redis-server where a test asks
for one, on free ports for the client tests."""
import os
import socket
import subprocess
import tempfile
import time

import pytest
import redis


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_serving(server, name):
    deadline = time.time() + 10
    while True:
        try:
            if redis.Redis(port=server.port, socket_timeout=1).ping():
                return
        except redis.exceptions.ConnectionError:
            if server.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"{name} did not start")
            time.sleep(0.02)


class VesselProcess:
    def __init__(self, threads=2, args=(), port=None):
        binary = os.environ.get("VESSEL_SERVER")
        if not binary or not os.path.exists(binary):
            raise RuntimeError("VESSEL_SERVER must point at the built vessel-server")
        self.port = port or free_port()
        # Every server gets a directory of its own: nothing one leaves behind reaches another.
        own_dir = () if "--dir" in args else ("--dir", tempfile.mkdtemp(prefix="vessel-test-"))
        # A full synchronization starts at once, as Redis's own tests set it (`args` may differ).
        self.proc = subprocess.Popen(
            [binary, "--save", "", "--repl-diskless-sync-delay", "0", *own_dir, *args, "--port", str(self.port), "--threads",
             str(threads), "--log-level", "warn"])
        wait_until_serving(self, "vessel-server")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            # A master waits up to shutdown-timeout (10 s) for a lagging replica, then saves.
            self.proc.wait(timeout=30)


@pytest.fixture(scope="session")
def vessel():
    server = VesselProcess()
    yield server
    server.stop()
    assert server.proc.returncode == 0, "vessel-server did not exit cleanly on SIGTERM"


@pytest.fixture
def r(vessel):
    client = redis.Redis(port=vessel.port, decode_responses=True)
    client.flushall()
    yield client
    client.close()


class RedisProcess:
    """A reference redis-server (Debian package) on a free port, without persistence; `args` are
    more of its options (e.g. "--replicaof", host, port)."""

    def __init__(self, args=(), port=None):
        self.port = port or free_port()
        own_dir = () if "--dir" in args else ("--dir", tempfile.mkdtemp(prefix="redis-test-"))
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--save", "", "--appendonly", "no",
             "--logfile", "/dev/null", *own_dir, *args])
        wait_until_serving(self, "redis-server")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            # A master waits up to shutdown-timeout (10 s) for a lagging replica, then saves.
            self.proc.wait(timeout=30)


@pytest.fixture(scope="session")
def reference():
    server = RedisProcess()
    yield server
    server.stop()
