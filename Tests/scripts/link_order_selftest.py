#!/usr/bin/env python3
"""scripts/lib/link_order.py on hand-written callgrind profiles: names given once by id
(also first by a callee's line), a call's cost not charged to the caller, other objects'
functions left out, and the groups in their order (both jobs, the daemon's, record's,
the CLI's), busiest first in each."""
import gzip
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "lib", "link_order.py")


def profile(lines):
    return "version: 1\ncreator: selftest\npositions: line\nevents: Ir\n" + "\n".join(lines) + "\n"


def main():
    failures = []
    with tempfile.TemporaryDirectory() as work:
        # record: `shared` (500) calls `rec_only` (named first by cfn=), whose call cost
        # (9999) must not count as shared's own; libc's function is not kioskcam's.
        record = profile([
            "ob=(1) /tmp/x/kioskcam",
            "fn=(1) shared",
            "10 500",
            "cfn=(2) rec_only",
            "calls=1 20",
            "11 9999",
            "fn=(2)",
            "20 40",
            "ob=(2) /lib/libc.so.6",
            "fn=(3) memcpy",
            "1 100000",
        ])
        daemon = profile([
            "ob=(1) /tmp/x/kioskcam",
            "fn=(1) shared",
            "10 7",
            "fn=(2) daemon_busy",
            "1 300",
            "fn=(3) daemon_quiet",
            "1 3",
            "fn=(4) 0x0000000000abcdef",
            "1 50",
        ])
        cli = profile([
            "ob=(1) /tmp/x/kioskcam",
            "fn=(1) cli_only",
            "1 1",
            "fn=(2) shared",
            "1 1",
        ])
        paths = []
        for name, text in (("record.callgrind", record), ("daemon.callgrind", daemon), ("status.callgrind", cli)):
            path = os.path.join(work, name)
            with open(path, "w") as f:
                f.write(text)
            paths.append(path)
        output = os.path.join(work, "order.gz")
        # Fewer than 1000 functions is refused (not a kioskcam run) …
        refused = subprocess.run([sys.executable, SCRIPT, "kioskcam", output, *paths], capture_output=True, text=True)
        if refused.returncode == 0 or "only 5 functions" not in refused.stderr:
            failures.append(f"five functions were not refused: {refused.returncode} {refused.stderr!r}")
        # … so for the order itself the module is imported and run below that floor.
        sys.path.insert(0, os.path.dirname(SCRIPT))
        import link_order
        link_order.MINIMUM_FUNCTIONS = 1
        charged = dict(link_order.functions("kioskcam", paths[:1])[paths[0]])
        if charged != {"shared": 500, "rec_only": 40}:
            failures.append(f"record's own costs {charged}, expected shared 500 and rec_only 40 (no call cost, no libc)")
        sys.argv = ["link_order.py", "kioskcam", output, *paths]
        link_order.main()
        with gzip.open(output, "rt") as f:
            order = f.read().split()
        expected = ["shared", "daemon_busy", "daemon_quiet", "rec_only", "cli_only"]
        if order != expected:
            failures.append(f"order {order}, expected {expected}")
        with open(output, "rb") as f:
            first = f.read()
        link_order.main()
        with open(output, "rb") as f:
            if f.read() != first:
                failures.append("the same profiles wrote different bytes")
    for failure in failures:
        print("link_order selftest: FAIL:", failure)
    if failures:
        sys.exit(1)
    print("link_order selftest: 4 checks passed (refusal, grouping and order, call costs and other objects left out, same bytes)")


if __name__ == "__main__":
    main()
