#!/usr/bin/env python3
"""The include graph follows the component graph of CMakeLists.txt: a component's files include
only their own component's headers and those of the components it is built on. So a header-only
include that would compile and link anyway (rules/ reaching into daemon/state/, say) still fails
here. Exit 0 when every include is allowed; else each offending include as file:line."""
import os
import re
import sys

# component (folder or file) -> the components it may include, besides itself. The bottom of the
# graph is daemon/core, which reaches nothing above it; rules and collectors reach only core.
ALLOWED = {
    "daemon/core": [],
    "rules": ["daemon/core"],
    "collectors": ["daemon/core"],
    "daemon/state": ["daemon/core"],
    "daemon/control": ["daemon/core"],
    "daemon/actions": ["daemon/core", "daemon/state"],
    "daemon/export": ["daemon/core", "daemon/state", "collectors", "rules"],
    "daemon/config": ["daemon/core", "daemon/state", "daemon/actions", "collectors", "rules"],
    "daemon/pipeline": ["daemon/core", "daemon/state", "daemon/actions", "daemon/config",
                        "collectors", "rules"],
    "daemon/app": ["daemon/core", "daemon/state", "daemon/actions", "daemon/config",
                   "daemon/pipeline", "daemon/export", "daemon/control", "collectors", "rules"],
    "daemon/main.cpp": ["daemon/app", "daemon/core", "daemon/config"],
    "compare": ["daemon/core"],
    "daemon/faultctl.cpp": ["daemon/control", "daemon/core", "collectors", "compare"],
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def component_of(path):
    best = None
    for c in ALLOWED:
        if path == c or path.startswith(c + "/"):
            if best is None or len(c) > len(best):
                best = c
    return best


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.getcwd()
    bad, checked = [], 0
    for top in ("daemon", "rules", "collectors", "compare"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".cpp", ".hpp")):
                    continue
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, root)
                mine = component_of(rel)
                if mine is None:
                    bad.append("%s: not in any component of the layering table" % rel)
                    continue
                with open(full, encoding="utf-8", errors="replace") as fh:
                    for lineno, line in enumerate(fh, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        checked += 1
                        target = component_of(m.group(1))
                        if target is None or (target != mine and target not in ALLOWED[mine]):
                            bad.append("%s:%d: %s may not include %s" % (rel, lineno, mine, m.group(1)))
    for b in bad:
        print(b)
    print("layering: %d includes checked, %d not allowed" % (checked, len(bad)))
    return 1 if bad or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
