"""PUBLISH in a Redis Cluster of Vessel and redis-server 7.0 nodes: a message published on any
node reaches the subscribers of every node (the PUBLISH bus packet, both ways), and PUBLISH answers
the number of this node's own receivers, as Redis does."""
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
