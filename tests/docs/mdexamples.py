"""mdexamples.py - the examples of docs/*.md and how their output is compared.

The syntax is described for writers in docs/dev/testing.md ("Examples are
tests"). In short:

- A fenced code block whose first line starts with `nbprof> ` is a shell
  example: each `nbprof> ` line is a command typed at the prompt, the lines
  after it (up to the next command) what the kernel prints.
- A fenced code block whose first line starts with `$ ` is a host example:
  each `$ ` line is run by /bin/sh, the lines after it are its output
  (what it wrote to standard error, then to standard output); a command
  that exits with a status other than 0 fails the example.
- `<!-- doctest: WORD ... -->` right before a block (blank lines between are
  allowed) sets that block's options; `<!-- doctest-page: WORD ... -->`
  anywhere in a page sets the defaults of every block of the page. WORDs:
      firmware=uefi-x64|uefi-ia32|bios   the kernel that runs the example
      sig=F,M,S                          the CPUID signature (default 15,4,1)
      ht                                 one core with two hyper-threads
      boot=NAME                          pages with the same NAME and machine
                                         share one boot (default: the page)
      timeout=SECONDS                    per command (default 120)
      skip="REASON"                      not run; the reason is required (in
                                         quotes when it has blanks)
      file=PATH                          the block is a listing of the tree's
                                         file PATH: it must appear in it as it is
  `<!-- doctest-vary: REGEX -->` right before a block (or `doctest-page-vary`
  for the page) marks a field that legitimately varies: wherever REGEX
  matches in the block's expected output, the real output must hold some
  text REGEX matches at that place, not necessarily the same.
- In the expected output a line `...` stands for any number of lines (none
  too), and `...` inside a line for any text within that line. Everything
  else is compared exactly; trailing blanks are ignored.
"""

import re
import shlex
from dataclasses import dataclass, field

SHELL_PROMPT = "nbprof> "
HOST_PROMPT = "$ "
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
DIRECTIVE = re.compile(r"^\s*<!--\s*(doctest(?:-page)?):(.*?)-->\s*$")
VARY = re.compile(r"^\s*<!--\s*(doctest(?:-page)?-vary):\s?(.*?)\s*-->\s*$")
ELLIPSIS = "..."
FIRMWARES = ("uefi-x64", "uefi-ia32", "bios")
DEFAULT_SIG = (15, 4, 1)
DEFAULT_TIMEOUT = 120
KNOWN = {"firmware", "sig", "ht", "boot", "timeout", "skip", "file"}


class DocError(Exception):
    """A page that breaks the syntax: the message names the file and line."""


@dataclass
class Step:
    line: int            # 1-based line of the command in the page
    command: str
    expected: list       # lines


@dataclass
class Example:
    page: str            # path relative to the tree
    line: int            # 1-based line of the opening fence
    kind: str            # "shell" or "host"
    steps: list
    opts: dict
    vary: list = field(default_factory=list)

    @property
    def machine(self):
        """What boots it: (firmware, sig, ht)."""
        return (self.opts.get("firmware", "uefi-x64"), self.opts.get("sig", DEFAULT_SIG),
                bool(self.opts.get("ht")))

    @property
    def boot(self):
        """The boot this example runs in: its group name and machine."""
        return (self.opts.get("boot", self.page), self.machine)

    @property
    def name(self):
        return "%s:%d" % (self.page, self.line)


def parse_opts(text, where):
    opts = {}
    for word in shlex.split(text):
        key, eq, value = word.partition("=")
        if key not in KNOWN:
            raise DocError("%s: unknown doctest option '%s' (known: %s)"
                           % (where, key, ", ".join(sorted(KNOWN))))
        if key == "ht":
            if eq:
                raise DocError("%s: 'ht' takes no value" % where)
            opts["ht"] = True
        elif key == "sig":
            try:
                sig = tuple(int(x, 0) for x in value.split(","))
            except ValueError:
                sig = ()
            if len(sig) != 3:
                raise DocError("%s: sig=F,M,S wants three numbers, not '%s'" % (where, value))
            opts["sig"] = sig
        elif key == "firmware":
            if value not in FIRMWARES:
                raise DocError("%s: firmware=%s: one of %s" % (where, value, ", ".join(FIRMWARES)))
            opts["firmware"] = value
        elif key == "timeout":
            if not value.isdigit() or int(value) == 0:
                raise DocError("%s: timeout=%s: a number of seconds" % (where, value))
            opts["timeout"] = int(value)
        elif not value:
            raise DocError("%s: '%s' needs a value (%s=...)" % (where, key, key))
        else:
            opts[key] = value
    return opts


def compile_vary(text, where):
    try:
        rx = re.compile(text)
    except re.error as e:
        raise DocError("%s: doctest-vary: bad regular expression %r: %s" % (where, text, e))
    if rx.match(""):
        raise DocError("%s: doctest-vary: %r matches the empty string" % (where, text))
    return rx


def split_steps(body, first, prompt, where):
    """The block's lines as steps: a command and the lines it printed."""
    steps = []
    for i, text in enumerate(body):
        if text.startswith(prompt):
            steps.append(Step(first + i, text[len(prompt):].strip(), []))
        elif not steps:
            raise DocError("%s: output before the first command" % where)
        else:
            steps[-1].expected.append(text.rstrip())
    for s in steps:
        while s.expected and s.expected[-1] == "":
            s.expected.pop()
        if not s.command:
            raise DocError("%s:%d: an empty command" % (where.partition(":")[0], s.line))
    return steps


def parse(text, page):
    """Every example of one page, in page order."""
    lines = text.split("\n")
    page_opts, page_vary, examples = {}, [], []
    for n, text in enumerate(lines):      # the page's defaults hold wherever they are written
        where = "%s:%d" % (page, n + 1)
        m, v = DIRECTIVE.match(text), VARY.match(text)
        if m and m.group(1) == "doctest-page":
            page_opts.update(parse_opts(m.group(2), where))
        elif v and v.group(1) == "doctest-page-vary":
            page_vary.append(compile_vary(v.group(2), where))
    pending, pending_vary = None, []
    i = 0
    while i < len(lines):
        where = "%s:%d" % (page, i + 1)
        m = DIRECTIVE.match(lines[i])
        v = VARY.match(lines[i])
        f = FENCE.match(lines[i])
        if m and m.group(1) == "doctest-page":
            pass
        elif m:
            if pending is not None:
                raise DocError("%s: two doctest comments before one block" % where)
            pending = parse_opts(m.group(2), where)
        elif v and v.group(1) == "doctest-page-vary":
            pass
        elif v:
            pending_vary.append(compile_vary(v.group(2), where))
        elif f:
            indent, fence = f.group(1), f.group(2)
            j = i + 1
            while j < len(lines) and not (lines[j].startswith(indent + fence[0] * len(fence))
                                          and lines[j].strip() == fence[0] * len(lines[j].strip())
                                          and len(lines[j].strip()) >= len(fence)):
                j += 1
            if j == len(lines):
                raise DocError("%s: code block without its closing fence" % where)
            body = [l[len(indent):] if l.startswith(indent) else l for l in lines[i + 1:j]]
            head = body[0] if body else ""
            kind = ("shell" if head.startswith(SHELL_PROMPT) else
                    "host" if head.startswith(HOST_PROMPT) else None)
            if pending and "file" in pending:
                examples.append(Example(page, i + 1, "file", [Step(i + 2, pending["file"], body)],
                                        dict(pending)))
                pending, pending_vary = None, []
                i = j + 1
                continue
            if kind is None and (pending is not None or pending_vary):
                raise DocError("%s: a doctest comment before a block that is no example "
                               "(its first line starts neither with '%s' nor with '%s')"
                               % (where, SHELL_PROMPT, HOST_PROMPT))
            if kind:
                prompt = SHELL_PROMPT if kind == "shell" else HOST_PROMPT
                opts = dict(page_opts)
                opts.update(pending or {})
                steps = split_steps(body, i + 2, prompt, where)
                examples.append(Example(page, i + 1, kind, steps, opts, page_vary + pending_vary))
            pending, pending_vary = None, []
            i = j
        elif lines[i].strip() and (pending is not None or pending_vary):
            raise DocError("%s: a doctest comment must come right before its code block" % where)
        i += 1
    if pending is not None or pending_vary:
        raise DocError("%s: a doctest comment at the end of the page, before no block" % page)
    return examples


# --- comparison -----------------------------------------------------------------

def line_pattern(expected, vary):
    """A regex for one expected line: `...` any text, vary fields their regex."""
    marks = []          # (start, end, regex text) of the special spans
    for rx in vary:
        for m in rx.finditer(expected):
            marks.append((m.start(), m.end(), "(?:%s)" % rx.pattern))
    for m in re.finditer(re.escape(ELLIPSIS), expected):
        marks.append((m.start(), m.end(), ".*?"))
    marks.sort()
    out, pos = [], 0
    for start, end, rx in marks:
        if start < pos:
            continue     # overlapping marks: the first one wins
        out.append(re.escape(expected[pos:start]))
        out.append(rx)
        pos = end
    out.append(re.escape(expected[pos:]))
    return re.compile("".join(out) + r"\Z")


def matches(expected, actual, vary=()):
    """True when the output lines `actual` fit the expected lines."""
    actual = [a.rstrip() for a in actual]
    expected = [e.rstrip() for e in expected]
    while actual and actual[-1] == "":
        actual.pop()
    pats = [None if e.strip() == ELLIPSIS else line_pattern(e, vary) for e in expected]
    memo = {}

    def fit(i, j):
        key = (i, j)
        if key not in memo:
            if i == len(pats):
                r = j == len(actual)
            elif pats[i] is None:
                r = any(fit(i + 1, k) for k in range(j, len(actual) + 1))
            else:
                r = j < len(actual) and bool(pats[i].match(actual[j])) and fit(i + 1, j + 1)
            memo[key] = r
        return memo[key]

    import sys
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 4 * (len(pats) + len(actual)) + 100))
    try:
        return fit(0, 0)
    finally:
        sys.setrecursionlimit(old)


def first_difference(expected, actual, vary=()):
    """A short explanation of where the lines part (for the failure report)."""
    j = 0
    for i, e in enumerate(expected):
        if e.strip() == ELLIPSIS:
            return "the output differs after the expected line %d ('...')" % i
        if j >= len(actual):
            return "expected line %d %r, but the output ended" % (i + 1, e)
        if not line_pattern(e, vary).match(actual[j].rstrip()):
            return "line %d: expected %r\n        got %r" % (i + 1, e, actual[j])
        j += 1
    return "the output has %d more line(s), the first %r" % (len(actual) - j, actual[j:j + 1])


def terminal(text):
    """What a terminal shows of text: a carriage return goes back to the line's start."""
    lines = []
    for line in text.split("\n"):
        shown = ""
        for part in line.split("\r"):
            shown = part + shown[len(part):]
        lines.append(shown)
    return "\n".join(lines)
