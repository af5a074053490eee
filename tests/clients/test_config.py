"""CONFIG REWRITE against a real TOML file: changed values are written back in place, new ones
under their section, the file's comments stay, and a restart with the file has the new values."""
import os
import shutil

import redis

from conftest import VesselProcess

SHIPPED = os.path.join(os.path.dirname(__file__), "..", "..", "conf", "vessel.toml")


def test_config_rewrite_keeps_comments_and_survives_restart(tmp_path):
    path = tmp_path / "vessel.toml"
    shutil.copy(SHIPPED, path)
    original = path.read_text()
    server = VesselProcess(args=["--config", str(path), "--dir", str(tmp_path)])
    try:
        r = redis.Redis(port=server.port, decode_responses=True)
        r.config_set("maxmemory", "64mb")
        r.config_set("maxmemory-policy", "allkeys-lru")
        r.config_set("hash-max-ziplist-entries", "100")
        r.config_set("slowlog-max-len", "500")
        r.config_set("activerehashing", "no")
        assert r.config_rewrite()
    finally:
        server.stop()
    text = path.read_text()
    # Every comment line of the shipped file is still there, in order.
    comments = [l for l in original.splitlines() if l.startswith("#")]
    assert [l for l in text.splitlines() if l.startswith("#")] == comments
    assert "maxmemory = 67108864" in text
    assert 'maxmemory_policy = "allkeys-lru"' in text
    assert "hash_max_listpack_entries = 100" in text
    assert "slowlog_max_len = 500" in text
    assert "activerehashing = false" in text
    # Unchanged settings are written as they were.
    assert 'max_bulk_len = "512mb"' in text
    # The port given on the command line is not the file's business.
    assert "port = 6379" in text

    server = VesselProcess(args=["--config", str(path), "--dir", str(tmp_path)])
    try:
        r = redis.Redis(port=server.port, decode_responses=True)
        got = r.config_get("*")
        assert got["maxmemory"] == "67108864"
        assert got["maxmemory-policy"] == "allkeys-lru"
        assert got["hash-max-listpack-entries"] == "100"
        assert got["slowlog-max-len"] == "500"
        assert got["activerehashing"] == "no"
        # A second rewrite with nothing changed leaves the file as it is.
        assert r.config_rewrite()
        assert path.read_text() == text
    finally:
        server.stop()


def test_debug_is_refused_unless_enabled(vessel, reference):
    # Both servers run with their defaults here: DEBUG is a protected command.
    for port in (vessel.port, reference.port):
        r = redis.Redis(port=port)
        try:
            r.execute_command("DEBUG", "SLEEP", "0")
            raise AssertionError("DEBUG ran")
        except redis.exceptions.ResponseError as e:
            assert str(e).startswith("DEBUG command not allowed. If the enable-debug-command")
    server = VesselProcess(args=["--enable-debug-command", "local"])
    try:
        assert redis.Redis(port=server.port).execute_command("DEBUG", "SLEEP", "0")
    finally:
        server.stop()
