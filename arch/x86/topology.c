/*
 * topology.c - APIC ID decomposition, candidate APIC IDs, MADT walk.
 *
 * The SMT rule is the PMU reference's (section 7, perfctr's algorithm; the same
 * in Linux's old detect_ht): threads per core = logical processors per
 * package / cores per package, SMT ID = APIC ID & (next power of two of
 * threads per core - 1). The core and package fields follow Linux's old
 * detect_ht(), which shifts by get_count_order(cores per package) above
 * the SMT field; the PMU reference does not spell that part out.
 */
#include "arch/x86/topology.h"

static const struct lp_ops *lp_ops;

/* Bits needed to number n things: 0 for 1, 1 for 2, 2 for 3 or 4, ... */
static unsigned topo_order(unsigned n)
{
	unsigned bits = 0;

	while ((1u << bits) < n && bits < 31)
		bits++;
	return bits;
}

void topo_shape_from_cpu(const struct cpu_info *ci, struct topo_shape *out)
{
	out->logical_per_package = ci->logical_per_package ? ci->logical_per_package : 1;
	out->cores_per_package = ci->cores_per_package ? ci->cores_per_package : 1;
	out->threads_per_core = (uint8_t)(out->logical_per_package / out->cores_per_package);
	if (out->threads_per_core == 0)
		out->threads_per_core = 1;
}

unsigned topo_smt_bits(const struct topo_shape *s)
{
	return topo_order(s->threads_per_core ? s->threads_per_core : 1);
}

unsigned topo_core_bits(const struct topo_shape *s)
{
	return topo_order(s->cores_per_package ? s->cores_per_package : 1);
}

void topo_decompose(const struct topo_shape *s, uint32_t apic_id, struct topo_id *out)
{
	unsigned smt = topo_smt_bits(s), core = topo_core_bits(s);

	out->smt = apic_id & ((1u << smt) - 1);
	out->core = (apic_id >> smt) & ((1u << core) - 1);
	out->package = (smt + core) >= 32 ? 0 : apic_id >> (smt + core);
}

unsigned topo_candidates(const struct topo_shape *s, uint32_t bsp_apic_id, uint32_t *ids,
			 unsigned max)
{
	unsigned smt = topo_smt_bits(s);
	uint32_t base = bsp_apic_id & ~((UINT32_C(1) << (smt + topo_core_bits(s))) - 1);
	unsigned n = 0;

	if (max == 0)
		return 0;
	ids[n++] = bsp_apic_id;
	for (unsigned c = 0; c < s->cores_per_package; c++)
		for (unsigned t = 0; t < s->threads_per_core; t++) {
			uint32_t id = base | (c << smt) | t;

			if (id != bsp_apic_id && n < max)
				ids[n++] = id;
		}
	return n;
}

#define MADT_HEADER_LEN		44	/* SDT header (36) + local APIC address + flags */
#define MADT_TYPE_LAPIC		0
#define MADT_LAPIC_LEN		8
#define MADT_LAPIC_ENABLED	0x1

static bool topo_has_id(const uint32_t *ids, unsigned n, uint32_t id)
{
	for (unsigned i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

int topo_madt_lapics(const uint8_t *madt, size_t len, uint32_t *ids, unsigned max)
{
	size_t tlen, off = MADT_HEADER_LEN;
	unsigned n = 0;

	if (len < MADT_HEADER_LEN || madt[0] != 'A' || madt[1] != 'P' || madt[2] != 'I' ||
	    madt[3] != 'C')
		return -1;
	tlen = (size_t)madt[4] | (size_t)madt[5] << 8 | (size_t)madt[6] << 16 |
	       (size_t)madt[7] << 24;
	if (tlen < MADT_HEADER_LEN || tlen > len)
		return -1;
	while (off + 2 <= tlen) {
		uint8_t type = madt[off], elen = madt[off + 1];

		if (elen < 2 || off + elen > tlen)
			return -1;
		/* x2APIC entries (type 9) are ignored: NetBurst has no x2APIC mode. */
		if (type == MADT_TYPE_LAPIC && elen >= MADT_LAPIC_LEN &&
		    (madt[off + 4] & MADT_LAPIC_ENABLED) && !topo_has_id(ids, n, madt[off + 3]) &&
		    n < max)
			ids[n++] = madt[off + 3];
		off += elen;
	}
	return (int)n;
}

#define MPC_HEADER_LEN		44
#define MPC_TYPE_PROCESSOR	0
#define MPC_PROCESSOR_LEN	20
#define MPC_OTHER_LEN		8
#define MPC_LAST_BASE_TYPE	4	/* bus, I/O APIC, I/O and local interrupt: 8 bytes */
#define MPC_CPU_ENABLED		0x1

int topo_mp_lapics(const uint8_t *mpc, size_t len, uint32_t *ids, unsigned max)
{
	size_t tlen, off = MPC_HEADER_LEN;
	unsigned count, n = 0;
	uint8_t sum = 0;

	if (len < MPC_HEADER_LEN || mpc[0] != 'P' || mpc[1] != 'C' || mpc[2] != 'M' ||
	    mpc[3] != 'P')
		return -1;
	tlen = (size_t)mpc[4] | (size_t)mpc[5] << 8;
	if (tlen < MPC_HEADER_LEN || tlen > len)
		return -1;
	for (size_t i = 0; i < tlen; i++)
		sum += mpc[i];
	if (sum != 0)
		return -1;
	count = (unsigned)mpc[34] | (unsigned)mpc[35] << 8;
	for (unsigned e = 0; e < count; e++) {
		uint8_t type;
		size_t elen;

		if (off >= tlen)
			return -1;
		type = mpc[off];
		if (type > MPC_LAST_BASE_TYPE)
			return -1;
		elen = type == MPC_TYPE_PROCESSOR ? MPC_PROCESSOR_LEN : MPC_OTHER_LEN;
		if (off + elen > tlen)
			return -1;
		if (type == MPC_TYPE_PROCESSOR && (mpc[off + 3] & MPC_CPU_ENABLED) &&
		    !topo_has_id(ids, n, mpc[off + 1]) && n < max)
			ids[n++] = mpc[off + 1];
		off += elen;
	}
	return (int)n;
}

unsigned topo_add_package_lps(const struct topo_shape *s, uint32_t *ids, unsigned n,
			      unsigned max)
{
	unsigned listed = n;

	for (unsigned i = 0; i < listed; i++) {
		uint32_t pkg[TOPO_MAX_LPS];
		unsigned k = topo_candidates(s, ids[i], pkg, TOPO_MAX_LPS);

		for (unsigned j = 1; j < k; j++)
			if (!topo_has_id(ids, n, pkg[j]) && n < max)
				ids[n++] = pkg[j];
	}
	return n;
}

static const char *const state_names[LP_NSTATES] = {
	[LP_OFFLINE] = "offline",
	[LP_STARTING] = "starting",
	[LP_IDLE] = "idle",
	[LP_RUNNING] = "running",
	[LP_DEAD] = "dead",
};

const char *topo_state_name(enum lp_state st)
{
	return (unsigned)st < LP_NSTATES ? state_names[st] : "?";
}

void topo_set_lp_ops(const struct lp_ops *ops)
{
	lp_ops = ops;
}

const struct lp_ops *topo_lp_ops(void)
{
	return lp_ops;
}
