"""ACL users from the configuration: --requirepass, [[users]] in the TOML file, and an aclfile with
ACL LOAD / ACL SAVE, compared with redis-server given the same file."""
import subprocess
import time

import pytest
import redis

from conftest import free_port


def wait_ping(port, **kw):
    for _ in range(250):
        try:
            return redis.Redis(port=port, **kw).ping()
        except (redis.exceptions.AuthenticationError, redis.exceptions.ResponseError):
            return True  # NOAUTH or WRONGPASS: it is serving
        except redis.exceptions.ConnectionError:
            time.sleep(0.02)
    raise RuntimeError("server did not start")


class Started:
    """vessel-server or redis-server with extra arguments, on a free port."""

    def __init__(self, vessel, args):
        self.port = free_port()
        if vessel:
            import os
            cmd = [os.environ["VESSEL_SERVER"], "--save", "", "--port", str(self.port), "--threads", "2",
                   "--log-level", "warn", *args]
        else:
            cmd = ["redis-server", "--port", str(self.port), "--save", "", "--logfile",
                   "/dev/null", *args]
        self.proc = subprocess.Popen(cmd)
        wait_ping(self.port)

    def client(self, **kw):
        return redis.Redis(port=self.port, decode_responses=True, **kw)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


def test_requirepass_flag():
    server = Started(True, ["--requirepass", "s3cret"])
    try:
        with pytest.raises(redis.exceptions.AuthenticationError):
            redis.Redis(port=server.port).get("x")
        c = redis.Redis(port=server.port, password="s3cret", decode_responses=True)
        assert c.set("x", "1")
        assert c.config_get("requirepass") == {"requirepass": "s3cret"}
        assert c.acl_whoami() == "default"
    finally:
        server.stop()


def test_users_from_toml(tmp_path):
    conf = tmp_path / "vessel.toml"
    conf.write_text('[[users]]\nname = "app"\nrules = "on >apppw ~app:* +@read +@write"\n'
                    '[[users]]\nname = "default"\nrules = "on >adminpw ~* &* +@all"\n')
    server = Started(True, ["--config", str(conf)])
    try:
        app = redis.Redis(port=server.port, username="app", password="apppw",
                          decode_responses=True)
        assert app.set("app:1", "v")
        with pytest.raises(redis.exceptions.NoPermissionError):
            app.set("other", "v")
        admin = redis.Redis(port=server.port, password="adminpw", decode_responses=True)
        assert admin.acl_users() == ["app", "default"]
        with pytest.raises(redis.exceptions.AuthenticationError):
            redis.Redis(port=server.port).get("x")
    finally:
        server.stop()


def test_bad_users_stop_startup(tmp_path):
    import os
    conf = tmp_path / "vessel.toml"
    conf.write_text('[[users]]\nname = "app"\nrules = "on +nosuchcommand"\n')
    proc = subprocess.run([os.environ["VESSEL_SERVER"], "--save", "", "--config", str(conf), "--port",
                           str(free_port())], capture_output=True, text=True, timeout=10)
    assert proc.returncode != 0
    assert ("Error loading ACL rule '+nosuchcommand' for the user named 'app': Unknown command "
            "or category name in ACL") in proc.stdout + proc.stderr


ACLFILE = ("user alice on #5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8 "
           "~app:* %R~read:* resetchannels &news -@all +get +set\n"
           "user default on nopass ~* &* +@all\n"
           "\n"
           "user bob off resetchannels -@all (~b:* +get)\n")


@pytest.mark.parametrize("vessel", [True, False], ids=["vessel", "redis"])
def test_aclfile_load_and_save(tmp_path, vessel):
    path = tmp_path / "users.acl"
    path.write_text(ACLFILE)
    server = Started(vessel, ["--aclfile", str(path)])
    try:
        c = server.client()
        # Tokens compared as multisets: Redis orders single-command rules by its hash table.
        listed = [sorted(line.split()) for line in c.execute_command("ACL", "LIST")]
        assert listed == [sorted(line.split()) for line in [
            "user alice on #5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8 "
            "~app:* %R~read:* resetchannels &news -@all +get +set",
            "user bob off resetchannels -@all (~b:* resetchannels -@all +get)",
            "user default on nopass ~* &* +@all"]]
        alice = server.client(username="alice", password="password")
        assert alice.set("app:1", "x")
        # SAVE writes ACL LIST's lines; LOAD reads them back.
        assert c.execute_command("ACL", "SETUSER", "carol", "on", "nopass", "+ping")
        assert c.execute_command("ACL", "SAVE") == "OK"
        saved = path.read_text().splitlines()
        assert saved == ["user " + line[len("user "):] for line in
                         c.execute_command("ACL", "LIST")]
        # A broken file changes nothing and names each problem.
        path.write_text("user dave on +nosuch\nnotauser x\nuser dave on\n")
        with pytest.raises(redis.exceptions.ResponseError) as err:
            c.execute_command("ACL", "LOAD")
        msg = str(err.value)
        assert f"{path}:1: Error in applying operation '+nosuch': Unknown command or category " \
               "name in ACL. " in msg
        assert f"{path}:2 should start with user keyword followed by the username. " in msg
        assert "WARNING: Duplicate user 'dave' found on line 3. " in msg
        assert msg.endswith("WARNING: ACL errors detected, no change to the previously active "
                            "ACL rules was performed")
        assert "carol" in c.execute_command("ACL", "USERS")
        # LOAD replaces every user; clients of the old users are disconnected.
        path.write_text("user erin on nopass ~* +@all\n")
        assert c.execute_command("ACL", "LOAD") == "OK"
        assert c.execute_command("ACL", "USERS") == ["default", "erin"]
        # (redis-py reconnects once, and alice no longer exists)
        with pytest.raises((redis.exceptions.ConnectionError, redis.exceptions.ResponseError)):
            alice.get("app:1")
        assert c.ping()  # the default user's clients stay
    finally:
        server.stop()


def test_aclfile_and_users_cannot_mix(tmp_path):
    import os
    conf = tmp_path / "vessel.toml"
    conf.write_text('[[users]]\nname = "app"\nrules = "on"\n')
    acl = tmp_path / "users.acl"
    acl.write_text("user x on\n")
    proc = subprocess.run([os.environ["VESSEL_SERVER"], "--save", "", "--config", str(conf), "--aclfile",
                           str(acl), "--port", str(free_port())], capture_output=True, text=True,
                          timeout=10)
    assert proc.returncode != 0
    assert "please define either an ACL file or declare users" in proc.stdout + proc.stderr


def test_redis_py_acl_helpers(vessel):
    c = redis.Redis(port=vessel.port, decode_responses=True)
    try:
        assert c.acl_setuser("pyuser", enabled=True, passwords=["+pw"], keys=["py:*"],
                             commands=["+get", "+set"])
        u = c.acl_getuser("pyuser")
        assert u["enabled"] and "get" in u["commands"] or "+get" in str(u["commands"])
        p = redis.Redis(port=vessel.port, username="pyuser", password="pw",
                        decode_responses=True)
        assert p.set("py:1", "v")
        with pytest.raises(redis.exceptions.NoPermissionError):
            p.incrby("py:2", 1)
        assert c.acl_dryrun("pyuser", "get", "py:1") == "OK"
        log = c.acl_log()
        assert log[0]["reason"] == "command" and log[0]["object"] == "incrby"
    finally:
        c.acl_deluser("pyuser")
        c.acl_log_reset()


def test_module_categories_in_aclfile(tmp_path):
    """The categories of modules (@vectors, @multi_index) are rules like Redis's: an aclfile names
    them, ACL LIST and ACL SAVE write them back, ACL LOAD reads them again."""
    path = tmp_path / "users.acl"
    path.write_text("user default on nopass ~* &* +@all\n"
                    "user vec on nopass ~* resetchannels -@all +@vectors +get\n"
                    "user novec on nopass ~* resetchannels +@all -@vectors -@multi_index\n")
    server = Started(True, ["--aclfile", str(path), "--dir", str(tmp_path)])
    try:
        c = server.client()
        cats = c.execute_command("ACL", "CAT")
        assert cats[cats.index("vectors"):cats.index("vectors") + 2] == ["vectors", "multi_index"]
        listed = c.execute_command("ACL", "LIST")
        assert "user vec on nopass ~* resetchannels -@all +@vectors +get" in listed
        assert "user novec on nopass ~* resetchannels +@all -@vectors -@multi_index" in listed
        vec = server.client(username="vec", password="x")
        assert vec.execute_command("VEC.PUSH", "v", "1") == 1
        assert vec.get("nokey") is None  # +get
        with pytest.raises(redis.exceptions.NoPermissionError):
            vec.set("k", "v")
        novec = server.client(username="novec", password="x")
        with pytest.raises(redis.exceptions.NoPermissionError):
            novec.execute_command("VEC.LEN", "v")
        assert novec.set("k", "v")
        assert c.execute_command("ACL", "SAVE") == "OK"
        saved = path.read_text().splitlines()
        assert saved == listed
        assert c.execute_command("ACL", "LOAD") == "OK"
        assert c.execute_command("ACL", "LIST") == listed
    finally:
        server.stop()
