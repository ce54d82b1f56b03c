#!/usr/bin/python3
"""qemu.py - boot an nbprof disk image in QEMU (TCG): `make run` runs it
(nbproflib/qemu.py; --help).
"""

import sys

from nbproflib.qemu import main

if __name__ == "__main__":
    sys.exit(main())
