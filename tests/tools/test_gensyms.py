"""test_gensyms.py - tools/build/gensyms, the kernel's embedded symbol table.

Two parts: hand-written `nm -n` lines (what nm prints: address, type letter,
name; binutils nm(1) documents T/t text, W/w weak, D/d data, A absolute,
r read-only data) checked against the rules in gensyms' docstring, and the
table of the kernel that `make` built, which must name the assembly entry
points that call chains and fault reports pass through.
"""

import bisect
import os
import re
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(REPO, os.environ.get("NBPROF_BUILD", "build"))
GENSYMS = os.path.join(REPO, "tools", "build", "gensyms")
ENTRY = re.compile(r'^\t\{ 0x([0-9a-f]+), (\d+) \},\t/\* (\S+) \*/$', re.M)
NAMES = re.compile(r'^const char ksym_names\[\] =\n((?:\t"[^"\n]*"\n)*)\t"[^"\n]*";$', re.M)

NM = """\
                 U memcpy
0000000000000000 t ImageBase
0000000000001000 T _text
0000000000001000 T _start
0000000000001028 t .exit
0000000000001040 T efi_main
0000000000001100 t helper_local
0000000000001180 t .Lnot_a_function
0000000000001200 W weak_thing
0000000000001240 w weak_local
0000000000001300 t isr_common
0000000000002000 t wl_calls_level
0000000000002010 t wl_user_trampoline
0000000000002011 t wl_user_exit
0000000000002100 d some_data
0000000000002108 r some_rodata
0000000000003000 A abs_sym
0000000000003000 T _etext
0000000000003000 t after_text
0000000000004000 D table_in_data
"""


def gensyms(*args, stdin=""):
    return subprocess.run(["/usr/bin/python3", GENSYMS] + list(args), input=stdin,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)


def entries(text):
    """(address, name) rows, each name looked up at its offset in ksym_names."""
    m = NAMES.search(text)
    assert m, text
    blob = "".join(re.findall(r'"([^"]*)"', m.group(1))).replace("\\0", "\0")
    rows = []
    for a, off, comment in ENTRY.findall(text):
        off = int(off)
        assert 0 <= off < len(blob) and (off == 0 or blob[off - 1] == "\0"), (off, blob)
        name = blob[off:blob.index("\0", off)]
        assert comment == name, (comment, name)
        rows.append((int(a, 16), name))
    return rows


def test_names_are_offsets_into_one_string():
    """No pointers in the table, so it costs no load-time relocations."""
    p = gensyms(stdin=NM)
    assert p.returncode == 0, p.stderr
    assert "const struct ksym_entry ksym_table[] = {" in p.stdout
    assert re.findall(r"^\t\{ 0x([0-9a-f]+), (\d+) \},", p.stdout, re.M)[:3] == \
        [("1000", "0"), ("1028", "7"), ("1040", "13")]    # "_start\0" ".exit\0" "efi_main"
    assert '"_start\\0"' in p.stdout and "struct ksym ksym_table" not in p.stdout
    far = NM.replace("0000000000001100 t helper_local", "0000000100000000 t helper_local")
    far = far.replace("0000000000003000 T _etext", "0000000200000000 T _etext")
    p = gensyms(stdin=far)
    assert p.returncode != 0 and "32 bits" in p.stderr


def test_keeps_global_and_local_code_symbols_only():
    p = gensyms(stdin=NM)
    assert p.returncode == 0, p.stderr
    names = [n for _, n in entries(p.stdout)]
    assert names == ["_start", ".exit", "efi_main", "helper_local", "weak_thing", "weak_local",
                     "isr_common", "wl_calls_level", "wl_user_trampoline", "wl_user_exit"]
    assert "ksym_text_start = 0x1000;" in p.stdout
    assert "ksym_text_end = 0x3000;" in p.stdout
    assert "ksym_count = 10;" in p.stdout


def test_table_is_sorted_whatever_the_input_order():
    lines = NM.splitlines()
    p = gensyms(stdin="\n".join(reversed(lines)) + "\n")
    assert p.returncode == 0, p.stderr
    addrs = [a for a, _ in entries(p.stdout)]
    assert addrs == sorted(addrs) and len(addrs) == 10


def test_check_accepts_the_same_link_and_rejects_a_moved_symbol(tmp_path):
    table = tmp_path / "syms.c"
    table.write_text(gensyms(stdin=NM).stdout)
    assert gensyms("--check", str(table), stdin=NM).returncode == 0
    moved = NM.replace("0000000000002000 t wl_calls_level", "0000000000002004 t wl_calls_level")
    p = gensyms("--check", str(table), stdin=moved)
    assert p.returncode == 1
    assert "out of date" in p.stderr and "wl_calls_level" in p.stderr
    fewer = NM.replace("0000000000001100 t helper_local\n", "")
    assert gensyms("--check", str(table), stdin=fewer).returncode == 1


def test_empty_table_and_missing_bounds():
    p = gensyms("--empty")
    assert p.returncode == 0 and "ksym_count = 0;" in p.stdout
    assert "\t{ 0x0, 0 },\n};" in p.stdout  # C wants one row; ksym_count says none
    assert entries(p.stdout) == []
    p = gensyms(stdin=NM.replace("T _etext", "T not_etext"))
    assert p.returncode != 0 and "_text/_etext" in p.stderr
    assert gensyms("--bogus").returncode == 2


# --- the table of the built kernel ------------------------------------------------

def built_table():
    path = os.path.join(BUILD, "k", "syms.c")
    so = os.path.join(BUILD, "nbprof.so")
    if not (os.path.exists(path) and os.path.exists(so)):
        pytest.skip("no kernel build in %s (make)" % BUILD)
    with open(path) as f:
        return f.read(), so


def lookup(table, addr):
    """ksym_lookup's rule: the last entry at or below addr."""
    addrs = [a for a, _ in table]
    i = bisect.bisect_right(addrs, addr) - 1
    return (table[i][1], addr - table[i][0]) if i >= 0 else (None, 0)


def test_built_table_matches_the_final_link():
    text, so = built_table()
    nm = subprocess.run(["nm", "-n", so], stdout=subprocess.PIPE, check=True,
                        universal_newlines=True).stdout
    assert gensyms(stdin=nm).stdout == text


def test_built_table_names_the_assembly_entry_points():
    text, _ = built_table()
    table = entries(text)
    names = {n for _, n in table}
    # entry.S (local labels, no .type), workloads.S (hidden globals, plain labels)
    for want in ("isr_stubs", "isr_common", "isr_db_entry", "guard_call", "wl_loop",
                 "wl_calls_level", "wl_call_ring0", "wl_ring0_return", "user_call",
                 "user_return", "wl_user_trampoline", "wl_user_exit"):
        assert want in names, want
    assert not [n for n in names if n.startswith(".L")]


def test_ring3_chain_end_names_the_exit_trampoline():
    """A ring-3 chain's last return address is wl_user_exit (user_call puts it on the
    user stack); script and nbprof-decode look return addresses up at addr - 1."""
    text, _ = built_table()
    table = entries(text)
    exit_addr = dict((n, a) for a, n in table)["wl_user_exit"]
    assert lookup(table, exit_addr - 1) == ("wl_user_trampoline", 0)
    assert lookup(table, exit_addr) == ("wl_user_exit", 0)
