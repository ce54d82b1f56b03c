"""upload - send a user's program (an ELF built with sdk/nbprof-cc) to the target.

The file goes in NBU: frames of UPLOAD_CHUNK bytes, each with its number,
length and CRC-32 (workload/upload.h); the target answers with progress lines
and, for a damaged frame, the number to resume from. A program of the other
kernel's class is refused before anything is sent.
"""

import base64
import os
import re
import sys
import zlib

from nbproflib.link import PROMPT, LinkError, clean, errors_in

UPLOAD_RETRIES = 3
UPLOAD_CHUNK = 192              # workload/upload.h
UPLOAD_PROGRESS = 16            # shell/cmd_program.c: a progress line every 16 frames
UPLOAD_STALLS = 3               # blocks in a row the target may take without progress
ELF_MAGIC = b"\x7fELF"


class ProgramRefused(Exception):
    """A program the target's kernel would refuse: nothing is sent (exit status 2)."""


def upload_frame(data, seq):
    """Frame seq of data as an NBU: line (workload/upload.h), without a line end."""
    piece = data[seq * UPLOAD_CHUNK:(seq + 1) * UPLOAD_CHUNK]
    body = seq.to_bytes(4, "little") + len(piece).to_bytes(2, "little") + piece
    body += zlib.crc32(body).to_bytes(4, "little")
    return "NBU:" + base64.b64encode(body).decode()


def upload_frames(data):
    return max(1, (len(data) + UPLOAD_CHUNK - 1) // UPLOAD_CHUNK)


def program_name(path):
    """The target's name for a program file: its base name without .elf/.bin."""
    base = os.path.basename(path)
    for ext in (".elf", ".bin"):
        if base.endswith(ext) and len(base) > len(ext):
            base = base[:-len(ext)]
    name = re.sub(r"[^A-Za-z0-9._-]", "_", base)[:23]
    return name


def loaded_programs(target):
    """({name: crc32} of the programs the target has loaded, its kernel's bits or None)."""
    out = target.command("programs")
    progs, bits = {}, None
    for line in out.splitlines():
        m = re.match(r"^(\S+)\s+(\d+)\s+([0-9a-f]{8})\s", line)
        if m:
            progs[m.group(1)] = int(m.group(3), 16)
        m = re.match(r"^kernel: (32|64)-bit", line)
        if m:
            bits = int(m.group(1))
    return progs, bits


def elf_bits(data):
    """32 or 64 from an ELF file's EI_CLASS byte, or None."""
    return {1: 32, 2: 64}.get(data[4]) if len(data) > 4 and data[:4] == ELF_MAGIC else None


def check_program_class(path, data, kernel_bits):
    """Refuse a program of the other kernel's class, as the target would (workload/program.c)."""
    bits = elf_bits(data)
    if kernel_bits and bits and bits != kernel_bits:
        raise ProgramRefused("%s: a %d-bit program: this is the %d-bit kernel; build with "
                             "nbprof-cc%s" % (path, bits, kernel_bits,
                                              " -m32" if kernel_bits == 32 else " without -m32"))


class UploadProgress:
    def __init__(self, name, quiet):
        self.name, self.quiet = name, quiet

    def show(self, done, total):
        if not self.quiet:
            sys.stderr.write("\rnbprof: upload %s: %d/%d frames" % (self.name, done, total))
            sys.stderr.flush()

    def end(self):
        if not self.quiet:
            sys.stderr.write("\n")


def upload_send(target, data, start, corrupt, progress):
    """Frames start.. in blocks that end where the target prints its progress.

    Returns None when every frame went, else the target's line about a bad one.
    Raises LinkError when the target's progress says something no working
    target does: another frame count, a frame past the end or before one it
    had, or no progress for UPLOAD_STALLS blocks in a row (resending would
    never end).
    """
    total, k, stalls = upload_frames(data), start, 0
    while k < total:
        end = min(total, (k // UPLOAD_PROGRESS + 1) * UPLOAD_PROGRESS)
        for seq in range(k, end):
            line = upload_frame(data, seq)
            if seq in corrupt:
                corrupt.discard(seq)          # once: the resend is intact
                i = len(line) // 2
                line = line[:i] + ("A" if line[i] != "A" else "B") + line[i + 1:]
            target.link.write(line.encode() + b"\r")
        _, m = target.wait_re(r"upload: (\d+)/(\d+) frames\n|upload: (frame \d+[^\n]*)\n",
                              target.timeout, "upload progress")
        if m.group(3):
            return m.group(3)
        got, frames = int(m.group(1)), int(m.group(2))
        why = None
        if frames != total:
            why = "the target counts %d frames, the file has %d" % (frames, total)
        elif got > total:
            why = "the target says frame %d of %d" % (got, total)
        elif got < k:
            why = "the target's progress went back from frame %d to %d" % (k, got)
        elif got == k:
            stalls += 1
            if stalls >= UPLOAD_STALLS:
                why = "the target's progress stayed at frame %d of %d for %d blocks" % (
                    k, total, stalls)
        else:
            stalls = 0
        if why:
            target.link.write(b"NBU:END\r")     # the target's shell leaves the upload
            progress.end()
            raise LinkError("upload: %s; stopped sending" % why)
        k = got
        progress.show(k, total)
    return None


def upload_program(target, path, name, quiet, corrupt=()):
    """Send the file at path as program `name`, resuming a broken transfer.

    Returns the target's output lines; raises LinkError when it stays broken.
    corrupt: frame numbers to spoil once on the way (to try the resume).
    """
    with open(path, "rb") as f:
        data = f.read()
    corrupt = set(corrupt)
    progress = UploadProgress(name, quiet)
    log = []
    line = "upload programs %d %s 0x%08x" % (len(data), name, zlib.crc32(data))
    for attempt in range(UPLOAD_RETRIES + 1):
        target.link.write(line.encode() + b"\r")
        text, m = target.wait_re(r"send from frame (\d+)\n|\nerror: [^\n]*\n",
                                 target.timeout, "upload start")
        log.append(text)
        if not m.group(1):
            target.wait_for(PROMPT, target.timeout)
            progress.end()
            raise LinkError("upload %s: %s" % (name, m.group(0).strip()))
        bad = upload_send(target, data, int(m.group(1)), corrupt, progress)
        target.link.write(b"NBU:END\r")
        out = target.wait_for("\n" + PROMPT, target.timeout, "prompt after the upload")
        log.append(clean(out))
        errs = errors_in(clean(out))
        if not errs:
            progress.end()
            return "".join(log)
        if not quiet:
            sys.stderr.write("\nnbprof: upload %s: %s%s\n" % (name, bad + "; " if bad else "",
                                                             errs[0]))
        if "--resume" not in errs[0]:
            break
        line = "upload --resume programs"
    progress.end()
    raise LinkError("upload %s failed: %s" % (name, "; ".join(errors_in("".join(log)))))


def program_words(words):
    """Indices of the words that name ELF files on the host."""
    found = []
    for i, w in enumerate(words):
        if os.path.isfile(w):
            with open(w, "rb") as f:
                if f.read(4) == ELF_MAGIC:
                    found.append(i)
    return found

