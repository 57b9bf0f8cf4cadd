#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare the transition tables of the design document with cm.c.

usage: check_transitions.py DOC.rst cm.c include/rdma/ib_cm.h

The document holds two tables, each a literal block that follows a
comment line ".. transitions: state" or ".. transitions: lap".  Every
row is

    FROM -> TO | function | sent | event | trigger

FROM is a state name without the IB_CM_ prefix, or "new" for an id that
the function itself creates.  A "~" before FROM marks a row whose FROM
state the function does not name (it keys on something else); such rows
are listed as warnings so a reader can look at them.

From cm.c the script takes, for every function, the states it assigns
(p->id.state = IB_CM_X, p->id.lap_state = IB_CM_X), directly or through
helpers called on the same id as name(p, ...).  cm_destroy() is not
followed as a helper: destroying is a trigger of its own.  Functions
that serve only as such helpers are not expected in the table.

Checked: the set of (function, TO) pairs is the same in both; every
state named exists in ib_cm.h; every FROM state is named in the function
(or its helpers) as IB_CM_FROM, unless marked with "~"; "new" is used
only by functions that allocate an id.
"""

import re
import sys

NOT_A_HELPER = {"cm_destroy"}


def functions(src):
    """Map function name -> body text, for top-level C function definitions."""
    funcs = {}
    lines = src.split("\n")
    sig_start = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if line and not line[0].isspace() and line[0] not in "{}#/*" and \
                not line.startswith(("static const", "static struct {")) and \
                "(" in line and sig_start is None:
            sig_start = i
        if line == "{" and sig_start is not None:
            m = re.search(r"(\w+)\s*\(", lines[sig_start])
            j = i + 1
            while j < len(lines) and lines[j] != "}":
                j += 1
            if m:
                funcs[m.group(1)] = "\n".join(lines[i:j])
            sig_start = None
            i = j
        elif line.endswith(";") or line == "" or line.startswith("}"):
            sig_start = None
        i += 1
    return funcs


def direct_assignments(body, kind):
    field = "state" if kind == "state" else "lap_state"
    return set(re.findall(r"\bid\.%s\s*=\s*IB_CM_(\w+)\s*;" % field, body))


def helper_calls(body, funcs):
    return {n for n in re.findall(r"\b(\w+)\(p\s*[,)]", body)
            if n in funcs and n not in NOT_A_HELPER}


def code_transitions(funcs, kind):
    """(function, TO) pairs and, per function, the text of it and helpers."""
    calls = {f: helper_calls(b, funcs) for f, b in funcs.items()}
    helpers = set().union(*calls.values())

    def closure(f, seen):
        if f in seen:
            return
        seen.add(f)
        for g in calls[f]:
            closure(g, seen)

    pairs = set()
    text = {}
    for f, body in funcs.items():
        seen = set()
        closure(f, seen)
        text[f] = "\n".join(funcs[g] for g in seen)
        if f in helpers:
            continue
        for g in seen:
            for to in direct_assignments(funcs[g], kind):
                pairs.add((f, to))
    return pairs, text


def enum_members(header, name):
    m = re.search(r"enum %s \{(.*?)\};" % name, header, re.S)
    return set(re.findall(r"IB_CM_(\w+)", m.group(1))) if m else set()


def doc_rows(doc, kind):
    rows = []
    lines = doc.split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() == ".. transitions: %s" % kind:
            i += 1
            while i < len(lines) and lines[i].strip() != "::":
                i += 1
            i += 1
            while i < len(lines) and (lines[i] == "" or lines[i][0].isspace()):
                row = lines[i].strip()
                i += 1
                if not row or row.startswith("#"):
                    continue
                rows.append((i, row))
            continue
        i += 1
    return rows


def main():
    doc_path, cm_path, hdr_path = sys.argv[1:4]
    doc = open(doc_path, encoding="utf-8").read()
    funcs = functions(open(cm_path, encoding="utf-8").read())
    header = open(hdr_path, encoding="utf-8").read()
    errors = []
    notes = []

    for kind, enum in (("state", "ib_cm_state"), ("lap", "ib_cm_lap_state")):
        valid = enum_members(header, enum)
        code, text = code_transitions(funcs, kind)
        rows = doc_rows(doc, kind)
        if not rows:
            errors.append("%s: no '.. transitions: %s' table" % (doc_path, kind))
            continue
        documented = set()
        for lineno, row in rows:
            where = "%s:%d" % (doc_path, lineno)
            cols = [c.strip() for c in row.split("|")]
            m = re.match(r"(~?)(\w+)\s*->\s*(\w+)$", cols[0])
            if len(cols) != 5 or not m:
                errors.append("%s: not 'FROM -> TO | function | sent | "
                              "event | trigger': %s" % (where, row))
                continue
            unnamed, frm, to = m.groups()
            func = cols[1]
            for s in (frm, to):
                if s != "new" and s not in valid:
                    errors.append("%s: %s is not in enum %s" % (where, s, enum))
            if func not in funcs:
                errors.append("%s: no function %s in %s" % (where, func, cm_path))
                continue
            documented.add((func, to))
            if frm == "new":
                if func != "cm_alloc_id" and not re.search(
                        r"\b(cm_alloc_id|ib_create_cm_id)\(", funcs[func]):
                    errors.append("%s: %s creates no id, FROM 'new' is wrong"
                                  % (where, func))
            elif unnamed:
                notes.append("%s: %s -> %s in %s: FROM not named in the code"
                             % (where, frm, to, func))
            elif not re.search(r"\bIB_CM_%s\b" % frm, text[func]):
                errors.append("%s: %s never names IB_CM_%s (FROM of %s -> %s)"
                              % (where, func, frm, frm, to))
        for func, to in sorted(code - documented):
            errors.append("%s: %s sets %s %s, not in the document"
                          % (cm_path, func, kind, to))
        for func, to in sorted(documented - code):
            errors.append("%s: documents %s -> %s in %s, which the code "
                          "does not do" % (doc_path, kind, to, func))
        notes.append("%s: %d rows, %d (function, to) pairs in the code"
                     % (kind, len(rows), len(code)))

    for n in notes:
        print(n)
    for e in errors:
        print("error: " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
