#!/usr/bin/env python3
"""Writes the link order of kioskcam's functions (scripts/link-order) from callgrind
profiles: every function of the profiled program that ran.

A function is listed when a profile charges it instructions of its own; names are the
symbol-table names (callgrind run with --demangle=no), as lld's --symbol-ordering-file
wants them. The two long-running jobs each get their functions in as few places as
can be: first what both `record` and the daemon run, then the daemon's own, then
`record`'s own, then what only the short CLI commands run; the busiest first in each.
A profile's job is its file's name: record*.callgrind, daemon*.callgrind, the rest CLI.
Usage: link_order.py PROGRAM-NAME OUTPUT PROFILE...
"""
import collections
import gzip
import os
import re
import sys


# A run of kioskcam runs thousands of its functions; fewer means the profiles are of
# something else (another program's name, a run that failed at once).
MINIMUM_FUNCTIONS = 1000


def functions(program, profiles):
    """Self instruction counts of `program`'s functions, per profile file."""
    counts = {}
    for path in profiles:
        cost = counts.setdefault(path, collections.Counter())
        names = {}  # callgrind may name a file, object or function once and then by (id)
        obj = fn = None
        skip_next = False
        with open(path, errors="replace") as f:
            for line in f:
                if line.startswith(("ob=", "fn=", "cob=", "cfn=")):
                    called = line.startswith("c")
                    kind, value = line[called:called + 2], line[called + 3:].strip()
                    m = re.match(r"\((\d+)\)(?: (.*))?$", value)
                    if m:  # compressed: "(id) name" the first time, "(id)" after; a
                        # callee's line (cob=, cfn=) may be the first to name an id
                        key = (kind, m.group(1))
                        if m.group(2) is not None:
                            names[key] = m.group(2)
                        value = names.get(key, "")
                    if called:
                        continue
                    if kind == "ob":
                        obj = value
                    else:
                        # A function in a recursion cycle is named NAME'2.
                        fn = re.sub(r"'\d+$", "", value)
                elif line.startswith("calls="):
                    skip_next = True  # the next cost line is the call's, not fn's own
                elif line[:1].isdigit() or line[:1] in "+-*":
                    if skip_next:
                        skip_next = False
                        continue
                    fields = line.split()
                    if len(fields) >= 2 and obj and obj.endswith("/" + program) and fn:
                        try:
                            cost[fn] += int(fields[1])
                        except ValueError:
                            pass
    return counts


def job(path):
    name = os.path.basename(path)
    return "record" if name.startswith("record") else "daemon" if name.startswith("daemon") else "cli"


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    program, output, profiles = sys.argv[1], sys.argv[2], sys.argv[3:]
    counts = functions(program, profiles)
    cost = collections.Counter()
    jobs = collections.defaultdict(set)
    for path, counted in counts.items():
        for name, instructions in counted.items():
            if instructions > 0:
                cost[name] += instructions
                jobs[name].add(job(path))
    # Addresses without a symbol (0x…) and callgrind's own entries ("(below main)")
    # cannot be placed.
    placeable = [name for name in cost if not name.startswith(("0x", "(")) and " " not in name]

    def group(name):
        ran = jobs[name]
        if {"record", "daemon"} <= ran:
            return 0
        return 1 if "daemon" in ran else 2 if "record" in ran else 3

    ranked = sorted(placeable, key=lambda name: (group(name), -cost[name], name))
    if len(ranked) < MINIMUM_FUNCTIONS:
        sys.exit(f"link_order: only {len(ranked)} functions of {program} ran in the profiles: not a kioskcam run?")
    # Compressed (a quarter of the size in the repository); mtime 0 so that the same
    # profile writes the same bytes.
    with open(output, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
        for name in ranked:
            f.write(name.encode() + b"\n")
    sizes = collections.Counter(group(name) for name in ranked)
    print(f"link_order: {len(ranked)} functions ({sizes[0]} run by both record and the daemon, {sizes[1]} by the daemon only, "
          f"{sizes[2]} by record only, {sizes[3]} by the CLI only), {sum(cost.values()):,} instructions of their own, into {output} (gzip)")


if __name__ == "__main__":
    main()
