"""test_kernel_elf.py - the decoder names samples only with the kernel that recorded.

Each kernel link carries a GNU build id (ld --build-id, first in .data so
that the EFI images carry it too); `dump` puts it in the header (format 5)
and tools/nbprof-decode takes the one of build/nbprof.so, build/k32/nbprof.so
and build/nbprof32.elf that has it, refusing an --elf with another one. The
recordings come from dumpgen (the kernel's own encoder) over a kernel's real
symbols, with that kernel's build id in the header.
"""

import os
import subprocess

import pytest

from conftest import BUILD, DECODE

from nbproflib import kernelelf, qemu

FIRMWARES = ("uefi-x64", "uefi-ia32", "bios")
KERNELS = {fw: qemu.kernel_elf(fw) for fw in FIRMWARES}
built = pytest.mark.skipif(not all(os.path.exists(k) for k in KERNELS.values()),
                           reason="no kernel ELFs built (make)")


def decode(tmp_path, *args, ok=(0,)):
    env = dict(os.environ, NBPROF_BUILD=os.path.abspath(BUILD))
    p = subprocess.run(["/usr/bin/python3", DECODE] + [str(a) for a in args], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                       cwd=str(tmp_path))
    assert p.returncode in ok, "exit %d\n%s" % (p.returncode, p.stderr)
    return p


def recording(dumpgen, tmp_path, fw, *extra):
    """A capture over kernel fw's symbols (32-bit IPs for the ia32 kernels)."""
    nm = tmp_path / ("%s.nm" % fw)
    nm.write_text(kernelelf.nm_text(KERNELS[fw]))
    bits = 64 if fw == "uefi-x64" else 32
    cap = tmp_path / ("%s.log" % fw)
    cap.write_text(dumpgen("-n", 100, "--nm", nm, "--ip-bits", bits, *extra, "dump"))
    return str(cap), dumpgen("-n", 100, "--nm", nm, "--ip-bits", bits, "script")


def test_build_id_of_a_plain_note_section(tmp_path):
    """The reader agrees with readelf on an ordinary ELF's .note.gnu.build-id."""
    src = tmp_path / "a.c"
    src.write_text("void _start(void) { for (;;) ; }\n")
    exe = str(tmp_path / "a")
    subprocess.run(["gcc", "-static", "-nostdlib", "-Wl,--build-id", "-o", exe, str(src)],
                   check=True)
    notes = subprocess.run(["readelf", "-n", exe], stdout=subprocess.PIPE, check=True,
                           universal_newlines=True).stdout
    want = notes.split("Build ID: ")[1].split()[0]
    assert kernelelf.elf_build_id(exe).hex() == want
    subprocess.run(["gcc", "-static", "-nostdlib", "-Wl,--build-id=none", "-o", exe, str(src)],
                   check=True)
    assert kernelelf.elf_build_id(exe) is None


@built
def test_every_kernel_has_its_own_build_id_and_its_efi_image_carries_it():
    ids = {fw: kernelelf.elf_build_id(k) for fw, k in KERNELS.items()}
    assert all(ids[fw] and len(ids[fw]) == 20 for fw in FIRMWARES), ids
    assert len(set(ids.values())) == 3
    # The PE image objcopy makes holds the same note (the kernel reads it from there).
    for fw, efi in (("uefi-x64", "BOOTX64.EFI"), ("uefi-ia32", "BOOTIA32.EFI")):
        with open(os.path.join(BUILD, efi), "rb") as f:
            assert b"\x04\0\0\0\x14\0\0\0\x03\0\0\0GNU\0" + ids[fw] in f.read(), efi


@built
@pytest.mark.parametrize("fw", FIRMWARES)
def test_the_recordings_build_id_picks_the_kernel(dumpgen, tmp_path, fw):
    bid = kernelelf.elf_build_id(KERNELS[fw])
    cap, script = recording(dumpgen, tmp_path, fw, "--build-id", bid.hex())
    p = decode(tmp_path, cap, "--script", "out.perf")
    assert "kernel: %s, build id %s" % (KERNELS[fw], bid.hex()) in p.stderr
    assert (tmp_path / "out.perf").read_text() == script


@built
def test_an_elf_of_another_kernel_is_refused_with_both_build_ids(dumpgen, tmp_path):
    """A BIOS-booted Pentium 4's recording given the 64-bit kernel's ELF."""
    bid32 = kernelelf.elf_build_id(KERNELS["bios"])
    bid64 = kernelelf.elf_build_id(KERNELS["uefi-x64"])
    cap, _ = recording(dumpgen, tmp_path, "bios", "--build-id", bid32.hex())
    p = decode(tmp_path, cap, "--elf", KERNELS["uefi-x64"], "--script", "out.perf", ok=(2,))
    assert bid32.hex() in p.stderr and bid64.hex() in p.stderr, p.stderr
    assert "nbprof.so has build id" in p.stderr
    assert not (tmp_path / "out.perf").exists()


@built
def test_a_build_id_no_kernel_has_is_refused_naming_each(dumpgen, tmp_path):
    cap, _ = recording(dumpgen, tmp_path, "bios", "--build-id", "ab" * 20)
    p = decode(tmp_path, cap, "--script", "out.perf", ok=(2,))
    assert "no kernel ELF has the recording's build id " + "ab" * 20 in p.stderr
    for k in KERNELS.values():
        assert "%s: %s" % (k, kernelelf.elf_build_id(k).hex()) in p.stderr
    assert not (tmp_path / "out.perf").exists()


@built
def test_without_a_build_id_the_symbol_table_picks_the_kernel(dumpgen, tmp_path):
    """Dumps of older kernels (format 4) carry no build id: the checksum decides."""
    cap, script = recording(dumpgen, tmp_path, "bios")
    p = decode(tmp_path, cap, "--script", "out.perf")
    assert "kernel: %s, build id none" % KERNELS["bios"] in p.stderr
    assert (tmp_path / "out.perf").read_text() == script
    p = decode(tmp_path, cap, "--elf", KERNELS["uefi-x64"], "-q", ok=(2,))
    assert "is not the recording kernel's" in p.stderr
