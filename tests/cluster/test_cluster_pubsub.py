"""PUBLISH in a Redis Cluster of Vessel and redis-server 7.0 nodes: a message published on any
node reaches the subscribers of every node (the PUBLISH bus packet, both ways), and PUBLISH answers
the number of this node's own receivers, as Redis does."""
import signal
import time

from test_cluster_failover import add_replica, all_ok
# make_nodes is the fixture that starts (and stops) the nodes.
from test_vessel_cluster import create_cluster, make_nodes, wait_for  # noqa: F401


def test_publish_reaches_every_node(make_nodes):
    masters = make_nodes("vessel", "redis", "vessel")
    replicas = make_nodes("redis", "vessel")
    create_cluster(masters)
    wait_for(lambda: all_ok(masters), "cluster_state:ok")
    add_replica(replicas[0], masters[0])
    add_replica(replicas[1], masters[1])
    everyone = masters + replicas
    wait_for(lambda: all_ok(everyone), "cluster_state:ok everywhere")
    subs = []
    for n in everyone:
        p = n.client().pubsub()
        p.subscribe("news")
        p.psubscribe("n*s")
        subs.append(p)
    for p in subs:  # the subscribe and psubscribe confirmations
        for _ in range(2):
            assert p.get_message(timeout=5)["type"] in ("subscribe", "psubscribe")
    for i, publisher in enumerate(everyone):
        # Two local receivers (the channel and the pattern), whatever the other nodes have.
        assert publisher.client().publish("news", f"from-{i}") == 2
        for j, p in enumerate(subs):
            got = set()
            deadline = time.time() + 10
            while len(got) < 2 and time.time() < deadline:
                m = p.get_message(timeout=1)
                if m is not None:
                    got.add((m["type"], m["data"]))
            assert got == {("message", f"from-{i}"), ("pmessage", f"from-{i}")}, (i, j)
    for p in subs:
        p.close()


def test_link_over_its_send_buffer_limit_is_freed(make_nodes):
    """cluster-link-sendbuf-limit: while a node is stopped, PUBLISH packets pile up in the link to
    it; over the limit the link is freed (counted in CLUSTER INFO), and it comes back once the node
    runs again, on Vessel as on redis-server."""
    nodes = make_nodes("vessel", "redis", "redis")
    create_cluster(nodes)
    wait_for(lambda: all_ok(nodes), "cluster_state:ok")
    stopped = nodes[2]

    def exceeded(n):
        info = n.client().execute_command("CLUSTER", "INFO")
        return int(info.split("total_cluster_links_buffer_limit_exceeded:")[1].split()[0])

    def links_to_stopped(n):
        stopped_id = stopped.client().execute_command("CLUSTER", "MYID")
        links = [dict(zip(link[::2], link[1::2]))
                 for link in n.client().execute_command("CLUSTER", "LINKS")]
        return [link for link in links if link["node"] == stopped_id]

    for n in nodes[:2]:
        n.client().config_set("cluster-link-sendbuf-limit", 1 << 20)
    stopped.proc.send_signal(signal.SIGSTOP)
    try:
        payload = "x" * (1 << 20)
        for n in nodes[:2]:
            c = n.client()
            # The kernel's socket buffers take a few megabytes first.
            wait_for(lambda: c.publish("bulk", payload) == 0 and exceeded(n) >= 1,
                     f"a {n.kind} node freeing its links to the stopped node", timeout=60)
    finally:
        stopped.proc.send_signal(signal.SIGCONT)
    wait_for(lambda: all(len(links_to_stopped(n)) == 2 for n in nodes[:2]),
             "the links to the node back")
    wait_for(lambda: all_ok(nodes), "cluster_state:ok again")
