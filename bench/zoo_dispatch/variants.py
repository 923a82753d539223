#!/usr/bin/env python3
"""Variants of a zoo kernel's tunables, for timing on the H200 without editing the entry.

  variants.py ENTRY OUT_DIR NAME=VALUE[,NAME=VALUE...] ...

Each argument after OUT_DIR is one variant: the named `constexpr ... NAME = ...;` lines at the
top of kb/zoo/ENTRY/kernel.cu get the new values, written to OUT_DIR/ENTRY__<spec>.cu. A name
that is not a constexpr of the file is an error (a typo would otherwise time the default).
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    entry, out = sys.argv[1], sys.argv[2]
    source = open(os.path.join(ROOT, "kb/zoo", entry, "kernel.cu")).read()
    os.makedirs(out, exist_ok=True)
    for spec in sys.argv[3:]:
        text = source
        for pair in spec.split(","):
            name, value = pair.split("=", 1)
            pattern = re.compile(r"^(\s*(?:static\s+)?constexpr\s+[\w:<>]+\s+" + re.escape(name) +
                                 r"\s*=\s*)[^;]+;", re.M)
            text, n = pattern.subn(lambda m: m.group(1) + value + ";", text, count=1)
            if n != 1:
                sys.exit(f"{entry}: no constexpr {name}")
        tag = re.sub(r"[^A-Za-z0-9=,_-]", "", spec).replace("=", "").replace(",", "_")
        path = os.path.join(out, f"{entry}__{tag}.cu")
        open(path, "w").write(text)
        print(path)


if __name__ == "__main__":
    main()
