#!/usr/bin/env python3
"""Field-by-field comparison of devlink's answers for two drivers on the same emulated
function (scenario 82-devlink: upstream mlx5_core + mlx5_ib against mlx5_rs).

Usage: devlink_diff.py UPSTREAM_DIR OURS_DIR TABLE.md [--rows]

Each DIR holds one file per request (NAME.json: what `devlink -j ...` printed, or
NAME.err: its error message). Every answer is flattened into fields
`NAME/key/key...`: the device handle (pci/<address>) is dropped, lists of objects
are keyed by their `reporter` or `name`, other lists by index, a parameter is one
field (`type cmode=value ...`). Fields that change from run to run (the dump's date
and time) compare as `(set)`. A request that fails on either driver is one field
NAME: its error, or `(answered)`.

TABLE.md's table rows whose first cell is a `field` in backticks list every field in
which the drivers differ: | `field` | upstream's value | ours | why |, a value
`(absent)` when the driver has no such field. The comparison fails (exit 1) when a
difference is not in the table, when a row's values are not the ones measured, or
when a row lists a field that no longer differs: the table cannot go stale. --rows
prints the rows the measured differences need (reasons left empty), for the table.
Exit 2 on unreadable input.
"""
import json
import os
import re
import sys

ABSENT = "(absent)"
VOLATILE = {"last_dump_date", "last_dump_time"}


def flatten(prefix, v, out):
    if isinstance(v, dict) and set(v) == {"type", "values"} and isinstance(v["values"], list):
        vals = " ".join(f"{x.get('cmode')}={json.dumps(x.get('value'))}" for x in v["values"])
        out[prefix] = f"{v['type']} {vals}"
    elif isinstance(v, dict):
        for k, x in v.items():
            if k in VOLATILE:
                out[f"{prefix}/{k}"] = "(set)"
                continue
            flatten(f"{prefix}/{k}", x, out)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            key = str(i)
            if isinstance(x, dict):
                key = str(x.get("reporter", x.get("name", i)))
                x = {k: y for k, y in x.items() if k not in ("reporter", "name")}
            flatten(f"{prefix}/{key}", x, out)
    else:
        out[prefix] = json.dumps(v) if not isinstance(v, str) else v


def strip_handle(v):
    """{"info": {"pci/...": X}} -> X; {"health": {"pci/...": X}} -> X."""
    if isinstance(v, dict) and len(v) == 1:
        (k, x), = v.items()
        if k in ("info", "health", "param", "dev") and isinstance(x, dict) and len(x) == 1:
            (h, y), = x.items()
            if h.startswith("pci/"):
                return y
    return v


def fields(d):
    """(fields, names of the requests that failed)."""
    out = {}
    errors = set()
    for f in sorted(os.listdir(d)):
        name, ext = os.path.splitext(f)
        with open(os.path.join(d, f), encoding="utf-8", errors="replace") as fh:
            text = fh.read().strip()
        if ext == ".err":
            out[name] = "error: " + (text.splitlines() or [""])[-1].strip()
            errors.add(name)
        elif ext == ".json":
            if not text:
                out[name] = "(empty)"
                continue
            flatten(name, strip_handle(json.loads(text)), out)
    return out, errors


def collapse(f, failed):
    """A request that failed on either side becomes one field: its error or "(answered)"."""
    out = {}
    for k, v in f.items():
        name = k.split("/", 1)[0]
        if name in failed:
            out[name] = v if k == name else out.get(name, "(answered)")
        else:
            out[k] = v
    return out


def table(path):
    rows = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^\|\s*`([^`]+)`\s*\|(.*)\|\s*$", line.rstrip("\n"))
            if not m:
                continue
            cells = [c.strip() for c in m.group(2).split("|")]
            if len(cells) < 3:
                continue
            unq = [re.sub(r"^`(.*)`$", r"\1", c) for c in cells[:2]]
            rows[m.group(1)] = (unq[0], unq[1], cells[2])
    return rows


def main():
    args = [a for a in sys.argv[1:] if a != "--rows"]
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        (up, e1), (ours, e2), rows = fields(args[0]), fields(args[1]), table(args[2])
        up, ours = collapse(up, e1 | e2), collapse(ours, e1 | e2)
    except (OSError, ValueError) as e:
        print(f"devlink_diff: {e}", file=sys.stderr)
        return 2
    if not up or not ours:
        print("devlink_diff: an output has no fields", file=sys.stderr)
        return 2
    diffs = {}
    for k in sorted(set(up) | set(ours)):
        a, b = up.get(k, ABSENT), ours.get(k, ABSENT)
        if a != b:
            diffs[k] = (a, b)
    if "--rows" in sys.argv:
        for k, (a, b) in diffs.items():
            print(f"| `{k}` | `{a}` | `{b}` | |")
        return 0
    bad = 0
    for k, (a, b) in diffs.items():
        r = rows.get(k)
        if r is None:
            print(f"UNLISTED {k}: upstream {a!r}, ours {b!r}")
            bad = 1
        elif (r[0], r[1]) != (a, b):
            print(f"CHANGED {k}: upstream {a!r}, ours {b!r} (table: {r[0]!r}, {r[1]!r})")
            bad = 1
        else:
            print(f"known {k}: upstream {a!r}, ours {b!r}")
    for k in sorted(set(rows) - set(diffs)):
        print(f"STALE {k}: listed, but upstream {up.get(k, ABSENT)!r}, ours {ours.get(k, ABSENT)!r}")
        bad = 1
    same = len(set(up) & set(ours)) - sum(1 for k in diffs if k in up and k in ours)
    print(f"devlink_diff: {same} fields equal, {len(diffs)} differ")
    return bad


if __name__ == "__main__":
    sys.exit(main())
