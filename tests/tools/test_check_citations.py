"""test_check_citations.py - tools/check-citations, the check that every
"PMU reference N.N" citation resolves to a heading of
docs/reference/netburst-pmu.md.

A small reference with a few headings and source files with good and bad
citations, checked through the command line as `make check-deps` runs it;
then the real tree, which must pass.
"""

import os
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECK = os.path.join(REPO, "tools", "check-citations")

REFERENCE = """\
# A reference

## 1 Addresses

### 1.2 ESCRs

## 5 PEBS

### 5.3 PEBS_ENABLE

### 9.5 A pitfall
"""

# Assembled so that this test file itself holds none of the forms it feeds in.
RETIRED = "fact" + " sheet"
OUTSIDE = "../" + "shared/reference/netburst-pmu.md"
UNKNOWN = "PMU reference " + "5.9"


def run(tmp_path, files, *extra):
    ref = tmp_path / "ref.md"
    ref.write_text(REFERENCE)
    names = []
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        names.append(str(tmp_path / name))
    p = subprocess.run(["/usr/bin/python3", CHECK, "--reference", str(ref)] + list(extra) + names,
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
                                      "/* PMU reference 5.3 */\n"})
    assert rc == 1
    assert f"old.c:1: \"{RETIRED}\" is the retired citation form" in out
    assert "old.c:2:" in out and "points outside the tree" in out


def test_no_citation_at_all_is_not_a_pass(tmp_path):
    rc, out = run(tmp_path, {"plain.c": "int main(void) { return 0; }\n"})
    assert rc == 1
    assert "no citation" in out


def test_bad_input_is_a_clear_error(tmp_path):
    p = subprocess.run(["/usr/bin/python3", CHECK, "--reference", str(tmp_path / "missing.md")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert p.returncode == 2
    assert "cannot read the reference" in p.stderr
    rc, out = run(tmp_path, {"a.c": "/* PMU reference 5.3 */\n"}, str(tmp_path / "nope.c"))
    assert rc == 2 and "cannot read" in out


def test_the_tree_passes():
    p = subprocess.run(["/usr/bin/python3", CHECK, "--root", REPO],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "resolve to docs/reference/netburst-pmu.md" in p.stdout
