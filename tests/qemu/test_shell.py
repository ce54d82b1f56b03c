"""test_shell.py - the shell on a NetBurst-signature machine, one boot.

The machine: CPUID signature family 0FH, model 4, stepping 1 (conftest's
default), one logical processor, 256 MiB. Expected values come from the
manuals, not from running nbprof: CPUID.1:EAX = (family << 8) | (model << 4)
| stepping (SDM Vol. 2A, CPUID, Figure "Version Information"), the model-4
capabilities from the PMU reference (sections 1.2, 2.3, 4.3, 7), exception
vectors and names from SDM Vol. 3A Table 6-1, IA32_APIC_BASE from SDM
Vol. 3A 10.4.4. The last test powers the machine off. Tests marked
qemu_only depend on the QEMU machine's configuration; the rest also hold on
a real NetBurst machine (--nbprof-serial).
"""

import re

import pytest

import conftest
from nbproflib import kernelelf, qemu  # tools/, put on the path by conftest.py

BUILTINS = ("help", "cpu", "mem", "msr", "fault", "reboot", "poweroff")


def error_lines(out):
    return [line for line in out.splitlines() if line.startswith("error:")]


def field(out, name):
    """The value of a `cpu` line 'NAME   value' (first match)."""
    m = re.search(r"^\s*%s\s+(.*)$" % re.escape(name), out, re.M)
    assert m, "no %r line in:\n%s" % (name, out)
    return m.group(1).strip()


def test_boot_reaches_prompt(nb):
    # An empty line prints nothing and gives a new prompt.
    assert nb.cmd("") == ""
    assert "error" not in nb.boot_output.lower()


def test_boot_proves_interrupt_paths(nb):
    # Printed before the ready marker, so read from the whole transcript.
    # The LAPIC self-test (arch/x86/selftest.c) delivers a self-IPI, a fixed
    # IPI and an NMI addressed by APIC ID, and a LAPIC timer interrupt; each
    # must arrive exactly once. IA32_APIC_BASE gives the xAPIC at FEE00000H
    # (SDM Vol. 3A 10.4.4).
    # Then an NMI is made to land on a guarded RDMSR of IA32_APIC_BASE (a
    # second NMI held pending by NMI blocking until the first handler's IRET,
    # SDM Vol. 3A 6.7.1): the handler must run for it and the RDMSR must
    # still execute and read what msr_read_safe reads. Exception-table
    # fixups are for #GP/#UD only; applied to the NMI they skip the RDMSR.
    out = nb.transcript
    m = re.search(r"^lapic: id (\d+) at 0x([0-9a-f]+), self-IPI (\S+), IPI by id (\S+), "
                  r"NMI by id (\S+), timer (\S+), NMI on a guarded RDMSR (\S+); "
                  r"rdpmc 0: (ok|faults \(caught\))$", out, re.M)
    assert m, out
    assert int(m.group(2), 16) == 0xFEE00000
    assert m.group(3, 4, 5, 6) == ("ok", "ok", "ok", "ok"), m.group(0)
    assert m.group(7) == "ok", out
    assert "NMI on a guarded RDMSR:" not in out, out
    # TSC frequency printed at boot, calibrated against the PIT.
    assert re.search(r"^tsc: \d+\.\d{3} MHz, lapic timer \d+\.\d{3} MHz \(PIT calibrated\)$",
                     out, re.M), out
    # One page below 1 MiB is kept for the AP start-up trampoline (SIPI
    # vectors address 4 KiB pages below 1 MiB, SDM Vol. 3A 8.4.4.1).
    low = re.search(r"^mem: page 0x([0-9a-f]+) below 1 MiB kept for AP start-up$", out, re.M)
    assert low, out
    assert int(low.group(1), 16) < 0x100000 and int(low.group(1), 16) % 4096 == 0


def test_help_lists_builtins(nb):
    out = nb.cmd("help")
    names = re.findall(r"^  (\S+) +\S", out, re.M)
    for cmd in BUILTINS:
        assert cmd in names, "help does not list %s:\n%s" % (cmd, out)


def test_help_for_one_command(nb):
    out = nb.cmd("help msr")
    assert out.splitlines()[0] == \
        "usage: msr read [--cpu 0|1] ADDR | msr write [--cpu 0|1] ADDR VALUE [--force] | " \
        "msr trace on|off"


def test_msr_on_lp1_needs_a_sibling(nb):
    """Without Hyper-Threading there is no LP1 to run the access on: one error, nothing written."""
    before = nb.cmd("msr read 3F1H")
    out = nb.cmd("msr write --cpu 1 3F1H 02000000H")
    assert out.strip().startswith("error: msr write --cpu 1: no Hyper-Threading sibling"), out
    assert len(out.strip().splitlines()) == 1
    assert nb.cmd("msr read 3F1H") == before
    out = nb.cmd("msr read --cpu 0 3F1H")
    assert out.strip().endswith(" on LP0"), out


@pytest.mark.qemu_only     # the signature QEMU was given
def test_cpu_shows_netburst_signature(nb, firmware):
    out = nb.cmd("cpu")
    assert field(out, "vendor") == "GenuineIntel"
    sig = field(out, "signature")
    assert "0F_04H" in sig
    assert "%08XH" % ((0xF << 8) | (4 << 4) | 1) in sig
    if firmware == "uefi-ia32":                   # qemu64 with -lm: no long mode
        assert field(out, "EM64T") == "no"
        assert field(out, "boot") == ("UEFI ia32 (EFI/BOOT/BOOTIA32.EFI); nbprof runs in "
                                      "32-bit protected mode with PAE paging")
    elif firmware == "bios":                      # SeaBIOS, GRUB, the Multiboot ELF
        assert field(out, "EM64T") == "no"
        # GRUB's Multiboot boot_loader_name, "GRUB " and its version
        assert re.fullmatch(r"legacy BIOS \(Multiboot, nbprof32\.elf, loaded by GRUB [^ ;)]+\); "
                            r"nbprof runs in 32-bit protected mode with PAE paging",
                            field(out, "boot")), field(out, "boot")
    else:
        assert field(out, "EM64T") == "yes"      # qemu64 reports long mode
        assert field(out, "boot") == ("UEFI x64 (EFI/BOOT/BOOTX64.EFI); nbprof runs in "
                                      "64-bit mode (IA-32e)")
    assert field(out, "HTT").startswith("no")     # one logical processor
    # The build id of the kernel that runs: the one in its ELF (ld --build-id), which
    # the host tools match against a recording's; the boot banner names it too.
    bid = kernelelf.elf_build_id(qemu.kernel_elf(firmware)).hex()
    assert field(out, "build id") == bid
    assert "build id: %s" % bid in nb.transcript
    # One consistent CPU: the model's signature decides what `cpu` says of the PMU
    # (qemu64's own CPUID has no DS). A Prescott 0F_04 reports DS and DTES64
    # (cpuinfo of real 0F_04 parts); the model's IA32_MISC_ENABLE has bit 7 set,
    # bit 12 clear (its PEBS works) and bit 11 set (it has no branch trace store).
    assert field(out, "DS / DTES64") == "yes / yes"
    assert field(out, "DS/PEBS/BTS") == "yes / yes / no"
    assert re.search(r"^MISC_ENABLE   1A0H = 0000000000000880H$", out, re.M), out
    assert field(out, "bit 7  perfmon available") == "yes"
    assert field(out, "bit 12 PEBS unavailable") == "no"
    # `nopebs` sets bit 12, and `cpu` follows
    assert "error" not in nb.cmd("pmu backend model 0F_04 nopebs")
    try:
        out = nb.cmd("cpu")
        assert field(out, "DS/PEBS/BTS") == "yes / no / no"
        assert field(out, "bit 12 PEBS unavailable") == "yes"
    finally:
        nb.cmd("pmu backend model 0F_04")
    # a Northwood reports DS without DTES64
    assert "error" not in nb.cmd("pmu backend model 0F_02:9")
    try:
        assert field(nb.cmd("cpu"), "DS / DTES64") == "yes / no"
    finally:
        nb.cmd("pmu backend model 0F_04")


@pytest.mark.qemu_only     # the signature QEMU was given
def test_cpu_model4_capabilities(nb):
    out = nb.cmd("cpu")
    assert field(out, "IQ_ESCR0/1") == "no"               # models 0-2 only
    assert field(out, "extended cascading") == "yes"      # 0F_02/03/04/06
    assert field(out, "cascade PMI erratum") == "no"      # 0F_02, 0F_00/01 > 09H
    assert field(out, "instr_completed") == "yes"         # models 3, 4, 6
    assert field(out, "uncore (107CCH-107D3H)").startswith("IFSB/EFSB")


def test_cpu_tsc_calibrated(nb):
    mhz = re.search(r"^TSC\s+(\d+)\.\d{3} MHz$", nb.cmd("cpu"), re.M)
    assert mhz, "TSC frequency not shown"
    assert 100 <= int(mhz.group(1)) <= 20000


@pytest.mark.qemu_only     # the RAM size QEMU was given
def test_mem_summary(nb):
    out = nb.cmd("mem")
    m = re.search(r"^memory map: (\d+) regions", out, re.M)
    assert m and int(m.group(1)) > 0
    usable = re.search(r"^  usable\s+\d+ regions\s+(\d+) (MiB|KiB)$", out, re.M)
    assert usable, out
    mib = int(usable.group(1)) >> (10 if usable.group(2) == "KiB" else 0)
    assert 128 <= mib <= 256                               # the machine has -m 256
    free = re.search(r"^free RAM\s+(\d+) (MiB|KiB)$", out, re.M)
    assert free and int(free.group(1)) > 0


def test_mem_map_regions_in_order(nb):
    count = int(re.search(r"^memory map: (\d+) regions", nb.cmd("mem"), re.M).group(1))
    spans = re.findall(r"^  ([0-9A-F]{16})-([0-9A-F]{16})  (\S+)", nb.cmd("mem map"), re.M)
    assert len(spans) == count
    ends = [(int(a, 16), int(b, 16)) for a, b, _ in spans]
    for (lo, hi), (next_lo, _) in zip(ends, ends[1:]):
        assert lo <= hi < next_lo


def test_unknown_command(nb):
    out = nb.cmd("frobnicate 1 2")
    assert out.splitlines() == [error_lines(out)[0]]
    assert "frobnicate" in out
    assert "commands:" in nb.cmd("help")                  # the shell still works


@pytest.mark.parametrize("line", ["msr read 0xZZ", "msr read", "fault xyz", "mem bogus",
                                  "help nosuchcmd", "cpu extra"])
def test_bad_argument_one_error_line(nb, line):
    out = nb.cmd(line)
    assert len(out.splitlines()) == 1 and out.startswith("error:"), out


def test_msr_read_apic_base(nb):
    # IA32_APIC_BASE (1BH): base FEE00000H, bit 8 BSP, bit 11 APIC global enable.
    out = nb.cmd("msr read 0x1b")
    assert out == "MSR 1BH = %016XH" % (0xFEE00000 | 1 << 11 | 1 << 8)


def test_msr_read_missing_is_not_a_crash(nb):
    # Real NetBurst raises #GP here. QEMU's TCG reads unknown MSRs as 0
    # without a fault, so either answer is right; a crash or a hang is not.
    out = nb.cmd("msr read 12345678H")
    assert re.fullmatch(r"MSR 12345678H = 0{16}H|error: rdmsr 12345678H: #GP.*", out), out
    assert nb.cmd("msr read 1BH").startswith("MSR 1BH = ")


@pytest.mark.qemu_only     # under QEMU the PMU registers are the software model's
def test_msr_read_pmu_register_missing_on_this_model(nb):
    # IQ_ESCR0/1 (3BAH/3BBH) exist on models 0-2 only (PMU reference 1.2, edk2
    # Pentium4Msr.h); this boot is 0F_04H, so the model raises #GP.
    out = nb.cmd("msr read 3BAH")
    assert out == "error: rdmsr 3BAH: #GP (MSR not present on model 0F_04H)", out
    out = nb.cmd("msr write 3BBH 0")
    assert out.startswith("error: wrmsr 3BBH: #GP"), out
    # CRU_ESCR0 exists on every model: written and read back through the model.
    assert nb.cmd("msr write 3B8H 0400060CH") == \
        "MSR 3B8H <- 000000000400060CH (CRU_ESCR0) [model 0F_04H]"
    assert nb.cmd("msr read 3B8H") == "MSR 3B8H = 000000000400060CH (CRU_ESCR0) [model 0F_04H]"
    nb.cmd("msr write 3B8H 0")


def test_msr_write_gp_is_reported(nb):
    # IA32_PKRS (6E1H) does not exist on NetBurst, and where it exists bits
    # 63:32 are reserved: WRMSR raises #GP on both (QEMU TCG too).
    out = nb.cmd("msr write 0x6e1 0x100000000 --force")
    assert re.fullmatch(r"error: wrmsr 6E1H: #GP.*", out), out
    assert nb.cmd("msr read 0x1b").startswith("MSR 1BH = ")


def test_msr_write_non_pmu_refused(nb):
    before = nb.cmd("msr read 0x1b")
    out = nb.cmd("msr write 0x1b 0")
    assert out.startswith("error:") and "--force" in out and len(out.splitlines()) == 1
    assert nb.cmd("msr read 0x1b") == before               # nothing was written


def test_msr_write_pmu_register(nb):
    # MSR_BSU_ESCR0 is 3A0H (SDM Table 18-66; PMU reference 1.2).
    out = nb.cmd("msr write 3A0H 0")
    # "[model ...]" when the software model serves the PMU registers (QEMU).
    assert re.fullmatch(r"MSR 3A0H <- 0000000000000000H \(BSU_ESCR0\)( \[model 0F_0\dH\])?", out), out


FAULTS = [
    # kind, mnemonic, vector, SDM name, what the raising function is called
    ("de", "#DE", 0, "divide error", "de"),
    ("ud", "#UD", 6, "invalid opcode", "ud"),
    ("gp", "#GP", 13, "general protection", "gp"),
    ("pf", "#PF", 14, "page fault", "pf"),
    ("int3", "#BP", 3, "breakpoint", "(bp|int3)"),
]


@pytest.mark.parametrize("kind,mnemonic,vector,name,func", FAULTS, ids=[f[0] for f in FAULTS])
def test_fault_reported_and_recovered(nb, firmware, kind, mnemonic, vector, name, func):
    out = nb.cmd("fault " + kind)
    head = re.search(r"^\*\*\* exception (\S+) \(vector (\d+)\) (.*)$", out, re.M)
    assert head, out
    assert head.group(1) == mnemonic and int(head.group(2)) == vector
    assert name in head.group(3).lower()
    # RIP lies in the small function that raises this kind (the symbol
    # table must not attribute it to a neighbour).
    rip = re.search(r"^  RIP 0x[0-9a-f]{16} <(\w+)\+0x([0-9a-f]+)>$", out, re.M)
    assert rip, out
    assert re.search(r"(^|_)%s($|_)" % func, rip.group(1)) and int(rip.group(2), 16) < 0x40, out
    if kind == "int3":
        # A trap: the handler resumes after the instruction.
        assert "handled, execution resumed" in out
    else:
        assert "*** command aborted by %s" % mnemonic in out
    if kind == "pf":
        assert re.search(r"^  \(page fault: ", out, re.M)
    # The rest of the report: selectors, flags, stack, CR2 and all sixteen
    # general registers, as 64-bit hex values.
    regs = dict(re.findall(r"\b(CS|SS|RFLAGS|RSP|CR2|R[A-Z0-9]{1,2}) +0x([0-9a-f]+)\b", out))
    for r in ("RAX", "RBX", "RCX", "RDX", "RSI", "RDI", "RBP", "RSP",
              "R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15", "RFLAGS", "CR2", "CS", "SS"):
        assert r in regs, "%s missing from the report:\n%s" % (r, out)
    assert int(regs["CS"], 16) & 3 == 0                    # raised in ring 0
    assert int(regs["RFLAGS"], 16) & 2                     # RFLAGS bit 1 always reads 1
    # What the raising instruction left behind (arch/x86/cpu.c, arch/x86/64/mode.c,
    # arch/x86/32/mode.c): #GP loads through the non-canonical 8000000000000000H in
    # RCX (64-bit) or loads SS with the null selector in EAX (32-bit); #PF
    # reads the unmapped 00007FFFFFFFF000H (64-bit) or FF0H in page 0
    # (32-bit), which CR2 must name; #DE divides EDX:EAX = 0:1 by ECX = 0.
    ia32 = conftest.kernel_bits(firmware) == 32
    if kind == "gp":
        if ia32:
            assert int(regs["RAX"], 16) == 0 and int(regs["SS"], 16) == 0x10
        else:
            assert int(regs["RCX"], 16) == 0x8000000000000000
    if kind == "pf":
        assert int(regs["CR2"], 16) == (0xFF0 if ia32 else 0x00007FFFFFFFF000)
    if kind == "de":
        assert int(regs["RCX"], 16) & 0xFFFFFFFF == 0
        assert int(regs["RAX"], 16) & 0xFFFFFFFF == 1
    assert "commands:" in nb.cmd("help")                   # back at a working prompt


def test_events_lists_the_tables(nb):
    # instr_retired: ESCR event select 02H, on CRU_ESCR0/1 (ESCR select 4),
    # counters 12, 13, 16 and 14, 15, 17; mask bits NBOGUSNTAG 0, NBOGUSTAG 1,
    # BOGUSNTAG 2, BOGUSTAG 3 (PMU reference 4.2; SDM Table A-10).
    out = nb.cmd("events instr_retired")
    head = out.splitlines()[0]
    assert re.match(r"instr_retired\s+02H\s+sel 4\s+CRU_ESCR0\(12,13,16\) / CRU_ESCR1\(14,15,17\)",
                    head), out
    for bit, name in enumerate(("NBOGUSNTAG", "NBOGUSTAG", "BOGUSNTAG", "BOGUSTAG")):
        assert re.search(r"\b%s\*?=%d\b" % (name, bit), out), out
    # The whole list: non-retirement and at-retirement events alike.
    full = nb.cmd("events")
    for name in ("global_power_events", "ITLB_reference", "branch_retired", "replay_event",
                 "front_end_event", "x87_assist"):
        assert re.search(r"^%s\s" % name, full, re.M | re.I), name
    # a header, and each row says where the model takes the event from
    # (prof/backend/model.c: stepped instructions and branches, the memory-system
    # model, cost-model clockticks, the assists from the stepped operand values;
    # bnr, another agent's bus signal, only from `synthetic`)
    assert full.splitlines()[0].startswith("event ") and "[source]" in full.splitlines()[0]
    for name, src in (("instr_retired", "[real: stepped]"), ("branch_retired", "[real: stepped]"),
                      ("global_power_events", "[cost model]"),
                      ("ITLB_reference", "[memory model]"), ("x87_assist", "[real: stepped]"),
                      ("bnr", "[synthetic]")):
        assert re.search(r"^%s\s.*%s$" % (name, re.escape(src)), full, re.M), (name, full)
    out = nb.cmd("events zzzz")
    assert len(out.splitlines()) == 1 and out.startswith("error:"), out


def test_ctrl_c_abandons_line(nb):
    nb.send("help")
    nb.send("\x03")
    nb.expect_exact("nbprof> ", 10)
    assert "^C" in nb.child.before
    assert "commands:" not in nb.child.before
    assert nb.cmd("") == ""


def test_history_recalls_previous_line(nb):
    nb.cmd("help mem")
    nb.send("\x1b[A\r")
    nb.expect_exact("nbprof> ", 10)
    assert "usage: mem [map]" in nb.child.before


def test_backspace_edits_line(nb):
    nb.send("hepp\x7f\x7flp\r")
    nb.expect_exact("nbprof> ", 10)
    assert "commands:" in nb.child.before


@pytest.mark.qemu_only
def test_poweroff_exits_qemu(nb):
    nb.send("poweroff\r")
    nb.expect_exact("powering off", 10)
    rc = nb.wait_exit()
    # isa-debug-exit: QEMU exits with (value << 1) | 1, and nbprof writes 0x10.
    # (Had the write been ignored, the ACPI S5 fallback would exit with 0.)
    assert rc == (0x10 << 1) | 1, "QEMU exit status %s" % rc
