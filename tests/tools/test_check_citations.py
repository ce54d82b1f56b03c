"""test_check_citations.py - tools/dev/check-citations, the check that every
"PMU reference N.N" citation resolves to a heading of
docs/reference/netburst-pmu.md and every "QEMU notes PN" or "QEMU notes
section N" citation to a heading of docs/reference/qemu-uefi.md.

A small reference with a few headings and source files with good and bad
citations, checked through the command line as `make check-deps` runs it;
then the real tree, which must pass.
"""

import os
import re
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECK = os.path.join(REPO, "tools", "dev", "check-citations")

REFERENCE = """\
# A reference

## 1 Addresses

### 1.2 ESCRs

## 5 PEBS

### 5.3 PEBS_ENABLE

### 9.5 A pitfall
"""

QEMU_REFERENCE = """\
# Notes

## 3 After ExitBootServices

### P4 Boot-services memory

### P5 MSRs under TCG

## 5 The sibling

### P12 Cores, not threads
"""

# Assembled so that this test file itself holds none of the forms it feeds in.
RETIRED = "fact" + " sheet"
OUTSIDE = "../" + "shared/reference/netburst-pmu.md"
EXCERPT = "sdm" + "-excerpts/004"
ABSOLUTE = "/srv/nb/" + "shared/reference/netburst-pmu.md"
BESIDE = ("hardware" + "-reach.md", "linux_p4" + ".tsv", "reviews" + "/hardware-path-0.md")
UNKNOWN = "PMU reference " + "5.9"
QRETIRED = "uefi-qemu" + "-notes"
QUNKNOWN = "QEMU notes " + "P11"
QMIXED = "QEMU notes " + "section 1.2"


def run(tmp_path, files, *extra):
    ref = tmp_path / "ref.md"
    ref.write_text(REFERENCE)
    qref = tmp_path / "qref.md"
    qref.write_text(QEMU_REFERENCE)
    names = []
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        names.append(str(tmp_path / name))
    p = subprocess.run(["/usr/bin/python3", CHECK, "--reference", str(ref),
                        "--qemu-reference", str(qref)] + list(extra) + names,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    return p.returncode, p.stdout + p.stderr


def test_good_citations_pass(tmp_path):
    rc, out = run(tmp_path, {"good.c": (
        "/* PEBS_ENABLE bit 25 (PMU reference 5.3). */\n"
        "/* Addresses: PMU reference sections 1, 1.2 and 5;\n"
        " * the pitfall, PMU reference\n"
        " * section 9.5. */\n"
        "static const char *help = \"see the PMU reference's (5.3)\";\n"
        "# docs/reference/netburst-pmu.md 1.2\n"
        "/* PMU reference 5.3/9.5, 32-bit form */\n")})
    assert rc == 0, out
    assert "6 citations in 1 files resolve" in out


def test_unresolved_section_fails_with_file_and_line(tmp_path):
    rc, out = run(tmp_path, {"good.c": "/* PMU reference 5.3 */\n",
                             "bad.c": f"int x;\n/* see {UNKNOWN} for this */\n"})
    assert rc == 1
    assert f"bad.c:2: \"{UNKNOWN}\" names section 5.9" in out
    assert "good.c" not in out


def test_wrapped_list_and_range_are_each_checked(tmp_path):
    rc, out = run(tmp_path, {"bad.c": "/* PMU reference sections 1.2,\n * 4.1 and 1-2 */\n"
                                      "/* PMU reference 5.3/4.4 */\n"})
    assert rc == 1
    assert "names section 4.1" in out
    assert "bad.c:3: \"PMU reference 5.3/4.4\" names section 4.4" in out
    assert "names section 2," in out
    assert "section 1.2," not in out and "names section 1," not in out


def test_retired_form_and_outside_path_fail(tmp_path):
    rc, out = run(tmp_path, {"old.c": f"/* {RETIRED} 5.3 */\n/* Facts: {OUTSIDE} */\n"
                                      f"/* PMU reference 5.3 */\n/* SDM 18.20 ({EXCERPT}) */\n"
                                      f"# see {ABSOLUTE} 5.3\n"})
    assert rc == 1
    assert f"old.c:1: \"{RETIRED}\" is the retired citation form" in out
    assert "old.c:2:" in out and "points outside the tree" in out
    assert "old.c:4:" in out
    assert "old.c:5:" in out


def test_notes_kept_beside_the_tree_are_flagged_by_name(tmp_path):
    text = "/* PMU reference 5.3 */\n" + "".join(f"/* see {n} */\n" for n in BESIDE)
    rc, out = run(tmp_path, {"beside.c": text})
    assert rc == 1
    for line, name in enumerate(BESIDE, 2):
        assert f"beside.c:{line}: \"{name[:12]}" in out
    assert out.count("points outside the tree") == len(BESIDE)
    assert "beside.c:1:" not in out


def test_good_qemu_notes_citations_pass(tmp_path):
    rc, out = run(tmp_path, {"qemu.c": (
        "/* our own stack first (QEMU notes P4). */\n"
        "/* the sibling's APIC ID (QEMU notes section 5); MSRs read 0 (QEMU notes\n"
        " * P5) */\n"
        "# QEMU notes P4 and P5, docs/reference/qemu-uefi.md P12\n"
        "/* QEMU notes 3 */\n")})
    assert rc == 0, out
    assert "0 citations in 0 files resolve to docs/reference/netburst-pmu.md" in out
    assert "6 citations in 1 files resolve to docs/reference/qemu-uefi.md" in out


def test_unresolved_qemu_notes_citation_fails(tmp_path):
    rc, out = run(tmp_path, {"good.c": "/* QEMU notes P5 */\n",
                             "bad.c": (f"int x;\n/* {QUNKNOWN} */\n"
                                       "/* QEMU notes section 4 */\n"
                                       "/* QEMU notes P4 and\n * P7 */\n")})
    assert rc == 1
    assert f"bad.c:2: \"{QUNKNOWN}\" names section P11, which has no heading in " \
           "docs/reference/qemu-uefi.md" in out
    assert "bad.c:3: \"QEMU notes section 4\" names section 4," in out
    assert "bad.c:4:" in out and "names section P7," in out
    assert "section P4," not in out
    assert "good.c" not in out


def test_qemu_notes_number_is_not_a_pmu_reference_number(tmp_path):
    # 1.2 is a heading of the PMU reference, not of the QEMU notes, and P4 the other way round.
    rc, out = run(tmp_path, {"mixed.c": f"/* {QMIXED} */\n/* PMU reference 3 */\n"})
    assert rc == 1
    assert "mixed.c:1:" in out and "names section 1.2" in out
    assert "mixed.c:2:" in out and "names section 3," in out


def test_retired_qemu_notes_name_fails(tmp_path):
    rc, out = run(tmp_path, {"old.c": (f"/* QEMU notes P4 */\n/* ({QRETIRED} P4) */\n"
                                       f"# see {QRETIRED[5:]} section 5\n")})
    assert rc == 1
    assert f"old.c:2: \"{QRETIRED}\" names a document outside the tree" in out
    assert "old.c:3:" in out
    assert "old.c:1:" not in out


def test_no_citation_at_all_is_not_a_pass(tmp_path):
    rc, out = run(tmp_path, {"plain.c": "int main(void) { return 0; }\n"})
    assert rc == 1
    assert "no citation" in out


def test_bad_input_is_a_clear_error(tmp_path):
    p = subprocess.run(["/usr/bin/python3", CHECK, "--reference", str(tmp_path / "missing.md")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert p.returncode == 2
    assert "cannot read the reference" in p.stderr
    ref = tmp_path / "ref.md"
    ref.write_text(REFERENCE)
    p = subprocess.run(["/usr/bin/python3", CHECK, "--reference", str(ref), "--qemu-reference",
                        str(tmp_path / "missing-qemu.md")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert p.returncode == 2
    assert "cannot read the reference" in p.stderr and "missing-qemu.md" in p.stderr
    rc, out = run(tmp_path, {"a.c": "/* PMU reference 5.3 */\n"}, str(tmp_path / "nope.c"))
    assert rc == 2 and "cannot read" in out


def test_the_tree_passes():
    p = subprocess.run(["/usr/bin/python3", CHECK, "--root", REPO],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "resolve to docs/reference/netburst-pmu.md" in p.stdout
    m = re.search(r"(\d+) citations in \d+ files resolve to docs/reference/qemu-uefi\.md", p.stdout)
    assert m and int(m.group(1)) > 0, p.stdout
