"""test_upload_progress.py - tools/nbproflib/upload.py's frame sender against a
stand-in target whose progress lines are scripted.

A working target answers each block of UPLOAD_PROGRESS frames with
"upload: K/N frames", K the next frame it wants (shell/cmd_program.c). The
sender must finish against that target, and give up with a LinkError that
says why against one whose progress stays put, goes back, runs past the end or
counts another number of frames, instead of resending for ever (N4). The
stand-in fails the test after MAX_FRAMES frames, so a sender that never gives
up fails instead of hanging.
"""

import base64
import struct

import pytest

from nbproflib import upload
from nbproflib.link import LinkError, Target

MAX_FRAMES = 2000


class ScriptedLink:
    """The link of a target whose answer to each block is reply(next, total, block)."""

    needs_boot = False
    name = "scripted"

    def __init__(self, total, reply):
        self.total, self.reply = total, reply
        self.frames, self.blocks, self.ended = [], 0, False
        self.out = b""

    def write(self, data):
        line = data.decode().rstrip("\r")
        if line == "NBU:END":
            self.ended = True
            return
        assert line.startswith("NBU:")
        seq = struct.unpack_from("<I", base64.b64decode(line[4:]))[0]
        self.frames.append(seq)
        assert len(self.frames) <= MAX_FRAMES, "the sender never gave up"
        if (seq + 1) % upload.UPLOAD_PROGRESS == 0 or seq + 1 == self.total:
            self.blocks += 1
            self.out += b"upload: %d/%d frames\r\n" % self.reply(seq + 1, self.total, self.blocks)

    def read(self, timeout):
        data, self.out = self.out, b""
        return data


class Quiet:
    def show(self, done, total):
        pass

    def end(self):
        pass


DATA = bytes(range(256)) * 40                   # 10240 bytes: 54 frames of 192


def send(reply):
    total = upload.upload_frames(DATA)
    link = ScriptedLink(total, reply)
    target = Target(link, timeout=2)
    return link, lambda: upload.upload_send(target, DATA, 0, set(), Quiet())


def test_a_working_target_gets_every_frame_once():
    link, go = send(lambda nxt, total, block: (nxt, total))
    assert go() is None
    assert link.frames == list(range(upload.upload_frames(DATA)))
    assert not link.ended


def test_one_block_without_progress_is_resent():
    link, go = send(lambda nxt, total, block: (0 if block == 1 else nxt, total))
    assert go() is None
    assert link.frames == list(range(16)) + list(range(upload.upload_frames(DATA)))


@pytest.mark.parametrize("reply, why", [
    (lambda nxt, total, block: (0, total), "progress stayed at frame 0 of 54 for 3 blocks"),
    (lambda nxt, total, block: (nxt if block == 1 else 5, total),
     "progress went back from frame 16 to 5"),
    (lambda nxt, total, block: (nxt, total + 1), "the target counts 55 frames, the file has 54"),
    (lambda nxt, total, block: (total + 1, total), "the target says frame 55 of 54"),
])
def test_a_target_without_progress_is_given_up(reply, why):
    link, go = send(reply)
    with pytest.raises(LinkError) as e:
        go()
    assert why in str(e.value)
    assert len(link.frames) <= upload.UPLOAD_STALLS * upload.UPLOAD_PROGRESS
    assert link.ended                           # the target is told the upload is over
