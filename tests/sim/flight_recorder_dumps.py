"""Flight Recorder dumps in PyTorch's format, written without PyTorch: the dict the recorder
pickles on a collective timeout (torch/csrc/distributed/c10d/FlightRecorder.cpp `dump`,
torch_npu/csrc/distributed/TraceUtils.h for HCCL; the provenance is in
tests/flight_recorder/README.md), pickled with protocol 2 as the recorder's Pickler does.

These are our own dumps in the real format, for tests and the demo: a job of `ranks` ranks in
one process group, every rank through collective `last - 1`, and every rank but the `stuck`
ones inside collective `last` (started, never completed); the stuck ranks never entered it.
"""
import os
import pickle

VERSIONS = ("2.4", "2.2")  # with pg_status (2.3 on), and entries only (before 2.3)


def ranks_str(ranks):
    return "[" + ", ".join(str(r) for r in ranks) + "]"


def entry(record_id, pg_name, seq, op, state, t0, timeout_ms=600000):
    """One collective as getCollectiveTrace writes it."""
    started = t0 + 1000 if state in ("started", "completed") else None
    completed = t0 + 2000 if state == "completed" else None
    e = {
        "record_id": record_id,
        "pg_id": 0,
        "process_group": (pg_name, "default_pg"),
        "collective_seq_id": seq,
        "p2p_seq_id": 0,
        "op_id": seq,
        "profiling_name": op,
        "time_created_ns": t0,
    }
    if completed is not None:
        e["duration_ms"] = 1.5
    e.update({
        "input_sizes": [[4194304]],
        "input_dtypes": ["Float"],
        "output_sizes": [[4194304]],
        "output_dtypes": ["Float"],
        "state": state,
        "time_discovered_started_ns": started,
        "time_discovered_completed_ns": completed,
        "retired": completed is not None,
        "timeout_ms": timeout_ms,
        "is_p2p": False,
    })
    return e


def dump(rank, ranks, last, stuck, version="2.4", backend="nccl", pg_name="0",
         t0=1_733_000_000_000_000_000):
    """The dump of one rank (a dict, before pickling)."""
    op = backend + ":all_reduce"
    own_last = last - 1 if rank in stuck else last
    entries = []
    for seq in range(1, own_last + 1):
        state = "completed" if seq < last else "started"
        entries.append(entry(seq - 1, pg_name, seq, op, state, t0 + seq * 10_000_000))
    d = {"version": version,
         "pg_config": {pg_name: {"name": pg_name, "desc": "default_pg",
                                 "ranks": ranks_str(ranks)}}}
    if version != "2.2":
        d["pg_status"] = {"0": {"last_enqueued_collective": own_last,
                                "last_started_collective": own_last,
                                "last_completed_collective": min(own_last, last - 1)}}
    d["entries"] = entries
    return d


def write_job(prefix, ranks, last, stuck, **kw):
    """Writes prefix + rank for every rank of `ranks`; returns the paths."""
    paths = []
    for r in ranks:
        path = "%s%d" % (prefix, r)
        with open(path + ".tmp", "wb") as f:
            pickle.dump(dump(r, ranks, last, stuck, **kw), f, protocol=2)
        paths.append(path)
    for p in paths:  # whole files only, as the recorder's writer leaves them
        os.replace(p + ".tmp", p)
    return paths
