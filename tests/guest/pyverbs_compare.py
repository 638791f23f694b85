#!/usr/bin/env python3
"""Judges the pyverbs results of both drivers (tests/guest/pyverbs_run.py output).

Usage:
  pyverbs_compare.py table UPSTREAM OURS
      the per-file table of both drivers (run / ok / skip / fail / error)
  pyverbs_compare.py upstream UPSTREAM EXPECTED [--write]
      upstream mlx5_ib's outcome of every test equals the kept one in EXPECTED
      (tests/guest/pyverbs.upstream: `<test id> <outcome>` per line, or
      `<outcome>|<outcome>` for a test whose outcome depends on the attributes pyverbs
      draws at random), so a change of the emulator that breaks (or newly allows)
      something upstream does shows; with --write, EXPECTED is written from UPSTREAM
      instead (alternatives kept from the file it replaces)
  pyverbs_compare.py ours UPSTREAM OURS DIFFERENCES
      no test went worse on mlx5_rs than on upstream — a test upstream passes that ours
      skips, fails or errors, or one upstream skips that ours fails or errors — unless
      DIFFERENCES (tests/guest/pyverbs.differences) lists it: `<test id or fnmatch
      pattern><TAB or two spaces><reason>` per line. Listed tests that are no longer
      worse print as `stale`, so the list can shrink.

Input files hold the console lines `PYV <driver> <outcome> <secs> <id> [reason]` (other
lines are ignored). Exit status: 0 as expected, 1 not, 2 unreadable or empty input.
"""
import fnmatch
import re
import sys

OUTCOMES = ("ok", "skip", "fail", "error")
# How good an outcome is, for "went worse": a failure and an error are equally bad.
RANK = {"ok": 2, "skip": 1, "fail": 0, "error": 0}


def results(path):
    """{test id: (outcome, reason)} of one driver's run."""
    out = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.match(r"^PYV \S+ (ok|skip|fail|error) [0-9.]+ (\S+)(?: (.*))?$", line.rstrip("\r\n"))
            if m:
                out[m.group(2)] = (m.group(1), m.group(3) or "")
    return out


def file_of(tid):
    """tests.test_qp.QPTest.test_x -> test_qp (class-level holders keep their text)."""
    m = re.search(r"\btests\.(test_[A-Za-z0-9_]+)", tid)
    return m.group(1) if m else "?"


def listed(path):
    """[(pattern, reason)] of a differences or expectation file, `#` comments skipped."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = re.split(r"\t+| {2,}", line.strip(), maxsplit=1)
            rows.append((parts[0], parts[1] if len(parts) > 1 else ""))
    return rows


def counts(res):
    per = {}
    for tid, (o, _) in res.items():
        c = per.setdefault(file_of(tid), dict.fromkeys(OUTCOMES, 0))
        c[o] += 1
    return per


def table(up, ours):
    cu, co = counts(up), counts(ours)
    print("| file | upstream mlx5_ib: ok / skip / fail / error | mlx5_rs: ok / skip / fail / error |")
    print("|---|---|---|")
    for f in sorted(set(cu) | set(co)):
        cells = []
        for c in (cu.get(f), co.get(f)):
            cells.append("not run" if c is None else " / ".join(str(c[o]) for o in OUTCOMES))
        print(f"| {f} | {cells[0]} | {cells[1]} |")
    return 0


def check_upstream(up, expected_path, write):
    if write:
        try:
            keep = {t: o for t, o in listed(expected_path) if "|" in o}
        except OSError:
            keep = {}
        with open(expected_path, "w", encoding="utf-8") as f:
            f.write(
                "# Upstream mlx5_ib's outcome of each pyverbs test on the emulator (scenario\n"
                "# 73-pyverbs; tests/guest/pyverbs_compare.py upstream). A change here is a change\n"
                "# of the emulator: regenerate with `pyverbs_compare.py upstream <run> <this file>\n"
                "# --write` from the scenario's /tmp/pyv.upstream and say why in the commit.\n"
            )
            for tid in sorted(up):
                f.write(f"{tid}\t{keep.get(tid, up[tid][0])}\n")
        print(f"pyverbs: wrote {len(up)} expectations to {expected_path}")
        return 0
    exp = dict(listed(expected_path))
    bad = 0
    for tid in sorted(set(exp) | set(up)):
        want = exp.get(tid, "(not expected)")
        got = up[tid][0] if tid in up else "(not run)"
        if got not in want.split("|"):
            bad += 1
            why = up[tid][1] if tid in up else ""
            print(f"CHANGED   {tid}: expected {want}, upstream now {got} {why}".rstrip())
    print(f"pyverbs upstream: {len(up)} tests, {bad} differ from {expected_path}")
    return 1 if bad else 0


def worse(a, b):
    """Ours (a) went worse than upstream (b)."""
    return RANK[a] < RANK[b]


def check_ours(up, ours, diff_path):
    known = listed(diff_path)
    used = set()
    unlisted = 0
    for tid in sorted(set(up) | set(ours)):
        a = ours[tid][0] if tid in ours else "error"
        b = up[tid][0] if tid in up else "skip"
        why = ours[tid][1] if tid in ours else "not run on mlx5_rs"
        hit = next((p for p, _ in known if fnmatch.fnmatchcase(tid, p)), None)
        if not worse(a, b):
            continue
        if hit is not None:
            used.add(hit)
            print(f"known     {tid}: upstream {b}, ours {a} ({dict(known)[hit]})")
        else:
            unlisted += 1
            print(f"WORSE     {tid}: upstream {b}, ours {a}: {why}")
    for p, reason in known:
        if p not in used:
            print(f"stale     {p}: no test matching it is worse on mlx5_rs now ({reason})")
    print(f"pyverbs mlx5_rs: {len(ours)} tests, {unlisted} worse than upstream and not listed")
    return 1 if unlisted else 0


def main():
    a = sys.argv[1:]
    try:
        if len(a) == 3 and a[0] == "table":
            return table(results(a[1]), results(a[2]))
        if len(a) in (3, 4) and a[0] == "upstream" and a[3:] in ([], ["--write"]):
            up = results(a[1])
            if not up:
                print(f"pyverbs_compare: no results in {a[1]}", file=sys.stderr)
                return 2
            return check_upstream(up, a[2], a[3:] == ["--write"])
        if len(a) == 4 and a[0] == "ours":
            up, ours = results(a[1]), results(a[2])
            if not up or not ours:
                print("pyverbs_compare: a run has no results", file=sys.stderr)
                return 2
            return check_ours(up, ours, a[3])
    except OSError as e:
        print(f"pyverbs_compare: {e}", file=sys.stderr)
        return 2
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
