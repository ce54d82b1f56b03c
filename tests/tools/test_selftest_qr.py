"""test_selftest_qr.py - the selftest report through QR codes: the texts the
kernel's own packer makes (selftest/report_qr.c, printed by
tests/tools/selftestgen.c `qr`), read back by tools/selftest-report from
pasted text and from images of the codes (made by the kernel's encoder,
tests/tools/qrgen.c, read by zbarimg), must give exactly the report of the
serial block. A missing, doubled, altered or foreign code must be refused
with its reason and no report.
"""

import random
import subprocess

import pytest

from test_qr import qrgen  # noqa: F401 (a fixture)
from test_selftest_report import REPORT, gen  # noqa: F401 (a fixture)


def tool(tmp_path, *args, stdin="", ok=(0,)):
    p = subprocess.run(["/usr/bin/python3", REPORT] + [str(a) for a in args], input=stdin,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, cwd=str(tmp_path))
    assert p.returncode in ok, "exit %d\n%s" % (p.returncode, p.stderr)
    return p


def serial_report(gen, tmp_path, n):
    cap = tmp_path / "serial.log"
    cap.write_text(gen("-n", n, "block"))
    return tool(tmp_path, cap).stdout


def codes(gen, n, chars):
    return gen("-n", n, "qr", chars).splitlines()


@pytest.mark.parametrize("n,chars", [(4, 400), (40, 178), (120, 224), (192, 1000), (60, 60)])
def test_pasted_codes_give_the_serial_report(gen, tmp_path, n, chars):
    texts = codes(gen, n, chars)
    assert all(len(t) <= chars for t in texts)
    assert all(t.startswith("NBQ1 %d/%d " % (k, len(texts))) for k, t in enumerate(texts, 1))
    want = serial_report(gen, tmp_path, n)
    assert tool(tmp_path, "-", stdin="\n".join(texts) + "\n").stdout == want
    # in any order, with a code read twice, between other text
    shuffled = texts + texts[:1]
    random.Random(n).shuffle(shuffled)
    pasted = "Hi, here is my machine:\n\n" + "\n\n".join(shuffled) + "\n-- \nsent from a phone\n"
    assert tool(tmp_path, "-", stdin=pasted).stdout == want


def test_photographed_codes_give_the_serial_report(gen, qrgen, tmp_path):  # noqa: F811
    texts = codes(gen, 40, 224)
    images = []
    for k, t in enumerate(texts, 1):
        img = tmp_path / ("code%d.pgm" % k)
        img.write_bytes(qrgen("qr", "L", 1, 7, -1, 3, data=t.encode()))
        images.append(img.name)
    assert tool(tmp_path, *reversed(images)).stdout == serial_report(gen, tmp_path, 40)
    # one image left out
    p = tool(tmp_path, *images[1:], ok=(1,))
    assert "code(s) 1 of %d missing" % len(texts) in p.stderr
    assert p.stdout == ""


def test_an_image_without_a_code_is_refused(tmp_path):
    img = tmp_path / "blank.pgm"
    img.write_bytes(b"P5\n64 64\n255\n" + b"\xff" * 64 * 64)
    p = tool(tmp_path, img, ok=(1,))
    assert "blank.pgm: zbarimg found no QR code in the image" in p.stderr


def refused(gen, tmp_path, texts):
    p = tool(tmp_path, "-", stdin="\n".join(texts) + "\n", ok=(1,))
    assert p.stdout == ""
    assert p.stderr.startswith("selftest-report: QR codes refused: ")
    return p.stderr


def test_missing_doubled_and_altered_codes_are_refused(gen, tmp_path):
    texts = codes(gen, 40, 178)
    n = len(texts)
    assert n >= 5
    assert "code(s) 3, 5 of %d missing" % n in refused(gen, tmp_path, texts[:2] + texts[3:4] +
                                                        texts[5:])
    assert "code(s) %d of %d missing" % (n, n) in refused(gen, tmp_path, texts[:-1])
    # a payload character changed: the same number twice with different text
    k = 2
    head, payload = texts[k][:texts[k].index(" ", 10) + 1], texts[k][texts[k].index(" ", 10) + 1:]
    other = "0" if payload[7] != "0" else "1"
    altered = head + payload[:7] + other + payload[8:]
    assert "code 3 of %d of report" % n in refused(gen, tmp_path, texts + [altered])
    assert "appears twice" in refused(gen, tmp_path, texts + [altered])
    # the altered code alone: base45, the stream or the CRC must catch it
    why = refused(gen, tmp_path, texts[:k] + [altered] + texts[k + 1:])
    assert "altered?" in why
    # a code of another report (its CRC differs): two reports, both incomplete
    foreign = codes(gen, 41, 178)
    assert "missing" in refused(gen, tmp_path, texts[:-1] + foreign[-1:])
    # numbers that cannot be
    assert "no such number" in refused(gen, tmp_path, texts + [texts[0].replace(
        " 1/%d " % n, " %d/%d " % (n + 1, n), 1)])
    assert "say %d and %d codes" % (n, n + 1) in refused(gen, tmp_path, texts + [texts[0].replace(
        " 1/%d " % n, " 1/%d " % (n + 1), 1)])


def test_a_code_cut_short_is_refused(gen, tmp_path):
    texts = codes(gen, 40, 178)
    assert "code 1 of %d is cut short" % len(texts) in refused(
        gen, tmp_path, [texts[0][:-1]] + texts[1:])


def test_every_altered_character_is_caught(gen, tmp_path):
    """One character of one code changed, in each position of the payload of code 2."""
    texts = codes(gen, 12, 120)
    head = texts[1].index(" ", 10) + 1
    for i in range(head, len(texts[1]), 7):
        c = texts[1][i]
        bad = texts[1][:i] + ("A" if c != "A" else "B") + texts[1][i + 1:]
        refused(gen, tmp_path, texts[:1] + [bad] + texts[2:])
