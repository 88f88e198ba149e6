"""The expected FaultDiag findings over the generated logs, computed independently of faultd.

FaultDiag's kg-config.json is read here with its documented semantics (docs of
rules/catalogs/faultdiag.hpp): an entry's `in` lists are AND-groups of substrings, OR-ed (a flat
list is one group); a `regex` entry is a search on the line (Python's re on Latin-1 text; the
file's four patterns mean the same in RE2); entries without a pattern or whose log classes are
not mapped give no rule. The multi-line `opt` entry must not be mapped (this reference does not
model it; the function refuses rather than give a wrong answer).

Lines are those faultd hands to rules: split at '\\n', a trailing '\\r' removed. Every distinct
line is matched once (the generated logs repeat a pool of lines), so a 1 GiB log takes seconds.
"""
import json
import re


def rule_id(entry_id):
    out = "faultdiag."
    for c in entry_id:
        if "A" <= c <= "Z":
            out += c.lower()
        elif ("a" <= c <= "z") or ("0" <= c <= "9") or c in "._-":
            out += c
        else:
            out += "-"
    return out


def load(kg_path, source_classes):
    """{source name: [(rule id, predicate(line) -> bool)]} for the entries mapped by
    `source_classes` ({FaultDiag class: [source names]})."""
    repo = json.load(open(kg_path, encoding="utf-8"))["knowledge-repository"]
    by_source = {}
    for entry_id, entry in repo.items():
        pattern = entry.get("regex") or {}
        if len(pattern) != 1:
            continue
        classes = [c.strip() for c in (entry.get("source_file") or "").split("|") if c.strip()]
        sources = sorted({s for c in classes for s in source_classes.get(c, [])})
        if not sources:
            continue
        kind, value = next(iter(pattern.items()))
        if kind == "in":
            groups = [value] if value and isinstance(value[0], str) else value
            groups = [[s.encode("utf-8").decode("latin-1") for s in g] for g in groups]
            pred = (lambda gs: lambda line: any(all(s in line for s in g) for g in gs))(groups)
        elif kind == "regex":
            pred = re.compile(value.encode("utf-8").decode("latin-1")).search
        elif kind == "opt":
            raise ValueError("multi-line entry %s is mapped: not modelled here" % entry_id)
        else:
            continue
        for s in sources:
            by_source.setdefault(s, []).append((rule_id(entry_id), pred))
    return by_source


def expected(kg_path, source_classes, files):
    """Counter of (path, line number, rule id) over `files` ([(path, source name)])."""
    import collections
    rules = load(kg_path, source_classes)
    out = collections.Counter()
    for path, source in files:
        preds = rules.get(source, [])
        cache = {}
        with open(path, "rb") as f:
            for number, raw in enumerate(f, 1):
                hits = cache.get(raw)
                if hits is None:
                    line = raw.rstrip(b"\n")
                    if line.endswith(b"\r"):
                        line = line[:-1]
                    text = line.decode("latin-1")
                    hits = cache[raw] = [rid for rid, pred in preds if pred(text)]
                for rid in hits:
                    out[(path, number, rid)] += 1
    return out
