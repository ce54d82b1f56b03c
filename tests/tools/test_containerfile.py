"""test_containerfile.py - the Containerfile builds the stick image as make image does.

The Containerfile (the repository's root) is the recipe for owners without
a Debian 12 machine (docs/guide/real-hardware.md, "Building the image in a
container"). Its packages must be the ones tools/build/ensure-deps names for
`image`, plus make: test_packages_are_ensure_deps_image_plus_make runs the
real ensure-deps with an apt-get and an id of its own in PATH, so the list
is the one the script installs, not a copy of its text.

test_container_build_boots (NBPROF_CONTAINER_TEST=1, root, podman and
debootstrap) builds the recipe for real: debootstrap makes a Debian 12 root
file system from the apt sources of this machine, podman imports it in
place of the registry's debian:12 (`podman build --from`), builds, and the
copied-out build/nbprof.img must hold both kernels and GRUB's script and
boot the 32-bit kernel from SeaBIOS to `nbprof: ready`. It takes about four
minutes (most of it debootstrap and the packages) and needs the Debian
mirror, so it is not part of `make check`.
"""

import os
import re
import shlex
import shutil
import subprocess

import pytest

from conftest import REPO

CONTAINERFILE = os.path.join(REPO, "Containerfile")
ENSURE_DEPS = os.path.join(REPO, "tools", "build", "ensure-deps")
SBIN = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"


def instructions():
    """The Containerfile's instructions as (KEYWORD, argument), continuations joined."""
    text = open(CONTAINERFILE, encoding="utf-8").read()
    text = re.sub(r"\\\n", " ", text)
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, arg = line.partition(" ")
            out.append((word.upper(), arg.strip()))
    return out


def apt_installed(run):
    """The packages an `apt-get install` in a RUN's shell command names."""
    pkgs = []
    for part in re.split(r"&&|;", run):
        words = shlex.split(part)
        while words and "=" in words[0]:
            words.pop(0)                          # VAR=value before the command
        if words[:2] == ["apt-get", "install"]:
            pkgs += [w for w in words[2:] if not w.startswith("-")]
    return pkgs


def ensure_deps_packages(mode, tmp_path):
    """What ensure-deps MODE installs on a machine that has none of them."""
    fake = tmp_path / "bin"
    fake.mkdir()
    log = tmp_path / "apt.log"
    (fake / "apt-get").write_text('#!/bin/sh\necho "$@" >> %s\n' % shlex.quote(str(log)))
    (fake / "id").write_text("#!/bin/sh\necho 0\n")              # root: no sudo
    (fake / "dpkg-query").write_text("#!/bin/sh\nexit 1\n")      # nothing installed
    for f in fake.iterdir():
        f.chmod(0o755)
    subprocess.run([ENSURE_DEPS, mode], check=True, stderr=subprocess.DEVNULL,
                   env=dict(os.environ, PATH="%s:%s" % (fake, os.environ["PATH"])))
    installs = [line.split() for line in log.read_text().splitlines() if " install " in line]
    assert len(installs) == 1, log.read_text()
    words = installs[0]
    return [w for w in words[words.index("install") + 1:] if not w.startswith("-")]


def test_recipe_steps():
    """debian:12; ensure-deps image copied and run before the sources; make image last."""
    steps = instructions()
    assert steps[0] == ("FROM", "debian:12")
    runs = [i for i, (k, _) in enumerate(steps) if k == "RUN"]
    copy_deps = steps.index(("COPY", "tools/build/ensure-deps /src/tools/build/ensure-deps"))
    copy_all = steps.index(("COPY", ". /src"))
    deps = [i for i in runs if "/src/tools/build/ensure-deps image" in steps[i][1]]
    make = [i for i in runs if re.search(r"\bmake( -j\S+)? image\b", steps[i][1])]
    assert len(deps) == 1 and len(make) == 1, steps
    assert copy_deps < deps[0] < copy_all < make[0]
    assert ("WORKDIR", "/src") in steps[copy_all:make[0]]


def test_packages_are_ensure_deps_image_plus_make(tmp_path):
    """What the recipe installs, with ensure-deps' own list, is that list and make."""
    named = ensure_deps_packages("image", tmp_path)
    assert "grub-pc-bin" in named and "gnu-efi" in named     # the list was really read
    own = [p for _, arg in instructions() if _ == "RUN" for p in apt_installed(arg)]
    assert own == ["make"]
    assert "make" not in named                                # so the recipe needs it


def test_context_leaves_the_host_build_out():
    """A host's build/ copied in would pass for up to date with foreign binaries."""
    ignore = open(os.path.join(REPO, ".dockerignore"), encoding="utf-8").read().split()
    assert "build" in ignore and "build-*" in ignore


def apt_mirror():
    """The first Debian archive URI of this machine's apt sources."""
    for path in ("/etc/apt/sources.list.d/debian.sources", "/etc/apt/sources.list"):
        if os.path.exists(path):
            for line in open(path, encoding="utf-8"):
                m = re.match(r"\s*(?:URIs:|deb)\s+(\S+/debian)/?\s", line)
                if m:
                    return m.group(1)
    pytest.skip("no Debian archive in this machine's apt sources")


@pytest.mark.skipif(os.environ.get("NBPROF_CONTAINER_TEST") != "1",
                    reason="builds a Debian root and the container (minutes, the Debian mirror): "
                           "NBPROF_CONTAINER_TEST=1")
def test_container_build_boots(tmp_path):
    for tool in ("podman", "debootstrap", "mtype"):
        if not shutil.which(tool, path=SBIN):
            pytest.skip("%s is not installed" % tool)
    if os.geteuid() != 0:
        pytest.skip("debootstrap needs root")
    env = dict(os.environ, PATH=SBIN, MTOOLS_SKIP_CHECK="1")
    root = tmp_path / "rootfs"
    base = "localhost/nbprof-test-debian:12"
    image = "localhost/nbprof-test-image"
    out = tmp_path / "nbprof.img"
    subprocess.run(["debootstrap", "--variant=minbase", "bookworm", str(root), apt_mirror()],
                   check=True, stdout=subprocess.DEVNULL, env=env)
    try:
        tar = subprocess.Popen(["tar", "-C", str(root), "-c", "."], stdout=subprocess.PIPE)
        subprocess.run(["podman", "import", "-", base], stdin=tar.stdout, check=True,
                       stdout=subprocess.DEVNULL)
        assert tar.wait() == 0
        # chroot isolation and cgroupfs: podman also runs inside a container here
        subprocess.run(["podman", "build", "--pull=never", "--from", base, "--isolation", "chroot",
                        "--cgroup-manager", "cgroupfs", "-t", image, "-f", CONTAINERFILE, REPO],
                       check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["podman", "create", "--name", "nbprof-test-out", image], check=True,
                       stdout=subprocess.DEVNULL)
        try:
            subprocess.run(["podman", "cp", "nbprof-test-out:/src/build/nbprof.img", str(out)],
                           check=True)
        finally:
            subprocess.run(["podman", "rm", "nbprof-test-out"], stdout=subprocess.DEVNULL)
    finally:
        subprocess.run(["podman", "rmi", "-f", image, base], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    # the ESP starts at sector 2048 (tools/build/mkimage)
    listing = subprocess.run(["mdir", "-/", "-b", "-i", "%s@@%d" % (out, 2048 * 512), "::/"],
                             stdout=subprocess.PIPE, universal_newlines=True, check=True,
                             env=env).stdout.split()
    for f in ("::/EFI/BOOT/BOOTX64.EFI", "::/EFI/BOOT/BOOTIA32.EFI", "::/boot/nbprof32.elf"):
        assert f in listing, listing
    boot = subprocess.run(["/usr/bin/python3", os.path.join(REPO, "tools", "nbprof"), "--qemu",
                           "--image", str(out), "--firmware", "bios", "shell"],
                          input="cpu\n", stdout=subprocess.PIPE, universal_newlines=True,
                          timeout=300, check=True).stdout
    assert "loaded by GRUB" in boot, boot
