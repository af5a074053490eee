"""Replicas and failover in a Redis Cluster of Vessel nodes, and of Vessel and redis-server 7.0
nodes together: CLUSTER REPLICATE (as `redis-cli --cluster add-node --cluster-slave` sends it),
the replica's election when its master fails (votes asked of and given by both kinds of masters),
the old master returning as a replica, the manual CLUSTER FAILOVER in its three forms, and the
replies and errors of these commands compared with redis-server's."""
import signal
import subprocess

import pytest
import redis
from redis.cluster import RedisCluster
from redis.connection import Connection

# make_nodes is the fixture that starts (and stops) the nodes.
from test_vessel_cluster import create_cluster, make_nodes, wait_for  # noqa: F401


def add_replica(replica, master):
    """`redis-cli --cluster add-node --cluster-slave`: MEET, then CLUSTER REPLICATE."""
    master_id = master.client().execute_command("CLUSTER", "MYID")
    out = subprocess.run(
        ["redis-cli", "--cluster", "add-node", f"127.0.0.1:{replica.port}",
         f"127.0.0.1:{master.port}", "--cluster-slave", "--cluster-master-id", master_id],
        capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    wait_for(lambda: replica.client().info("replication").get("master_link_status") == "up",
             "the replica's link up", timeout=60)


def role_of(observer, node):
    """`master` or `slave`, as `observer` sees `node` in CLUSTER NODES."""
    node_id = node.client().execute_command("CLUSTER", "MYID")
    for line in observer.client().execute_command("CLUSTER", "NODES").splitlines():
        f = line.split(" ")
        if f[0] == node_id:
            flags = f[2].split(",")
            return "master" if "master" in flags else "slave" if "slave" in flags else "?"
    return None


def master_of(node):
    """The master's id that `node` replicates, from its own CLUSTER NODES ("-" for a master)."""
    for line in node.client().execute_command("CLUSTER", "NODES").splitlines():
        f = line.split(" ")
        if "myself" in f[2].split(","):
            return f[3]
    return None


def all_ok(nodes):
    return all(n.client().execute_command("CLUSTER", "INFO").startswith("cluster_state:ok")
               for n in nodes)


def write_keys(port, count, prefix="key"):
    rc = RedisCluster(host="127.0.0.1", port=port, decode_responses=True)
    for i in range(count):
        rc.set(f"{prefix}:{i}", f"value:{i}")
    rc.close()


def wait_replicated(masters):
    """A replica of every master has acknowledged its whole stream as of now. (Not WAIT on a new
    connection: WAIT waits for the offset of that connection's own last write.)"""
    for m in masters:
        c = m.client()
        target = c.info("replication")["master_repl_offset"]

        def caught_up():
            info = c.info("replication")
            return any(isinstance(v, dict) and v.get("offset", -1) >= target
                       for k, v in info.items() if k.startswith("slave"))

        wait_for(caught_up, f"a replica of {m.port} at offset {target}", timeout=30)


def read_keys(port, count, prefix="key"):
    rc = RedisCluster(host="127.0.0.1", port=port, decode_responses=True)
    try:
        for i in range(count):
            assert rc.get(f"{prefix}:{i}") == f"value:{i}", i
    finally:
        rc.close()


def build(make_nodes, master_kinds, replica_kinds):
    masters = make_nodes(*master_kinds)
    replicas = make_nodes(*replica_kinds)
    create_cluster(masters)
    wait_for(lambda: all_ok(masters), "cluster_state:ok")
    for r, m in zip(replicas, masters):
        add_replica(r, m)
    everyone = masters + replicas
    wait_for(lambda: all_ok(everyone), "cluster_state:ok everywhere")
    # Every node sees every replica as a replica.
    for r in replicas:
        wait_for(lambda: all(role_of(o, r) == "slave" for o in everyone), "replica roles")
    return masters, replicas


@pytest.mark.parametrize("kinds", [
    (("vessel", "vessel", "vessel"), ("vessel", "vessel", "vessel")),
    (("vessel", "redis", "vessel"), ("redis", "vessel", "vessel")),
    (("redis", "redis", "vessel"), ("vessel", "vessel", "redis")),
], ids=["vessel", "mixed-vessel-masters", "mixed-redis-masters"])
def test_a_failed_master_is_replaced_by_its_replica(make_nodes, kinds):
    masters, replicas = build(make_nodes, *kinds)
    write_keys(masters[0].port, 500)
    wait_replicated(masters)
    # The first master dies; its replica wins the election (the other masters vote for it) and
    # takes its slots.
    victim, heir = masters[0], replicas[0]
    victim.proc.send_signal(signal.SIGKILL)
    victim.proc.wait()
    wait_for(lambda: role_of(heir, heir) == "master", "the replica promoted", timeout=60)
    survivors = masters[1:] + replicas
    wait_for(lambda: all_ok(survivors), "cluster_state:ok after the failover", timeout=60)
    wait_for(lambda: all(role_of(o, heir) == "master" for o in survivors),
             "every node sees the new master", timeout=30)
    assert heir.client().info("replication")["role"] == "master"
    read_keys(masters[1].port, 500)
    # The old master returns and follows the node that took its slots.
    assert victim.start()
    wait_for(lambda: role_of(victim, victim) == "slave", "the old master demoted", timeout=60)
    heir_id = heir.client().execute_command("CLUSTER", "MYID")
    assert master_of(victim) == heir_id
    wait_for(lambda: victim.client().info("replication").get("master_link_status") == "up",
             "the old master replicating", timeout=60)
    assert victim.client().info("replication")["master_port"] == heir.port
    write_keys(heir.port, 200, prefix="after")
    read_keys(victim.port, 200, prefix="after")


@pytest.mark.parametrize("kinds", [
    (("vessel", "vessel", "vessel"), ("vessel",)),
    (("vessel", "redis", "redis"), ("redis",)),
    (("redis", "vessel", "redis"), ("vessel",)),
], ids=["vessel-replica-of-vessel", "redis-replica-of-vessel", "vessel-replica-of-redis"])
@pytest.mark.parametrize("how", ["", "FORCE", "TAKEOVER"])
def test_manual_failover(make_nodes, kinds, how):
    masters, replicas = build(make_nodes, *kinds)
    old, new = masters[0], replicas[0]
    write_keys(old.port, 300)
    wait_replicated([old])
    args = ["CLUSTER", "FAILOVER"] + ([how] if how else [])
    assert new.client().execute_command(*args) in (True, "OK")
    wait_for(lambda: role_of(new, new) == "master", "the replica promoted", timeout=30)
    # The old master sees its slots go and follows the new one (no data lost: a default failover
    # waits for the replica to have the paused master's whole stream).
    wait_for(lambda: role_of(old, old) == "slave", "the old master demoted", timeout=30)
    wait_for(lambda: all_ok(masters + replicas), "cluster_state:ok", timeout=30)
    wait_for(lambda: old.client().info("replication").get("master_link_status") == "up",
             "the old master replicating", timeout=60)
    read_keys(masters[1].port, 300)
    write_keys(new.port, 100, prefix="after")
    wait_replicated([new])
    # (Waited for rather than read once: a replica that resynchronizes right then reloads.)
    wait_for(lambda: sorted(old.client().keys("*")) == sorted(new.client().keys("*")),
             "the old master holding the new master's keys", timeout=15)


def reply(client, *args):
    try:
        return client.execute_command(*args)
    except redis.ResponseError as e:
        return f"ERR:{e}"


def test_replies_match_redis(make_nodes):
    """The errors of CLUSTER REPLICATE, CLUSTER FAILOVER, REPLICAOF and FAILOVER in cluster mode,
    on a Vessel node and a redis-server node in the same positions."""
    results = {}
    for kind in ("vessel", "redis"):
        a, b, c = make_nodes(kind, "redis", "vessel")
        create_cluster([a, b, c])
        wait_for(lambda: all_ok([a, b, c]), "cluster_state:ok")
        spare, spare2 = make_nodes(kind, kind)
        for s in (spare, spare2):
            s.client().execute_command("CLUSTER", "MEET", "127.0.0.1", a.port)
        wait_for(lambda: all(len(s.client().execute_command("CLUSTER", "NODES").splitlines()) == 5
                             for s in (spare, spare2)), "the spare nodes know everyone")
        b_id = b.client().execute_command("CLUSTER", "MYID")
        ca, cs, cs2 = a.client(), spare.client(), spare2.client()
        rows = [
            reply(ca, "CLUSTER", "REPLICATE", "0" * 40),
            reply(ca, "CLUSTER", "REPLICATE", ca.execute_command("CLUSTER", "MYID")),
            reply(ca, "CLUSTER", "REPLICATE", b_id),  # a master with slots
            reply(ca, "CLUSTER", "FAILOVER"),
            reply(ca, "CLUSTER", "FAILOVER", "NOW"),
            reply(ca, "CLUSTER", "FAILOVER", "FORCE", "X"),
            reply(ca, "REPLICAOF", "127.0.0.1", b.port),
            reply(ca, "REPLICAOF", "NO", "ONE"),
            reply(ca, "FAILOVER"),
        ]
        # The spare must know b by its real ID (past the handshake) before it can follow it.
        wait_for(lambda: role_of(spare, b) == "master", f"{kind}: the spare sees b as a master")
        rows.append(reply(cs, "CLUSTER", "REPLICATE", b_id))
        assert rows[-1] == "OK", f"{kind}: {rows[-1]}"
        try:
            wait_for(lambda: cs.info("replication").get("master_link_status") == "up",
                     f"{kind}: the spare replicating", timeout=90)
        except AssertionError as e:
            raise AssertionError(f"{e}: {cs.info('replication')}") from None
        spare_id = cs.execute_command("CLUSTER", "MYID")
        wait_for(lambda: role_of(spare2, spare) == "slave", "the spare seen as a replica")
        rows.append(reply(cs2, "CLUSTER", "REPLICATE", spare_id))  # a replica
        rows.append(reply(cs, "CLUSTER", "FAILOVER", "X"))
        rows.append(reply(cs, "CLUSTER", "REPLICATE", b_id))  # already its master: OK again
        rows.append(reply(cs, "READONLY"))
        results[kind] = rows
    assert results["vessel"] == results["redis"]


@pytest.mark.parametrize("kinds", [
    (("vessel", "vessel", "vessel"), ("vessel", "vessel", "vessel", "vessel")),
    (("redis", "vessel", "redis"), ("redis", "vessel", "vessel", "vessel")),
], ids=["vessel", "mixed"])
def test_a_replica_migrates_to_an_orphaned_master(make_nodes, kinds):
    """The last replica of a master dies; a replica of the master with two moves to it."""
    masters, replicas = build(make_nodes, kinds[0], kinds[1][:3])
    extra = make_nodes(kinds[1][3])[0]
    add_replica(extra, masters[0])  # masters[0] now has two replicas
    everyone = masters + replicas + [extra]
    wait_for(lambda: all(role_of(o, extra) == "slave" for o in everyone), "replica roles")
    orphan = masters[2]
    replicas[2].proc.send_signal(signal.SIGKILL)
    replicas[2].proc.wait()
    orphan_id = orphan.client().execute_command("CLUSTER", "MYID")
    movers = [replicas[0], extra]
    wait_for(lambda: any(master_of(r) == orphan_id for r in movers),
             "a replica migrating to the orphaned master", timeout=60)
    mover = next(r for r in movers if master_of(r) == orphan_id)
    # The smallest id of the two moves, as Redis chooses.
    ids = sorted(r.client().execute_command("CLUSTER", "MYID") for r in movers)
    assert mover.client().execute_command("CLUSTER", "MYID") == ids[0]
    wait_for(lambda: mover.client().info("replication").get("master_port") == orphan.port and
             mover.client().info("replication").get("master_link_status") == "up",
             "the migrated replica replicating", timeout=60)


def test_readonly_on_a_replica_matches_redis(make_nodes):
    """READONLY lets a replica serve reads of its master's slots (writes are still redirected),
    READWRITE and RESET end it; a Vessel replica and a redis-server replica of the same master
    answer alike."""
    masters, replicas = build(make_nodes, ("vessel", "redis", "vessel"), ("vessel", "redis"))
    wait_for(lambda: all(role_of(o, r) == "slave" for o in masters for r in replicas),
             "replica roles")
    transcripts = []
    for master, replica in zip(masters, replicas):
        m = master.client()
        slots = [r for r in m.execute_command("CLUSTER", "SLOTS")
                 if r[2][2] == m.execute_command("CLUSTER", "MYID")]
        key = next(f"k{i}" for i in range(10000)
                   if slots[0][0] <= m.execute_command("CLUSTER", "KEYSLOT", f"k{i}") <= slots[0][1])
        m.set(key, "v")
        assert m.execute_command("WAIT", 1, 10000) == 1
        c = replica.client()
        rows = [reply(c, "GET", key), reply(c, "READONLY"), reply(c, "GET", key),
                reply(c, "SET", key, "w"), reply(c, "MGET", key, key),
                reply(c, "READWRITE"), reply(c, "GET", key), reply(c, "READONLY"),
                reply(c, "RESET"), reply(c, "GET", key)]
        # The redirections name the master: compare them without its address.
        slot = m.execute_command("CLUSTER", "KEYSLOT", key)
        transcripts.append([str(r).replace(f"127.0.0.1:{master.port}", "<master>")
                            .replace(f"MOVED {slot} ", "MOVED <slot> ") for r in rows])
    assert transcripts[0] == transcripts[1]
    assert transcripts[0][2] == "v" and transcripts[0][3].startswith("ERR:MOVED")
    # CLUSTER SLOTS lists each master's replicas after it, the same from every node.
    def slots(node):
        conn = Connection(port=node.port)
        conn.send_command("CLUSTER", "SLOTS")
        answer = sorted(conn.read_response(), key=repr)
        conn.disconnect()
        return answer

    wait_for(lambda: all(slots(n) == slots(masters[0]) for n in masters + replicas),
             "one CLUSTER SLOTS everywhere")
    listed = {entry[3][2] for entry in slots(masters[0]) if len(entry) == 4}
    assert listed == {r.client().execute_command("CLUSTER", "MYID").encode() for r in replicas}
    # CLUSTER RESET turns a replica into an empty master without slots, on both kinds.
    for replica in replicas:
        c = replica.client()
        assert c.dbsize() == 1
        rows = [reply(c, "CLUSTER", "RESET"), c.dbsize(), c.info("replication")["role"],
                len(c.execute_command("CLUSTER", "NODES").splitlines()),
                reply(c, "CLUSTER", "COUNTKEYSINSLOT", 0)]
        assert rows == ["OK", 0, "master", 1, 0], replica.kind


def test_create_with_replicas_check_pipelines_and_del_node(make_nodes):
    """`redis-cli --cluster create --cluster-replicas 1` over six Vessel nodes, `--cluster check`,
    a RedisCluster pipeline across slots, then `--cluster del-node` of a replica."""
    nodes = make_nodes(*(["vessel"] * 6))
    out = subprocess.run(
        ["redis-cli", "--cluster", "create", *[f"127.0.0.1:{n.port}" for n in nodes],
         "--cluster-replicas", "1", "--cluster-yes"],
        capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    wait_for(lambda: all_ok(nodes), "cluster_state:ok", timeout=60)
    wait_for(lambda: sum(role_of(nodes[0], n) == "slave" for n in nodes) == 3,
             "three replicas", timeout=60)

    def check():
        return subprocess.run(["redis-cli", "--cluster", "check", f"127.0.0.1:{nodes[0].port}"],
                              capture_output=True, text=True, timeout=60)
    wait_for(lambda: "[OK] All 16384 slots covered." in check().stdout and
             "[ERR]" not in check().stdout and "[WARNING]" not in check().stdout,
             "a clean --cluster check", timeout=60)
    rc = RedisCluster(host="127.0.0.1", port=nodes[0].port, decode_responses=True)
    pipe = rc.pipeline()
    for i in range(300):
        pipe.set(f"p:{i}", i)
    assert pipe.execute() == [True] * 300
    pipe = rc.pipeline()
    for i in range(300):
        pipe.get(f"p:{i}")
    assert pipe.execute() == [str(i) for i in range(300)]
    rc.close()
    replica = next(n for n in nodes if role_of(nodes[0], n) == "slave")
    replica_id = replica.client().execute_command("CLUSTER", "MYID")
    out = subprocess.run(["redis-cli", "--cluster", "del-node", f"127.0.0.1:{nodes[0].port}",
                          replica_id], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    others = [n for n in nodes if n is not replica]
    wait_for(lambda: all(role_of(n, replica) is None for n in others), "the node forgotten")
    assert len(nodes[0].client().execute_command("CLUSTER", "NODES").splitlines()) == 5
