"""nbproflib - what nbprof's host tools share.

The user tools in tools/ (nbprof, nbprof-decode, selftest-report, qemu.py)
are thin entry scripts that import their main() from here; the scripts in
tools/build/ and tools/dev/ that need shared code import it too
(docs/dev/tools.md).

    frames      the lines `dump` prints: base64 frames, CRC, NBP: lines
    recording   a dump's header, samples and trailer, checked whole
    symbols     kernel and program symbols (which symbols count: once, here)
    outputs     perf-script text, folded stacks, CSV, annotate, perf.data, pprof
    flamegraph  the interactive flame graph (its script: flamegraph.js)
    perfdata    the perf.data writer
    pprof       the pprof (profile.proto) writer
    selftest    the report of `selftest`'s NBS: lines
    link        the serial line to a target (serial port, socket, QEMU)
    upload      sending a user's program in NBU: frames, with resume
    host        nbprof's command line (stat, record, bench, run, shell)
    decode      nbprof-decode's command line
    qemu        the QEMU machine: firmware, options, image cfg (qemu.py's command line)
    bench       the host side of `nbprof bench` (assembly, the table's parser)
"""
