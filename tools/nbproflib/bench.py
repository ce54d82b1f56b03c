"""bench - the host side of `bench` for tools/nbprof.

    nbprof ... bench (--asm TEXT | CODEHEX) [--init-asm TEXT | --init HEX] [-e EVENT]...
                     [-u U] [-n N] [-w W] [-r R] [--ring 0|3]

--asm and --init-asm take Intel-syntax assembly without register prefixes,
statements separated by ';' or newlines (`add eax, ebx; add ecx, edx`). It
is assembled with GNU as (`as --64 -msyntax=intel -mnaked-reg`, then
`objcopy -O binary`) into the hex the target's `bench` takes. Local labels
(`jz 1f; 1:`) stay inside one snippet copy, so they are fine.

Before anything is sent, the machine code is disassembled (objdump) and a
snippet or init code that names R15, the loop counter of the generated
loop (workload/snippet.h), is refused; so is a line longer than the target's
shell takes (255 characters, 16 words).

parse_bench() turns the target's table into a dict for --json.
"""

import os
import re
import subprocess
import tempfile

SHELL_LINE_MAX = 255            # shell/shell.h SHELL_LINE_MAX - 1
SHELL_WORDS_MAX = 16            # lib/parse.h PARSE_MAX_ARGS
VALUE_OPTS = ("-e", "-u", "-n", "-w", "-r", "--ring")
R15 = re.compile(r"\br15[dwb]?\b", re.I)


class BenchError(Exception):
    """Bad bench arguments or assembly: nothing was sent."""


def _run(cmd, what):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
    except OSError as e:
        raise BenchError("%s: cannot run %s: %s (Debian package binutils)" % (what, cmd[0], e))
    return p


def assemble(text, what="--asm"):
    """Intel-syntax text -> machine code bytes (GNU as, objcopy -O binary)."""
    if not text.strip():
        raise BenchError("%s: no instructions" % what)
    with tempfile.TemporaryDirectory(prefix="nbprof-bench-") as d:
        src, obj, binary = (os.path.join(d, n) for n in ("snippet.s", "snippet.o", "snippet.bin"))
        with open(src, "w") as f:
            f.write(text + "\n")
        p = _run(["as", "--64", "-msyntax=intel", "-mnaked-reg", "-o", obj, src], what)
        if p.returncode:
            msgs = [l.replace(src + ":", "line ") for l in p.stderr.splitlines()
                    if "Assembler messages" not in l]
            raise BenchError("%s: %s" % (what, "; ".join(msgs) or "as failed"))
        p = _run(["objcopy", "-O", "binary", "-j", ".text", obj, binary], what)
        if p.returncode:
            raise BenchError("%s: objcopy: %s" % (what, p.stderr.strip()))
        with open(binary, "rb") as f:
            return f.read()


def disassemble(code):
    """objdump's Intel-syntax listing of raw x86-64 bytes (instruction text only)."""
    with tempfile.TemporaryDirectory(prefix="nbprof-bench-") as d:
        path = os.path.join(d, "code.bin")
        with open(path, "wb") as f:
            f.write(code)
        p = _run(["objdump", "-D", "-b", "binary", "-m", "i386:x86-64", "-M", "intel", path],
                 "disassembly")
        if p.returncode:
            raise BenchError("objdump: %s" % p.stderr.strip())
    return [l.split("\t")[-1] for l in p.stdout.splitlines() if re.match(r"^\s+[0-9a-f]+:\t", l)]


def check_r15(code, what):
    for insn in disassemble(code):
        if R15.search(insn):
            raise BenchError("%s: '%s' uses R15, the loop counter of the generated loop: "
                             "use another register" % (what, insn.strip()))


def _hex_arg(text, what):
    if not re.fullmatch(r"(?:[0-9a-fA-F]{2})+", text):
        raise BenchError("%s: %r is not hex bytes (two hex digits each)" % (what, text))
    return bytes.fromhex(text)


def translate(argv):
    """bench's host arguments -> the target's `bench` words (assembled, checked)."""
    words, code, init, i = ["bench"], None, None, 0
    while i < len(argv):
        a = argv[i]
        val = argv[i + 1] if i + 1 < len(argv) else None
        if a in VALUE_OPTS + ("--asm", "--init-asm", "--init"):
            if val is None:
                raise BenchError("bench: %s needs a value" % a)
            if a == "--asm":
                if code is not None:
                    raise BenchError("bench: one snippet only")
                code = assemble(val, "--asm")
            elif a == "--init-asm":
                init = assemble(val, "--init-asm")
            elif a == "--init":
                init = _hex_arg(val, "--init")
            else:
                words += [a, val]
            i += 2
            continue
        if a.startswith("-"):
            raise BenchError("bench: unknown option %s" % a)
        if code is not None:
            raise BenchError("bench: one snippet only (%r is extra)" % a)
        code = _hex_arg(a, "CODEHEX")
        i += 1
    if code is None:
        raise BenchError("bench: no snippet (--asm TEXT or CODEHEX)")
    if not code:
        raise BenchError("bench: the snippet assembled to no bytes")
    check_r15(code, "snippet")
    if init:
        check_r15(init, "init code")
        words += ["--init", init.hex()]
    words.append(code.hex())
    line = " ".join(words)
    if len(line) > SHELL_LINE_MAX or len(words) > SHELL_WORDS_MAX:
        raise BenchError("bench: the target's command line would be %d characters in %d words; "
                         "its shell takes %d and %d: use a shorter snippet or fewer -e (or -u to "
                         "repeat it)" % (len(line), len(words), SHELL_LINE_MAX, SHELL_WORDS_MAX))
    return words


NUM = r"-?\d+\.\d\d"
ROW = re.compile(r"^ *(%s) +(%s) +(%s)  (\S+)  group (\d+) counter (\d+)(.*)$" % (NUM, NUM, NUM))
HEAD = re.compile(r"^bench: (\d+) snippet bytes, (\d+) init bytes, unroll (\d+) and \d+, "
                  r"loop (\d+), (\d+) warm-up \+ (\d+) measured runs, ring (\d)$")
INTERFERENCE = re.compile(r"^interference: (none|yes) \(PMIs (\d+), NMIs (\d+) during the runs; "
                          r"(all runs agree|runs disagree)\)$")


def add_count(res, event, value):
    """res["counts"][event] = value; a repeated event becomes EVENT#2, EVENT#3, ..."""
    key, n = event, 2
    while key in res["counts"]:
        key, n = "%s#%d" % (event, n), n + 1
    res["counts"][key] = value


def parse_bench(output):
    """The target's bench table: per-iteration min/median/tmean by event."""
    res = {"events": [], "counts": {}}
    for line in output.splitlines():
        m = HEAD.match(line)
        if m:
            keys = ("snippet_bytes", "init_bytes", "unroll", "loop", "warmup", "runs", "ring")
            res.update(zip(keys, (int(g) for g in m.groups())))
            continue
        m = ROW.match(line)
        if m:
            ev = {"event": m.group(4), "min": float(m.group(1)), "median": float(m.group(2)),
                  "tmean": float(m.group(3)), "group": int(m.group(5)),
                  "counter": int(m.group(6)), "notes": m.group(7).strip()}
            res["events"].append(ev)
            add_count(res, ev["event"], ev["median"])
            continue
        m = INTERFERENCE.match(line)
        if m:
            res.update(interference=m.group(1) == "yes", pmis=int(m.group(2)),
                       nmis=int(m.group(3)), runs_agree=m.group(4) == "all runs agree")
    return res
