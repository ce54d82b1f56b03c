"""nbproflib - what nbprof's host tools share.

The entry scripts in tools/ (nbprof, nbprof-decode, selftest-report,
qemu.py) and the build and test runners in tools/build/ and tools/dev/ are
thin: they import these modules (docs/dev/tools.md).

    frames      the lines `dump` prints: base64 frames, CRC, NBP: lines
    recording   a dump's header, samples and trailer, checked whole
    symbols     kernel and program symbols (which symbols count: once, here)
    outputs     perf-script text, folded stacks, CSV, annotate, perf.data, pprof
    flamegraph  the interactive flame graph (its script: flamegraph.js)
    perfdata    the perf.data writer
    pprof       the pprof (profile.proto) writer
    selftest    the report of `selftest`'s NBS: lines
    link        the serial line to a target (serial port, socket, QEMU)
    decode      nbprof-decode's command line
"""
