#!/usr/bin/env python3
"""Rotation storm: one stream rotated every second, alternately by rename (app.log -> app.log.1,
the previous app.log.1 compressed to app.log.N.gz and removed) and by copytruncate (app.log
copied to a compressed app.log.N.gz, then truncated), while a second writer starts a new
jobs/job-N/train.log under the glob every second. Every fault is found exactly once and
faultd_source_rotations_total matches the rotations done.

copytruncate loses what the reader has not read when the truncate comes (in the worst case only
the bytes written between the copy and the truncate, when the reader keeps up). The storm below
copies once faultd has consumed the file, which is the case logrotate relies on; the last part
shows the loss case and what faultd can tell of it (tests/chaos/README.md).

Short mode: ~8 s of storm; FAULTD_CHAOS_LONG=1: ~60 s."""
import gzip
import os
import random
import shutil

import chaos
import harness
from chaos import say
from harness import Faultd, free_port, metric_value, scrape, wait_for

SECONDS = 60 if chaos.LONG else 8
RATE = 20_000  # lines per second per writer, roughly (batch 200 every ~10 ms)


def run(args, check, work):
    rng = random.Random(chaos.SEED)
    logs = os.path.join(work, "logs")
    os.makedirs(os.path.join(logs, "jobs"))
    port = free_port()
    rules = os.path.join(os.path.abspath(args.source_dir), "etc", "faultd", "rules.d")
    d = Faultd(args, work, f"""
node: chaos
state_dir: {work}/state
metrics: {{ listen: "127.0.0.1:{port}" }}
control: {{ socket: {work}/control.sock, group: "" }}
policy:
  # every injected fault is its own incident: no grouping, no storm verdict
  incident_ttl: 0s
  storm: {{ min_devices: 100000 }}
# a device per fault: without an inventory only the first 64 device ids named would count
inventory: {{ devices: "0-{2 * 12 * SECONDS - 1}" }}
include: ["{rules}/*.yaml"]
sources:
  - {{ name: app, type: file, paths: ["{logs}/app.log", "{logs}/app.log.1"] }}
  - {{ name: jobs, type: file, paths: ["{logs}/jobs/*/train.log"] }}
""")
    d.start()

    def lines_consumed(source):
        return metric_value(scrape(port), "faultd_source_lines_total", {"source": source}) or 0

    done = {"rename": 0, "truncate": 0, "gz": 0}
    app = None  # the writer, for the count of lines written so far

    def rotate(path):
        if (done["rename"] + done["truncate"]) % 2 == 0:
            old = path + ".1"
            if os.path.exists(old):
                with open(old, "rb") as src, gzip.open("%s.%d.gz" % (path, done["gz"]), "wb") as z:
                    shutil.copyfileobj(src, z)
                os.unlink(old)
                done["gz"] += 1
            os.rename(path, old)
            done["rename"] += 1
        else:
            wait_for("faultd to consume app.log before the copy",
                     lambda: lines_consumed("app") == app.written, timeout=30)
            with open(path, "rb") as src, gzip.open("%s.%d.gz" % (path, done["gz"]), "wb") as z:
                shutil.copyfileobj(src, z)
            done["gz"] += 1
            os.truncate(path, 0)
            done["truncate"] += 1
        return path

    jobs_made = [0]

    def new_job(_path):
        jobs_made[0] += 1
        job = os.path.join(logs, "jobs", "job-%d" % jobs_made[0])
        os.makedirs(job)
        return os.path.join(job, "train.log")

    faults = 12 * SECONDS
    lines = RATE * SECONDS // 2
    app = chaos.Writer(os.path.join(logs, "app.log"), lines, faults, rng, pause=0.01,
                       rotate=rotate, rotate_every=1.0)
    first_job = new_job(None)
    jobs = chaos.Writer(first_job, lines, faults, rng, pause=0.01, rotate=new_job,
                        rotate_every=1.0, devices=list(range(faults, 2 * faults)))
    app.start()
    jobs.start()
    app.join()
    jobs.join()
    check(app.error is None and jobs.error is None, "writers ran (%s, %s)" % (app.error, jobs.error))
    injected = {(ino, off): dev for ino, off, dev in app.injected + jobs.injected}
    wait_for("all lines consumed",
             lambda: lines_consumed("app") == app.written and lines_consumed("jobs") == jobs.written,
             timeout=60)
    wait_for("every fault recorded", lambda: len(chaos.fault_rows(d.dir + "/state")) >= len(injected),
             timeout=30)
    found = {}
    for ino, off, dev, rule in chaos.fault_rows(d.dir + "/state"):
        found.setdefault((ino, off), []).append(dev)
    missing = [k for k in injected if k not in found]
    doubled = [k for k, v in found.items() if len(v) > 1]
    extra = [k for k in found if k not in injected]
    check(not missing, "no fault lost (%d of %d missing)" % (len(missing), len(injected)))
    check(not doubled and not extra, "none doubled (%s) or invented (%s)" % (doubled[:3], extra[:3]))
    text = scrape(port)
    renames = metric_value(text, "faultd_source_rotations_total", {"source": "app", "kind": "rename"})
    truncs = metric_value(text, "faultd_source_rotations_total",
                          {"source": "app", "kind": "truncate"})
    check(renames == done["rename"], "rename rotations counted: %s of %d" % (renames, done["rename"]))
    check(truncs == done["truncate"],
          "copytruncate rotations counted: %s of %d" % (truncs, done["truncate"]))
    check(metric_value(text, "faultd_source_rotations_total",
                       {"source": "jobs", "kind": "rename"}) == 0,
          "new files under the glob are not rotations")
    check(metric_value(text, "faultd_source_errors_total", {"source": "app", "kind": "read"}) == 0,
          "no read errors during the storm")
    say("figures: %d rename + %d copytruncate rotations, %d new job files, %d faults, %d lines, "
        "0 lost, 0 doubled" % (done["rename"], done["truncate"], jobs_made[0], len(injected),
                               app.written + jobs.written) if not check.failures else "see above")

    # The loss case: lines appended after faultd's last read and before the truncate are gone
    # with the copy. faultd sees the file shorter than where it stopped reading, or a different
    # first KiB, and counts a truncation; the lost bytes themselves it cannot see.
    before = metric_value(scrape(port), "faultd_source_rotations_total",
                          {"source": "app", "kind": "truncate"})
    path = os.path.join(logs, "app.log")
    with open(path, "ab") as f:
        f.write((chaos.FAULT % 999).encode())
    os.truncate(path, 0)  # faster than any poll: the line above is never read
    with open(path, "ab") as f:
        f.write((chaos.NOISE % 1).encode() * 3)
    wait_for("the truncation to be noticed",
             lambda: metric_value(scrape(port), "faultd_source_rotations_total",
                                  {"source": "app", "kind": "truncate"}) == before + 1, timeout=10)
    lost = [r for r in chaos.fault_rows(d.dir + "/state") if r[2] == "999"]
    say("loss case: the fault written just before the truncate was %s; the truncation was "
        "counted" % ("lost (as documented)" if not lost else "read"))
    if check.failures:
        print(d.read_log()[-20000:])
    d.stop()


if __name__ == "__main__":
    harness.main(run)
