"""recording - a dump's header, samples and trailer, assembled from a frames.Capture.

The field layouts are prof/dump.h's, versions 1 to 5; every count is
checked against what the header and the frames can hold before anything
is sized by it.
"""

import struct
import zlib

from nbproflib.frames import (CHAINS, CONTROL_RE, HEADER, HEADER_FIXED, MAX_BLOB, MAX_CHAIN,
                              MAX_CHAINS, MAX_PAYLOAD, MIN_RECORD, MIN_RECORD_V4, SAMPLES,
                              TRAILER, DecodeError)

MAX_BUILD_ID = 32                # arch/x86/buildid.h BUILDID_MAX


class Reader:
    def __init__(self, data):
        self.d, self.p = data, 0

    def take(self, fmt):
        v = struct.unpack_from(fmt, self.d, self.p)
        self.p += struct.calcsize(fmt)
        return v[0] if len(v) == 1 else v

    def bytes(self, n):
        if self.p + n > len(self.d):
            raise DecodeError("truncated field")
        b = self.d[self.p:self.p + n]
        self.p += n
        return b

    def string(self):
        """A name from the dump, control characters escaped: they reach CSV and the terminal."""
        text = self.bytes(self.take("<B")).decode("utf-8", "replace")
        return CONTROL_RE.sub(lambda m: "\\x%02x" % ord(m.group(0)), text)

    def varint(self):
        v = shift = 0
        while True:
            if self.p >= len(self.d) or shift > 63:
                raise DecodeError("truncated varint")
            b = self.d[self.p]
            self.p += 1
            v |= (b & 0x7F) << shift
            if not b & 0x80:
                return v
            shift += 7

    def done(self):
        return self.p >= len(self.d)


def unzig(z, prev):
    return (prev + ((z >> 1) ^ -(z & 1))) & 0xFFFFFFFFFFFFFFFF


def parse_header(blob):
    r = Reader(blob)
    if r.bytes(6) != b"NBPROF":
        raise DecodeError("header magic missing")
    h = {"version": r.take("<B")}
    # 3: per-LP comms, every sample carries its weight; 4: compact records, chain table;
    # 5: the kernel's build id
    if h["version"] not in (1, 2, 3, 4, 5):
        raise DecodeError("dump format version %d is not supported" % h["version"])
    h["length"] = r.take("<I")
    h["frames"] = r.take("<I")
    h["family"], h["model"], h["stepping"] = r.take("<BBB")
    h["signature"] = r.take("<I")
    for k in ("tsc_hz", "tsc_start", "image_base", "text_start", "text_end"):
        h[k] = r.take("<Q")
    h["symtab_crc"], h["symtab_count"] = r.take("<II")
    h["run_id"], h["samples"] = r.take("<QQ")
    h["events"] = []
    for _ in range(r.take("<B")):
        period = r.take("<Q")
        h["events"].append((r.string(), period))
    h["comm"] = r.string()
    # Version 2 adds the IP width: 32 from the ia32 kernel; version 1 was 64-bit only.
    h["ip_bits"] = r.take("<B") if h["version"] >= 2 else 64
    if h["ip_bits"] not in (32, 64):
        raise DecodeError("header says %d-bit IPs (expected 32 or 64)" % h["ip_bits"])
    h["lp_comm"] = {}
    if h["version"] >= 3:       # each LP's own workload name (a --pair recording)
        for _ in range(r.take("<B")):
            lp = r.take("<B")
            h["lp_comm"][lp] = r.string()
    h["chain_refs"] = False
    if h["version"] >= 4:       # flags: bit 0, every record carries a chain reference
        flags = r.take("<B")
        if flags & ~1:
            raise DecodeError("unknown header flags %02x" % flags)
        h["chain_refs"] = bool(flags & 1)
    h["build_id"] = None
    if h["version"] >= 5:       # the kernel's build id (arch/x86/buildid.h), n = 0: none
        n = r.take("<B")
        if n > MAX_BUILD_ID:
            raise DecodeError("build id of %d bytes (at most %d)" % (n, MAX_BUILD_ID))
        h["build_id"] = r.bytes(n) or None
    if not r.done():
        raise DecodeError("%d bytes after the %s" % (len(blob) - r.p, (
            "build id" if h["version"] >= 5 else "flags" if h["version"] >= 4 else "per-LP comms" if h["version"] >= 3 else
            "IP width" if h["version"] >= 2 else "comm")))
    return h


def sample_comm(h, lp):
    """The workload name of LP lp's samples: its own, else the recording's."""
    return h.get("lp_comm", {}).get(lp, h["comm"])


def parse_trailer(blob):
    r = Reader(blob)
    t = {"frames": r.take("<I"), "samples": r.take("<Q"), "data_crc": r.take("<I"), "stores": []}
    for _ in range(r.take("<B")):
        lp = r.take("<B")
        held, stored, dropped, over, nested = r.take("<QQQQQ")
        t["stores"].append({"lp": lp, "held": held, "stored": stored, "dropped": dropped,
                            "overwritten": over, "nested": nested})
    if not r.done():
        raise DecodeError("%d bytes after the last store" % (len(blob) - r.p))
    return t


def decode_samples(payload, weights=True):
    """(first sample index, [sample dicts]) of one 'S' frame.

    weights: the records carry the events each sample stands for (dump
    version 3); without them a sample's weight is 0 (its event's period).
    """
    r = Reader(payload)
    first = r.varint()
    out = []
    tsc = ip = rsp = 0
    while not r.done():
        lp, event, b = r.take("<BBB")
        s = {"lp": lp, "event": event, "cpl": b & 3}
        nchain = b >> 2
        if nchain > MAX_CHAIN:
            raise DecodeError("call chain longer than %d" % MAX_CHAIN)
        tsc = s["tsc"] = unzig(r.varint(), tsc)
        ip = s["ip"] = unzig(r.varint(), ip)
        s["rflags"] = r.varint()
        rsp = s["rsp"] = unzig(r.varint(), rsp)
        s["weight"] = r.varint() if weights else 0
        last, chain = ip, []
        for _ in range(nchain):
            last = unzig(r.varint(), last)
            chain.append(last)
        s["chain"] = chain
        out.append(s)
    return first, out


def decode_chains(payload):
    """(first entry index, [chains]) of one 'C' frame (dump version 4)."""
    r = Reader(payload)
    first = r.varint()
    out, prev = [], 0
    while not r.done():
        n = r.varint()
        if not 1 <= n <= MAX_CHAIN:
            raise DecodeError("chain table entry of %d addresses (1 to %d)" % (n, MAX_CHAIN))
        chain = [unzig(r.varint(), prev)]
        for _ in range(n - 1):
            chain.append(unzig(r.varint(), chain[-1]))
        prev = chain[0]
        out.append(chain)
    return first, out


def decode_chain_ref(r, ip, table):
    ref = r.varint()
    if ref == 0:
        return []
    if ref == 1:
        n = r.varint()
        if n > MAX_CHAIN:
            raise DecodeError("call chain longer than %d" % MAX_CHAIN)
        last, chain = ip, []
        for _ in range(n):
            last = unzig(r.varint(), last)
            chain.append(last)
        return chain
    if ref - 2 >= len(table):
        raise DecodeError("chain table entry %d of %d" % (ref - 2, len(table)))
    return list(table[ref - 2])


def decode_samples_v4(payload, table, chain_refs):
    """(first sample index, [sample dicts]) of one version-4 'S' frame (prof/dump.h)."""
    r = Reader(payload)
    first = r.varint()
    out = []
    tsc = step = ip = rflags = rsp = weight = 0
    step_at = {}            # the TSC step last seen at an IP hash: the guess
    while not r.done():
        head = r.take("<B")
        s = {"cpl": head & 3, "lp": head >> 2 & 1, "event": head >> 3 & 3}
        if s["event"] == 3:
            s["lp"], s["event"] = r.take("<BB")
        ip = s["ip"] = unzig(r.varint(), ip)
        slot = (ip ^ ip >> 4 ^ ip >> 8) & 15
        step = unzig(r.varint(), step_at.get(slot, step))
        tsc = s["tsc"] = (tsc + step) & 0xFFFFFFFFFFFFFFFF
        if out:             # the frame's first "step" is its first TSC
            step_at[slot] = step
        else:
            step = 0
        if not head & 0x20:
            rflags ^= r.varint()
        if not head & 0x40:
            rsp = unzig(r.varint(), rsp)
        if not head & 0x80:
            weight = r.varint()
        s["rflags"], s["rsp"], s["weight"] = rflags, rsp, weight
        s["chain"] = decode_chain_ref(r, ip, table) if chain_refs else []
        out.append(s)
    return first, out


def spans(nums):
    """Sorted distinct numbers -> [(first, last)] of their runs."""
    out = []
    for n in nums:
        if out and n == out[-1][1] + 1:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return out


def gaps(present, total):
    """[(first, last)] of the numbers 0..total-1 missing from the sorted list present.

    The work is proportional to the frames that arrived, never to total.
    """
    out, nxt = [], 0
    for n in present:
        if n > nxt:
            out.append((nxt, n - 1))
        nxt = n + 1
    if nxt < total:
        out.append((nxt, total - 1))
    return out


def spans_text(sp):
    """[(1, 3), (7, 7)] -> "1-3, 7"."""
    return ", ".join(str(a) if a == b else "%d-%d" % (a, b) for a, b in sp)


def ranges(nums):
    """[1, 2, 3, 7] -> "1-3, 7"."""
    return spans_text(spans(sorted(set(nums))))


def type_name(ftype):
    return {HEADER: "header", CHAINS: "chains", SAMPLES: "samples",
            TRAILER: "trailer"}.get(ftype, "unknown")


def header_bounds(h, header_frames):
    """Why the header's frame and sample counts cannot describe a dump, or None.

    Each 'S' frame holds at least one whole record of at least MIN_RECORD
    bytes and at most MAX_PAYLOAD bytes; the trailer holds at most MAX_BLOB
    bytes, at least one per frame. Counts outside these bounds are
    corruption (or a hostile dump), never a reason to allocate.
    """
    total, samples = h["frames"], h["samples"]
    least = header_frames + (1 if samples else 0) + 1
    most = header_frames + samples + MAX_BLOB + (MAX_CHAINS if h["version"] >= 4 else 0)
    if not least <= total <= most:
        return ("%d frames announced, but %d header frames and %d samples need %d to %d"
                % (total, header_frames, samples, least, most))
    per_frame = MAX_PAYLOAD // (MIN_RECORD_V4 if h["version"] >= 4 else MIN_RECORD)
    if samples > (total - header_frames - 1) * per_frame:
        return ("%d frames cannot hold %d samples (at most %d per frame)"
                % (total, samples, per_frame))
    return None


class Recording:
    """Header, samples and trailer assembled from a Capture.

    `whole` is true only when the dump is provably complete: a good header,
    every frame it announces present and in order (header, samples,
    trailer), the sample indices contiguous, and the trailer's frame count,
    sample count and CRC of all sample data equal to what arrived.
    `problems` says why not; `notes` lists damage that did not matter (a
    corrupt line whose frame arrived intact in another copy).
    """

    def __init__(self, cap):
        self.problems, self.notes = [], []
        self.header = self.trailer = None
        self.samples = []
        self.missing = []               # [(first, last)] frame spans
        damaged = []
        for src, lineno, why, seq in cap.corrupt:
            hint = " (probably frame %d)" % seq if seq is not None else ""
            damaged.append("%s:%d: corrupt frame%s: %s" % (src, lineno, hint, why))
        for src, lineno, seq in cap.conflicts:
            self.problems.append("%s:%d: frame %d differs from an earlier capture: "
                                 "captures of different recordings?" % (src, lineno, seq))
        for src, lineno, why in getattr(cap, "bad_programs", []):
            self.problems.append("%s:%d: NBP: program line not used (%s): samples in that "
                                 "program are not named; run dump again" % (src, lineno, why))
        frames = cap.frames
        self.header = self._header(frames)
        if self.header is not None:
            self._assemble(frames, self.header["frames"])
        self.whole = self.header is not None and not self.problems and not self.missing
        if self.whole:
            self.notes = damaged
        else:
            self.problems = damaged + self.problems

    def _header(self, frames):
        if 0 not in frames or frames[0][0] != HEADER:
            self.problems.append("no dump header (frame 0) found")
            return None
        first = frames[0][1]
        if len(first) < 11 or first[:6] != b"NBPROF":
            self.problems.append("bad dump header: magic or length missing")
            return None
        (want,) = struct.unpack_from("<I", first, 7)
        if not HEADER_FIXED <= want <= MAX_BLOB:
            self.problems.append("bad dump header: %d bytes long (the format allows %d to %d)"
                                 % (want, HEADER_FIXED, MAX_BLOB))
            return None
        blob, n = b"", 0
        while len(blob) < want and n in frames and frames[n][0] == HEADER:
            blob += frames[n][1]
            n += 1
        if len(blob) < want:
            self.problems.append("dump header incomplete (frame %d missing); send it again with: "
                                 "dump --from %d" % (n, n))
            return None
        try:
            h = parse_header(blob[:want])
        except (DecodeError, struct.error) as e:
            self.problems.append("bad dump header: %s" % e)
            return None
        if len(blob) != want:
            self.problems.append("bad dump header: its frames hold %d bytes, it says %d"
                                 % (len(blob), want))
            return None
        why = header_bounds(h, n)
        if why:
            self.problems.append("bad dump header: %s" % why)
            return None
        h["header_frames"] = n
        return h

    def _assemble(self, frames, total):
        hf = self.header["header_frames"]
        present = sorted(n for n in frames if n < total)
        extra = sorted(n for n in frames if n >= total)
        if extra:
            self.problems.append("frames beyond the announced %d: %s" % (total, ranges(extra)))
        self.missing = gaps(present, total)
        if self.missing:
            self.problems.append("missing frames: %s; send them again with: dump --from %d"
                                 % (spans_text(self.missing), self.missing[0][0]))
        tail = self._samples(frames, [n for n in present if n >= hf])
        self._trailer(frames, present, total, tail)

    def _samples(self, frames, seqs):
        """Decode the 'S' frames; returns the trailer's frames (seqs after the samples)."""
        self.data_crc = 0
        self.data_gap = False
        self.chain_table = []
        index, prev = 0, None
        for k, n in enumerate(seqs):
            ftype, payload = frames[n]
            if ftype == TRAILER:
                return seqs[k:]
            if ftype == CHAINS and self.header["version"] >= 4 and not self.samples:
                self._chain_frame(n, payload)
                prev = n
                continue
            if ftype != SAMPLES:
                self.problems.append("frame %d: a %s frame among the samples"
                                     % (n, type_name(ftype)))
                continue
            if prev is not None and n != prev + 1:
                self.data_gap, index = True, None
            prev = n
            self.data_crc = zlib.crc32(payload, self.data_crc)
            try:
                if self.header["version"] >= 4:
                    first, got = decode_samples_v4(payload, self.chain_table,
                                                   self.header["chain_refs"])
                else:
                    first, got = decode_samples(payload, self.header["version"] >= 3)
            except (DecodeError, struct.error) as e:
                self.problems.append("frame %d: %s" % (n, e))
                index = None
                continue
            if index is not None and first != index:
                self.problems.append("frame %d starts at sample %d, expected %d"
                                     % (n, first, index))
            index = first + len(got)
            for i, s in enumerate(got):
                s["index"] = first + i
            self.samples.extend(got)
        return []

    def _chain_frame(self, n, payload):
        """One 'C' frame: its entries extend the chain table (they must follow on)."""
        self.data_crc = zlib.crc32(payload, self.data_crc)
        try:
            first, chains = decode_chains(payload)
        except (DecodeError, struct.error) as e:
            self.problems.append("frame %d: %s" % (n, e))
            return
        if first != len(self.chain_table):
            self.problems.append("frame %d starts at chain %d, expected %d"
                                 % (n, first, len(self.chain_table)))
            return
        self.chain_table.extend(chains)

    def _no_trailer(self, frames, total, why):
        if frames.get(total - 1) is None:
            return          # listed with the missing frames, with the resend command
        self.problems.append("no trailer: %s; the sample count and data CRC cannot be checked; "
                             "send the end again with: dump --from %d" % (why, total - 1))

    def _trailer(self, frames, present, total, tail):
        if not tail:
            last = frames.get(total - 1)
            self._no_trailer(frames, total, "frame %d, the last, is a %s frame" % (
                total - 1, type_name(last[0])) if last else "frame %d missing" % (total - 1))
            return
        for n in tail:
            if frames[n][0] != TRAILER:
                self.problems.append("frame %d: a %s frame after the trailer began"
                                     % (n, type_name(frames[n][0])))
        if tail[-1] != total - 1 or frames[tail[-1]][0] != TRAILER:
            self._no_trailer(frames, total, "the trailer does not end at frame %d" % (total - 1))
            return
        if tail != list(range(tail[0], total)):
            return          # a gap in the trailer: listed with the missing frames
        blob = b"".join(frames[n][1] for n in tail)
        try:
            self.trailer = t = parse_trailer(blob)
        except (DecodeError, struct.error) as e:
            self.problems.append("bad trailer: %s" % e)
            return
        h = self.header
        if t["frames"] != total:
            self.problems.append("trailer says %d frames, header says %d" % (t["frames"], total))
        if t["samples"] != h["samples"]:
            self.problems.append("trailer says %d samples, header says %d"
                                 % (t["samples"], h["samples"]))
        held = sum(st["held"] for st in t["stores"])
        if held != t["samples"]:
            self.problems.append("trailer's stores hold %d samples, it says %d"
                                 % (held, t["samples"]))
        if self.missing or self.data_gap:
            return
        if t["samples"] != len(self.samples):
            self.problems.append("trailer says %d samples, frames hold %d"
                                 % (t["samples"], len(self.samples)))
        if t["data_crc"] != self.data_crc:
            self.problems.append("sample data CRC differs from the trailer's")

    def event(self, i):
        evs = self.header["events"] if self.header else []
        return evs[i] if i < len(evs) else ("event%d" % i, 0)

