#!/usr/bin/env python3
"""Field-by-field comparison of two `ibv_devinfo -v` outputs (mlx5-rs against upstream
mlx5_ib on the same emulated device).

Usage: devinfo_diff.py OURS THEIRS KNOWN

Each `key: value` line becomes a field named by its section (`port 1` for the lines
after `port: 1`) and key; repeated keys in one section are numbered (`GID[  0]`
lines keep their index). A field that differs, or that only one output has, must be
listed in KNOWN (one `field<TAB or two spaces>reason` per line, `#` comments) with the
reason the difference stays. Prints every difference, known or not, and exits 1 when
an unlisted one exists, 2 on unreadable input. Listed fields that no longer differ
are printed as `stale`, so the list can shrink.
"""
import re
import sys


def fields(path):
    out = {}
    section = "device"
    seen = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for raw in f:
            line = raw.rstrip("\n")
            m = re.match(r"^\s*([^:]+?):\s*(.*)$", line)
            if not m:
                continue
            key, val = m.group(1).strip(), re.sub(r"\s+", " ", m.group(2).strip())
            if key == "port" and val.isdigit():
                section = "port " + val
                continue
            name = f"{section}/{key}"
            n = seen.get(name, 0)
            seen[name] = n + 1
            if n:
                name = f"{name}#{n}"
            out[name] = val
    return out


def known(path):
    k = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = re.split(r"\t+| {2,}", line.strip(), maxsplit=1)
            k[parts[0]] = parts[1] if len(parts) > 1 else ""
    return k


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        ours, theirs, k = fields(sys.argv[1]), fields(sys.argv[2]), known(sys.argv[3])
    except OSError as e:
        print(f"devinfo_diff: {e}", file=sys.stderr)
        return 2
    if not ours or not theirs:
        print("devinfo_diff: an output has no fields", file=sys.stderr)
        return 2
    unknown = 0
    same = 0
    for name in sorted(set(ours) | set(theirs)):
        a, b = ours.get(name, "(absent)"), theirs.get(name, "(absent)")
        if a == b:
            same += 1
            if name in k:
                print(f"stale     {name}: both {a!r}")
            continue
        if name in k:
            print(f"known     {name}: ours {a!r}, upstream {b!r} ({k[name]})")
        else:
            unknown += 1
            print(f"DIFFERENT {name}: ours {a!r}, upstream {b!r}")
    print(f"devinfo_diff: {same} fields equal, {unknown} unlisted differences")
    return 1 if unknown else 0


if __name__ == "__main__":
    sys.exit(main())
