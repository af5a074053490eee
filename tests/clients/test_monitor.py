"""MONITOR: the same lines as Redis for the same commands (time stamp and client port aside),
commands of clients on every worker, admin commands hidden."""
import re
import socket

import redis

LINE = re.compile(r'^\d+\.\d{6} \[(\d+) (127\.0\.0\.1):\d+\] (.*)$')


def monitored(port, actions):
    """Runs actions(client) while a MONITOR connection records; returns (db, args) per line."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(b"MONITOR\r\n")
    buf = b""
    while b"\r\n" not in buf:
        buf += sock.recv(4096)
    assert buf.startswith(b"+OK\r\n"), buf
    buf = buf[5:]
    c = redis.Redis(port=port, decode_responses=True)
    actions(c)
    sock.settimeout(5)
    while b'"PING" "last"' not in buf:
        buf += sock.recv(4096)
    sock.close()
    out = []
    for raw in buf.split(b"\r\n"):
        if not raw:
            continue
        m = LINE.match(raw.decode()[1:])
        assert raw.startswith(b"+") and m, raw
        out.append((m.group(1), m.group(3)))
    return out


def actions(c):
    c.set("a b", "x\ny\x01")
    c.execute_command("SELECT", "3")
    c.get("k")
    c.config_get("maxmemory")  # admin: hidden
    c.execute_command("PING", "last")


def test_monitor_lines_match_redis(vessel, reference):
    ours = monitored(vessel.port, actions)
    theirs = monitored(reference.port, actions)
    assert ours == theirs
    assert ('0', '"SET" "a b" "x\\ny\\x01"') in ours
    assert ('3', '"GET" "k"') in ours
