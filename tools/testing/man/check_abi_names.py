#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare the counter files an ABI document names with a list of them.

usage: check_abi_names.py ABI_FILE cm.c
       check_abi_names.py ABI_FILE --files LIST

The document (Documentation/ABI/testing/sysfs-class-infiniband-cm) names
each group directory in a What: line ending in /<message> or /<reason>;
the files of a group are the ones its description lists: "<message> is
one of a, b and c", or the first column of a table of reasons.  The other
side is cm.c's name tables (cm_group_names, cm_msg_names, cm_drop_names)
or, with --files, "group/file" lines as found in sysfs.  Exits non-zero
and says what differs when the two do not name the same files.
"""
import re
import sys


def doc_files(path):
    """{group: set(files)} as the ABI document describes them."""
    text = open(path, encoding="utf-8").read()
    files = {}
    for entry in re.split(r"\n\s*\n(?=What:)", text):
        groups = re.findall(r"^What:\s+\S*/(cm_\w+)/<(\w+)>$", entry, re.M)
        desc = entry.split("Description:", 1)[-1].splitlines()
        names = set()
        listed = re.search(r"<message> is\s+one\s+of\s+([\w\s,]+?)\.",
                           " ".join(desc))
        rules = [i for i, line in enumerate(desc)
                 if re.match(r"^\s*=+(\s+=+)+\s*$", line)]
        if listed:
            names = set(re.split(r"\s*,\s*|\s+and\s+", listed.group(1).strip()))
        elif len(rules) >= 2:
            # A table of reasons: a row starts at the description's own
            # indentation (two tabs); deeper lines continue the row above.
            for line in desc[rules[0] + 1:rules[-1]]:
                if line.startswith("\t\t") and line[2:3].strip():
                    names.add(line.split()[0])
        for group, _ in groups:
            files[group] = set(names)
    return files


def c_array(src, name):
    m = re.search(r"\b%s\[[^\]]*\]\s*=\s*\{(.*?)\};" % name, src, re.S)
    if not m:
        sys.exit(f"check_abi_names.py: no {name}[] in cm.c")
    return re.findall(r"\"([^\"]+)\"", m.group(1))


def code_files(path):
    """{group: set(files)} as cm.c creates them."""
    src = open(path, encoding="utf-8").read()
    groups = c_array(src, "cm_group_names")
    msgs, drops = set(c_array(src, "cm_msg_names")), set(c_array(src, "cm_drop_names"))
    return {g: set(drops if g == "cm_rx_drops" else msgs) for g in groups}


def listed_files(path):
    files = {}
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if "/" in line:
            group, name = line.rsplit("/", 1)
            files.setdefault(group.rsplit("/", 1)[-1], set()).add(name)
    return files


def main():
    if len(sys.argv) == 3:
        have, what = code_files(sys.argv[2]), "cm.c"
    elif len(sys.argv) == 4 and sys.argv[2] == "--files":
        have, what = listed_files(sys.argv[3]), "sysfs"
    else:
        sys.exit(__doc__.split("\n\n")[1])
    doc = doc_files(sys.argv[1])
    bad = []
    for group in sorted(set(doc) | set(have)):
        if group not in doc:
            bad.append(f"{group}/: in {what}, not documented")
        elif group not in have:
            bad.append(f"{group}/: documented, not in {what}")
        else:
            for n in sorted(doc[group] - have[group]):
                bad.append(f"{group}/{n}: documented, not in {what}")
            for n in sorted(have[group] - doc[group]):
                bad.append(f"{group}/{n}: in {what}, not documented")
    for line in bad:
        print(line)
    if not bad:
        print(f"{sum(len(v) for v in doc.values())} files in {len(doc)} groups, as in {what}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
