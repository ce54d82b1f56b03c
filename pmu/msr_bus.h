/*
 * msr_bus.h - the only way pmu/ reaches model-specific registers.
 *
 * Three implementations sit behind this seam: the real hardware
 * (arch/x86/msr.c, RDMSR/WRMSR with #GP recovery), the software model of the
 * NetBurst PMU (pmu/model/p4_model.c), and recording buses in the host tests
 * that log every access for exact-sequence checks.
 *
 * Both calls return 0 on success and MSR_BUS_EFAULT when the access would
 * raise #GP (an MSR that does not exist on this CPU, or a reserved-bit
 * write the hardware refuses). A failed read leaves *value unchanged.
 */
#ifndef NBPROF_PMU_MSR_BUS_H
#define NBPROF_PMU_MSR_BUS_H

#include <stdint.h>

#define MSR_BUS_EFAULT (-14)

struct msr_bus {
	int (*read)(struct msr_bus *bus, uint32_t msr, uint64_t *value);
	int (*write)(struct msr_bus *bus, uint32_t msr, uint64_t value);
};

static inline __attribute__((always_inline)) int msr_bus_read(struct msr_bus *bus, uint32_t msr, uint64_t *value)
{
	return bus->read(bus, msr, value);
}

static inline __attribute__((always_inline)) int msr_bus_write(struct msr_bus *bus, uint32_t msr, uint64_t value)
{
	return bus->write(bus, msr, value);
}

#endif
