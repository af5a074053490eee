"""bind with several addresses and Redis's forms: "-addr" (optional), "*" and "::*"."""
import os
import socket
import subprocess

import redis

from conftest import free_port


def start(bind, port):
    return subprocess.Popen([os.environ["VESSEL_SERVER"], "--save", "", "--port", str(port), "--bind", *bind,
                             "--threads", "1", "--log-level", "warn"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def ping(host, port):
    for _ in range(200):
        try:
            return redis.Redis(host=host, port=port, socket_timeout=1).ping()
        except redis.exceptions.ConnectionError:
            import time
            time.sleep(0.02)
    return False


def has_ipv6():
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


def test_all_addresses_and_optional_ipv6():
    port = free_port()
    proc = start(["*", "-::*"], port)
    try:
        assert ping("127.0.0.1", port)
        if has_ipv6():
            assert ping("::1", port)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_optional_address_may_fail_to_bind():
    port = free_port()
    # 192.0.2.1 (TEST-NET-1) is not an address of this machine: binding it fails.
    proc = start(["-192.0.2.1", "127.0.0.1"], port)
    try:
        assert ping("127.0.0.1", port)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_required_address_that_cannot_bind_stops_startup():
    proc = start(["192.0.2.1", "127.0.0.1"], free_port())
    out, _ = proc.communicate(timeout=10)
    assert proc.returncode != 0
    assert "192.0.2.1" in out and "Cannot assign requested address" in out


def test_several_addresses():
    port = free_port()
    proc = start(["127.0.0.1", "127.0.0.2"], port)
    try:
        assert ping("127.0.0.1", port)
        assert ping("127.0.0.2", port)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
