#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write the stock CM's reject-reason texts as a header for the KUnit suites.

usage: stock_rej.py STOCK_CM_C OUT_H

STOCK_CM_C is drivers/infiniband/core/cm.c of the kernel we replace (the
KUnit harness passes its pristine copy).  ibcm_reject_msg() must return
exactly these texts: consumers print them and scripts grep logs for them.
The table and the fallback text are read from that source, so that the
test compares with what stock really says, not with a copy made by hand.
OUT_H is rewritten only when its contents change (kbuild time stamps).
"""
import os
import re
import sys

MIN_ENTRIES = 30	# fewer means the parser no longer understands the source


def fail(msg):
    sys.exit(f"stock_rej.py: {msg}")


def main():
    if len(sys.argv) != 3:
        fail("usage: stock_rej.py STOCK_CM_C OUT_H")
    src = open(sys.argv[1], encoding="utf-8").read()

    # The string table ibcm_reject_msg() indexes: designated initializers.
    m = re.search(r"ibcm_rej_reason_strs\[\]\s*=\s*\{(.*?)\n\};", src, re.S)
    if not m:
        fail(f"no reject-reason table in {sys.argv[1]}")
    entries = re.findall(r"\[\s*(IB_CM_REJ_\w+)\s*\]\s*=\s*((?:\"(?:[^\"\\]|\\.)*\"\s*)+)",
                         m.group(1))
    if len(entries) < MIN_ENTRIES:
        fail(f"only {len(entries)} reject texts found in {sys.argv[1]}")

    # The text for anything not in the table: the function's last literal.
    f = re.search(r"ibcm_reject_msg\(int reason\)\s*\{(.*?)\n\}", src, re.S)
    lits = re.findall(r"\"(?:[^\"\\]|\\.)*\"", f.group(1)) if f else []
    if not lits:
        fail(f"no fallback text in ibcm_reject_msg() of {sys.argv[1]}")

    lines = [
        "/* SPDX-License-Identifier: GPL-2.0 */",
        "/* Made by tools/testing/kunit/stock_rej.py from the stock cm.c. */",
        "#define CM_KUNIT_HAVE_STOCK_REJ 1",
        f"#define CM_KUNIT_STOCK_REJ_DEFAULT {lits[-1]}",
        "#define CM_KUNIT_STOCK_REJ_TEXTS \\",
    ]
    for name, text in entries:
        text = " ".join(t.strip() for t in text.split("\n")).strip()
        lines.append(f"\t{{ .reason = {name}, .text = {text} }}, \\")
    lines.append("")
    out = "\n".join(lines) + "\n"

    try:
        with open(sys.argv[2], encoding="utf-8") as old:
            if old.read() == out:
                return
    except FileNotFoundError:
        pass
    tmp = sys.argv[2] + ".tmp"
    with open(tmp, "w", encoding="utf-8") as new:
        new.write(out)
    os.replace(tmp, sys.argv[2])


if __name__ == "__main__":
    main()
