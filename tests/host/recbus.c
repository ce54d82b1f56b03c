/*
 * recbus.c - recording msr_bus for host tests (see recbus.h).
 */
#include <string.h>

#include "tests/host/recbus.h"

static struct recbus_write *recbus_slot(struct recbus *rb, uint32_t msr, bool create)
{
	for (unsigned i = 0; i < rb->nregs; i++)
		if (rb->regs[i].msr == msr)
			return &rb->regs[i];
	if (!create || rb->nregs == RECBUS_MAX_REGS)
		return NULL;
	rb->regs[rb->nregs] = (struct recbus_write){ msr, 0 };
	return &rb->regs[rb->nregs++];
}

static int recbus_read(struct msr_bus *bus, uint32_t msr, uint64_t *value)
{
	struct recbus *rb = (struct recbus *)bus;
	struct recbus_write *r;

	rb->reads++;
	if (rb->refuse && rb->refuse(msr))
		return MSR_BUS_EFAULT;
	r = recbus_slot(rb, msr, false);
	*value = r ? r->value : 0;
	if (msr == rb->corrupt_msr)
		*value ^= rb->corrupt_xor;
	return 0;
}

static int recbus_write(struct msr_bus *bus, uint32_t msr, uint64_t value)
{
	struct recbus *rb = (struct recbus *)bus;
	struct recbus_write *r;

	if (rb->nlog < RECBUS_MAX_LOG)
		rb->log[rb->nlog++] = (struct recbus_write){ msr, value };
	if (rb->refuse && rb->refuse(msr))
		return MSR_BUS_EFAULT;
	r = recbus_slot(rb, msr, true);
	if (r)
		r->value = value;
	return 0;
}

void recbus_init(struct recbus *rb)
{
	memset(rb, 0, sizeof(*rb));
	rb->bus.read = recbus_read;
	rb->bus.write = recbus_write;
}

void recbus_clear_log(struct recbus *rb)
{
	rb->nlog = 0;
}

uint64_t recbus_value(const struct recbus *rb, uint32_t msr)
{
	for (unsigned i = 0; i < rb->nregs; i++)
		if (rb->regs[i].msr == msr)
			return rb->regs[i].value;
	return 0;
}
