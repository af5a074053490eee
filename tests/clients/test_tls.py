"""TLS: redis-py (ssl=True) and redis-cli --tls against vessel-server's tls-port, with a CA, server
and client certificates made by the openssl command for the test run."""
import os
import socket
import ssl
import subprocess
import time

import pytest
import redis

from conftest import VesselProcess, free_port


def openssl(*args):
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def make_ca(d, name):
    key, crt = str(d / f"{name}.key"), str(d / f"{name}.crt")
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
            f"/CN={name}", "-keyout", key, "-out", crt)
    return key, crt


def make_cert(d, name, ca, server=False):
    key, csr, crt = (str(d / f"{name}.{ext}") for ext in ("key", "csr", "crt"))
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj",
            "/CN=localhost" if server else f"/CN={name}", "-keyout", key, "-out", csr)
    ext = d / f"{name}.ext"
    ext.write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n" if server else
                   "extendedKeyUsage=clientAuth\n")
    openssl("x509", "-req", "-in", csr, "-CA", ca[1], "-CAkey", ca[0], "-CAcreateserial",
            "-days", "2", "-extfile", str(ext), "-out", crt)
    return crt, key


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    d = tmp_path_factory.mktemp("tls")
    ca = make_ca(d, "ca")
    other_ca = make_ca(d, "otherca")
    return {
        "dir": d,
        "ca": ca[1],
        "other_ca": other_ca[1],
        "server": make_cert(d, "server", ca, server=True),
        "server2": make_cert(d, "server2", other_ca, server=True),
        "client": make_cert(d, "client", ca),
        "stranger": make_cert(d, "stranger", other_ca),
    }


def tls_args(certs, port, auth="yes"):
    return ["--tls-port", str(port), "--tls-cert-file", certs["server"][0], "--tls-key-file",
            certs["server"][1], "--tls-ca-cert-file", certs["ca"], "--tls-auth-clients", auth]


@pytest.fixture(scope="module")
def tls_server(certs):
    port = free_port()
    server = VesselProcess(args=tls_args(certs, port))
    server.tls_port = port
    yield server
    server.stop()


def client(server, certs, cert="client", ca="ca", **kw):
    extra = {}
    if cert:
        extra = {"ssl_certfile": certs[cert][0], "ssl_keyfile": certs[cert][1]}
    return redis.Redis(port=server.tls_port, ssl=True, ssl_ca_certs=certs[ca],
                       socket_timeout=5, decode_responses=True, **extra, **kw)


def test_handshake_and_commands(tls_server, certs):
    c = client(tls_server, certs)
    assert c.ping()
    assert c.set("tls:k", "v")
    assert c.get("tls:k") == "v"
    info = c.client_info()
    assert info["user"] == "default"


def test_plain_and_tls_ports_at_once(tls_server, certs):
    plain = redis.Redis(port=tls_server.port, decode_responses=True)
    c = client(tls_server, certs)
    c.set("both", "1")
    assert plain.get("both") == "1"
    plain.set("both", "2")
    assert c.get("both") == "2"


def test_wrong_ca_is_rejected(tls_server, certs):
    # The client does not trust the server's CA.
    with pytest.raises(redis.exceptions.ConnectionError):
        client(tls_server, certs, ca="other_ca").ping()
    # The server does not trust the client's CA.
    with pytest.raises(redis.exceptions.ConnectionError):
        client(tls_server, certs, cert="stranger").ping()


def test_client_certificate_required_optional_no(tls_server, certs):
    with pytest.raises(redis.exceptions.ConnectionError):
        client(tls_server, certs, cert=None).ping()
    admin = client(tls_server, certs)
    try:
        assert admin.config_set("tls-auth-clients", "optional")
        assert client(tls_server, certs, cert=None).ping()
        assert client(tls_server, certs).ping()
        with pytest.raises(redis.exceptions.ConnectionError):
            client(tls_server, certs, cert="stranger").ping()  # optional still verifies one
        assert admin.config_set("tls-auth-clients", "no")
        assert client(tls_server, certs, cert=None).ping()
    finally:
        admin.config_set("tls-auth-clients", "yes")
    with pytest.raises(redis.exceptions.ConnectionError):
        client(tls_server, certs, cert=None).ping()


def test_large_pipeline_and_values(tls_server, certs):
    c = client(tls_server, certs)
    pipe = c.pipeline(transaction=False)
    for i in range(20000):
        pipe.set(f"p:{i}", i)
    assert all(pipe.execute())
    pipe = c.pipeline(transaction=False)
    for i in range(20000):
        pipe.get(f"p:{i}")
    assert pipe.execute() == [str(i) for i in range(20000)]
    big = "x" * (4 << 20)
    c.set("big", big)
    assert c.get("big") == big
    assert c.delete(*[f"p:{i}" for i in range(20000)], "big") == 20001


def test_redis_cli_tls(tls_server, certs):
    base = ["redis-cli", "--tls", "--cacert", certs["ca"], "-p", str(tls_server.tls_port)]
    with_cert = base + ["--cert", certs["client"][0], "--key", certs["client"][1]]
    out = subprocess.run(with_cert + ["SET", "cli", "tls"], capture_output=True, text=True,
                         timeout=10)
    assert out.stdout.strip() == "OK", out.stderr
    out = subprocess.run(with_cert + ["GET", "cli"], capture_output=True, text=True, timeout=10)
    assert out.stdout.strip() == "tls"
    out = subprocess.run(base + ["PING"], capture_output=True, text=True, timeout=10)
    assert "PONG" not in out.stdout  # no client certificate: refused


def test_certificate_reload_on_config_set(tls_server, certs):
    admin = client(tls_server, certs)
    with pytest.raises(redis.exceptions.ResponseError, match="Unable to update TLS configuration"):
        admin.config_set("tls-cert-file", str(certs["dir"] / "nosuch.crt"))
    assert admin.config_get("tls-cert-file")["tls-cert-file"] == certs["server"][0]
    assert client(tls_server, certs).ping()  # the old context still serves
    try:
        # A certificate from another CA, set with its key in one CONFIG SET.
        admin.config_set("tls-cert-file", certs["server2"][0], "tls-key-file", certs["server2"][1])
        assert admin.ping()  # connections made before keep their session
        with pytest.raises(redis.exceptions.ConnectionError):
            client(tls_server, certs).ping()
        assert client(tls_server, certs, ca="other_ca").ping()
    finally:
        admin.config_set("tls-cert-file", certs["server"][0], "tls-key-file", certs["server"][1])
    assert client(tls_server, certs).ping()


def test_tls_only_with_port_zero(certs):
    port = free_port()
    proc = subprocess.Popen([os.environ["VESSEL_SERVER"], "--save", "", "--port", "0", *tls_args(certs, port),
                             "--threads", "1", "--log-level", "warn"])
    try:
        server = type("S", (), {"tls_port": port})()
        for _ in range(200):
            try:
                assert client(server, certs).ping()
                break
            except redis.exceptions.ConnectionError:
                import time
                time.sleep(0.02)
        else:
            pytest.fail("no TLS listener")
        info = client(server, certs).config_get("port")
        assert info["port"] == str(port) or info["port"] == "0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_bad_tls_configuration_refuses_to_start(certs):
    proc = subprocess.run([os.environ["VESSEL_SERVER"], "--save", "", "--port", str(free_port()), "--tls-port",
                           str(free_port()), "--tls-cert-file", certs["server"][0],
                           "--log-level", "warn"], capture_output=True, text=True, timeout=10)
    assert proc.returncode != 0
    assert "No tls-key-file configured!" in proc.stdout + proc.stderr


def test_same_as_redis_server_over_tls(certs):
    """The reference redis-server with the same certificates gives the same replies."""
    port = free_port()
    ref = subprocess.Popen(["redis-server", "--port", "0", *tls_args(certs, port), "--save", "",
                            "--logfile", "/dev/null"])
    vport = free_port()
    ves = VesselProcess(args=tls_args(certs, vport))
    ves.tls_port = vport
    try:
        refs = type("S", (), {"tls_port": port})()
        for _ in range(200):
            try:
                client(refs, certs).ping()
                break
            except redis.exceptions.ConnectionError:
                import time
                time.sleep(0.02)
        replies = []
        for server in (ves, refs):
            c = client(server, certs)
            c.flushall()
            got = [c.set("a", "1"), c.incr("a"), c.get("a"), c.acl_whoami()]
            try:
                c.execute_command("NOSUCH")
            except redis.exceptions.ResponseError as e:
                got.append(str(e))
            replies.append(got)
        assert replies[0] == replies[1]
    finally:
        ves.stop()
        ref.terminate()
        ref.wait(timeout=10)


def test_protected_mode_over_tls(tls_server, certs):
    """A TLS client from 127.0.0.2 (not loopback for protected mode) gets -DENIED over TLS."""
    import socket
    ctx = ssl.create_default_context(cafile=certs["ca"])
    ctx.load_cert_chain(*certs["client"])
    raw = socket.create_connection(("127.0.0.1", tls_server.tls_port), timeout=5,
                                   source_address=("127.0.0.2", 0))
    with ctx.wrap_socket(raw, server_hostname="localhost") as s:
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    assert data.startswith(b"-DENIED Redis is running in protected mode")
    assert data.endswith(b"from the outside.\r\n")


def silent_until_closed(socks, keep_alive, limit):
    """Waits (up to `limit` seconds) until the server closed every socket in socks, calling
    keep_alive() every 100 ms; returns the seconds it took, or None."""
    start = time.time()
    open_socks = list(socks)
    for s in open_socks:
        s.setblocking(False)
    while open_socks and time.time() - start < limit:
        for s in list(open_socks):
            try:
                if s.recv(1) == b"":
                    open_socks.remove(s)
            except BlockingIOError:
                pass
            except ConnectionResetError:
                open_socks.remove(s)
        keep_alive()
        time.sleep(0.1)
    return None if open_socks else time.time() - start


def test_handshakes_count_as_clients_and_time_out(certs, tmp_path):
    """A connection still in its TLS handshake is a client from accept, as in Redis: INFO counts
    it, it counts against maxclients, and `timeout` closes it when it stays silent (before, such
    connections counted for neither, and 19,985 half-open handshakes exhausted the descriptors)."""
    args = ["--maxclients", "4", "--timeout", "1"]
    tport, rport, ref_plain = free_port(), free_port(), free_port()
    (tmp_path / "redis").mkdir()
    (tmp_path / "vessel").mkdir()
    ref = subprocess.Popen(["redis-server", "--port", str(ref_plain), *tls_args(certs, rport),
                            "--save", "", "--dir", str(tmp_path / "redis"), "--logfile",
                            "/dev/null", *args])
    ves = VesselProcess(threads=1,
                        args=[*tls_args(certs, tport), "--dir", str(tmp_path / "vessel"), *args])
    try:
        for _ in range(200):
            try:
                redis.Redis(port=ref_plain).ping()
                break
            except redis.exceptions.ConnectionError:
                time.sleep(0.02)
        for name, plain, tls_port in (("vessel", ves.port, tport), ("redis", ref_plain, rport)):
            admin = redis.Redis(port=plain, socket_timeout=5)
            assert admin.ping()
            silent = [socket.create_connection(("127.0.0.1", tls_port)) for _ in range(3)]
            deadline = time.time() + 5
            while admin.info("clients")["connected_clients"] != 4 and time.time() < deadline:
                time.sleep(0.02)
            assert admin.info("clients")["connected_clients"] == 4, name
            with socket.create_connection(("127.0.0.1", plain)) as late:
                late.settimeout(5)
                assert late.recv(100) == b"-ERR max number of clients reached\r\n", name
            assert silent_until_closed(silent, admin.ping, 10) is not None, name
            assert admin.info("clients")["connected_clients"] == 1, name
            assert client(type("S", (), {"tls_port": tls_port})(), certs).ping()
    finally:
        ves.stop()
        ref.terminate()
        ref.wait(timeout=10)


def test_silent_handshake_is_closed_without_timeout(certs, tmp_path):
    """With timeout 0 Redis leaves a connection that never starts its handshake open forever;
    vessel closes it after 10 seconds, so half-open handshakes cannot hold descriptors."""
    tport = free_port()
    ves = VesselProcess(threads=1, args=[*tls_args(certs, tport), "--dir", str(tmp_path)])
    try:
        silent = socket.create_connection(("127.0.0.1", tport))
        admin = redis.Redis(port=ves.port, socket_timeout=5)
        took = silent_until_closed([silent], admin.ping, 20)
        assert took is not None and took > 5, took
        assert admin.info("clients")["connected_clients"] == 1
    finally:
        ves.stop()
