/*
 * fake_platform.c - shell/platform.h for host tests (see fake_platform.h).
 */
#include <stdio.h>
#include <string.h>

#include "tests/host/fake_platform.h"

struct fake_platform fake_plat;

void fake_platform_reset(void)
{
	memset(&fake_plat, 0, sizeof(fake_plat));
}

static struct fake_msr *fake_msr_find(uint32_t msr)
{
	for (unsigned i = 0; i < fake_plat.nmsrs; i++)
		if (fake_plat.msrs[i].msr == msr)
			return &fake_plat.msrs[i];
	return NULL;
}

void fake_msr_set(uint32_t msr, uint64_t v)
{
	struct fake_msr *m = fake_msr_find(msr);

	if (m == NULL && fake_plat.nmsrs < FAKE_NMSRS) {
		m = &fake_plat.msrs[fake_plat.nmsrs++];
		m->msr = msr;
	}
	if (m != NULL)
		m->value = v;
}

uint64_t fake_msr_get(uint32_t msr, uint64_t missing)
{
	struct fake_msr *m = fake_msr_find(msr);

	return m != NULL ? m->value : missing;
}

int plat_msr_read(uint32_t msr, uint64_t *v)
{
	struct fake_msr *m = fake_msr_find(msr);

	fake_plat.nreads++;
	if (m == NULL)
		return MSR_BUS_EFAULT;
	*v = m->value;
	return 0;
}

int plat_run_on_lp(unsigned lp, void (*fn)(void *arg), void *arg, const char **why)
{
	if (lp > 1)
		return *why = "there are LP0 and LP1 (its Hyper-Threading sibling) only", -1;
	if (lp == 1 && fake_plat.lp1_refusal)
		return *why = fake_plat.lp1_refusal, -1;
	fake_plat.lp_calls[lp]++;
	fake_plat.lp = lp;
	fn(arg);
	fake_plat.lp = 0;
	return 0;
}

const char *plat_msr_backend(uint32_t msr)
{
	return fake_plat.msr_backend;
}

const char *plat_event_source(unsigned ev)
{
	(void)ev;
	return fake_plat.event_source;
}

int plat_msr_trace(bool on)
{
	if (fake_plat.no_pmu)
		return -1;
	fake_plat.trace = on;
	return 0;
}

int plat_msr_write(uint32_t msr, uint64_t v)
{
	struct fake_msr *m = fake_msr_find(msr);

	fake_plat.nwrites++;
	if (m == NULL)
		return MSR_BUS_EFAULT;
	m->value = v;
	fake_plat.last_write_msr = msr;
	fake_plat.last_write_value = v;
	return 0;
}

void plat_pmu_backend(char *buf, size_t n)
{
	snprintf(buf, n, "model (the host's fake platform)");
}

void plat_cpu_info(struct cpu_info *out)
{
	*out = fake_plat.cpu;
}

void plat_mem_info(struct mem_info *out)
{
	*out = fake_plat.mem;
}

bool plat_mem_region(unsigned i, struct mem_region *out)
{
	if (i >= fake_plat.nregions)
		return false;
	*out = fake_plat.regions[i];
	return true;
}

int plat_fault(enum plat_fault_kind kind)
{
	fake_plat.nfaults++;
	fake_plat.last_fault = kind;
	return fake_plat.fault_ret;
}

int plat_fault_unguarded(enum plat_fault_kind kind)
{
	fake_plat.nunguarded++;
	return plat_fault(kind);
}

void plat_reboot(void)
{
	fake_plat.nreboots++;
}

void plat_poweroff(void)
{
	fake_plat.npoweroffs++;
}

bool plat_interrupted(void)
{
	bool was = fake_plat.interrupted;

	fake_plat.interrupted = false;
	return was;
}

unsigned plat_qr_room(void)
{
	return fake_plat.qr_room;
}

void plat_qr_show(const struct qr *q, unsigned quiet, const char *caption)
{
	fake_plat.qr_shown++;
	fake_plat.qr_version = q->version;
	fake_plat.qr_quiet = quiet;
	snprintf(fake_plat.qr_caption, sizeof(fake_plat.qr_caption), "%s", caption);
}

void plat_qr_end(void)
{
	fake_plat.qr_ends++;
}
