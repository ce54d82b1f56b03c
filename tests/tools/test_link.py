"""test_link.py - the one reader of the target's serial line (nbproflib.link.Target).

Both callers read through it: tools/nbprof types commands and reads their
output up to the next prompt (Target.command), nbprof-decode --serial/--socket
takes the lines that arrive until silence (Target.lines, capture_live). A
scripted link hands the reader its bytes in the chunks a serial line may cut
them into, so each rule is checked for both: a prompt or a UTF-8 character
split between two reads, terminal escapes and the progress line removed,
CR LF line ends, a deadline or a silence, the other end closing the line.
"""

import time

import pytest

from nbproflib import link
from nbproflib.frames import Capture


class ScriptedLink:
    """A link that returns the given chunks, one per read, then silence or a close."""

    name = "scripted"
    needs_boot = False

    def __init__(self, chunks, closes=False):
        self.chunks, self.closes = list(chunks), closes
        self.written = b""

    def write(self, data):
        self.written += data

    def read(self, timeout):
        if self.chunks:
            return self.chunks.pop(0)
        if self.closes:
            raise link.LinkClosed("scripted: the line was closed")
        time.sleep(min(timeout, 0.05))
        return b""


# "µs" and a progress line, an escape sequence, CR LF ends; the µ (C2 B5) and
# the prompt are each cut between two reads
OUTPUT = [b"stat loop 1\r\n\x1b[1mwall: 12 \xc2", b"\xb5s\x1b[0m\r\n",
          b"\r# stepped 100 instructions\r# stepped 200 instructions\r     \rdone\r\n",
          b"\r\nnbp", b"rof> "]


def test_command_output_is_cleaned_whatever_the_chunks():
    lk = ScriptedLink(OUTPUT)
    t = link.Target(lk, timeout=5)
    assert t.command("stat loop 1") == "wall: 12 µs\ndone\n"
    assert lk.written == b"stat loop 1\r"


def test_lines_are_cleaned_the_same_way():
    t = link.Target(ScriptedLink(OUTPUT), timeout=5)
    assert list(t.lines(idle=0.3)) == ["stat loop 1", "wall: 12 µs", "done", "", "nbprof> "]


def test_command_without_a_prompt_is_a_link_error_at_the_deadline():
    t = link.Target(ScriptedLink([b"stat loop 1\r\nwall: 12\r\n"]), timeout=0.3)
    t0 = time.monotonic()
    with pytest.raises(link.LinkError, match="scripted: no prompt after 'stat loop 1'"):
        t.command("stat loop 1")
    assert time.monotonic() - t0 < 3


def test_lines_end_at_silence_with_the_unfinished_line():
    t = link.Target(ScriptedLink([b"a\r\nb", b"c"]), timeout=5)
    t0 = time.monotonic()
    assert list(t.lines(idle=0.3)) == ["a", "bc"]
    assert 0.3 <= time.monotonic() - t0 < 3


def test_lines_end_when_the_other_end_closes():
    t = link.Target(ScriptedLink([b"a\r\nb\r\n"], closes=True), timeout=5)
    t0 = time.monotonic()
    assert list(t.lines(idle=30)) == ["a", "b"]
    assert time.monotonic() - t0 < 3


def test_a_closed_line_during_a_command_is_a_link_error():
    t = link.Target(ScriptedLink([b"stat loop 1\r\n"], closes=True), timeout=5)
    with pytest.raises(link.LinkClosed, match="closed"):
        t.command("stat loop 1")


def test_collect_frames_stops_at_the_last_frame(dumpgen):
    frames = dumpgen("-n", 20, "dump").splitlines()
    text = ("dump\r\n\x1b[0m" + "\r\n".join(frames) + "\r\n").encode()
    # cut in 7-byte reads: every frame line and its CR LF split somewhere
    lk = ScriptedLink([text[i:i + 7] for i in range(0, len(text), 7)] + [b"left over\r\n"])
    cap = Capture()
    saved = link.collect_frames(link.Target(lk, 30), "dump", 30, cap)
    assert lk.written == b"dump\r"
    assert saved == ["dump"] + frames
    assert len(cap.frames) == len(frames)
    assert lk.chunks == [b"left over\r\n"]          # not waited for: the last frame ended it


@pytest.mark.parametrize("where, message", [
    ("no-such.sock", "--socket no-such.sock: neither an existing socket file nor HOST:PORT"),
    ("localhost:1", "cannot connect to localhost:1: "),
])
def test_a_socket_that_cannot_be_reached_exits_2(decode, tmp_path, where, message):
    p = decode("--socket", where, "--idle", "1", ok=(2,))
    assert p.stderr.startswith("nbprof-decode: " + message)
    assert "Traceback" not in p.stderr
    assert list(tmp_path.iterdir()) == []
