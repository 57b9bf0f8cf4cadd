#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare the ib_cm ABI recorded in two modules' BTF, and report in TAP.

BTF is read directly (no libbpf, no bpftool): a module's .BTF section is
split BTF on top of a base, which is either the module's own .BTF.base
(distilled base, written for out-of-tree builds) or vmlinux's .BTF.  Each
type of interest is rendered into a canonical text (member names, type
names, byte and bit offsets, bitfield widths, sizes, enum values,
function prototypes) and the two texts are compared line by line.

Subcommands:
  dump BASE MODULE NAME...     print the canonical text of some types
  gen-consts ... OUTDIR        write a kbuild dir recording the constants
  check --stock K --ours K ... compare; TAP for types, exports, constants
"""

import argparse
import difflib
import os
import re
import struct
import sys

BTF_MAGIC = 0xEB9F

# Kinds, numbered as in include/uapi/linux/btf.h.
INT, PTR, ARRAY, STRUCT, UNION, ENUM, FWD, TYPEDEF, VOLATILE, CONST, \
    RESTRICT, FUNC, FUNC_PROTO, VAR, DATASEC, FLOAT, DECL_TAG, TYPE_TAG, \
    ENUM64 = range(1, 20)

KIND_NAMES = {STRUCT: "struct", UNION: "union", ENUM: "enum",
              ENUM64: "enum", FWD: "fwd", TYPEDEF: "typedef", FUNC: "func"}

# Bytes that follow the 12-byte common header: fixed part, per-vlen part.
TRAILER = {
    INT: (4, 0), PTR: (0, 0), ARRAY: (12, 0), STRUCT: (0, 12),
    UNION: (0, 12), ENUM: (0, 8), FWD: (0, 0), TYPEDEF: (0, 0),
    VOLATILE: (0, 0), CONST: (0, 0), RESTRICT: (0, 0), FUNC: (0, 0),
    FUNC_PROTO: (0, 8), VAR: (4, 0), DATASEC: (0, 12), FLOAT: (0, 0),
    DECL_TAG: (4, 0), TYPE_TAG: (0, 0), ENUM64: (0, 12),
}


class AbiError(Exception):
    pass


# ----------------------------------------------------------------- ELF --

def elf_sections(path):
    """Return {name: bytes} for the sections of a 64-bit little-endian ELF."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF":
        raise AbiError(f"{path}: not an ELF file")
    if data[4] != 2 or data[5] != 1:
        raise AbiError(f"{path}: only ELF64 little-endian is handled")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    heads = []
    for i in range(shnum):
        name, typ, _flags, _addr, off, size = struct.unpack_from(
            "<IIQQQQ", data, shoff + i * shentsize)
        heads.append((name, typ, off, size))
    stroff, strsize = heads[shstrndx][2], heads[shstrndx][3]
    names = data[stroff:stroff + strsize]
    out = {}
    for name, typ, off, size in heads:
        end = names.index(b"\0", name)
        nobits = typ == 8
        out[names[name:end].decode()] = b"" if nobits else data[off:off + size]
    return out


def read_btf_blob(path, section=".BTF"):
    """BTF bytes from an ELF section, or from a raw BTF file."""
    with open(path, "rb") as f:
        head = f.read(2)
    if len(head) == 2 and struct.unpack("<H", head)[0] == BTF_MAGIC:
        if section != ".BTF":
            return None
        with open(path, "rb") as f:
            return f.read()
    return elf_sections(path).get(section)


# ----------------------------------------------------------------- BTF --

class Btf:
    """Types and strings of one BTF blob, optionally split over a base."""

    def __init__(self, blob, base=None, what="BTF"):
        self.base = base
        self.what = what
        magic, _ver, _flags, hdr_len = struct.unpack_from("<HBBI", blob, 0)
        if magic != BTF_MAGIC:
            raise AbiError(f"{what}: bad BTF magic {magic:#x}")
        type_off, type_len, str_off, str_len = struct.unpack_from(
            "<IIII", blob, 8)
        self.strs = blob[hdr_len + str_off:hdr_len + str_off + str_len]
        self.str_base = base.str_end if base else 0
        self.str_end = self.str_base + len(self.strs)
        self.first_id = base.next_id if base else 1
        self.types = []
        pos, end = hdr_len + type_off, hdr_len + type_off + type_len
        while pos < end:
            name_off, info, size_type = struct.unpack_from("<III", blob, pos)
            kind = (info >> 24) & 0x1F
            vlen = info & 0xFFFF
            kflag = info >> 31
            if kind not in TRAILER:
                raise AbiError(f"{what}: unknown BTF kind {kind}")
            fixed, per = TRAILER[kind]
            extra = blob[pos + 12:pos + 12 + fixed + per * vlen]
            self.types.append((kind, name_off, vlen, kflag, size_type, extra))
            pos += 12 + fixed + per * vlen
        self.next_id = self.first_id + len(self.types)
        self._by_name = None

    def str(self, off):
        if off < self.str_base:
            return self.base.str(off)
        off -= self.str_base
        return self.strs[off:self.strs.index(b"\0", off)].decode()

    def get(self, tid):
        """(kind, name, vlen, kflag, size_or_type, extra) of a type id."""
        if tid == 0:
            return None
        if tid < self.first_id:
            return self.base.get(tid)
        kind, name_off, vlen, kflag, st, extra = \
            self.types[tid - self.first_id]
        return kind, self.str(name_off), vlen, kflag, st, extra

    def ids(self):
        if self.base:
            yield from self.base.ids()
        yield from range(self.first_id, self.next_id)

    def find(self, kind_name, name):
        """Type ids named NAME whose kind prints as KIND_NAME."""
        if self._by_name is None:
            self._by_name = {}
            for tid in self.ids():
                t = self.get(tid)
                key = (KIND_NAMES.get(t[0]), t[1])
                self._by_name.setdefault(key, []).append(tid)
        return self._by_name.get((kind_name, name), [])


def load(path, base_path):
    """Split BTF of a module over its distilled base or over vmlinux."""
    blob = read_btf_blob(path)
    if not blob:
        raise AbiError(f"{path}: no .BTF section")
    distilled = read_btf_blob(path, ".BTF.base")
    if distilled:
        base = Btf(distilled, what=f"{path} .BTF.base")
    else:
        vm = read_btf_blob(base_path)
        if not vm:
            raise AbiError(f"{base_path}: no .BTF section")
        base = Btf(vm, what=base_path)
    return Btf(blob, base, what=path)


# ----------------------------------------------------------- rendering --

def members(btf, t):
    kind, _name, vlen, kflag, _size, extra = t
    for i in range(vlen):
        if kind in (STRUCT, UNION):
            name_off, mtype, off = struct.unpack_from("<III", extra, i * 12)
            bits = off >> 24 if kflag else 0
            bit_off = off & 0xFFFFFF if kflag else off
            yield btf.str(name_off), mtype, bit_off, bits
        elif kind == FUNC_PROTO:
            name_off, ptype = struct.unpack_from("<II", extra, i * 8)
            yield btf.str(name_off), ptype, None, None


def enum_values(btf, t):
    kind, _name, vlen, kflag, _size, extra = t
    for i in range(vlen):
        if kind == ENUM:
            fmt = "<Ii" if kflag else "<II"
            name_off, val = struct.unpack_from(fmt, extra, i * 8)
        else:
            name_off, lo, hi = struct.unpack_from("<III", extra, i * 12)
            val = lo | hi << 32
            if kflag and val >= 1 << 63:
                val -= 1 << 64
        yield btf.str(name_off), val


def type_size(btf, tid):
    t = btf.get(tid)
    if t is None:
        return 0
    kind, _n, _v, _k, st, extra = t
    if kind in (INT, STRUCT, UNION, ENUM, ENUM64, FLOAT):
        return st
    if kind == PTR:
        return 8
    if kind == ARRAY:
        elem, _idx, nelems = struct.unpack("<III", extra)
        return nelems * type_size(btf, elem)
    if kind in (TYPEDEF, VOLATILE, CONST, RESTRICT, TYPE_TAG):
        return type_size(btf, st)
    return 0


def type_name(btf, tid, inner=""):
    """C spelling of a type reference, wrapped around declarator INNER."""
    sep = " " + inner if inner and not inner.startswith(("[", ")")) else inner
    t = btf.get(tid)
    if t is None:
        return "void" + sep
    kind, name, _v, _k, st, extra = t
    if kind in (INT, FLOAT, TYPEDEF):
        return name + sep
    if kind in (STRUCT, UNION, ENUM, ENUM64, FWD):
        word = {STRUCT: "struct", UNION: "union"}.get(kind, "enum")
        if kind == FWD:
            word = "union" if t[3] else "struct"
        return f"{word} {name or '<anon>'}" + sep
    if kind == PTR:
        return type_name(btf, st, "*" + inner)
    if kind in (CONST, VOLATILE, RESTRICT):
        qual = {CONST: "const", VOLATILE: "volatile",
                RESTRICT: "restrict"}[kind]
        target = btf.get(st)
        if target is not None and target[0] == PTR:
            return type_name(btf, st, qual + " " + inner if inner else qual)
        return qual + " " + type_name(btf, st, inner)
    if kind == TYPE_TAG:
        return type_name(btf, st, inner)
    if kind == ARRAY:
        elem, _idx, nelems = struct.unpack("<III", extra)
        return type_name(btf, elem, f"{inner}[{nelems}]")
    if kind == FUNC_PROTO:
        params = ", ".join(type_name(btf, p)
                           for _n, p, _o, _b in members(btf, t))
        if t[2] == 0:
            params = "void"
        if inner.startswith("*"):
            inner = f"({inner})"
        return type_name(btf, st, f"{inner}({params})")
    return f"<kind {kind}>" + sep


def render_members(btf, t, base_bits, depth, out):
    pad = "  " * depth
    for name, mtype, bit_off, bits in members(btf, t):
        abs_bits = base_bits + bit_off
        where = f"{abs_bits // 8}"
        if bits or abs_bits % 8:
            where += f":{abs_bits % 8}"
        size = type_size(btf, mtype)
        width = f" bits={bits}" if bits else ""
        mt = btf.get(mtype)
        if mt and mt[0] in (STRUCT, UNION) and not mt[1]:
            word = "struct" if mt[0] == STRUCT else "union"
            out.append(f"{pad}{name}: {word} {{ @ {where} size={size}")
            render_members(btf, mt, abs_bits, depth + 1, out)
            out.append(f"{pad}}}")
        else:
            out.append(f"{pad}{name}: {type_name(btf, mtype)} @ {where} "
                       f"size={size}{width}")


def render(btf, kind_name, name):
    """Canonical lines for one named type, or None if BTF lacks it."""
    ids = btf.find(kind_name, name)
    if not ids:
        return None
    # Duplicates after dedup would be a BTF oddity; report the set.
    texts = []
    for tid in ids:
        t = btf.get(tid)
        kind = t[0]
        out = []
        if kind in (STRUCT, UNION):
            out.append(f"{kind_name} {name} size={t[4]} members={t[2]}")
            render_members(btf, t, 0, 1, out)
        elif kind in (ENUM, ENUM64):
            sign = "signed" if t[3] else "unsigned"
            out.append(f"enum {name} size={t[4]} {sign} values={t[2]}")
            out += [f"  {n} = {v}" for n, v in enum_values(btf, t)]
        elif kind == TYPEDEF:
            out.append(f"typedef {name} = {type_name(btf, t[4])}")
        elif kind == FUNC:
            proto = btf.get(t[4])
            linkage = {0: "static", 1: "global", 2: "extern"}.get(t[2], t[2])
            out.append(f"func {name} linkage={linkage}")
            out.append(f"  returns {type_name(btf, proto[4])}")
            for i, (pname, ptype, _o, _b) in enumerate(members(btf, proto)):
                # Parameter names are not ABI; show them, do not compare.
                out.append(f"  arg{i} {type_name(btf, ptype)}"
                           f"  # {pname or '-'}")
        texts.append(out)
    texts.sort()
    return [line for text in texts for line in text]


def comparable(lines):
    return [line.split("  #")[0] for line in lines]



# -------------------------------------------------------------- header --

def scan_header(path):
    """Names a C header defines: ([(kind, name)], [macro names])."""

    with open(path) as f:
        text = f.read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r"\\\n", " ", text)
    macros, body = [], []
    for line in text.splitlines():
        m = re.match(r"\s*#\s*define\s+(\w+)(\([^)]*\))?\s+\S", line)
        if m and not m.group(2):
            macros.append(m.group(1))
        if not line.lstrip().startswith("#"):
            body.append(line)
    body = " ".join(body)
    items = [(k, n) for k, n in
             re.findall(r"\b(struct|union|enum)\s+(\w+)\s*\{", body)]
    items += [("typedef", n) for n in
              re.findall(r"\btypedef\b[^;]*?\(\s*\*\s*(\w+)\s*\)", body)]
    items += [("typedef", n) for n in
              re.findall(r"\btypedef\b[^;(]*?\b(\w+)\s*;", body)]
    # Drop every brace block, then each remaining declaration with a
    # parameter list is a function prototype.
    flat = body
    while True:
        shorter = re.sub(r"\{[^{}]*\}", " ", flat)
        if shorter == flat:
            break
        flat = shorter
    for decl in flat.split(";"):
        if "typedef" in decl or "(" not in decl:
            continue
        m = re.search(r"(\w+)\s*\(", decl)
        if m:
            items.append(("func", m.group(1)))
    return items, macros


def gen_consts(a):
    """Write a kbuild dir that records each constant under both headers."""

    consts = list(read_list(a.list))
    if a.scan:
        for name in scan_header(a.scan)[1]:
            if name != a.guard and ("macro", name) not in consts:
                consts.append(("macro", name))
    os.makedirs(a.outdir, exist_ok=True)
    with open(os.path.join(a.outdir, "names.txt"), "w") as f:
        f.writelines(f"{k} {n}\n" for k, n in consts)
    with open(os.path.join(a.outdir, "Kbuild"), "w") as f:
        f.write("obj-m := ibcm_abi_consts.o\n"
                "ibcm_abi_consts-y := stock_consts.o ours_consts.o\n")
    for which, include in (("stock", "<rdma/ib_cm.h>"),
                           ("ours", f'"{a.ours_header}"')):
        lines = ["// SPDX-License-Identifier: GPL-2.0",
                 "/* Generated by tools/testing/abi/btfabi.py. */",
                 "#include <linux/module.h>",
                 f"#include {include}",
                 "",
                 "#define IBCM_ABI(x) { (__force u64)(x), sizeof(x) }",
                 "#define IBCM_ABI_MISSING { 0, 0 }",
                 "",
                 f"static const u64 {which}_consts[][2] __used",
                 '\t__section(".ibcm_abi") = {']
        for kind, name in consts:
            if kind == "macro":
                lines += [f"#ifdef {name}", f"\tIBCM_ABI({name}),", "#else",
                          "\tIBCM_ABI_MISSING,", "#endif"]
            else:
                lines.append(f"\tIBCM_ABI({name}),")
        lines.append("};")
        if which == "stock":
            lines += ["", 'MODULE_LICENSE("GPL");',
                      'MODULE_DESCRIPTION("ib_cm ABI constants probe");']
        with open(os.path.join(a.outdir, f"{which}_consts.c"), "w") as f:
            f.write("\n".join(lines) + "\n")


# ---------------------------------------------------------------- check --

class Tap:
    def __init__(self):
        self.results = []

    def add(self, ok, desc, diag=(), skip=None):
        self.results.append((ok, desc, list(diag), skip))

    def emit(self):
        print(f"1..{len(self.results)}")
        failed = 0
        for n, (ok, desc, diag, skip) in enumerate(self.results, 1):
            word = "ok" if ok else "not ok"
            failed += not ok
            print(f"{word} {n} - {desc}" + (f" # SKIP {skip}" if skip else ""))
            for line in diag:
                print(f"#   {line}")
        if failed:
            print(f"# {failed} of {len(self.results)} ABI checks failed")
        return 1 if failed else 0


def read_list(path):
    with open(path) as f:
        for line in f:
            line = line.split("#")[0].strip()
            if line:
                yield tuple(line.split(None, 1))


def check_types(tap, stock, ours, items):
    for kind_name, name in items:
        desc = ("prototype" if kind_name == "func" else "layout") + \
            f" {kind_name} {name}"
        want = render(stock, kind_name, name)
        got = render(ours, kind_name, name)
        if want is None:
            tap.add(True, desc, skip="not in the stock module's BTF")
            continue
        if got is None:
            tap.add(False, desc, [
                "missing from our module's BTF.  The compiler records a",
                "type only if a declaration the module emits uses it.",
                "Stock has:"]
                + want)
            continue
        if comparable(want) == comparable(got):
            tap.add(True, desc)
            continue
        diff = difflib.unified_diff(want, got, "stock", "ours",
                                    lineterm="", n=2)
        tap.add(False, desc, list(diff))


def const_text(value, size):
    """A recorded constant: its bytes in memory order, and its size."""
    raw = value.to_bytes(8, "little")[:min(size, 8)]
    return f"bytes {raw.hex(' ')} (sizeof {size})"


def check_consts(tap, names_file, stock_obj, ours_obj, log):
    names = list(read_list(names_file))

    def table(path):
        try:
            sec = elf_sections(path).get(".ibcm_abi")
        except (OSError, AbiError):
            return None
        return [struct.unpack_from("<QQ", sec, i * 16)
                for i in range(len(sec) // 16)] if sec else None

    want, got = table(stock_obj), table(ours_obj)
    why = []
    if want is None or got is None or len(want) != len(got):
        why = ["the constants probe did not build; end of its log:"]
        try:
            with open(log) as f:
                why += [line.rstrip() for line in f.readlines()[-15:]]
        except OSError:
            pass
    for i, (kind, name) in enumerate(names):
        desc = f"constant {name}"
        if why:
            tap.add(False, desc, why)
            why = ["the constants probe did not build (log above)"]
            continue
        (wv, ws), (gv, gs) = want[i], got[i]
        if ws == 0:
            tap.add(True, desc, skip="not defined by the stock header")
        elif gs == 0:
            tap.add(False, desc, [f"missing from our header; stock is "
                                  f"{const_text(wv, ws)}"])
        elif (wv, ws) != (gv, gs):
            tap.add(False, desc, [f"stock {const_text(wv, ws)}",
                                  f"ours  {const_text(gv, gs)}"])
        else:
            tap.add(True, desc)


def cmd_check(a):
    tap = Tap()
    for path in a.extra or []:
        # Results check.sh found itself: "ok|not ok|skip TAB desc [TAB diag]".
        with open(path) as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if parts[0] == "skip":
                    tap.add(True, parts[1], skip=parts[2])
                else:
                    tap.add(parts[0] == "ok", parts[1], parts[2:])
    stock = load(a.stock, a.base)
    ours = load(a.ours, a.base)
    items = list(read_list(a.types))
    if a.scan:
        for item in scan_header(a.scan)[0]:
            if item not in items:
                items.append(item)
    check_types(tap, stock, ours, items)
    if a.consts:
        check_consts(tap, a.consts, a.consts_stock, a.consts_ours,
                     a.consts_log)
    return tap.emit()


def cmd_dump(a):
    btf = load(a.module, a.base)
    for spec in a.names:
        kind_name, _, name = spec.partition(" ")
        lines = render(btf, kind_name, name)
        print("\n".join(lines) if lines else f"# {spec}: not found")


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump", help="print canonical type text")
    d.add_argument("base")
    d.add_argument("module")
    d.add_argument("names", nargs="+", help='e.g. "struct ib_cm_id"')
    c = sub.add_parser("check", help="compare and print TAP")
    c.add_argument("--base", required=True, help="vmlinux with .BTF")
    c.add_argument("--stock", required=True, help="stock module")
    c.add_argument("--ours", required=True, help="our module, or raw BTF")
    c.add_argument("--types", required=True, help="list of KIND NAME")
    c.add_argument("--scan", help="stock header: check what it defines too")
    c.add_argument("--consts", help="names.txt written by gen-consts")
    c.add_argument("--consts-stock", help="object built with stock header")
    c.add_argument("--consts-ours", help="object built with our header")
    c.add_argument("--consts-log", help="build log of the constants probe")
    c.add_argument("--extra", action="append", help="file of prior results")
    g = sub.add_parser("gen-consts", help="write the constants probe")
    g.add_argument("--list", required=True, help="list of KIND NAME")
    g.add_argument("--scan", help="stock header: add its #defines")
    g.add_argument("--guard", default="IB_CM_H", help="include guard")
    g.add_argument("--ours-header", required=True)
    g.add_argument("outdir")
    a = p.parse_args()
    try:
        return {"check": cmd_check, "dump": cmd_dump,
                "gen-consts": gen_consts}[a.cmd](a)
    except AbiError as e:
        print(f"1..1\nnot ok 1 - ABI check could not run\n#   {e}")
        return 2


if __name__ == "__main__":
    sys.exit(main() or 0)
