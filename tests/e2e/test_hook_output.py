#!/usr/bin/env python3
"""What a hook printed is visible (issue 28, item 7): `faultctl events` ends an action's DETAIL
with the hook's last line, `--verbose` prints all of it under the row, `-o json` carries it as
`output`, and a failed hook's first line is in faultd's log warning. The hook is a real child
process of a real faultd; its output is the hook's own, written by this test."""
import os
import re

from harness import Faultd, free_port, wait_for
from test_hook_processes import config, inject, write_script


def hook_output_is_shown(args, check, work):
    # Fails for device 5 with its reason first, succeeds elsewhere with its outcome last.
    hook = write_script(os.path.join(work, "isolate.sh"),
                        'if [ "$FAULTD_DEVICE" = 5 ]; then\n'
                        '  echo "cannot drain device 5: scheduler unreachable"\n'
                        '  echo "giving up"\n'
                        '  exit 1\n'
                        'fi\n'
                        'echo "draining device $FAULTD_DEVICE"\n'
                        'echo "step 2 of 2"\n'
                        'echo "device $FAULTD_DEVICE drained"\n')
    d = Faultd(args, work, config(work, free_port(), "{ argv: [%s], timeout: 30s }" % hook))
    d.start()
    inject(work, ["4", "5"])

    def finished():
        actions = d.ctl_json("events")["actions"]
        done = [a for a in actions if a["status"] in ("success", "failure")]
        return actions if len(done) == 2 else None

    actions = {a["device"]: a for a in wait_for("both isolate hooks to finish", finished)}
    check(actions["4"]["output"] == "draining device 4\nstep 2 of 2\ndevice 4 drained\n",
          "-o json carries all the hook printed (%r)" % actions["4"].get("output"))

    table = d.ctl("events").stdout
    row4 = next((l for l in table.splitlines() if " isolate " in l and " 4 " in l), "")
    check(row4.endswith("said: device 4 drained"),
          "the table's DETAIL ends with the hook's last line (%r)" % row4)
    check("step 2 of 2" not in table, "without --verbose, only the last line is shown")

    verbose = d.ctl("events", "--verbose").stdout
    check("| draining device 4" in verbose and "| step 2 of 2" in verbose
          and "| cannot drain device 5: scheduler unreachable" in verbose,
          "--verbose prints every line the hooks printed:\n" + verbose)

    def outcome(device, result):
        pattern = re.compile(r"action isolate for device %s fault \d+: %s " % (device, result))
        return next((l for l in d.read_log().splitlines() if pattern.search(l)), None)

    warning = wait_for("the failure's warning", lambda: outcome(5, "failure"))
    check(warning.endswith("cannot drain device 5: scheduler unreachable"),
          "a failed hook's first line is in the log (%r)" % warning)
    success = wait_for("the success's line", lambda: outcome(4, "success"))
    check("drained" not in success, "a hook that succeeded leaves its output out of the log (%r)"
          % success)
    check(d.stop() == 0, "faultd stops cleanly")


if __name__ == "__main__":
    import harness
    harness.main(hook_output_is_shown)
