#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare the transition tables of the design document with cm.c's.

usage: check_transitions.py DOC.rst cm.c cm_trace.h include/rdma/ib_cm.h

cm.c has the state machine as two tables, cm_state_table[] and
cm_lap_table[], of rows CM_T(FROM, TO, CAUSE): every change of an id's
state or lap_state that the CM may make (cm_change_state() warns about
any other).  The document holds the same two tables, each a literal block
that follows a comment line ".. transitions: state" or ".. transitions:
lap", with one row per change:

    FROM -> TO | CAUSE | sent | event | trigger

States are written without their IB_CM_ prefix and causes without their
CM_ prefix (CM_CAUSE_LIST in cm_trace.h, which enum cm_cause expands).

Checked: both tables have the same (FROM, TO, CAUSE) rows in the document
and in cm.c, none twice; every state is a member of enum ib_cm_state or
enum ib_cm_lap_state, every cause a member of enum cm_cause, and every
cause is used by some row.  The other columns say what goes on the wire
and what the handler hears; they are for the reader and the reviewer.
"""

import re
import sys


def enum_members(src, name):
    m = re.search(r"enum\s+%s\s*\{(.*?)\}" % name, src, re.S)
    if not m:
        sys.exit("enum %s not found" % name)
    body = re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S)
    return [x.split("=")[0].strip() for x in body.split(",") if x.strip()]


def list_members(src, name):
    """The names of an X-macro list of cm_trace.h: #define NAME(entry, last)."""
    m = re.search(r"#define\s+%s\(\s*entry,\s*last\s*\)((?:.*\\\n)*.*)" % name,
                  src)
    if not m:
        sys.exit("list %s not found" % name)
    return re.findall(r"\b(?:entry|last)\((\w+)\)", m.group(1))


def code_table(src, name):
    m = re.search(r"cm_transition\s+%s\[\]\s*=\s*\{(.*?)\n\};" % name,
                  src, re.S)
    if not m:
        sys.exit("cm.c: table %s not found" % name)
    return re.findall(r"CM_T\((\w+),\s*(\w+),\s*(\w+)\)", m.group(1))


def doc_tables(doc):
    tables = {}
    current = None
    for n, line in enumerate(doc.split("\n"), 1):
        m = re.match(r"\.\. transitions: (\w+)", line)
        if m:
            current = m.group(1)
            tables[current] = []
            continue
        if current is None:
            continue
        if line and not line[0].isspace() and not line.startswith("::"):
            current = None
            continue
        m = re.match(r"\s+(\w+)\s*->\s*(\w+)\s*\|\s*(\w+)\s*\|", line)
        if m:
            tables[current].append((m.group(1), m.group(2), m.group(3), n))
    return tables


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    doc_path, code_path, trace_path, hdr_path = sys.argv[1:]
    doc = open(doc_path).read()
    code = open(code_path).read()
    causes = list_members(open(trace_path).read(), "CM_CAUSE_LIST")
    hdr = open(hdr_path).read()
    states = {"state": [s[len("IB_CM_"):]
                        for s in enum_members(hdr, "ib_cm_state")],
              "lap": [s[len("IB_CM_"):]
                      for s in enum_members(hdr, "ib_cm_lap_state")]}
    tables = doc_tables(doc)
    errors = []
    used = set()
    for kind, cname in (("state", "cm_state_table"), ("lap", "cm_lap_table")):
        if kind not in tables:
            errors.append("%s: no '.. transitions: %s' table" %
                          (doc_path, kind))
            continue
        rows = {}
        for frm, to, cause, n in tables[kind]:
            key = (frm, to, cause)
            if key in rows:
                errors.append("%s:%d: %s -> %s | %s twice (also line %d)" %
                              (doc_path, n, frm, to, cause, rows[key]))
            rows[key] = n
            for s in (frm, to):
                if s not in states[kind]:
                    errors.append("%s:%d: %s is no %s of ib_cm.h" %
                                  (doc_path, n, s, kind))
            if cause not in causes:
                errors.append("%s:%d: %s is no cause of cm_trace.h" %
                              (doc_path, n, cause))
        coded = code_table(code, cname)
        seen = set()
        for frm, to, cause in coded:
            key = (frm, to, cause)
            used.add(cause)
            if key in seen:
                errors.append("%s: %s has %s -> %s | %s twice" %
                              (code_path, cname, frm, to, cause))
            seen.add(key)
            if key not in rows:
                errors.append("%s: %s -> %s | %s of %s is not in the "
                              "document" % (code_path, frm, to, cause, cname))
        for key, n in sorted(rows.items(), key=lambda kv: kv[1]):
            if key not in seen:
                errors.append("%s:%d: %s -> %s | %s is not in cm.c's %s" %
                              ((doc_path, n) + key + (cname,)))
        print("%s: %d rows in the document, %d in cm.c" %
              (kind, len(rows), len(coded)))
    for cause in causes:
        if cause not in used:
            errors.append("%s: cause %s is used by no row" %
                          (trace_path, cause))
    for e in errors:
        print(e)
    sys.exit(1 if errors else 0)


main()
