#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Report of tests/bench/insn-profile.sh: guest instructions per work request of the
kernel-verbs bench, mlx5_rs beside upstream, from the plugin's snapshots.

    report.py CONSOLE_LOG SNAPSHOT_PREFIX SYSTEM_MAP [TOP]

The k-th `INSN-MARK` of the console log is snapshot PREFIX.k; a driver's bench is the
difference between its start and end snapshots. Each counted block is charged to the
symbol its first instruction is in (System.map for the kernel, booted with nokaslr;
the INSN-SYM lines for the modules loaded with that driver). Prints, per driver, the
instructions per work request in all, in the driver's own modules, and the TOP
functions (default 25) of the driver's modules and of the kernel; then the driver's
functions side by side. Exits non-zero when a snapshot or a bench line is missing.

A window may be labelled `DRIVER/CASE` (guest-insn.sh's idle and perftest windows):
its `INSN-BENCH` line's `sends=N unit=WORD` gives the divisor and its name; blocks
below the kernel's addresses (the plugin's user=1) are charged to `[user]`.
"""
import bisect
import collections
import re
import sys

DRIVER_MODULES = {"mlx5_rs": {"mlx5_rs"}, "upstream": {"mlx5_ib", "mlx5_core"}}
# The plugin's kernel addresses start here; below, with its user=1, user space.
KERNEL_START = 0xFFFF800000000000


def base(label):
    """The driver of a window's label (`mlx5_rs`, `upstream/idle`, ...)."""
    return label.split("/")[0]


def demangle(name):
    """A Rust v0 symbol's identifiers joined with '::' (disambiguators and the crates'
    names dropped); other names as they are."""
    if not name.startswith("_R"):
        return name
    # Disambiguators: 's', base-62 digits, '_' after a crate root (C) or an impl (X).
    body = re.sub(r"(?<=[CX])s[0-9A-Za-z]*_", "", name[2:])
    idents = []
    i = 0
    while i < len(body):
        m = re.match(r"(\d+)_?", body[i:])
        if not m:
            i += 1
            continue
        n = int(m.group(1))
        word = body[i + m.end() : i + m.end() + n]
        if n and len(word) == n and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", word):
            idents.append(word)
            i += m.end() + n
        else:
            i += m.end()
    idents = [w for w in idents if w not in ("mlx5_rs_core", "kernel", "core")]
    return "::".join(idents) if idents else name


def main():
    log, prefix, sysmap = sys.argv[1:4]
    top = int(sys.argv[4]) if len(sys.argv) > 4 else 25
    kernel = []
    for line in open(sysmap):
        w = line.split()
        if len(w) >= 3 and w[1] in "tTwW":
            kernel.append((int(w[0], 16), w[2], "vmlinux"))
    marks, syms, wrs = [], collections.defaultdict(list), {}
    for line in open(log, errors="replace"):
        line = line.strip()
        w = line.split()
        if line.startswith("INSN-MARK ") and len(w) == 3:
            marks.append((w[1], w[2]))
        elif line.startswith("INSN-SYM ") and len(w) >= 6:
            syms[w[1]].append((int(w[2], 16), w[4], w[5].strip("[]")))
        elif line.startswith("INSN-BENCH ") and len(w) >= 3:
            m = re.search(r" sends=(\d+)", line)
            if m:
                u = re.search(r" unit=(\w+)", line)
                wrs[w[1]] = (int(m.group(1)), u.group(1) if u else None)

    def snap(k):
        counts = collections.Counter()
        with open(f"{prefix}.{k}") as f:
            for line in f:
                va, n, runs = line.split()
                counts[(int(va, 16), int(n))] += int(runs)
        return counts

    results = {}
    for k, (drv, what) in enumerate(marks):
        if what != "start" or k + 1 >= len(marks) or marks[k + 1] != (drv, "end"):
            continue
        if drv not in wrs:
            sys.exit(f"no bench line for {drv}")
        table = sorted(kernel + syms[base(drv)])
        addrs = [a for a, _, _ in table]
        a, b = snap(k), snap(k + 1)
        per = collections.Counter()
        total = 0
        for key, runs in b.items():
            d = runs - a.get(key, 0)
            if d <= 0:
                continue
            va, n = key
            if va < KERNEL_START:
                name, mod = "(all processes)", "user"
            else:
                i = bisect.bisect_right(addrs, va) - 1
                _, name, mod = table[i] if i >= 0 else (0, "?", "?")
            per[(mod, name)] += d * n
            total += d * n
        results[drv] = (wrs[drv], total, per)
    if not results:
        sys.exit("no bench between two marks")
    for drv, ((n, unit), total, per) in results.items():
        mods = DRIVER_MODULES.get(base(drv), ())
        own = sum(v for (mod, _), v in per.items() if mod in mods)
        usr = sum(v for (mod, _), v in per.items() if mod == "user")
        what = (f"per {unit} ({n} {unit}s)" if unit else
                f"per work request ({n} SENDs and as many receives)")
        print(f"== {drv}: {total / n:.0f} guest instructions {what}, "
              f"{own / n:.0f} of them in {'+'.join(sorted(mods))}"
              + (f", {usr / n:.0f} in user space" if usr else ""))
        for (mod, name), v in per.most_common(top):
            print(f"  {v / n:9.1f}  [{mod}] {demangle(name)}")
    print("== the drivers' own functions, instructions per work request "
          "(per the bench line's unit where it names one)")
    for drv, ((n, unit), _, per) in results.items():
        mods = DRIVER_MODULES.get(base(drv), ())
        rows = [(v, name, mod) for (mod, name), v in per.items()
                if mod in mods and v / n >= 1]
        for v, name, mod in sorted(rows, reverse=True):
            print(f"  {drv:16s} {v / n:9.1f}  [{mod}] {demangle(name)}")


if __name__ == "__main__":
    main()
