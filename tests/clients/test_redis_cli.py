"""redis-cli, unchanged, against vessel-server: one-shot commands, RESP3, --pipe, --scan."""
import os
import subprocess


def cli(port, *args, stdin=None, expect_rc=0):
    out = subprocess.run(["redis-cli", "-p", str(port), *args], input=stdin,
                         capture_output=True, timeout=120)
    assert out.returncode == expect_rc, out.stderr
    return out.stdout.decode()


def test_basic_commands(vessel):
    assert cli(vessel.port, "PING") == "PONG\n"
    assert cli(vessel.port, "SET", "greeting", "hello world") == "OK\n"
    assert cli(vessel.port, "GET", "greeting") == "hello world\n"
    assert cli(vessel.port, "INCRBY", "n", "5") == "5\n"
    assert cli(vessel.port, "GET", "nokey") == "\n"
    assert "ERR unknown command" in cli(vessel.port, "NOSUCH")
    assert "redis_version:" in cli(vessel.port, "INFO", "server")


def test_resp3(vessel):
    out = cli(vessel.port, "-3", "HELLO", "3")
    assert "proto" in out and "3" in out
    assert cli(vessel.port, "-3", "GET", "nokey") == "(nil)\n" or cli(
        vessel.port, "-3", "GET", "nokey") == "\n"


def test_pipe_loads_100k_commands(vessel):
    cli(vessel.port, "FLUSHALL")
    parts = []
    for i in range(100_000):
        k, v = f"key:{i}", f"value:{i}"
        parts.append(f"*3\r\n$3\r\nSET\r\n${len(k)}\r\n{k}\r\n${len(v)}\r\n{v}\r\n")
    out = cli(vessel.port, "--pipe", stdin="".join(parts).encode())
    assert "errors: 0, replies: 100000" in out, out
    assert cli(vessel.port, "DBSIZE") == "100000\n"
    assert cli(vessel.port, "GET", "key:99999") == "value:99999\n"


def test_pipe_counts_errors(vessel):
    # redis-cli exits with 1 when a reply was an error, and prints the errors.
    out = cli(vessel.port, "--pipe", stdin=b"SET a 1\r\nINCR a\r\nNOSUCH\r\nINCR a b\r\n",
              expect_rc=1)
    assert "errors: 2, replies: 4" in out, out


def test_scan_mode(vessel):
    cli(vessel.port, "FLUSHALL")
    for i in range(50):
        cli(vessel.port, "SET", f"scan:{i}", "x")
    cli(vessel.port, "SET", "other", "x")
    keys = cli(vessel.port, "--scan", "--pattern", "scan:*").split()
    assert sorted(keys) == sorted(f"scan:{i}" for i in range(50))


def test_a_second_server_on_the_same_port_is_refused(vessel):
    # SO_REUSEPORT must not let two servers split one port's connections between two datasets.
    second = subprocess.run(
        [os.environ["VESSEL_SERVER"], "--save", "", "--port", str(vessel.port), "--log-level", "warn"],
        capture_output=True, text=True, timeout=30)
    assert second.returncode != 0
    assert f"127.0.0.1:{vessel.port}: Address already in use" in second.stderr + second.stdout
    assert cli(vessel.port, "PING") == "PONG\n"
