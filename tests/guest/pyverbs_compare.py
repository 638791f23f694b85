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
      something upstream does shows; only the files UPSTREAM ran are compared (make
      check runs some, make soak the others); with --write, EXPECTED is written from
      UPSTREAM instead (alternatives and the other files' lines kept from the file it
      replaces)
  pyverbs_compare.py ours UPSTREAM OURS DIFFERENCES
      no test went worse on mlx5_rs than on upstream — a test upstream passes that ours
      skips, fails or errors, or one upstream skips that ours fails or errors — and no
      test that skips, fails or errors on both did so for another reason (the exception
      class and message, normalised: see `normalise`), unless DIFFERENCES
      (tests/guest/pyverbs.differences) lists it: `<test id or fnmatch pattern><TAB or
      two spaces><reason>` per line. Listed tests of a file this run ran (either
      driver) that are no longer worse nor differently failing print as `stale`, so
      the list can shrink; entries of files it did not run (the other set: make
      check's or make soak's) are not judged. Tests that do
      better on ours print as `BETTER` (not an error: a difference to look at).
  pyverbs_compare.py [--set NAME] markdown UPSTREAM OURS
      the Documentation fragment of this run (Documentation/ib-vs-upstream.md between
      the markers of set NAME, `check` when not given: `pyverbs-table` for it,
      `pyverbs-table NAME` for the others): per file, both drivers' ok / skip / fail /
      error and the totals (OURS `-`: a set run on upstream alone, its column only),
      then upstream's skips, failures and errors grouped by file, outcome and reason
      (normalised as below), each line prefixed `PYVDOC ` for tests/pyverbs-doc.sh to
      extract from the console log
  pyverbs_compare.py [--set NAME] doc UPSTREAM OURS DOCUMENT
      the table rows in DOCUMENT between set NAME's markers equal the ones this run
      generates (the committed tables are the ones a run printed, not written by hand)

$PYVERBS_EXCLUDE (test ids separated by blanks, as pyverbs_run.py takes it): tests the
run left out on purpose (another set runs them); `upstream` does not expect them, and
`--write` keeps their lines.

Input files hold the console lines `PYV <driver> <outcome> <secs> <id> [reason]` (other
lines are ignored). Exit status: 0 as expected, 1 not, 2 unreadable or empty input.
"""
import fnmatch
import re
import os
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


def normalise(reason):
    """A failure's reason with what differs between two runs of the same failure taken
    out: addresses and handles (hex numbers, numbers of 5 digits or more) and the
    seconds a timeout message may name. The exception class and errno stay."""
    r = re.sub(r"0x[0-9a-fA-F]+", "0x#", reason)
    r = re.sub(r"\b[0-9]{5,}\b", "#", r)
    r = re.sub(r"\b[0-9]+(\.[0-9]+)? ?s\b", "# s", r)
    return r.strip()


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
        ran = {file_of(t) for t in up}
        try:
            old = listed(expected_path)
        except OSError:
            old = []
        keep = {t: o for t, o in old if "|" in o}
        # Files this run did not run, and tests it left out (the other set: make
        # check's or make soak's).
        excluded = set(os.environ.get("PYVERBS_EXCLUDE", "").split())
        other = {t: o for t, o in old if file_of(t) not in ran or t in excluded}
        with open(expected_path, "w", encoding="utf-8") as f:
            f.write(
                "# Upstream mlx5_ib's outcome of each pyverbs test on the emulator (scenario\n"
                "# 73-pyverbs; tests/guest/pyverbs_compare.py upstream). A change here is a change\n"
                "# of the emulator: regenerate with `pyverbs_compare.py upstream <run> <this file>\n"
                "# --write` from the scenario's /tmp/pyv.upstream and say why in the commit.\n"
            )
            for tid in sorted(set(up) | set(other)):
                want = other[tid] if tid in other else keep.get(tid, up[tid][0])
                f.write(f"{tid}\t{want}\n")
        print(f"pyverbs: wrote {len(up)} expectations to {expected_path}")
        return 0
    # Only the files this run ran (make check's set or make soak's), without the tests
    # it left out ($PYVERBS_EXCLUDE: another set runs them).
    ran = {file_of(t) for t in up}
    excluded = set(os.environ.get("PYVERBS_EXCLUDE", "").split())
    exp = {t: o for t, o in listed(expected_path) if file_of(t) in ran and t not in excluded}
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
    why_listed = dict(known)
    used = set()
    unlisted = better = 0
    for tid in sorted(set(up) | set(ours)):
        a, ra = ours.get(tid, ("error", "not run on mlx5_rs"))
        b, rb = up.get(tid, ("skip", "not run on upstream"))
        hit = next((p for p, _ in known if fnmatch.fnmatchcase(tid, p)), None)
        if worse(b, a):
            better += 1
            print(f"BETTER    {tid}: upstream {b} ({rb}), ours {a}")
            continue
        if worse(a, b):
            label, what = "WORSE   ", f"upstream {b}, ours {a}: {ra}"
        elif a == b and a != "ok" and normalise(ra) != normalise(rb):
            label, what = "REASON  ", f"both {a}, for other reasons: upstream {rb!r}, ours {ra!r}"
        else:
            continue
        if hit is not None:
            used.add(hit)
            print(f"known     {tid}: {what} ({why_listed[hit]})")
        else:
            unlisted += 1
            print(f"{label}  {tid}: {what}")
    # Only an entry whose file ran can be stale: the other set's entries wait for theirs.
    ran = {file_of(t) for t in up} | {file_of(t) for t in ours}
    for p, reason in known:
        if p not in used and file_of(p) in ran:
            print(f"stale     {p}: no test matching it differs on mlx5_rs now ({reason})")
    print(
        f"pyverbs mlx5_rs: {len(ours)} tests, {unlisted} worse than upstream or failing"
        f" for another reason and not listed, {better} better than upstream"
    )
    return 1 if unlisted else 0


def marks(name):
    """The begin and end markers of set NAME's block in the Documentation (make check's
    first set, `check`, keeps the markers it had before there were others)."""
    if name == "check":
        return (
            "<!-- pyverbs-table: generated by tests/pyverbs-doc.sh from a 73-pyverbs run -->",
            "<!-- pyverbs-table end -->",
        )
    return (
        f"<!-- pyverbs-table {name}: generated by tests/pyverbs-doc.sh from a run of its set -->",
        f"<!-- pyverbs-table {name} end -->",
    )


def short(tid):
    """tests.test_qp.QPTest.test_x -> test_x; a class-level holder keeps its text."""
    return tid.rsplit(".", 1)[-1] if tid.startswith("tests.") else tid


def reasons(up):
    """Upstream's skips, failures and errors grouped per file, outcome and reason (the
    reason normalised as for the comparison, `|` escaped for the table): the lines of
    the reasons table, without its header."""
    groups = {}
    for tid, (o, r) in up.items():
        if o == "ok":
            continue
        why = normalise(r).replace("|", "\\|") or "(no reason given)"
        groups.setdefault((file_of(tid), OUTCOMES.index(o), why), []).append(short(tid))
    rows = []
    for (f, o, why), tests in sorted(groups.items()):
        names = ", ".join(sorted(tests)) if len(tests) <= 4 else f"{len(tests)} tests"
        if len(tests) <= 4 and len(tests) > 1:
            names = f"{len(tests)}: {names}"
        rows.append(f"| {f} | {OUTCOMES[o]} | {names} | {why} |")
    return rows


def fragment(up, ours):
    """The generated block's lines (without markers): the per-file table of both
    drivers (upstream's only when OURS is None: a set make check runs on upstream
    alone) and upstream's skips, failures and errors by reason."""
    cu = counts(up)
    co = counts(ours) if ours is not None else None
    if co is None:
        lines = ["| file | tests | upstream mlx5_ib ok / skip / fail / error |", "|---|---|---|"]
    else:
        lines = [
            "| file | tests | upstream mlx5_ib ok / skip / fail / error | mlx5_rs ok / skip / fail / error |",
            "|---|---|---|---|",
        ]
    drivers = [("u", cu)] + ([("o", co)] if co is not None else [])
    tot = {k: dict.fromkeys(OUTCOMES, 0) for k, _ in drivers}
    files = set(cu) | set(co or {})
    for f in sorted(files):
        cells = []
        for k, c in drivers:
            c = c.get(f)
            if c is None:
                cells.append("not run")
                continue
            for o in OUTCOMES:
                tot[k][o] += c[o]
            cells.append(" / ".join(str(c[o]) for o in OUTCOMES))
        n = max(sum((c.get(f) or {}).values()) for _, c in drivers)
        lines.append(f"| {f} | {n} | " + " | ".join(cells) + " |")
    n = max(len(up), len(ours or {}))
    cells = [" / ".join(str(tot[k][o]) for o in OUTCOMES) for k, _ in drivers]
    lines.append(f"| **all {len(files)} files** | {n} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Upstream's skips, failures and errors by reason (the reason pyverbs gave,"
        " addresses and handles taken out):",
        "",
        "| file | outcome | tests | reason |",
        "|---|---|---|---|",
    ]
    lines += reasons(up)
    return lines


def markdown(up, ours, name):
    begin, end = marks(name)
    print(f"PYVDOC {begin}")
    for line in fragment(up, ours):
        print(f"PYVDOC {line}" if line else "PYVDOC")
    print(f"PYVDOC {end}")
    return 0


def committed(doc_path, name):
    """The table rows between set NAME's markers of a document."""
    begin, end = marks(name)
    rows, inside = [], False
    with open(doc_path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line == begin:
                inside = True
            elif line == end:
                inside = False
            elif inside and line.startswith("|"):
                rows.append(line)
    return rows


def check_doc(up, ours, doc_path, name):
    want = [line for line in fragment(up, ours) if line.startswith("|")]
    have = committed(doc_path, name)
    if want == have:
        print(f"pyverbs doc: the {name} table in {doc_path} is this run's")
        return 0
    for line in have:
        if line not in want:
            print(f"doc only  {line}")
    for line in want:
        if line not in have:
            print(f"run only  {line}")
    print(f"pyverbs doc: the {name} table in {doc_path} is not this run's: tests/pyverbs-doc.sh <console log>")
    return 1


def main():
    a = sys.argv[1:]
    name = "check"
    if a[:1] == ["--set"] and len(a) > 1:
        name, a = a[1], a[2:]
    try:
        if len(a) == 3 and a[0] == "table":
            return table(results(a[1]), results(a[2]))
        if len(a) in (3, 4) and a[0] == "upstream" and a[3:] in ([], ["--write"]):
            up = results(a[1])
            if not up:
                print(f"pyverbs_compare: no results in {a[1]}", file=sys.stderr)
                return 2
            return check_upstream(up, a[2], a[3:] == ["--write"])
        if len(a) in (3, 4) and a[0] in ("markdown", "doc") and a[3:] != [""]:
            # OURS `-`: a set run on upstream alone.
            up = results(a[1])
            ours = None if a[2] == "-" else results(a[2])
            if not up or ours == {}:
                print("pyverbs_compare: a run has no results", file=sys.stderr)
                return 2
            if a[0] == "markdown" and len(a) == 3:
                return markdown(up, ours, name)
            if a[0] == "doc" and len(a) == 4:
                return check_doc(up, ours, a[3], name)
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
