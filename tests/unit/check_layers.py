"""The layer rule, checked on the sources: what each part of the tree may include.

  sdk/, modules/      the SDK headers ("vessel/..."), their own folder's headers and system
                      headers; never anything of host/ (a module is built against sdk/ alone)
  host/resp           host/resp only
  host/config         host/config only
  host/cluster        host/cluster, host/engine, host/resp, host/config (the node: bus thread,
                      CLUSTER commands, routing); its library files (slots, bus_message,
                      nodes_conf) host/cluster only
  host/net            host/net, the engine's interface (engine.h, session.h) and strutil
  host/engine         host/engine, host/resp, host/config, and host/cluster/slots.h (a key's slot:
                      in cluster mode it is part of the key's hash); never net or the loader
  host/modules        host/modules, the engine's interface and helpers it lends (memory, strutil)
  host/persist        host/persist, host/engine, host/resp, host/config (never host/repl: it feeds
                      the replication stream through the engine's ReplicationHooks)
  host/repl           host/repl, host/persist, host/engine, host/resp, host/config
  tests/commands      nothing of host/ but host/persist (RDB builders and fault hooks: the format
                      is Redis's, not an engine internal); black-box tests speak RESP and see
                      the SDK's descriptors through tests/support, which alone may look inside
                      the in-process server
  tests/ds            nothing of host/: a module's data structures run on the host stand-in

Run by ctest (label unit); prints every violation with the file and line.
"""
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')

# folder -> allowed prefixes of quoted includes that name host/ files
HOST_RULES = {
    "host/resp": ["host/resp/"],
    "host/config": ["host/config/"],
    "host/cluster": ["host/cluster/", "host/engine/", "host/resp/", "host/config/"],
    "host/net": ["host/net/", "host/engine/engine.h", "host/engine/session.h",
                 "host/engine/strutil.h"],
    "host/engine": ["host/engine/", "host/resp/", "host/config/", "host/cluster/slots.h"],
    "host/persist": ["host/persist/", "host/engine/", "host/resp/", "host/config/"],
    "host/repl": ["host/repl/", "host/persist/", "host/engine/", "host/resp/", "host/config/"],
    "host/modules": ["host/modules/", "host/engine/engine.h", "host/engine/memory.h",
                     "host/engine/abi_sizes.h",
                     "host/engine/strutil.h", "host/config/config.h"],
}


def sources(folder):
    for dirpath, _, files in os.walk(os.path.join(ROOT, folder)):
        for f in files:
            if f.endswith((".h", ".hpp", ".c", ".cc")):
                yield os.path.join(dirpath, f)


def includes(path):
    with open(path, encoding="utf-8", errors="replace") as fh:
        for n, line in enumerate(fh, 1):
            m = INCLUDE.match(line)
            if m:
                yield n, m.group(1)


def main():
    bad = []
    for folder in ("sdk", "modules"):
        for path in sources(folder):
            for n, inc in includes(path):
                if inc.startswith("host/") or "/host/" in inc or inc.startswith("../"):
                    bad.append(f"{os.path.relpath(path, ROOT)}:{n}: includes {inc} "
                               "(modules and the SDK see only sdk/include)")
    for folder, allowed in HOST_RULES.items():
        for path in sources(folder):
            for n, inc in includes(path):
                if inc.startswith("host/") and not any(inc.startswith(a) for a in allowed):
                    bad.append(f"{os.path.relpath(path, ROOT)}:{n}: includes {inc} "
                               f"({folder} may include {', '.join(allowed)})")
    for name in ("slots", "bus_message", "nodes_conf"):
        for ext in (".h", ".cc"):
            path = os.path.join(ROOT, "host/cluster", name + ext)
            for n, inc in includes(path):
                if inc.startswith("host/") and not inc.startswith("host/cluster/"):
                    bad.append(f"{os.path.relpath(path, ROOT)}:{n}: includes {inc} "
                               "(the cluster library includes host/cluster only)")
    for path in sources("tests/commands"):
        for n, inc in includes(path):
            if inc.startswith("host/") and not inc.startswith("host/persist/"):
                bad.append(f"{os.path.relpath(path, ROOT)}:{n}: includes {inc} "
                           "(command tests are black-box: use tests/support)")
    for path in sources("tests/ds"):
        for n, inc in includes(path):
            if inc.startswith("host/") or "/host/" in inc:
                bad.append(f"{os.path.relpath(path, ROOT)}:{n}: includes {inc} "
                           "(data-structure tests run without the server: tests/ds/host_stub.h)")
    for line in bad:
        print(line)
    print(f"layer check: {len(bad)} violation(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
