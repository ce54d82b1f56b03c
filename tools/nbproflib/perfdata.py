"""perfdata - write decoded nbprof samples as a perf.data file.

Used by tools/nbprof-decode (--perf-data FILE) and tools/nbprof (record -o
DIR), so that Linux's own `perf report`, `perf script` and the tools built on
perf.data (hotspot, flame graph scripts) read an nbprof recording.

The file is perf's version-2 format ("PERFILE2"): a file header, one attr
per event, the data section with the records, and the feature sections
after it. Layouts follow the kernel's include/uapi/linux/perf_event.h
(struct perf_event_attr, PERF_RECORD_*, the PERF_SAMPLE_* order of fields)
and tools/perf/util/header.h (perf_file_header, perf_file_attr,
HEADER_* feature numbers, string and EVENT_DESC encodings).

What goes in:
  - one attr per recorded event, PERF_TYPE_RAW with config = the event's
    index in the dump, sample_type IDENTIFIER|IP|TID|TIME|CPU|PERIOD and
    CALLCHAIN, and its name in the EVENT_DESC feature, so perf shows the
    nbprof event name;
  - a PERF_RECORD_COMM per thread: one process named after the workload,
    one thread per logical processor (tid = pid + LP), cpu = LP;
  - a PERF_RECORD_MMAP2 per executable segment of every DSO (the kernel ELF,
    a user's program) at its runtime address with the segment's file
    offset, so perf maps a runtime IP to the ELF and names its function, and
    each DSO's GNU build-id in the BUILD_ID feature (perf then refuses an
    ELF file that is not the one recorded). hotspot's parser (elfutils)
    places a DSO at the mapping's start minus its file offset and then by
    the ELF's first PT_LOAD, so the kernel and SDK programs are linked with
    that segment at address 0 = file offset 0 (linker.ld, sdk/program.ld);
  - a PERF_RECORD_SAMPLE per sample; time is nanoseconds since the start of
    the recording (TSC ticks scaled by the dump's TSC frequency); its call
    chain holds each caller's call site (return address - 1).

Every sample is given perf's user cpumode (PERF_RECORD_MISC_USER), whatever
its CPL: perf resolves kernel-mode addresses against the host's own kernel
(/proc/kallsyms, vmlinux), never against a DSO named in an MMAP record, so
nbprof's ring-0 code could not be named otherwise. The CPL is kept in the
decoder's CSV output.
"""

import os
import struct

MAGIC = b"PERFILE2"
FILE_HEADER_SIZE = 104          # struct perf_file_header
ATTR_SIZE = 128                 # struct perf_event_attr, PERF_ATTR_SIZE_VER7
NAME_ALIGN = 64                 # header.c: strings are padded to 64 bytes

PERF_TYPE_RAW = 4
PERF_RECORD_MMAP = 1
PERF_RECORD_COMM = 3
PERF_RECORD_SAMPLE = 9
PERF_RECORD_MMAP2 = 10
PROT_READ, PROT_EXEC = 1, 4
MAP_PRIVATE = 2
PERF_RECORD_MISC_USER = 2
PERF_CONTEXT_USER = (1 << 64) - 512

SAMPLE_IP = 1 << 0
SAMPLE_TID = 1 << 1
SAMPLE_TIME = 1 << 2
SAMPLE_CALLCHAIN = 1 << 5
SAMPLE_CPU = 1 << 7
SAMPLE_PERIOD = 1 << 8
SAMPLE_IDENTIFIER = 1 << 16
SAMPLE_TYPE = (SAMPLE_IDENTIFIER | SAMPLE_IP | SAMPLE_TID | SAMPLE_TIME | SAMPLE_CPU
               | SAMPLE_PERIOD | SAMPLE_CALLCHAIN)

# struct perf_event_attr flag bits
ATTR_DISABLED = 1 << 0
ATTR_EXCLUDE_KERNEL = 1 << 5
ATTR_EXCLUDE_HV = 1 << 6
ATTR_MMAP = 1 << 8
ATTR_COMM = 1 << 9
ATTR_SAMPLE_ID_ALL = 1 << 18
ATTR_MMAP2 = 1 << 23

# tools/perf/util/header.h, enum of HEADER_* features
FEAT_BUILD_ID = 2
FEAT_HOSTNAME = 3
FEAT_OSRELEASE = 4
FEAT_VERSION = 5
FEAT_ARCH = 6
FEAT_NRCPUS = 7
FEAT_CPUDESC = 8
FEAT_CPUID = 9
FEAT_CMDLINE = 11
FEAT_EVENT_DESC = 12
FEAT_BITS = 256

DEFAULT_PID = 1000              # any non-zero pid: perf treats pid 0 as the idle task
ELF_PT_LOAD = 1
ELF_PF_X = 1
ELF_PT_NOTE = 4
NT_GNU_BUILD_ID = 3


class PerfDataError(Exception):
    pass


# --- ELF ---------------------------------------------------------------------------

class Dso:
    """One executable file mapped into the recording at a runtime base.

    segments: [(link vaddr, memsz, file offset)] of its executable PT_LOADs;
    a runtime address is link vaddr + base.
    """

    def __init__(self, path, base, segments, build_id=None):
        self.path, self.base, self.segments, self.build_id = path, base, segments, build_id


# (e_phoff offset, e_phentsize offset, program header layout: type, flags,
# offset, vaddr, filesz, memsz in order) of each ELF class (gABI "ELF Header",
# "Program Header"): ELF32 for the 32-bit kernel and its programs (i386).
ELF_CLASSES = {
    1: (28, 42, "<IIIIIIII", (0, 6, 1, 2, 4, 5)),
    2: (32, 54, "<IIQQQQQQ", (0, 1, 2, 3, 5, 6)),
}


def _elf_fields(data):
    if data[:4] != b"\x7fELF":
        raise PerfDataError("not an ELF file")
    if data[4] not in ELF_CLASSES or data[5] != 1:
        raise PerfDataError("only little-endian ELF32 and ELF64 files are supported")
    phoff_at, phent_at, fmt, order = ELF_CLASSES[data[4]]
    phoff, = struct.unpack_from("<Q" if data[4] == 2 else "<I", data, phoff_at)
    phentsize, phnum = struct.unpack_from("<HH", data, phent_at)
    return phoff, phentsize, phnum, fmt, order


def _build_id(data, off, size):
    """The GNU build-id in a PT_NOTE segment's bytes, or None."""
    end = off + size
    while off + 12 <= end:
        namesz, descsz, ntype = struct.unpack_from("<III", data, off)
        name = data[off + 12:off + 12 + namesz]
        desc_off = off + 12 + ((namesz + 3) & ~3)
        if ntype == NT_GNU_BUILD_ID and name.rstrip(b"\0") == b"GNU":
            return data[desc_off:desc_off + descsz]
        off = desc_off + ((descsz + 3) & ~3)
    return None


def elf_dso(path, base):
    """A Dso for the ELF file at path, loaded so that link address 0 is at base."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        phoff, phentsize, phnum, fmt, order = _elf_fields(data)
        segs, bid = [], None
        for i in range(phnum):
            ph = struct.unpack_from(fmt, data, phoff + i * phentsize)
            ptype, flags, offset, vaddr, filesz, memsz = (ph[k] for k in order)
            if ptype == ELF_PT_LOAD and flags & ELF_PF_X:
                segs.append((vaddr, memsz, offset))
            elif ptype == ELF_PT_NOTE and bid is None:
                bid = _build_id(data, offset, filesz)
    except struct.error:
        raise PerfDataError("%s: truncated ELF file" % path) from None
    except PerfDataError as e:
        raise PerfDataError("%s: %s" % (path, e)) from None
    if not segs:
        raise PerfDataError("%s: no executable segment" % path)
    return Dso(os.path.abspath(path), base, segs, bid)


# --- records -------------------------------------------------------------------------

def pad8(b):
    return b + b"\0" * (-len(b) % 8)


def record(rtype, misc, body):
    return struct.pack("<IHH", rtype, misc, 8 + len(body)) + body


def sample_id(pid, tid, time, cpu, ident):
    """The sample_id_all trailer: TID, TIME, CPU, IDENTIFIER in perf_event.h's order."""
    return struct.pack("<IIQIIQ", pid, tid, time, cpu, 0, ident)


def comm_record(pid, tid, comm, ident):
    body = struct.pack("<II", pid, tid) + pad8(comm.encode()[:15] + b"\0")
    return record(PERF_RECORD_COMM, 0, body + sample_id(pid, tid, 0, 0, ident))


def mmap_records(pid, dso, ident):
    """A PERF_RECORD_MMAP2 per executable segment, as perf writes a file
    mapping: start, length, file offset, no device or inode (the file is the
    host's, not the target's), r-xp."""
    out = []
    for vaddr, memsz, offset in dso.segments:
        body = struct.pack("<IIQQQIIQQII", pid, pid, dso.base + vaddr, memsz, offset,
                           0, 0, 0, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE)
        body += pad8(dso.path.encode() + b"\0")
        out.append(record(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER,
                          body + sample_id(pid, pid, 0, 0, ident)))
    return out


def sample_record(ident, ip, pid, tid, time, cpu, period, chain):
    """chain: return addresses, innermost first (the sampled IP not included).

    A caller's frame is written as its return address - 1, inside the call
    instruction, as perf's own unwinders report callers and pprof looks them
    up: perf and hotspot name a frame by the address they are given, and a
    call that is the last instruction of its function returns to the first
    byte of the next one.
    """
    ips = [PERF_CONTEXT_USER, ip] + [a - 1 for a in chain]
    body = struct.pack("<QQIIQIIQQ", ident, ip, pid, tid, time, cpu, 0, period, len(ips))
    body += struct.pack("<%dQ" % len(ips), *ips)
    return record(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, body)


# --- attrs and features ------------------------------------------------------------

def attr_bytes(index, period, first):
    # exclude_kernel because every sample is presented in user mode (see the
    # top of this file): otherwise perf report looks for the host's kernel
    # symbols and warns when it finds none.
    flags = ATTR_EXCLUDE_KERNEL | ATTR_EXCLUDE_HV | ATTR_SAMPLE_ID_ALL
    if first:
        flags |= ATTR_MMAP | ATTR_COMM | ATTR_MMAP2
    a = struct.pack("<IIQQQQQII", PERF_TYPE_RAW, ATTR_SIZE, index, period, SAMPLE_TYPE, 0,
                    flags, 0, 0)
    return a + b"\0" * (ATTR_SIZE - len(a))


def perf_string(s):
    b = s.encode() + b"\0"
    b += b"\0" * (-len(b) % NAME_ALIGN)
    return struct.pack("<I", len(b)) + b


def event_desc(events):
    out = struct.pack("<II", len(events), ATTR_SIZE)
    for i, (name, period) in enumerate(events):
        out += attr_bytes(i, period, i == 0) + struct.pack("<I", 1) + perf_string(name)
        out += struct.pack("<Q", i + 1)
    return out


def build_id_feature(pid, dsos):
    """struct build_id_event per DSO that has a build-id (header.c write_build_id)."""
    out = b""
    for d in dsos:
        if not d.build_id:
            continue
        name = d.path.encode() + b"\0"
        name += b"\0" * (-len(name) % NAME_ALIGN)
        bid = d.build_id[:20]
        # perf_event_header, pid, u8 data[20], u8 size, 3 reserved bytes, filename
        body = struct.pack("<i", pid) + bid + b"\0" * (20 - len(bid)) + bytes([len(bid)]) \
            + b"\0\0\0" + name
        out += struct.pack("<IHH", 0, PERF_RECORD_MISC_USER | (1 << 15), 8 + len(body)) + body
    return out


def features(meta, events, dsos, pid):
    """{feature number: bytes} of the header features perf reads."""
    nr_lps = meta.get("nr_cpus", 1)
    feats = {
        FEAT_HOSTNAME: perf_string(meta.get("hostname", "nbprof")),
        FEAT_OSRELEASE: perf_string(meta.get("osrelease", "nbprof")),
        FEAT_VERSION: perf_string(meta.get("version", "nbprof")),
        FEAT_ARCH: perf_string("x86_64"),
        FEAT_NRCPUS: struct.pack("<II", nr_lps, nr_lps),
        FEAT_CPUDESC: perf_string(meta.get("cpudesc", "NetBurst")),
        FEAT_CPUID: perf_string(meta.get("cpuid", "GenuineIntel,15,0,0")),
        FEAT_CMDLINE: struct.pack("<I", len(meta.get("cmdline", ["nbprof"])))
        + b"".join(perf_string(a) for a in meta.get("cmdline", ["nbprof"])),
        FEAT_EVENT_DESC: event_desc(events),
    }
    bids = build_id_feature(pid, dsos)
    if bids:
        feats[FEAT_BUILD_ID] = bids
    return feats


# --- the file -----------------------------------------------------------------------

def perf_data_bytes(samples, events, comm, dsos, tsc_hz, tsc_start, meta=None, pid=DEFAULT_PID):
    """The perf.data file as bytes.

    samples: dicts with lp, event (index into events), tsc, ip, chain;
    events: [(name, period)]; dsos: [Dso]; meta: optional strings for the
    header features (hostname, osrelease, version, cpudesc, cpuid, cmdline,
    nr_cpus).
    """
    if not events:
        raise PerfDataError("the recording names no event")
    meta = dict(meta or {})
    hz = tsc_hz or 1000000000
    lps = sorted({s["lp"] for s in samples}) or [0]
    meta.setdefault("nr_cpus", max(lps) + 1)
    # comm: one name, or {lp: name} when each LP ran its own workload
    data = [comm_record(pid, pid + lp, comm.get(lp, "?") if isinstance(comm, dict) else comm, 1)
            for lp in lps]
    for d in dsos:
        data += mmap_records(pid, d, 1)
    for s in samples:
        if not 0 <= s["event"] < len(events):
            raise PerfDataError("sample %s names event %d; the recording has %d"
                                % (s.get("index", "?"), s["event"], len(events)))
        ticks = max(s["tsc"] - tsc_start, 0)
        data.append(sample_record(s["event"] + 1, s["ip"], pid, pid + s["lp"],
                                  ticks * 1000000000 // hz, s["lp"],
                                  s.get("weight") or events[s["event"]][1] or 1, s["chain"]))
    data = b"".join(data)

    attrs_off = FILE_HEADER_SIZE
    file_attr_size = ATTR_SIZE + 16
    ids_off = attrs_off + file_attr_size * len(events)
    attrs = b""
    for i, (_, period) in enumerate(events):
        attrs += attr_bytes(i, period, i == 0) + struct.pack("<QQ", ids_off + 8 * i, 8)
    ids = b"".join(struct.pack("<Q", i + 1) for i in range(len(events)))
    data_off = ids_off + len(ids)

    feats = features(meta, events, dsos, pid)
    order = sorted(feats)
    sec_off = data_off + len(data)
    body_off = sec_off + 16 * len(order)
    table, bodies = b"", b""
    for f in order:
        table += struct.pack("<QQ", body_off + len(bodies), len(feats[f]))
        bodies += feats[f]
    bits = [0] * (FEAT_BITS // 64)
    for f in order:
        bits[f // 64] |= 1 << (f % 64)
    header = MAGIC + struct.pack("<QQ", FILE_HEADER_SIZE, file_attr_size)
    header += struct.pack("<QQQQQQ", attrs_off, len(attrs), data_off, len(data), 0, 0)
    header += struct.pack("<4Q", *bits)
    assert len(header) == FILE_HEADER_SIZE
    return header + attrs + ids + data + table + bodies


def write_perf_data(path, *args, **kwargs):
    blob = perf_data_bytes(*args, **kwargs)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(blob)
    os.replace(tmp, path)
    return len(blob)
