"""redis-py set algebra against vessel-server: tagging users, then asking questions of the tags."""
import random

import pytest
import redis

USERS = {
    "alice": {"python", "rust", "ops"},
    "bob": {"python", "go"},
    "carol": {"rust", "go", "ops", "security"},
    "dave": {"python"},
    "erin": {"security", "ops"},
}


def tag_users(r):
    """tag:<name> holds the users carrying the tag; user:<name>:tags the other direction."""
    for user, tags in USERS.items():
        for tag in tags:
            r.sadd(f"tag:{tag}", user)
        assert r.sadd(f"user:{user}:tags", *tags) == len(tags)


def users_with(tag):
    return {u for u, tags in USERS.items() if tag in tags}


def test_tagging_and_membership(r):
    tag_users(r)
    assert r.smembers("tag:python") == users_with("python")
    assert r.scard("tag:ops") == 3
    assert r.sismember("tag:go", "bob") is True
    assert r.sismember("tag:go", "alice") is False
    assert r.smismember("tag:rust", ["alice", "bob", "carol"]) == [1, 0, 1]
    assert r.sadd("tag:python", "alice") == 0  # already tagged
    assert r.type("tag:python") == "set"
    assert r.srem("tag:python", "dave", "nobody") == 1
    assert r.smembers("tag:python") == {"alice", "bob"}
    assert r.smembers("tag:none") == set()


def test_intersections_unions_differences(r):
    tag_users(r)
    # Who knows both python and rust? Who knows python or go? Who is ops but not security?
    assert r.sinter("tag:python", "tag:rust") == {"alice"}
    assert r.sinter(["tag:rust", "tag:ops", "tag:go"]) == {"carol"}
    assert r.sinter("tag:python", "tag:nope") == set()
    assert r.sunion("tag:python", "tag:go") == users_with("python") | users_with("go")
    assert r.sdiff("tag:ops", "tag:security") == {"alice"}
    assert r.sdiff("tag:nope", "tag:ops") == set()
    assert r.sintercard(2, ["tag:ops", "tag:rust"]) == 2
    assert r.sintercard(2, ["tag:ops", "tag:rust"], limit=1) == 1
    # Tags shared by two users: the same algebra the other way round.
    assert r.sinter("user:alice:tags", "user:carol:tags") == {"rust", "ops"}


def test_store_results(r):
    tag_users(r)
    assert r.sinterstore("team:infra", ["tag:ops", "tag:rust"]) == 2
    assert r.smembers("team:infra") == {"alice", "carol"}
    assert r.sunionstore("team:all", ["tag:python", "tag:go", "tag:security"]) == 5
    assert r.sdiffstore("team:learners", ["tag:python", "tag:rust"]) == 2
    assert r.smembers("team:learners") == {"bob", "dave"}
    # An empty result deletes the destination; a store replaces any old value and its TTL.
    assert r.sinterstore("team:infra", ["tag:python", "tag:security"]) == 0
    assert r.exists("team:infra") == 0
    r.set("team:x", "a string")
    r.expire("team:x", 100)
    assert r.sunionstore("team:x", ["tag:go"]) == 2
    assert r.type("team:x") == "set" and r.ttl("team:x") == -1
    # The destination may be one of the sources.
    assert r.sdiffstore("team:all", ["team:all", "tag:python"]) == 2
    assert r.smembers("team:all") == {"carol", "erin"}


def test_move_pop_random(r):
    tag_users(r)
    assert r.smove("tag:go", "tag:retired", "bob") is True
    assert r.smove("tag:go", "tag:retired", "bob") is False
    assert r.smembers("tag:retired") == {"bob"}
    picked = r.srandmember("tag:ops", 2)
    assert len(picked) == 2 and len(set(picked)) == 2 and set(picked) <= users_with("ops")
    assert len(r.srandmember("tag:ops", -10)) == 10
    assert r.srandmember("tag:nope") is None
    popped = r.spop("tag:ops", 2)
    assert len(popped) == 2 and set(popped) <= users_with("ops")
    assert r.smembers("tag:ops") == users_with("ops") - set(popped)
    last = r.spop("tag:ops")
    assert r.exists("tag:ops") == 0 and last not in popped  # emptied, so deleted


def test_sscan_iter_large_set(r):
    members = {f"user:{i}" for i in range(5000)}
    members |= {str(i) for i in range(1000)}  # integers too
    pipe = r.pipeline(transaction=False)
    items = sorted(members)
    for i in range(0, len(items), 500):
        pipe.sadd("everyone", *items[i:i + 500])
    assert sum(pipe.execute()) == len(members)
    assert r.object("encoding", "everyone") == "hashtable"
    assert set(r.sscan_iter("everyone", count=100)) == members
    assert set(r.sscan_iter("everyone", match="user:42*")) == {
        m for m in members if m.startswith("user:42")}
    # Members present for the whole scan are all returned even while the set changes.
    seen, cursor, step = set(), 0, 0
    while True:
        cursor, batch = r.sscan("everyone", cursor, count=50)
        seen.update(batch)
        if cursor == 0:
            break
        step += 1
        r.sadd("everyone", *[f"late:{step}:{j}" for j in range(30)])
        if step % 3 == 0:
            r.srem("everyone", *[f"late:{step - 1}:{j}" for j in range(30)])
    assert members <= seen


def test_encodings_and_errors(r):
    r.sadd("small", 1, 2, 3)
    assert r.object("encoding", "small") == "intset"
    r.sadd("small", "x")
    assert r.object("encoding", "small") == "listpack"
    r.sadd("small", *range(200))
    assert r.object("encoding", "small") == "hashtable"
    r.set("str", "v")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        r.sadd("str", "x")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        r.get("small")
    with pytest.raises(redis.ResponseError, match="must be positive"):
        r.spop("small", -1)
    with pytest.raises(redis.ResponseError, match="numkeys"):
        r.execute_command("SINTERCARD", 0, "small")


def test_random_algebra_matches_python_sets(r):
    rng = random.Random(3)
    model = {}
    for step in range(400):
        key = f"k{rng.randrange(4)}"
        members = [str(rng.randrange(700)) if rng.random() < 0.5 else f"m{rng.randrange(300)}"
                   for _ in range(rng.randrange(1, 30))]
        op = rng.randrange(4)
        if op == 0:
            added = r.sadd(key, *members)
            assert added == len(set(members) - model.get(key, set()))
            model.setdefault(key, set()).update(members)
        elif op == 1:
            removed = r.srem(key, *members)
            assert removed == len(set(members) & model.get(key, set()))
            model[key] = model.get(key, set()) - set(members)
        else:
            a, b = f"k{rng.randrange(4)}", f"k{rng.randrange(4)}"
            sa, sb = model.get(a, set()), model.get(b, set())
            result = (sa & sb) if op == 2 else (sa | sb)
            stored = (r.sinterstore if op == 2 else r.sunionstore)(key, [a, b])
            assert stored == len(result)
            model[key] = set(result)
        for k, v in model.items():
            assert r.smembers(k) == v, (step, k)
            assert r.exists(k) == (1 if v else 0)
