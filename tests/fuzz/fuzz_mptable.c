/*
 * fuzz_mptable.c - the MP configuration table (MultiProcessor
 * Specification 1.4, 4.2) as arch/x86/topology.c topo_mp_lapics reads it
 * when there is no ACPI MADT (the seeds: the tables SeaBIOS builds under
 * QEMU, dumped by tests/fuzz/firmware_tables.py).
 *
 * When the input's last byte is odd the checksum is made right first, so
 * the fuzzer reaches the entries. Contract checked (topology.h): the
 * walk reads nothing past the table (a heap block of exactly its length)
 * nor past the length the table gives; -1, or at most max processors, no
 * APIC ID twice; a table whose bytes do not sum to 0 is refused.
 */
#include "arch/x86/topology.h"
#include "tests/fuzz/fuzz.h"

#define MAX 4

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *t = malloc(size ? size : 1);
	uint32_t ids[MAX];
	size_t tlen;
	uint8_t s = 0;
	int n;

	memcpy(t, data, size);
	tlen = size >= 6 ? ((size_t)t[4] | (size_t)t[5] << 8) : 0;
	if (size >= 8 && tlen <= size && tlen > 7 && (data[size - 1] & 1)) {
		t[7] = 0;
		for (size_t i = 0; i < tlen; i++)
			s = (uint8_t)(s + t[i]);
		t[7] = (uint8_t)-s;
	}
	n = topo_mp_lapics(t, size, ids, MAX);
	fuzz_check(n >= -1 && n <= MAX);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			fuzz_check(ids[i] != ids[j]);
	if (n >= 0) {
		s = 0;
		for (size_t i = 0; i < tlen; i++)
			s = (uint8_t)(s + t[i]);
		fuzz_check(s == 0 && tlen <= size);
	}
	free(t);
	return 0;
}
