"""What the fake tools of the hook recipe tests share: their state directory, the call log the
tests read, and injected failures.

  FAKE_TOOL_DIR   the fakes' state: kube/ (kubectl's objects), slurm.json (scontrol's nodes),
                  calls.jsonl (every call as {"tool", "argv", "stdin"}, in order)
  $FAKE_TOOL_DIR/<tool>.fail-next: when present, the tool's next call prints its content on
                  stderr, exits 1 and removes the file (a transient error, once).
  $FAKE_TOOL_DIR/<tool>.fail-<word>: the same, for the next call with <word> in its argv
                  (kubectl.fail-patch: the write after a successful read fails).
"""
import json
import os
import sys

ROOT = os.environ["FAKE_TOOL_DIR"]


def fail(message, status=1):
    print(message, file=sys.stderr)
    sys.exit(status)


def start(tool, read_stdin):
    """Logs the call and applies an injected failure; returns (argv, stdin text)."""
    argv = sys.argv[1:]
    stdin = sys.stdin.read() if read_stdin else ""
    with open(os.path.join(ROOT, "calls.jsonl"), "a") as f:
        f.write(json.dumps({"tool": tool, "argv": argv, "stdin": stdin}) + "\n")
    for word in ["next"] + argv:
        injected = os.path.join(ROOT, "%s.fail-%s" % (tool, word.replace("/", "_")))
        if os.path.exists(injected):
            with open(injected) as f:
                message = f.read().strip()
            os.remove(injected)
            fail(message)
    return argv, stdin


def save_json(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
    os.replace(path + ".tmp", path)
