/*
 * recbus.h - a recording struct msr_bus for exact write-sequence checks.
 *
 * Stores every written value (reads return the last write, 0 if none),
 * logs every write in order, can refuse MSRs (as #GP) and can make one
 * MSR read back a different value than written.
 */
#ifndef NBPROF_TESTS_RECBUS_H
#define NBPROF_TESTS_RECBUS_H

#include <stdbool.h>
#include <stdint.h>

#include "pmu/msr_bus.h"

#define RECBUS_MAX_LOG	256
#define RECBUS_MAX_REGS	128

struct recbus_write {
	uint32_t msr;
	uint64_t value;
};

struct recbus {
	struct msr_bus bus;
	unsigned nlog;
	struct recbus_write log[RECBUS_MAX_LOG];
	unsigned nregs;
	struct recbus_write regs[RECBUS_MAX_REGS];
	bool (*refuse)(uint32_t msr);		/* true: #GP */
	uint32_t corrupt_msr;			/* reads of it return value ^ corrupt_xor */
	uint64_t corrupt_xor;
	unsigned reads;
};

void recbus_init(struct recbus *rb);
void recbus_clear_log(struct recbus *rb);
/* The value stored for msr (0 when never written). */
uint64_t recbus_value(const struct recbus *rb, uint32_t msr);

#endif
