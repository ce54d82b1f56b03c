"""msrs.py - a Bochs `msrs=` file that presents the NetBurst PMU as plain registers.

Bochs (2.7) has no NetBurst PMU: with ignore_bad_msrs=0 every PMU MSR
raises #GP. Its configurable MSRs (cpu: msrs="FILE"; indices below 1000H,
so no uncore registers) give each listed MSR a reset value, a reserved
mask (a WRMSR that changes a reserved bit raises #GP) and an ignored mask
(those bits keep the reset value). Here they are the registers of the SDM's
NetBurst PMU (Vol. 3B, NetBurst MSR table; the reserved bits of the ESCR
and CCCR figures), but nothing ever counts: counters hold what was written.

Line format (Bochs' msrs.def): INDEX TYPE RESET_HI RESET_LO RSRVD_HI
RSRVD_LO IGNRD_HI IGNRD_LO, hexadecimal, TYPE 0 = a plain register.
"""

COUNTERS = range(0x300, 0x312)
CCCRS = range(0x360, 0x372)
# ESCR MSRs (SDM Vol. 3B NetBurst MSR table); IQ_ESCR0/1 only on models 0-2.
ESCRS = ([m for m in range(0x3A0, 0x3BF)] + list(range(0x3C0, 0x3C6)) +
         list(range(0x3C8, 0x3CE)) + [0x3E0, 0x3E1])
IQ_ESCRS = (0x3BA, 0x3BB)
MISC_ENABLE = 0x1A0
TC_PRECISE_EVENT, PEBS_ENABLE, PEBS_MATRIX_VERT = 0x3F0, 0x3F1, 0x3F2
DS_AREA = 0x600

ESCR_RESERVED = (0xFFFFFFFF << 32) | (1 << 31)
ESCR_T1 = 0x3                      # T1_OS, T1_USR: reserved without HT
CCCR_RESERVED = (0xFFFFFFFF << 32) | (3 << 28) | 0x7FF
CCCR_EXT_CASCADE = 1 << 11         # models 2 and later only
CCCR_OVF_PMI_T1 = 1 << 27          # reserved without HT
PEBS_ENABLE_VALID = 0x1FFF | (1 << 15) | (1 << 16) | (1 << 24) | (1 << 25) | (1 << 26)
PEBS_OTH_THR = 1 << 26
MISC_PERFMON, MISC_BTS_UNAVAIL, MISC_PEBS_UNAVAIL = 1 << 7, 1 << 11, 1 << 12
COUNTER_HIGH = 0xFFFFFF << 40      # bits 63:40 of a 40-bit counter: read 0


def line(msr, reset=0, reserved=0, ignored=0):
    def hl(v):
        return "%08x %08x" % ((v >> 32) & 0xFFFFFFFF, v & 0xFFFFFFFF)
    return "%08x 0 %s %s %s" % (msr, hl(reset), hl(reserved), hl(ignored))


def msrs_text(model, ht, stuck_counter0=None):
    """The file for CPUID model `model` (0F_0xH), with or without HT.

    stuck_counter0: a value BPU_COUNTER0 always reads (every bit ignored),
    a counter stuck at a non-zero value.
    """
    out = ["# NetBurst PMU as plain registers (nbprof tests/bochs/msrs.py): "
           "model %d, %s" % (model, "HT" if ht else "no HT")]
    misc = MISC_PERFMON | MISC_BTS_UNAVAIL | 1   # fast strings; PEBS available
    out.append(line(MISC_ENABLE, misc, 0, MISC_PERFMON | MISC_BTS_UNAVAIL | MISC_PEBS_UNAVAIL))
    for m in COUNTERS:
        if m == 0x300 and stuck_counter0 is not None:
            out.append(line(m, stuck_counter0, 0, (1 << 64) - 1))
        else:
            out.append(line(m, 0, 0, COUNTER_HIGH))
    cccr_res = CCCR_RESERVED | (0 if ht else CCCR_OVF_PMI_T1)
    for m in CCCRS:
        # CASCNTxINTOy exists on models 2 and later on counters 0, 1, 4, 5, 8, 9, 12-17
        # (SDM CCCR figure note); reserved elsewhere.
        ext = model >= 2 and (m - 0x360) in (0, 1, 4, 5, 8, 9, 12, 13, 14, 15, 16, 17)
        out.append(line(m, 0, cccr_res | (0 if ext else CCCR_EXT_CASCADE)))
    escr_res = ESCR_RESERVED | (0 if ht else ESCR_T1)
    for m in ESCRS:
        if m in IQ_ESCRS and model >= 3:
            continue
        out.append(line(m, 0, escr_res))
    out.append(line(TC_PRECISE_EVENT, 0xFC00, 0xFFFFFFFF << 32))
    out.append(line(PEBS_ENABLE, 0, ((1 << 64) - 1) & ~PEBS_ENABLE_VALID |
                    (0 if ht else PEBS_OTH_THR)))
    out.append(line(PEBS_MATRIX_VERT, 0, 0xFFFFFFFF << 32))
    out.append(line(DS_AREA, 0, 0))
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    import sys
    sys.stdout.write(msrs_text(int(sys.argv[1]), sys.argv[2] == "ht"))
