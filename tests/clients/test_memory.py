"""Memory a client can make a real vessel-server process commit (its resident set, with jemalloc),
beside a reference redis-server: idle connections and announced bulk lengths."""
import socket
import subprocess
import time

import pytest
import redis

from conftest import VesselProcess, free_port, wait_until_serving


def rss(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


class Reference:
    """A redis-server on a free port with its own directory."""

    def __init__(self, tmp_path, *args):
        self.port = free_port()
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--save", "", "--appendonly", "no",
             "--dir", str(tmp_path), "--logfile", "/dev/null", *args])
        wait_until_serving(self, "redis-server")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


def servers(tmp_path, *args):
    vdir, rdir = tmp_path / "vessel", tmp_path / "redis"
    vdir.mkdir()
    rdir.mkdir()
    return [("vessel", VesselProcess(threads=1, args=["--dir", str(vdir), *args])),
            ("redis", Reference(rdir, *args))]


def ping(s):
    s.sendall(b"*1\r\n$4\r\nPING\r\n")
    assert s.recv(64) == b"+PONG\r\n"


def queued(local_port, remote_port, tx):
    """Bytes queued in the kernel on the loopback socket local_port -> remote_port: sent and not
    taken by the peer (tx), or received and not read by its owner; None when there is none."""
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(name) as f:
            next(f)
            for line in f:
                fields = line.split()
                local, remote, queues = fields[1], fields[2], fields[4]
                if (int(local.rsplit(":", 1)[1], 16) == local_port
                        and int(remote.rsplit(":", 1)[1], 16) == remote_port):
                    txq, rxq = queues.split(":")
                    return int(txq if tx else rxq, 16)
    return None


def wait_read_by_server(server_port, sock):
    """Polls until the server has read all that was sent on sock."""
    client_port = sock.getsockname()[1]
    deadline = time.time() + 10
    while time.time() < deadline:
        if queued(client_port, server_port, True) == 0 and \
                queued(server_port, client_port, False) == 0:
            return
        time.sleep(0.01)
    pytest.fail("the server did not read what was sent")


def test_idle_connections_hold_no_read_buffer(tmp_path):
    """2,000 connections that ran a command and went idle: each cost vessel about 22 KB of
    resident memory (a 16 KB read buffer each) and now holds no read buffer."""
    n = 2000
    cost = {}
    for name, server in servers(tmp_path, "--maxclients", "10000"):
        try:
            warm = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(20)]
            for s in warm:
                ping(s)
            before = rss(server.proc.pid)
            conns = []
            for _ in range(n):
                s = socket.create_connection(("127.0.0.1", server.port))
                ping(s)
                conns.append(s)
            cost[name] = (rss(server.proc.pid) - before) / n
            for s in conns + warm:
                s.close()
        finally:
            server.stop()
    assert cost["vessel"] < 8192, cost


def test_announced_bulk_commits_only_what_arrives(tmp_path):
    """Four connections announce a 512 MB value and send 40 KB of it: vessel's resident memory
    grew by 512 MB each (3.7 GB with eight); now, like Redis's, by a few buffers at most, and
    other clients are served as before."""
    for name, server in servers(tmp_path):
        try:
            before = rss(server.proc.pid)
            senders = []
            for _ in range(4):
                s = socket.create_connection(("127.0.0.1", server.port))
                s.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$536870000\r\n" + b"x" * 40000)
                wait_read_by_server(server.port, s)
                senders.append(s)
            grown = rss(server.proc.pid) - before
            assert grown < 64 << 20, (name, grown)
            r = redis.Redis(port=server.port, socket_timeout=5)
            assert r.ping()
            assert r.exists("k") == 0
            for s in senders:
                s.close()
        finally:
            server.stop()
