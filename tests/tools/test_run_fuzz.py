"""test_run_fuzz.py - tools/dev/run-fuzz, the driver of `make fuzz` and `make fuzz-ci`.

The harnesses here are stand-ins that behave as libFuzzer binaries do at
their interface (libFuzzer's documented options -max_total_time, -seed,
-artifact_prefix; corpus folders as arguments; "Test unit written to PATH"
and the final stat:: lines on its output; exit status 0, or non-zero after
a crash), so the driver's own logic is tested without clang: what it
passes, what it prints for a pass and for a crash, and that the committed
seed corpus is never written to.
"""

import os
import stat
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUN_FUZZ = os.path.join(REPO, "tools", "dev", "run-fuzz")

# A stand-in harness: records its arguments, adds one input to the first
# corpus folder and, when CRASH_BYTES is set, "crashes" on those bytes.
FAKE = r'''#!/usr/bin/python3
import os, sys
args = sys.argv[1:]
opts = dict(a[1:].split("=", 1) for a in args if a.startswith("-"))
dirs = [a for a in args if not a.startswith("-")]
with open(os.environ["ARGS_LOG"], "a") as f:
    f.write(" ".join(args) + "\n")
with open(os.path.join(dirs[0], "new-input"), "wb") as f:
    f.write(b"found")
crash = os.environ.get("CRASH_BYTES")
print("INFO: Seed: %s" % opts.get("seed", "random"))
if crash is not None:
    path = opts["artifact_prefix"] + "crash-0123abcd"
    with open(path, "wb") as f:
        f.write(bytes.fromhex(crash))
    print("==1==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000011")
    print("artifact_prefix='%s'; Test unit written to %s" % (opts["artifact_prefix"], path))
    sys.exit(1)
print("#4242\tDONE   cov: 77 ft: 99 corp: 3/30b")
print("stat::number_of_executed_units: 4242")
'''


def make_fake(tmp_path, name):
    path = tmp_path / "bin" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(FAKE)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def seeds(tmp_path, name, files):
    d = tmp_path / "corpus" / name
    d.mkdir(parents=True)
    for fname, data in files.items():
        (d / fname).write_bytes(data)
    return d


def run(tmp_path, binaries, *extra, crash=None):
    env = dict(os.environ, ARGS_LOG=str(tmp_path / "args.log"))
    if crash is not None:
        env["CRASH_BYTES"] = crash.hex()
    return subprocess.run(["/usr/bin/python3", RUN_FUZZ, "--corpus", str(tmp_path / "corpus"),
                           "--work", str(tmp_path / "work"), "--seconds", "3"] + list(extra) +
                          binaries, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, env=env)


def test_pass_reports_runs_and_keeps_seeds_clean(tmp_path):
    seed_dir = seeds(tmp_path, "spec", {"a": b"instr_retired"})
    p = run(tmp_path, [make_fake(tmp_path, "fuzz_spec")])
    assert p.returncode == 0, p.stdout
    lines = p.stdout.splitlines()
    assert lines[0].split() == ["ok", "fuzz_spec", "3", "s", "4242", "runs", "cov", "77"]
    assert lines[-1] == "fuzz: 1 harnesses, 0 failed"
    assert sorted(os.listdir(seed_dir)) == ["a"]              # seeds never written to
    assert os.listdir(tmp_path / "work" / "corpus" / "spec") == ["new-input"]
    args = (tmp_path / "args.log").read_text().split()
    assert "-max_total_time=3" in args
    assert args[-2:] == [str(tmp_path / "work" / "corpus" / "spec"), str(seed_dir)]
    assert not any(a.startswith("-seed=") for a in args)


def test_fixed_seed_starts_from_the_seeds_alone(tmp_path):
    seeds(tmp_path, "parse", {"a": b"0x1A0"})
    fake = make_fake(tmp_path, "fuzz_parse")
    assert run(tmp_path, [fake]).returncode == 0
    old = tmp_path / "work" / "corpus" / "parse" / "old-input"
    old.write_bytes(b"from an earlier run")
    p = run(tmp_path, [fake], "--seed", "7")
    assert p.returncode == 0, p.stdout
    assert not old.exists()
    assert "-seed=7" in (tmp_path / "args.log").read_text().splitlines()[-1].split()


def test_crash_prints_report_reproducer_and_replay(tmp_path):
    seeds(tmp_path, "shell", {"a": b"help\n"})
    seeds(tmp_path, "spec", {"a": b"x"})
    crash = b"msr write 0x360\x00\xff" + bytes(range(20))
    fakes = [make_fake(tmp_path, "fuzz_shell"), make_fake(tmp_path, "fuzz_spec")]
    p = run(tmp_path, fakes, crash=crash)
    assert p.returncode == 1
    out = p.stdout
    assert "FAIL fuzz_shell" in out and "FAIL fuzz_spec" in out
    assert "heap-buffer-overflow" in out                      # the sanitizer's report
    path = str(tmp_path / "work" / "crashes" / "shell" / "crash-0123abcd")
    assert "reproducer %s (%d bytes):" % (path, len(crash)) in out
    assert open(path, "rb").read() == crash                   # kept for replay
    # hexdump: offset, 16 bytes in hex, printable text
    assert "  000000  6d 73 72 20 77 72 69 74 65 20 30 78 33 36 30 00  |msr write 0x360.|" in out
    assert "  000010  ff 00 01 02" in out
    assert "replay: %s %s" % (fakes[0], path) in out
    assert out.splitlines()[-1] == "fuzz: 2 harnesses, 2 failed"


def test_missing_seed_corpus_fails(tmp_path):
    (tmp_path / "corpus").mkdir()
    p = run(tmp_path, [make_fake(tmp_path, "fuzz_config")])
    assert p.returncode == 1
    assert "FAIL fuzz_config" in p.stdout and "no seed corpus" in p.stdout
