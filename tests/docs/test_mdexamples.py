"""test_mdexamples.py - the example syntax and the comparison, without a machine.

The doc-test is only worth something when a stale example fails: these
tests take real example text, change one number or drop one line, and check
that the comparison then fails, and that the marked fields (`...`,
doctest-vary) vary only where they are marked.
"""

import pytest

import mdexamples
from mdexamples import DocError, matches, parse

PAGE = """# a page

<!-- doctest-page: boot=commands -->

Text.

<!-- doctest: ht sig=15,2,9 -->
<!-- doctest-vary: wall: \\d+ -->

```
nbprof> stat loop 1000
stat: loop 1000 (ring 0, 1 run, LP0)
          3006  instr_retired:NBOGUSNTAG:NBOGUSTAG:u:k  counter 16 ...
wall: 338272128 TSC cycles
nbprof> pmu
...
```

```sh
make run    # no example: no prompt
```

```
$ echo hello
hello
```
"""


def test_parse_finds_shell_and_host_examples_with_their_options():
    exs = parse(PAGE, "docs/x.md")
    assert [e.kind for e in exs] == ["shell", "host"]
    sh, host = exs
    assert sh.line == 10 and [s.command for s in sh.steps] == ["stat loop 1000", "pmu"]
    assert sh.steps[0].line == 11 and len(sh.steps[0].expected) == 3
    assert sh.machine == ("uefi-x64", (15, 2, 9), True)
    assert sh.boot == ("commands", sh.machine)
    assert host.opts == {"boot": "commands"} and host.steps[0].expected == ["hello"]
    assert len(sh.vary) == 1 and not host.vary


OUT = ["stat: loop 1000 (ring 0, 1 run, LP0)",
       "          3006  instr_retired:NBOGUSNTAG:NBOGUSTAG:u:k  counter 16 (MSR_IQ_COUNTER4) x",
       "wall: 338272999 TSC cycles"]


def test_a_matching_output_passes_and_a_changed_number_fails():
    ex = parse(PAGE, "p.md")[0]
    exp = ex.steps[0].expected
    assert matches(exp, OUT, ex.vary)
    stale = [exp[0], exp[1].replace("3006", "3007"), exp[2]]
    assert not matches(stale, OUT, ex.vary)
    assert not matches(exp, [OUT[0], OUT[1].replace("3006", "3005"), OUT[2]], ex.vary)


def test_vary_fields_vary_only_where_marked():
    ex = parse(PAGE, "p.md")[0]
    exp = ex.steps[0].expected
    assert not matches(exp, OUT[:2] + ["wall: many TSC cycles"], ex.vary)
    assert not matches(exp, OUT, [])          # without the mark the number must agree


def test_missing_extra_and_elided_lines():
    assert not matches(["a", "b"], ["a"])
    assert not matches(["a"], ["a", "b"])
    assert matches(["a", "...", "z"], ["a", "z"])
    assert matches(["a", "...", "z"], ["a", "b", "c", "z"])
    assert not matches(["a", "...", "z"], ["a", "b", "c"])
    assert matches(["x ... y"], ["x 1 2 3 y"]) and not matches(["x ... y"], ["x 1 2 3 z"])
    assert matches(["a   "], ["a"]) and matches([], [""])


def test_host_output_is_what_a_terminal_shows():
    """Progress lines redrawn with CR show their last state, as on a terminal
    (read as text with universal newlines, each state became a line)."""
    err = "\rupload: 16/51 frames\rupload: 32/51 frames\rupload: 51/51 frames\n"
    assert mdexamples.terminal(err) == "upload: 51/51 frames\n"
    assert mdexamples.terminal("abcdef\rxy\n") == "xycdef\n"


def test_a_listing_names_its_file():
    ex, = parse("<!-- doctest: file=sdk/x.c -->\n```c\nint x;\n```\n", "p.md")
    assert ex.kind == "file" and ex.steps[0].command == "sdk/x.c"
    assert ex.steps[0].expected == ["int x;"]


@pytest.mark.parametrize("text, what", [
    ("<!-- doctest: bogus -->\n```\nnbprof> cpu\n```\n", "unknown doctest option"),
    ("<!-- doctest: sig=15,2 -->\n```\nnbprof> cpu\n```\n", "three numbers"),
    ("<!-- doctest: firmware=efi -->\n```\nnbprof> cpu\n```\n", "firmware=efi"),
    ("<!-- doctest: skip -->\n```\nnbprof> cpu\n```\n", "needs a value"),
    ("<!-- doctest: ht -->\n```sh\nmake run\n```\n", "no example"),
    ("<!-- doctest: ht -->\nText.\n```\nnbprof> cpu\n```\n", "right before"),
    ("<!-- doctest-vary: x* -->\n```\nnbprof> cpu\n```\n", "empty string"),
    ("```\nnbprof> cpu\n", "closing fence"),
    ("```\nnbprof> \n```\n", "empty command"),
    ("<!-- doctest: ht -->\n", "before no block"),
])
def test_bad_pages_are_refused_with_the_place(text, what):
    with pytest.raises(DocError) as e:
        parse(text, "docs/bad.md")
    assert what in str(e.value) and "docs/bad.md" in str(e.value)
