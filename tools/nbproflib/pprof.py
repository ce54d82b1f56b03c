"""pprof - write decoded nbprof samples as a pprof profile.

Used by tools/nbprof-decode (--pprof FILE). The file is a gzipped
profile.proto message (github.com/google/pprof, proto/profile.proto), the
format `pprof`, `go tool pprof` and the viewers built on it read, written
by the small protobuf encoder below (varints and length-delimited fields,
protobuf's wire format), so nothing outside the standard library is needed.

What goes in:
  - sample_type: "samples" (count), then one column per recorded event,
    named after it, whose unit is "events": a sample adds 1 to "samples"
    and its weight (the events it stands for) to its own event's column;
  - one Location per distinct frame address with its Function: the sampled
    IP, then each caller's call site (return address - 1, as pprof looks
    callers up), so a call that is the last instruction of its function is
    named in that function; an address no symbol names gets a function
    named "[nbprof]" like the folded stacks' unnamed frames;
  - labels "lp" (the logical processor) and "cpl" on each sample;
  - one Mapping for the kernel (and none for addresses outside it);
  - period_type/period of the first event, time_nanos 0 (the dump carries
    TSC ticks, not wall time), duration_nanos of the recording.
"""

import gzip

# profile.proto field numbers
PROFILE_SAMPLE_TYPE, PROFILE_SAMPLE, PROFILE_MAPPING, PROFILE_LOCATION = 1, 2, 3, 4
PROFILE_FUNCTION, PROFILE_STRING_TABLE = 5, 6
PROFILE_DURATION, PROFILE_PERIOD_TYPE, PROFILE_PERIOD = 10, 11, 12
VALUETYPE_TYPE, VALUETYPE_UNIT = 1, 2
SAMPLE_LOCATION_ID, SAMPLE_VALUE, SAMPLE_LABEL = 1, 2, 3
LABEL_KEY, LABEL_STR, LABEL_NUM = 1, 2, 3
MAPPING_ID, MAPPING_START, MAPPING_LIMIT, MAPPING_FILENAME = 1, 2, 3, 5
MAPPING_HAS_FUNCTIONS = 7
LOCATION_ID, LOCATION_MAPPING, LOCATION_ADDRESS, LOCATION_LINE = 1, 2, 3, 4
LINE_FUNCTION = 1
FUNCTION_ID, FUNCTION_NAME, FUNCTION_SYSTEM_NAME = 1, 2, 3

WIRE_VARINT, WIRE_BYTES = 0, 2
U64 = (1 << 64) - 1


def varint(n):
    n &= U64                      # int64 fields: two's complement, as protobuf does
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_varint(num, n):
    return varint(num << 3 | WIRE_VARINT) + varint(n)


def field_bytes(num, b):
    return varint(num << 3 | WIRE_BYTES) + varint(len(b)) + b


def packed(num, values):
    return field_bytes(num, b"".join(varint(v) for v in values)) if values else b""


class Strings:
    def __init__(self):
        self.table, self.index = [""], {"": 0}

    def __call__(self, s):
        if s not in self.index:
            self.index[s] = len(self.table)
            self.table.append(s)
        return self.index[s]


def value_type(strings, type_, unit):
    return field_varint(VALUETYPE_TYPE, strings(type_)) + field_varint(VALUETYPE_UNIT,
                                                                      strings(unit))


def profile_bytes(samples, events, lookup, mapping=None, duration_ns=0, unnamed="[nbprof]"):
    """The profile.proto message (not yet gzipped).

    samples: dicts with lp, event, cpl, ip, chain (return addresses,
    innermost first) and optionally weight; events: [(name, period)];
    lookup(addr) -> (name or None, offset); mapping: (start, limit, file
    name) of the kernel image, or None.
    """
    strings = Strings()
    out = [field_bytes(PROFILE_SAMPLE_TYPE, value_type(strings, "samples", "count"))]
    for name, _ in events:
        out.append(field_bytes(PROFILE_SAMPLE_TYPE, value_type(strings, name, "events")))
    locations, functions = {}, {}
    loc_msgs, fn_msgs = [], []

    def location(addr):
        if addr in locations:
            return locations[addr]
        name = lookup(addr)[0] or unnamed
        if name not in functions:
            functions[name] = len(functions) + 1
            fn_msgs.append(field_bytes(PROFILE_FUNCTION, field_varint(FUNCTION_ID, functions[name])
                                       + field_varint(FUNCTION_NAME, strings(name))
                                       + field_varint(FUNCTION_SYSTEM_NAME, strings(name))))
        lid = locations[addr] = len(locations) + 1
        msg = field_varint(LOCATION_ID, lid) + field_varint(LOCATION_ADDRESS, addr)
        if mapping and mapping[0] <= addr < mapping[1]:
            msg += field_varint(LOCATION_MAPPING, 1)
        msg += field_bytes(LOCATION_LINE, field_varint(LINE_FUNCTION, functions[name]))
        loc_msgs.append(field_bytes(PROFILE_LOCATION, msg))
        return lid

    for s in samples:
        ids = [location(s["ip"])] + [location(a - 1) for a in s["chain"]]
        values = [1] + [0] * len(events)
        values[1 + s["event"]] = s.get("weight") or events[s["event"]][1] or 1
        msg = packed(SAMPLE_LOCATION_ID, ids) + packed(SAMPLE_VALUE, values)
        for key, num in (("lp", s["lp"]), ("cpl", s.get("cpl", 0))):
            msg += field_bytes(SAMPLE_LABEL, field_varint(LABEL_KEY, strings(key))
                               + field_varint(LABEL_NUM, num))
        out.append(field_bytes(PROFILE_SAMPLE, msg))
    if mapping:
        out.append(field_bytes(PROFILE_MAPPING, field_varint(MAPPING_ID, 1)
                               + field_varint(MAPPING_START, mapping[0])
                               + field_varint(MAPPING_LIMIT, mapping[1])
                               + field_varint(MAPPING_FILENAME, strings(mapping[2]))
                               + field_varint(MAPPING_HAS_FUNCTIONS, 1)))
    out += loc_msgs + fn_msgs
    if events:
        out.append(field_bytes(PROFILE_PERIOD_TYPE, value_type(strings, events[0][0], "events")))
        out.append(field_varint(PROFILE_PERIOD, events[0][1]))
    out.append(field_varint(PROFILE_DURATION, duration_ns))
    out += [field_bytes(PROFILE_STRING_TABLE, s.encode()) for s in strings.table]
    return b"".join(out)


def pprof_gzip(*args, **kwargs):
    # mtime 0: the same recording gives the same file
    return gzip.compress(profile_bytes(*args, **kwargs), mtime=0)
