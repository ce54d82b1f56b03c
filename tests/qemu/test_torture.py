"""test_torture.py - the serial shell under abuse, then as good as new.

One machine takes, in order: seeded random bytes (every byte value, so
stray escape sequences, control strings cut anywhere, Ctrl-C, Ctrl-U,
backspaces and lines of garbage), a line carrying every kind of escape
sequence around the letters of `help`, an overlong line, and a flood of
100 commands typed ahead without waiting for a prompt. Afterwards `help`
must answer byte for byte as it did before the torture, prompt included.

What the shell promises (shell/shell.h): CSI and SS3 sequences with any
number of parameter bytes, OSC/DCS/SOS/PM/APC strings up to BEL or ESC \\,
and nF sequences are swallowed whole; ESC followed by Enter still ends
the line; a line longer than 255 characters prints one
"error: line too long (max 255 characters)" and runs nothing; Ctrl-C
abandons whatever state the line editor is in.
"""
import os
import random
import re

import pexpect
import pytest

from conftest import PROMPT

SEED = 20261125
RANDOM_BYTES = 4096
CHUNK = 64

# Every kind of escape sequence a terminal (or line noise) produces.
# (Up and down arrows walk the history; the random bytes have those.)
ESCAPES = [
    b"\x1b[C", b"\x1b[D",                                      # right, left
    b"\x1b[1;5D", b"\x1b[3~", b"\x1b[200~", b"\x1b[201~",    # Ctrl-left, Delete, paste brackets
    b"\x1b[" + b"1;" * 30 + b"5H",                           # 61 parameter bytes
    b"\x1b[?25h", b"\x1b[<0;10;20M", b"\x1b[ q",             # private, mouse, intermediate byte
    b"\x1bOP", b"\x1bOQ", b"\x1bO2R",                         # SS3 (F1-F3)
    b"\x1b]0;window title\x07", b"\x1b]8;;http://e.x/\x1b\\",  # OSC ended by BEL, by ST
    b"\x1bP1$r0m\x1b\\", b"\x1bPq#0;2;0;0;0\r\n-\x1b\\",        # DCS (with CR LF inside)
    b"\x1bXsos\x1b\\", b"\x1b^pm\x1b\\", b"\x1b_apc\x1b\\",      # SOS, PM, APC
    b"\x1b(B", b"\x1b)0", b"\x1b#8",                          # nF: charset, DEC test
    b"\x1bx", b"\x1b7", b"\x1b8", b"\x1b=", b"\x1b>", b"\x1b\x1b[C",  # Alt-x, Fp, ESC ESC
]

FLOOD = ["help cpu", "msr read 0x1a0", "events instr_retired", "nosuch", "help mem"]


def send_raw(nb, data):
    """Send bytes as they are (pexpect's send() would encode text)."""
    while data:
        data = data[os.write(nb.child.child_fd, data):]


def send_noise(nb, data):
    """Send bytes a chunk at a time, reading and dropping what comes back."""
    for i in range(0, len(data), CHUNK):
        send_raw(nb, data[i:i + CHUNK])
        try:
            nb.child.expect(pexpect.TIMEOUT, timeout=0.02)
        except pexpect.EOF:
            pytest.fail("QEMU exited during the random bytes")


def resync(nb, tag):
    """Ctrl-C out of any editor state, then a marker command answers."""
    send_raw(nb, b"\x03help " + tag.encode() + b"\r")
    nb.expect_exact("unknown command '%s'" % tag, 60)
    nb.expect_exact(PROMPT, 20)


def raw_reply(nb, line):
    """Everything the machine sends back for one line, echo and prompt included."""
    send_raw(nb, line)
    nb.expect_exact(PROMPT, 20)
    return nb.child.before + PROMPT


def help_text(nb):
    return raw_reply(nb, b"help\r")


def test_help_survives_torture(nb):
    before = help_text(nb)
    assert "commands:" in before and "at most 255 characters" in before, before

    rng = random.Random(SEED)
    noise = bytes(rng.randrange(256) for _ in range(RANDOM_BYTES))
    send_noise(nb, noise)
    resync(nb, "sync-after-noise")

    # the letters of `help` with every escape kind between them: only `help` runs
    seq = list(ESCAPES)
    rng.shuffle(seq)
    line = b"h" + b"".join(seq[0::4]) + b"e" + b"".join(seq[1::4]) + b"l" + \
        b"".join(seq[2::4]) + b"p" + b"".join(seq[3::4]) + b"\r"
    assert raw_reply(nb, b"\x15" + line) == before

    # ESC then Enter: the Enter still ends the line
    assert raw_reply(nb, b"help\x1b\r") == before

    # an overlong line: one error, nothing run
    out = raw_reply(nb, b"help" + b" " * 300 + b"\r")
    errors = re.findall(r"error: [^\r\n]*", out)
    assert errors == ["error: line too long (max 255 characters)"], out
    assert "commands:" not in out, out

    # 100 commands typed ahead, then 100 answers in order
    flood = [FLOOD[i % len(FLOOD)] for i in range(100)]
    send_raw(nb, b"".join(c.encode() + b"\r" for c in flood))
    answers = []
    for _ in flood:
        nb.expect_exact(PROMPT, 60)
        answers.append(nb.child.before)
    for cmd, ans in zip(flood, answers):
        assert ans.startswith(cmd), (cmd, ans)
    assert sum("usage: cpu" in a for a in answers) == 20
    assert sum("MSR 1A0H" in a for a in answers) == 20
    assert sum("unknown command 'nosuch'" in a for a in answers) == 20

    assert help_text(nb) == before
