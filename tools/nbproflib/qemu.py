"""qemu.py - boot an nbprof disk image in QEMU (TCG) under OVMF.

Used by `make run` (serial on this terminal), by the QEMU tests (which import
command() and spawn the result themselves) and by benchmarks (--icount).

The machine: q35 without the AHCI and SMBus controllers (nbprof uses
neither); the image is a read-only virtio-blk disk, which OVMF boots through
the removable-media path EFI/BOOT/BOOTX64.EFI; OVMF runs from pflash with
its own copy of the variable store per run, so runs never share state and
two QEMUs can boot the same image at once. The default CPU carries a
NetBurst signature (CPUID.1 EAX = 0F41H: family 0FH, model 4, stepping 1;
vendor GenuineIntel) because nbprof's CPU detection keys on it.

--firmware picks what boots the image (FIRMWARES below): uefi-x64 (the
default: OVMF, BOOTX64.EFI, the 64-bit kernel), uefi-ia32 (Debian's
ovmf-ia32 in qemu-system-i386, BOOTIA32.EFI, the 32-bit kernel) or bios
(SeaBIOS, QEMU's own firmware, boots the image as a disk: GRUB i386-pc
from the MBR and the BIOS boot partition loads boot/nbprof32.elf, the
32-bit kernel, with Multiboot; tools/build/mkimage --bios). ovmf-ia32
ships only the Secure Boot build, which needs SMM and a secure pflash; its
variable store is empty, so Secure Boot is off and the unsigned image runs
(QEMU notes section 7). Under uefi-ia32 and bios the CPU has no long
mode (-lm), like every NetBurst part without EM64T.
isa-debug-exit at port 0xf4 lets the guest end the run: a write of V makes
QEMU exit with status (V << 1) | 1.
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.abspath(os.environ.get("NBPROF_BUILD") or os.path.join(REPO, "build"))
OVMF_DIRS = ("/usr/share/OVMF", "/usr/share/ovmf")
DEFAULT_SIG = (15, 4, 1)
DEBUG_EXIT_PORT = 0xF4

# What each --firmware boots with: QEMU binary, OVMF code and variable-store
# template, machine options, extra arguments, the Debian package, and what
# the CPU model lacks.
FIRMWARES = {
    "uefi-x64": {
        "qemu": "qemu-system-x86_64", "code": "OVMF_CODE_4M.fd", "vars": "OVMF_VARS_4M.fd",
        "machine": "q35,sata=off,smbus=off", "extra": [], "package": "ovmf",
        "cpu_flags": "",
    },
    "uefi-ia32": {
        "qemu": "qemu-system-i386", "code": "OVMF32_CODE_4M.secboot.fd",
        "vars": "OVMF32_VARS_4M.fd", "machine": "q35,smm=on,sata=off,smbus=off",
        "extra": ["-global", "driver=cfi.pflash01,property=secure,value=on"],
        "package": "ovmf-ia32", "cpu_flags": ",-lm,-syscall",
    },
    "bios": {
        "qemu": "qemu-system-i386", "code": None, "vars": None,
        "machine": "q35,sata=off,smbus=off", "extra": [], "package": "qemu-system-data",
        "cpu_flags": ",-lm,-syscall",
    },
}
DEFAULT_FIRMWARE = "uefi-x64"
QEMU = FIRMWARES[DEFAULT_FIRMWARE]["qemu"]


def kernel_elf(firmware=DEFAULT_FIRMWARE):
    """The linked kernel (ELF with symbols) that a firmware configuration boots."""
    if firmware == "uefi-ia32":
        return os.path.join(BUILD, "k32", "nbprof.so")
    if firmware == "bios":
        return os.path.join(BUILD, "nbprof32.elf")
    return os.path.join(BUILD, "nbprof.so")


def cpu_model(family, model, stepping, vendor="GenuineIntel", firmware=DEFAULT_FIRMWARE):
    """The -cpu value for a given CPUID signature (no long mode under uefi-ia32)."""
    return "qemu64,vendor=%s,family=%d,model=%d,stepping=%d%s" % (
        vendor, family, model, stepping, FIRMWARES[firmware]["cpu_flags"])


def find_firmware(firmware=DEFAULT_FIRMWARE):
    """(code, vars template) of that firmware's 4 MiB OVMF build, or SystemExit.

    (None, None) for bios: SeaBIOS is built into QEMU and keeps no variables.
    """
    fw = FIRMWARES[firmware]
    if fw["code"] is None:
        return None, None
    for d in OVMF_DIRS:
        code, varstore = os.path.join(d, fw["code"]), os.path.join(d, fw["vars"])
        if os.path.exists(code) and os.path.exists(varstore):
            return code, varstore
    raise SystemExit("qemu.py: %s not found in %s (Debian package %s)"
                     % (fw["code"], " or ".join(OVMF_DIRS), fw["package"]))


def make_vars(template):
    """A private copy of the OVMF variable store for one run, under build/ (None: none)."""
    if template is None:
        return None
    d = os.path.join(BUILD, "qemu")
    os.makedirs(d, exist_ok=True)
    fd, path = tempfile.mkstemp(prefix="vars-", suffix=".fd", dir=d)
    with os.fdopen(fd, "wb") as out, open(template, "rb") as src:
        shutil.copyfileobj(src, out)
    return path


MEDIA = ("disk", "usb", "cdrom", "net", "floppy")
PXE_BOOTFILE = "nbprof.ipxe"    # the iPXE script in a `make pxe` TFTP root


def media_args(media, image):
    """How the machine sees `image`: a disk (virtio-blk), a USB stick (USB
    mass storage on an xHCI controller: Pentium 4 boards have UHCI/EHCI,
    which SeaBIOS boots the same way, but under TCG EHCI takes three times
    as long), a CD in an AHCI ATAPI drive, or
    (net) a TFTP root served by QEMU's user-mode network to an e1000 whose
    boot ROM is QEMU's iPXE (Debian's ipxe-qemu), or (floppy) a 1.44 MB floppy
    in the board's floppy drive A: (make floppy; bios only)."""
    if media == "usb":
        return ["-drive", "if=none,id=stick,format=raw,readonly=on,file=" + image,
                "-device", "qemu-xhci,id=xhci", "-device", "usb-storage,bus=xhci.0,drive=stick"]
    if media == "floppy":
        return ["-drive", "if=floppy,format=raw,readonly=on,file=" + image]
    if media == "cdrom":
        return ["-drive", "if=none,id=cd0,media=cdrom,readonly=on,format=raw,file=" + image,
                "-device", "ich9-ahci,id=ahci", "-device", "ide-cd,bus=ahci.0,drive=cd0"]
    if media == "net":
        return ["-netdev", "user,id=n0,tftp=%s,bootfile=%s" % (image, PXE_BOOTFILE),
                "-device", "e1000,netdev=n0", "-boot", "n"]
    return ["-drive", "if=none,id=disk0,format=raw,readonly=on,file=" + image,
            "-device", "virtio-blk-pci,drive=disk0"]


def command(image, varstore, code, *, cpu=None, smp_ht=False, icount=False, mem=256,
            interactive=False, gdb=False, extra=(), firmware=DEFAULT_FIRMWARE, machine=None,
            media="disk", screen=False, monitor=None):
    """The QEMU argument vector for one run.

    interactive: serial and monitor multiplexed on stdio (Ctrl-A X quits,
    Ctrl-A C switches to the monitor); otherwise the serial port alone is
    on stdio and there is no monitor. In both cases Ctrl-C is passed to the
    guest (signal=off) rather than killing QEMU. firmware: a FIRMWARES key;
    machine replaces its -machine value (e.g. "pc,acpi=off": a BIOS machine
    without ACPI tables). media: MEDIA (media_args). screen: a standard VGA
    card (SeaBIOS's VGA BIOS text mode, OVMF's GOP), still without a window
    (its contents: the monitor's screendump). monitor: a path for the QEMU
    monitor as a Unix socket server (sendkey, screendump), besides stdio.
    """
    fw = FIRMWARES[firmware]
    argv = [fw["qemu"],
            "-machine", machine or fw["machine"], "-accel", "tcg"] + fw["extra"] + [
            "-cpu", cpu or cpu_model(*DEFAULT_SIG, firmware=firmware), "-m", str(mem),
            "-nodefaults", "-display", "none", "-no-reboot"]
    if media != "net":
        argv += ["-nic", "none"]
    if code is not None:
        argv += ["-drive", "if=pflash,format=raw,unit=0,readonly=on,file=" + code,
                 "-drive", "if=pflash,format=raw,unit=1,file=" + varstore]
    argv += media_args(media, image)
    argv += ["-device", "isa-debug-exit,iobase=0x%x,iosize=0x04" % DEBUG_EXIT_PORT]
    if screen:
        argv += ["-device", "VGA"]
    if interactive:
        argv += ["-chardev", "stdio,id=s0,mux=on,signal=off",
                 "-serial", "chardev:s0", "-mon", "chardev=s0"]
    else:
        argv += ["-chardev", "stdio,id=s0,signal=off", "-serial", "chardev:s0"]
        argv += ["-monitor", "unix:%s,server=on,wait=off" % monitor] if monitor else \
                ["-monitor", "none"]
    if smp_ht:
        # Plain -smp 2 would be two cores; spell out one core with two threads.
        argv += ["-smp", "2,sockets=1,cores=1,threads=2"]
    if icount:
        # shift=7: the TSC advances 128 per instruction; shift=0 makes OVMF crawl.
        argv += ["-icount", "shift=7,sleep=off"]
    if gdb:
        argv += ["-gdb", "tcp::1234", "-S"]
    return argv + list(extra)


POWEROFF_RC = (0x10 << 1) | 1   # kernel/platform.c POWEROFF_QEMU_STATUS


def exit_meaning(rc):
    """One line saying what a QEMU exit status means for nbprof."""
    if rc is None:
        return "killed after the time limit"
    if rc < 0:
        return "QEMU died from signal %d" % -rc
    if rc == 0:
        return "QEMU quit (Ctrl-A X), or the guest reset or triple-faulted (-no-reboot)"
    if rc == POWEROFF_RC:
        return "guest powered off (nbprof's poweroff: isa-debug-exit value 0x10)"
    if rc == 1:
        return "QEMU could not start, or the guest wrote 0 to isa-debug-exit"
    if rc & 1:
        return "guest exit via isa-debug-exit, value %d (0x%x)" % (rc >> 1, rc >> 1)
    return "QEMU failed with status %d" % rc


def parse_sig(text):
    parts = text.replace("_", ",").split(",")
    if len(parts) != 3:
        raise argparse.ArgumentTypeError("expected FAMILY,MODEL,STEPPING, e.g. 15,2,9")
    try:
        return tuple(int(p, 0) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError("not a number in %r" % text) from None


def add_machine_options(ap):
    """The options that describe the machine (tools/nbprof --qemu takes them too)."""
    ap.add_argument("--image", help="what to boot: a disk image (default build/nbprof.img, "
                                    "make image), with --media cdrom a CD image (build/nbprof.iso, "
                                    "make iso), with --media net a TFTP root (build/pxe, make pxe)")
    ap.add_argument("--media", choices=MEDIA, default="disk",
                    help="disk: a hard disk (default); usb: a USB stick; cdrom: a CD drive; "
                         "net: network boot from QEMU's iPXE over TFTP (bios only); "
                         "floppy: a 1.44 MB floppy (make floppy; bios only)")
    ap.add_argument("--screen", action="store_true",
                    help="add a VGA card (nbprof's screen console; see it with the monitor's "
                         "screendump or with -display gtk after --)")
    ap.add_argument("--sig", type=parse_sig, default=DEFAULT_SIG, metavar="F,M,S",
                    help="CPUID family,model,stepping (default 15,4,1)")
    ap.add_argument("--cpu", help="full -cpu value (overrides --sig)")
    ap.add_argument("--firmware", choices=sorted(FIRMWARES), default=DEFAULT_FIRMWARE,
                    help="uefi-x64: OVMF, the 64-bit kernel (default); "
                         "uefi-ia32: OVMF ia32, the 32-bit kernel, a CPU without long mode; "
                         "bios: SeaBIOS and GRUB, the 32-bit kernel, a CPU without long mode")
    ap.add_argument("--smp-ht", action="store_true", help="one core, two hyper-threads")
    ap.add_argument("--icount", action="store_true", help="deterministic TSC (-icount shift=7)")
    ap.add_argument("--mem", type=int, default=256, help="guest RAM in MiB")
    ap.add_argument("--gdb", action="store_true", help="wait for gdb on tcp::1234")


DEFAULT_IMAGES = {"disk": "nbprof.img", "usb": "nbprof.img", "cdrom": "nbprof.iso", "net": "pxe",
                  "floppy": "nbprof-floppy.img"}


def default_image(args):
    """Fill in args.image from args.media when --image was not given."""
    if args.image is None:
        args.image = os.path.join(BUILD, DEFAULT_IMAGES[getattr(args, "media", "disk")])
    return args.image


def check_host(image, firmware=DEFAULT_FIRMWARE, media="disk"):
    """SystemExit with the reason when the image or that firmware's QEMU is missing."""
    qemu_bin = FIRMWARES[firmware]["qemu"]
    if media == "net":
        if firmware != "bios":
            raise SystemExit("qemu.py: --media net boots nbprof32.elf through iPXE's Multiboot "
                             "loader, which only the BIOS iPXE has: use --firmware bios")
        if not os.path.exists(os.path.join(image, PXE_BOOTFILE)):
            raise SystemExit("qemu.py: %s has no %s (make pxe; --image build/pxe)"
                             % (image, PXE_BOOTFILE))
    if media == "floppy" and firmware != "bios":
        raise SystemExit("qemu.py: --media floppy boots GRUB for a legacy BIOS: use --firmware bios")
    if not os.path.exists(image):
        raise SystemExit("qemu.py: %s does not exist (make %s)"
                         % (image, {"cdrom": "iso", "net": "pxe", "floppy": "floppy"}
                            .get(media, "image")))
    if shutil.which(qemu_bin) is None:
        raise SystemExit("qemu.py: %s not found (Debian package qemu-system-x86)" % qemu_bin)


def machine_command(args, varstore, code, interactive=False, extra=()):
    """command() for options parsed by add_machine_options()."""
    return command(args.image, varstore, code,
                   cpu=args.cpu or cpu_model(*args.sig, firmware=args.firmware),
                   smp_ht=args.smp_ht, icount=args.icount, mem=args.mem,
                   interactive=interactive, gdb=args.gdb, extra=extra, firmware=args.firmware,
                   media=getattr(args, "media", "disk"), screen=getattr(args, "screen", False))


# --- a disk image's nbprof.cfg (host tools boot a copy without its commands) ---------

ESP_OFFSET = 2048 * 512         # tools/build/mkimage: the ESP starts at sector 2048
# What the copy of an image holds instead of the user's nbprof.cfg: no commands.
EMPTY_CFG = b"# nbprof.cfg of the image left out by a host tool (tools/nbprof --keep-cfg keeps it)\n"


def image_cfg(image):
    """The nbprof.cfg on a disk image's ESP (bytes), or None when it has none or
    mtools cannot read it."""
    import subprocess
    try:
        p = subprocess.run(["mtype", "-i", "%s@@%d" % (image, ESP_OFFSET), "::/nbprof.cfg"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return p.stdout if p.returncode == 0 else None


def cfg_commands(cfg):
    """The lines of an nbprof.cfg that do something (not blank, not comments)."""
    return [l.strip() for l in cfg.decode("utf-8", "replace").splitlines()
            if l.strip() and not l.strip().startswith("#")]


def image_without_cfg(image):
    """(path of a temporary copy of image whose nbprof.cfg holds no commands, the
    commands left out), or (image, []) when its nbprof.cfg has none. `make run
    CFG=x.cfg` leaves x.cfg in the image, and its `run =` lines (even `poweroff`)
    would run before a host tool's commands (tools/nbprof, tools/dev/bench.py); the
    caller removes the copy."""
    import shutil
    import subprocess
    import tempfile
    cfg = image_cfg(image)
    if cfg is None or not cfg_commands(cfg):
        return image, []
    fd, copy = tempfile.mkstemp(prefix="nbprof-", suffix=".img")
    os.close(fd)
    shutil.copyfile(image, copy)
    with tempfile.NamedTemporaryFile(suffix=".cfg") as empty:
        empty.write(EMPTY_CFG)
        empty.flush()
        r = subprocess.run(["mcopy", "-o", "-i", "%s@@%d" % (copy, ESP_OFFSET), empty.name,
                            "::/nbprof.cfg"], stderr=subprocess.PIPE)
    if r.returncode != 0:
        os.unlink(copy)
        raise SystemExit("%s holds an nbprof.cfg with commands and a copy without it could "
                         "not be made (%s)" % (image, r.stderr.decode(errors="replace").strip()))
    return copy, cfg_commands(cfg)


def main():
    ap = argparse.ArgumentParser(description="Boot an nbprof image in QEMU (TCG, OVMF).")
    add_machine_options(ap)
    ap.add_argument("--batch", action="store_true",
                    help="serial only on stdio, no monitor, no Ctrl-A escape")
    ap.add_argument("--timeout", type=float, help="kill QEMU after this many seconds")
    ap.add_argument("extra", nargs="*", help="more QEMU arguments (after --)")
    args = ap.parse_args()

    check_host(default_image(args), args.firmware, args.media)
    code, template = find_firmware(args.firmware)
    varstore = make_vars(template)
    interactive = not args.batch
    argv = machine_command(args, varstore, code, interactive=interactive, extra=args.extra)
    if interactive:
        print("nbprof in QEMU: serial console on this terminal. Quit: Ctrl-A then X "
              "(Ctrl-A C: QEMU monitor).", flush=True)
    tty = None
    if sys.stdin.isatty():
        import termios
        tty = termios.tcgetattr(sys.stdin.fileno())
    proc = subprocess.Popen(argv)
    rc = None
    try:
        while True:
            try:
                rc = proc.wait(timeout=args.timeout)
                break
            except KeyboardInterrupt:
                # Only before QEMU has made the terminal raw; let it finish.
                continue
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                break
    finally:
        if tty is not None:
            import termios
            termios.tcsetattr(sys.stdin.fileno(), termios.TCSADRAIN, tty)
        if varstore:
            os.unlink(varstore)
    print("\nqemu.py: exit status %s: %s" % ("-" if rc is None else rc, exit_meaning(rc)),
          file=sys.stderr)
    if rc is None:
        return 124
    if interactive and rc in (0, POWEROFF_RC):
        return 0        # the user quit or the guest powered off: a normal end
    return rc


if __name__ == "__main__":
    sys.exit(main())
