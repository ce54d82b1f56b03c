"""counts.py - the passed/failed line each pytest stage leaves for `make check`'s summary.

With NBPROF_COUNTS set, a stage's conftest calls write_counts from its
pytest_terminal_summary; tools/dev/check-summary reads the files.
"""

import os


def write_counts(terminalreporter):
    """Write "PASSED FAILED" (errors count as failures) to $NBPROF_COUNTS, if set."""
    path = os.environ.get("NBPROF_COUNTS")
    if not path:
        return
    st = terminalreporter.stats
    passed = len(st.get("passed", []))
    failed = len(st.get("failed", [])) + len(st.get("error", []))
    with open(path, "w") as f:
        f.write("%d %d\n" % (passed, failed))
