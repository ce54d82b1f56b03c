"""test_sdk_printf.py - the SDK's nb_snprintf (sdk/nbprintf.c) against the host's snprintf.

sdk/nbprintf.c is compiled here for the host (32- and 64-bit) with a table of
formats and values; for each, nb_snprintf's text and return value must be what
the C library's snprintf gives (C11 7.21.6.1 is the rule both follow), also
when the buffer is too small. nb_printf shares the formatter and writes through
the gate instead (tests/qemu/test_programs.py runs it).
"""

import os
import subprocess

import pytest

from conftest import REPO

CASES = r"""
	T("%d %i %d %u", 0, -1, -2147483647 - 1, 4294967295u);
	T("%ld %lu %lld %llu", -1234567890L, 4000000000UL, -9223372036854775807LL - 1,
	  18446744073709551615ULL);
	T("%x %X %#x %#X %#o %#o %#x %o", 0xbeefu, 0xbeefu, 255u, 255u, 8u, 0u, 0u, 8u);
	T("%08x %llx %-#10x| %#010x", 0x2au, 0x123456789abcdefULL, 42u, 42u);
	T("[%5d] [%-5d] [%05d] [%+d] [% d] [%.3d] [%*d] [%-*d] [%*d]", 42, 42, -42, 7, 7, 5,
	  6, 99, 4, 1, -4, 2);
	T("[%.0d] [%5.0d] [%.0x] [%+.3d] [%08.3d] [%-+6d]", 0, 0, 0u, 5, 7, 3);
	T("%hhd %hd %hhu %hu %zu %zd %jd %td", 300, 70000, 511, 70000, (size_t)12345,
	  (ptrdiff_t)-5, (intmax_t)-7, (ptrdiff_t)9);
	T("%c%c [%3c] [%-3c] %%", 'a', 'Z', 'x', 'y');
	T("[%s] [%8s] [%-8s] [%.2s] [%.*s] [%s]", "word", "ab", "ab", "abcdef", 3, "abcdef", "");
	T("%p", (void *)0x1234);
	T("no conversion at all");
	T("%5%|%-5d|", 3);
"""

HARNESS = r"""
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "nbprof.h"

static int fails;

#define T(...) do {								\
	char want[256], got[256], small[8], wsmall[8];				\
	int wn = snprintf(want, sizeof(want), __VA_ARGS__);			\
	int gn = nb_snprintf(got, sizeof(got), __VA_ARGS__);			\
	int sn = nb_snprintf(small, sizeof(small), __VA_ARGS__);		\
	snprintf(wsmall, sizeof(wsmall), __VA_ARGS__);				\
	if (wn != gn || strcmp(want, got) || sn != wn || strcmp(small, wsmall)) {	\
		printf("FAIL %s: want %d [%s], got %d [%s] / %d [%s]\n", #__VA_ARGS__,	\
		       wn, want, gn, got, sn, small);				\
		fails++;							\
	} else {								\
		printf("ok [%s]\n", got);					\
	}									\
} while (0)

int main(int argc, char **argv)
{
%s
	return fails != 0;
}
"""


@pytest.mark.parametrize("bits", [64, 32])
def test_nb_snprintf_is_snprintf(tmp_path, bits):
    src = tmp_path / "harness.c"
    src.write_text(HARNESS.replace("%s\n\treturn", CASES + "\treturn"))
    exe = str(tmp_path / "harness")
    cc = subprocess.run(["gcc", "-m%d" % bits, "-O1", "-Wno-format", "-I",
                         os.path.join(REPO, "sdk"), str(src),
                         os.path.join(REPO, "sdk", "nbprintf.c"), "-o", exe],
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                        universal_newlines=True)
    if cc.returncode and bits == 32 and "cannot find" in cc.stdout:
        pytest.skip("no 32-bit C library on the host: %s" % cc.stdout.splitlines()[0])
    assert cc.returncode == 0, cc.stdout
    try:
        run = subprocess.run([exe], stdout=subprocess.PIPE, universal_newlines=True)
    except OSError as e:        # a host kernel without 32-bit binaries
        pytest.skip("the host cannot run a %d-bit program: %s" % (bits, e))
    assert run.returncode == 0, run.stdout
    assert run.stdout.count("ok [") == CASES.count("T(")
