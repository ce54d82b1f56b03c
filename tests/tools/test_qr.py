"""test_qr.py - the kernel's QR encoder, zlib compressor and base45
(lib/qr.c, lib/deflate.c, lib/base45.c, run on the host by
tests/tools/qrgen.c) against real decoders: every version 1 to 40 at
levels L and M, full to its capacity, and every mask, read back by zbar's
zbarimg from a PGM image; the compressed streams inflated by Python's zlib.
"""

import os
import random
import subprocess
import zlib

import pytest

from conftest import BUILD, REPO

QRGEN = os.path.join(BUILD, "h", "tools", "qrgen")
ZBARIMG = "/usr/bin/zbarimg"
ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:"


@pytest.fixture(scope="module")
def qrgen():
    if not os.path.exists(QRGEN):
        subprocess.run(["make", "-s", "-C", REPO, "B=" + BUILD, os.path.relpath(QRGEN, REPO)],
                       check=True)

    def run(*args, data=b""):
        return subprocess.run([QRGEN] + [str(a) for a in args], input=data,
                              stdout=subprocess.PIPE, check=True).stdout
    return run


def zbar(path):
    """What zbarimg reads in the image: the text of each symbol, or [] for none."""
    p = subprocess.run([ZBARIMG, "--quiet", "--raw", "-Sdisable", "-Sqrcode.enable",
                        "-Sbinary", str(path)], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL)
    return [] if p.returncode else [p.stdout]


def read_back(qrgen, tmp_path, text, level, v, mask=-1, scale=2):
    img = tmp_path / ("v%d%s.pgm" % (v, level))
    img.write_bytes(qrgen("qr", level, v, v, mask, scale, data=text))
    return zbar(img)


@pytest.mark.parametrize("level", ["L", "M"])
def test_every_version_full_of_alphanumeric_text(qrgen, tmp_path, level):
    rnd = random.Random(level)
    bad = []
    for v in range(1, 41):
        cap = int(qrgen("cap", level, v).split()[0])
        text = "".join(rnd.choice(ALNUM) for _ in range(cap)).encode()
        if read_back(qrgen, tmp_path, text, level, v) != [text]:
            bad.append(v)
    assert not bad, "versions zbar did not read back: %s" % bad


@pytest.mark.parametrize("level", ["L", "M"])
def test_byte_mode_at_capacity(qrgen, tmp_path, level):
    rnd = random.Random(7)
    for v in (1, 5, 9, 10, 17, 26, 27, 33):
        cap = int(qrgen("cap", level, v).split()[1])
        text = bytes(rnd.choice(b"nbprof selftest|0123456789=abc") for _ in range(cap))
        assert read_back(qrgen, tmp_path, text, level, v) == [text], v


def test_one_more_character_takes_the_next_version(qrgen):
    for v in (1, 9, 10, 26, 27, 39):
        cap = int(qrgen("cap", "M", v).split()[0])
        assert qrgen("info", "M", 1, 40, data=b"A" * cap).split()[0] == b"%d" % v
        assert qrgen("info", "M", 1, 40, data=b"A" * (cap + 1)).split()[0] == b"%d" % (v + 1)


def test_every_mask(qrgen, tmp_path):
    rnd = random.Random(3)
    for v in (2, 7, 14):
        for mask in range(8):
            text = "".join(rnd.choice(ALNUM) for _ in range(30)).encode()
            assert read_back(qrgen, tmp_path, text, "M", v, mask) == [text], (v, mask)


def test_the_lowest_penalty_mask_varies(qrgen):
    """The chosen mask depends on the data (all eight are tried, 7.8.3)."""
    rnd = random.Random(5)
    masks = {qrgen("info", "M", 3, 3, data="".join(rnd.choice(ALNUM) for _ in range(40))
                   .encode()).split()[1] for _ in range(40)}
    assert len(masks) >= 3


def test_a_damaged_symbol_is_read_or_refused_never_misread(qrgen, tmp_path):
    """Level M restores a few flipped modules; zbar must still give the text."""
    text = b"NBQ1 1/1 HELLO WORLD 0123456789"
    data = bytearray(qrgen("qr", "M", 2, 2, -1, 4, data=text))
    header = data.index(b"255\n") + 4
    side = int(data[3:header].split()[0])
    for (x, y) in ((14, 14), (15, 18), (20, 12)):
        for dy in range(4):
            for dx in range(4):
                i = header + ((y + 4) * 4 + dy) * side + (x + 4) * 4 + dx
                data[i] ^= 0xff
    img = tmp_path / "damaged.pgm"
    img.write_bytes(bytes(data))
    assert zbar(img) == [text]


def inflate(qrgen, data):
    return zlib.decompress(qrgen("zlib", data=data))


@pytest.mark.parametrize("kind", ["empty", "random", "text", "runs", "far", "skewed", "two"])
def test_zlib_streams_inflate(qrgen, kind):
    rnd = random.Random(kind)
    if kind == "empty":
        data = b""
    elif kind == "random":
        data = bytes(rnd.randrange(256) for _ in range(5000))
    elif kind == "text":
        data = b"".join(b"NBS:%d|check|counters|PASS|counter %d counts %d|%d|%d||%08X\n"
                        % (i, i % 18, i * 7, i * 1000, i * 1000, rnd.getrandbits(32))
                        for i in range(300))
    elif kind == "runs":  # matches of the longest length, 258, and distance 1
        data = b"A" * 1000 + b"AB" * 700 + bytes(range(256)) * 3
    elif kind == "far":  # the same block again past 16 KiB: distances near the window's end
        block = bytes(rnd.randrange(256) for _ in range(600))
        data = block + bytes(rnd.randrange(256) for _ in range(32000)) + block
    elif kind == "skewed":  # Fibonacci counts: a Huffman tree deeper than 15 before limiting
        fib = [1, 1]
        while len(fib) < 22:
            fib.append(fib[-1] + fib[-2])
        data = bytearray()
        for sym, count in enumerate(fib):
            data += bytes([sym * 11]) * count
        rnd.shuffle(data)
        data = bytes(data)
    else:  # two symbols only, no match: the smallest codes
        data = b"ab"
    assert inflate(qrgen, data) == data


def test_block_types(qrgen):
    """A dynamic block (BTYPE 10) where its codes pay for their header, else the fixed one."""
    text = b"".join(b"NBS:%d|check|counters|PASS|counter %d|%d|%d||\n" % (i, i % 18, i, i)
                    for i in range(200))
    assert qrgen("zlib", data=text)[2] >> 1 & 3 == 2
    assert qrgen("zlib", data=b"")[2] >> 1 & 3 == 1
    assert qrgen("zlib", data=b"nbprof")[2] >> 1 & 3 == 1


def test_a_report_compresses(qrgen):
    """NBS: lines repeat their fields: the stream is well under half the text."""
    data = b"".join(b"NBS:%d|check|counters|PASS|counter %d: instr_retired in a loop|%d|%d||"
                    b"%08X\n" % (i, i % 18, 1000 + i, 1000 + i, i * 2654435761 % 2**32)
                    for i in range(120))
    assert len(qrgen("zlib", data=data)) < len(data) // 2


def test_base45_against_rfc9285(qrgen):
    rnd = random.Random(9)
    for n in range(0, 40):
        data = bytes(rnd.randrange(256) for _ in range(n))
        text = qrgen("base45", data=data).decode()
        assert len(text) == n // 2 * 3 + n % 2 * 2
        assert all(c in ALNUM for c in text)
        out = bytearray()
        for i in range(0, len(text), 3):
            v = sum(ALNUM.index(c) * 45 ** k for k, c in enumerate(text[i:i + 3]))
            out += v.to_bytes(2 if len(text) - i >= 3 else 1, "big")
        assert bytes(out) == data
