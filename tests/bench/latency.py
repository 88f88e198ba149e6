#!/usr/bin/env python3
"""Write-to-metric delay of the real faultd: appends N fault lines (one device each) to a watched
file and, for each, polls /metrics until the device shows `warning`. Prints p50/p90/p99/max.

  latency.py --faultd build/faultd --faultctl build/faultctl --source-dir . [--n 50]"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from harness import Faultd, cleanup, free_port, metric_value, scrape, stop_all, tempdir  # noqa: E402

import argparse  # noqa: E402

LINE = ("[ERROR] ASCENDCL(59420,python3):2025-01-24-11:24:07.908.526 [silent_check.cc:88]107630 "
        "AsdCheck: accuracy sensitivity feature abnormal, device_id={d}\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--faultd", required=True)
    ap.add_argument("--faultctl", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--n", type=int, default=50)
    args = ap.parse_args()
    work = tempdir()
    try:
        port = free_port()
        rules = os.path.join(os.path.abspath(args.source_dir), "etc", "faultd", "rules.d")
        os.makedirs(os.path.join(work, "logs"))
        log = os.path.join(work, "logs", "plog-1_1.log")
        open(log, "w").close()
        d = Faultd(args, work, f"""
state_dir: {work}/state
metrics: {{ listen: "127.0.0.1:{port}" }}
control: {{ socket: {work}/control.sock, group: "" }}
include: ["{rules}/*.yaml"]
sources: [{{ name: plog, paths: ["{work}/logs/plog-*.log"] }}]
""")
        d.start()
        delays = []
        with open(log, "a", buffering=1) as f:
            for i in range(args.n):
                t0 = time.perf_counter()
                f.write(LINE.format(d=i))
                while metric_value(scrape(port), "faultd_device_state",
                                   {"device": str(i), "state": "warning"}) != 1.0:
                    if time.perf_counter() - t0 > 10:
                        raise SystemExit("device %d never became warning" % i)
                delays.append((time.perf_counter() - t0) * 1000)
        text = scrape(port)
        d.stop()
        delays.sort()
        pick = lambda q: delays[min(len(delays) - 1, int(q * len(delays)))]
        print("write-to-metric delay over %d faults: p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms"
              % (len(delays), pick(0.5), pick(0.9), pick(0.99), delays[-1]))
        count = metric_value(text, "faultd_detection_latency_seconds_count", {})
        total = metric_value(text, "faultd_detection_latency_seconds_sum", {})
        print("faultd's own noticed-to-committed latency: mean %.3f ms over %d findings"
              % (total / count * 1000, count))
    finally:
        stop_all()
        cleanup(work)


if __name__ == "__main__":
    main()
