#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare the transition tables of the design document with cm.c's.

usage: check_transitions.py [--seen KUNIT.log] DOC.rst cm.c cm_trace.h
                            include/rdma/ib_cm.h

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
cause is used by some row.

With --seen, also the two columns that say what goes on the wire and what
the handler hears, against what the KUnit suites saw: the raw log of
tools/testing/kunit/run.sh holds the "ib_cm_seen:" lines that each suite
on the fake prints at its end (cm_kunit_fake.c says which change a message
or an event is counted to).  Every message counted to a row must be named
in its "sent" column, and every event in its "event" column.  A "sent"
column names messages by cm_msg_names[] of cm.c, upper case ("REJ
TIMEOUT, ARI our CA GUID" names REJ); text after a ';' or inside
parentheses is not a message sent ("- (MRA for a resent REP)", "nothing;
SIDR_REQ cancelled").  An "event" column is "-" or event names of enum
ib_cm_event_type.  What the document lists and no case saw is reported,
and is not an error: the suites do not take every row.
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


def msg_names(code):
    m = re.search(r"cm_msg_names\[CM_ATTR_COUNT\]\s*=\s*\{(.*?)\}", code, re.S)
    if not m:
        sys.exit("cm.c: cm_msg_names[] not found")
    return [x.upper() for x in re.findall(r'"(\w+)"', m.group(1))]


def doc_names(text, known):
    """The words of @text that are in @known."""
    return {w for w in re.findall(r"\b[A-Z_]+\b", text) if w in known}


def doc_sent(text, names):
    """The messages a "sent" column names."""
    return doc_names(re.sub(r"\(.*?\)", "", text.split(";")[0]), names)


def seen_rows(log):
    """(kind, row index) -> (messages, event numbers), over all suites."""
    seen = {}
    for m in re.finditer(r"ib_cm_seen: \S+ (state|lap) (\d+) hits \d+ "
                         r"sent (\S+) events (\S+)", log):
        sent = set() if m.group(3) == "-" else \
            {x.upper() for x in m.group(3).split(",")}
        events = set() if m.group(4) == "-" else \
            {int(x) for x in m.group(4).split(",")}
        key = (m.group(1), int(m.group(2)))
        s, e = seen.get(key, (set(), set()))
        seen[key] = (s | sent, e | events)
    return seen


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
        m = re.match(r"\s+(\w+)\s*->\s*(\w+)\s*\|\s*(\w+)\s*\|([^|]*)\|"
                     r"([^|]*)\|", line)
        if m:
            tables[current].append((m.group(1), m.group(2), m.group(3), n,
                                    m.group(4).strip(), m.group(5).strip()))
    return tables


def compare_seen(doc_path, n, key, seen, columns, events):
    """What KUnit saw a row do, against the document's columns."""
    sent, got = seen
    want_sent, want_events = columns
    got = {events[e] if e < len(events) else str(e) for e in got}
    row = "%s:%d: %s -> %s | %s" % ((doc_path, n) + key)
    out = []
    if sent - want_sent:
        out.append("%s: KUnit saw it send %s; the document's sent column "
                   "names %s" % (row, ", ".join(sorted(sent - want_sent)),
                                 ", ".join(sorted(want_sent)) or "nothing"))
    if got - want_events:
        out.append("%s: KUnit saw %s delivered; the document's event column "
                   "names %s" % (row, ", ".join(sorted(got - want_events)),
                                 ", ".join(sorted(want_events)) or "none"))
    return out


def main():
    args = sys.argv[1:]
    log = None
    if args[:1] == ["--seen"] and len(args) > 1:
        log = open(args[1], errors="replace").read()
        args = args[2:]
    if len(args) != 4:
        sys.exit(__doc__)
    doc_path, code_path, trace_path, hdr_path = args
    doc = open(doc_path).read()
    code = open(code_path).read()
    causes = list_members(open(trace_path).read(), "CM_CAUSE_LIST")
    hdr = open(hdr_path).read()
    states = {"state": [s[len("IB_CM_"):]
                        for s in enum_members(hdr, "ib_cm_state")],
              "lap": [s[len("IB_CM_"):]
                      for s in enum_members(hdr, "ib_cm_lap_state")]}
    events = [e[len("IB_CM_"):] for e in enum_members(hdr, "ib_cm_event_type")]
    names = msg_names(code)
    seen = seen_rows(log) if log is not None else {}
    if log is not None and not seen:
        sys.exit("the KUnit log has no ib_cm_seen lines: did the suites "
                 "on the fake run?")
    tables = doc_tables(doc)
    errors = []
    used = set()
    checked = 0
    untaken = []
    for kind, cname in (("state", "cm_state_table"), ("lap", "cm_lap_table")):
        if kind not in tables:
            errors.append("%s: no '.. transitions: %s' table" %
                          (doc_path, kind))
            continue
        rows = {}
        columns = {}
        for frm, to, cause, n, sent, event in tables[kind]:
            key = (frm, to, cause)
            if key in rows:
                errors.append("%s:%d: %s -> %s | %s twice (also line %d)" %
                              (doc_path, n, frm, to, cause, rows[key]))
            rows[key] = n
            columns[key] = (doc_sent(sent, names), doc_names(event, events))
            for s in (frm, to):
                if s not in states[kind]:
                    errors.append("%s:%d: %s is no %s of ib_cm.h" %
                                  (doc_path, n, s, kind))
            if cause not in causes:
                errors.append("%s:%d: %s is no cause of cm_trace.h" %
                              (doc_path, n, cause))
        coded = code_table(code, cname)
        in_code = set()
        for i, (frm, to, cause) in enumerate(coded):
            key = (frm, to, cause)
            used.add(cause)
            if key in in_code:
                errors.append("%s: %s has %s -> %s | %s twice" %
                              (code_path, cname, frm, to, cause))
            in_code.add(key)
            if (kind, i) in seen and key in rows:
                checked += 1
                errors += compare_seen(doc_path, rows[key], key,
                                       seen[(kind, i)], columns[key], events)
            elif log is not None and key in rows:
                untaken.append("%s:%d: %s -> %s | %s" %
                               ((doc_path, rows[key]) + key))
            if key not in rows:
                errors.append("%s: %s -> %s | %s of %s is not in the "
                              "document" % (code_path, frm, to, cause, cname))
        for key, n in sorted(rows.items(), key=lambda kv: kv[1]):
            if key not in in_code:
                errors.append("%s:%d: %s -> %s | %s is not in cm.c's %s" %
                              ((doc_path, n) + key + (cname,)))
        print("%s: %d rows in the document, %d in cm.c" %
              (kind, len(rows), len(coded)))
    for cause in causes:
        if cause not in used:
            errors.append("%s: cause %s is used by no row" %
                          (trace_path, cause))
    if log is not None:
        print("KUnit took %d of the rows; their sent and event columns "
              "checked" % checked)
        for row in untaken:
            print("not taken by any KUnit case (not checked): %s" % row)
    for e in errors:
        print(e)
    sys.exit(1 if errors else 0)


main()
