/*
 * p4_events.h - every NetBurst event as data (PMU reference section 4).
 *
 * An event is counted by writing its event select (ESCR[30:25]) and event
 * mask (ESCR[24:9]) into one of its ESCRs - escrs[0] on the ESCR0 side
 * (counters 0,1 / 4,5 / 8,9 / 12,13,16) or escrs[1] on the ESCR1 side
 * (2,3 / 6,7 / 10,11 / 14,15,17) - and pointing a CCCR at that ESCR with
 * escr_select (CCCR[15:13]). Mask bit k of an event is ESCR bit 9 + k; the
 * per-event enums below give k by name, P4_EVMASK(k) the mask value.
 *
 * Default masks (used when a spec names no mask bit): libpfm4 marks one
 * default bit only on single-bit events (NETBURST_FL_DFL) and rejects the
 * rest; we keep its choice where it has one and otherwise take
 *   - all documented bits for non-retirement events (the whole population),
 *   - the non-bogus bits for at-retirement events (what the SDM's own
 *     examples count: Example 18-2 instr_retired NBOGUSNTAG|NBOGUSTAG),
 *   - per-event exceptions written in the row: IOQ_* request-type field
 *     00001b (SDM default), FSB_data_activity DRDY_DRV|DRDY_OWN (Linux
 *     bus-cycles; the OWN/OTHER bits exclude each other), machine_clear
 *     CLEAR, and BSQ_allocation/BSQ_active_entries none (encoded fields:
 *     libpfm4 "must specify a mask for each sub-group").
 */
#ifndef NBPROF_PMU_P4_EVENTS_H
#define NBPROF_PMU_P4_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "pmu/p4_tables.h"

#define P4_NMASK_BITS		16
#define P4_EVMASK(k)		((uint16_t)(1u << (k)))

enum p4_event {
	P4_EV_TC_DELIVER_MODE,
	P4_EV_BPU_FETCH_REQUEST,
	P4_EV_ITLB_REFERENCE,
	P4_EV_MEMORY_CANCEL,
	P4_EV_MEMORY_COMPLETE,
	P4_EV_LOAD_PORT_REPLAY,
	P4_EV_STORE_PORT_REPLAY,
	P4_EV_MOB_LOAD_REPLAY,
	P4_EV_PAGE_WALK_TYPE,
	P4_EV_BSQ_CACHE_REFERENCE,
	P4_EV_IOQ_ALLOCATION,
	P4_EV_IOQ_ACTIVE_ENTRIES,
	P4_EV_FSB_DATA_ACTIVITY,
	P4_EV_BSQ_ALLOCATION,
	P4_EV_BSQ_ACTIVE_ENTRIES,
	P4_EV_SSE_INPUT_ASSIST,
	P4_EV_PACKED_SP_UOP,
	P4_EV_PACKED_DP_UOP,
	P4_EV_SCALAR_SP_UOP,
	P4_EV_SCALAR_DP_UOP,
	P4_EV_64BIT_MMX_UOP,
	P4_EV_128BIT_MMX_UOP,
	P4_EV_X87_FP_UOP,
	P4_EV_X87_SIMD_MOVES_UOP,
	P4_EV_TC_MISC,
	P4_EV_GLOBAL_POWER_EVENTS,
	P4_EV_TC_MS_XFER,
	P4_EV_UOP_QUEUE_WRITES,
	P4_EV_RETIRED_MISPRED_BRANCH_TYPE,
	P4_EV_RETIRED_BRANCH_TYPE,
	P4_EV_RESOURCE_STALL,
	P4_EV_WC_BUFFER,
	P4_EV_B2B_CYCLES,
	P4_EV_BNR,
	P4_EV_SNOOP,
	P4_EV_RESPONSE,
	P4_EV_FRONT_END_EVENT,
	P4_EV_EXECUTION_EVENT,
	P4_EV_REPLAY_EVENT,
	P4_EV_INSTR_RETIRED,
	P4_EV_UOPS_RETIRED,
	P4_EV_UOP_TYPE,
	P4_EV_BRANCH_RETIRED,
	P4_EV_MISPRED_BRANCH_RETIRED,
	P4_EV_X87_ASSIST,
	P4_EV_MACHINE_CLEAR,
	P4_EV_INSTR_COMPLETED,
	P4_NEVENT
};

/* Event-mask bit numbers k (ESCR bit 9 + k), per event. */
enum { P4_TC_DELIVER_MODE_DD = 0, P4_TC_DELIVER_MODE_DB = 1, P4_TC_DELIVER_MODE_DI = 2,
	P4_TC_DELIVER_MODE_BD = 3, P4_TC_DELIVER_MODE_BB = 4, P4_TC_DELIVER_MODE_BI = 5,
	P4_TC_DELIVER_MODE_ID = 6, P4_TC_DELIVER_MODE_IB = 7 };
enum { P4_BPU_FETCH_REQUEST_TCMISS = 0 };
enum { P4_ITLB_REFERENCE_HIT = 0, P4_ITLB_REFERENCE_MISS = 1,
	P4_ITLB_REFERENCE_HIT_UC = 2 };
enum { P4_MEMORY_CANCEL_ST_RB_FULL = 2, P4_MEMORY_CANCEL_64K_CONF = 3 };
enum { P4_MEMORY_COMPLETE_LSC = 0, P4_MEMORY_COMPLETE_SSC = 1 };
enum { P4_LOAD_PORT_REPLAY_SPLIT_LD = 1 };
enum { P4_STORE_PORT_REPLAY_SPLIT_ST = 1 };
enum { P4_MOB_LOAD_REPLAY_NO_STA = 1, P4_MOB_LOAD_REPLAY_NO_STD = 3,
	P4_MOB_LOAD_REPLAY_PARTIAL_DATA = 4, P4_MOB_LOAD_REPLAY_UNALGN_ADDR = 5 };
enum { P4_PAGE_WALK_TYPE_DTMISS = 0, P4_PAGE_WALK_TYPE_ITMISS = 1 };
enum { P4_BSQ_CACHE_REFERENCE_RD_2NDL_HITS = 0, P4_BSQ_CACHE_REFERENCE_RD_2NDL_HITE = 1,
	P4_BSQ_CACHE_REFERENCE_RD_2NDL_HITM = 2, P4_BSQ_CACHE_REFERENCE_RD_3RDL_HITS = 3,
	P4_BSQ_CACHE_REFERENCE_RD_3RDL_HITE = 4, P4_BSQ_CACHE_REFERENCE_RD_3RDL_HITM = 5,
	P4_BSQ_CACHE_REFERENCE_RD_2NDL_MISS = 8, P4_BSQ_CACHE_REFERENCE_RD_3RDL_MISS = 9,
	P4_BSQ_CACHE_REFERENCE_WR_2NDL_MISS = 10 };
enum { P4_IOQ_ALLOCATION_TYPE_BIT0 = 0, P4_IOQ_ALLOCATION_TYPE_BIT1 = 1,
	P4_IOQ_ALLOCATION_TYPE_BIT2 = 2, P4_IOQ_ALLOCATION_TYPE_BIT3 = 3,
	P4_IOQ_ALLOCATION_TYPE_BIT4 = 4, P4_IOQ_ALLOCATION_ALL_READ = 5,
	P4_IOQ_ALLOCATION_ALL_WRITE = 6, P4_IOQ_ALLOCATION_MEM_UC = 7,
	P4_IOQ_ALLOCATION_MEM_WC = 8, P4_IOQ_ALLOCATION_MEM_WT = 9,
	P4_IOQ_ALLOCATION_MEM_WP = 10, P4_IOQ_ALLOCATION_MEM_WB = 11,
	P4_IOQ_ALLOCATION_OWN = 13, P4_IOQ_ALLOCATION_OTHER = 14,
	P4_IOQ_ALLOCATION_PREFETCH = 15 };
enum { P4_IOQ_ACTIVE_ENTRIES_TYPE_BIT0 = 0, P4_IOQ_ACTIVE_ENTRIES_TYPE_BIT1 = 1,
	P4_IOQ_ACTIVE_ENTRIES_TYPE_BIT2 = 2, P4_IOQ_ACTIVE_ENTRIES_TYPE_BIT3 = 3,
	P4_IOQ_ACTIVE_ENTRIES_TYPE_BIT4 = 4, P4_IOQ_ACTIVE_ENTRIES_ALL_READ = 5,
	P4_IOQ_ACTIVE_ENTRIES_ALL_WRITE = 6, P4_IOQ_ACTIVE_ENTRIES_MEM_UC = 7,
	P4_IOQ_ACTIVE_ENTRIES_MEM_WC = 8, P4_IOQ_ACTIVE_ENTRIES_MEM_WT = 9,
	P4_IOQ_ACTIVE_ENTRIES_MEM_WP = 10, P4_IOQ_ACTIVE_ENTRIES_MEM_WB = 11,
	P4_IOQ_ACTIVE_ENTRIES_OWN = 13, P4_IOQ_ACTIVE_ENTRIES_OTHER = 14,
	P4_IOQ_ACTIVE_ENTRIES_PREFETCH = 15 };
enum { P4_FSB_DATA_ACTIVITY_DRDY_DRV = 0, P4_FSB_DATA_ACTIVITY_DRDY_OWN = 1,
	P4_FSB_DATA_ACTIVITY_DRDY_OTHER = 2, P4_FSB_DATA_ACTIVITY_DBSY_DRV = 3,
	P4_FSB_DATA_ACTIVITY_DBSY_OWN = 4, P4_FSB_DATA_ACTIVITY_DBSY_OTHER = 5 };
enum { P4_BSQ_ALLOCATION_REQ_TYPE0 = 0, P4_BSQ_ALLOCATION_REQ_TYPE1 = 1,
	P4_BSQ_ALLOCATION_REQ_LEN0 = 2, P4_BSQ_ALLOCATION_REQ_LEN1 = 3,
	P4_BSQ_ALLOCATION_REQ_IO_TYPE = 5, P4_BSQ_ALLOCATION_REQ_LOCK_TYPE = 6,
	P4_BSQ_ALLOCATION_REQ_CACHE_TYPE = 7, P4_BSQ_ALLOCATION_REQ_SPLIT_TYPE = 8,
	P4_BSQ_ALLOCATION_REQ_DEM_TYPE = 9, P4_BSQ_ALLOCATION_REQ_ORD_TYPE = 10,
	P4_BSQ_ALLOCATION_MEM_TYPE0 = 11, P4_BSQ_ALLOCATION_MEM_TYPE1 = 12,
	P4_BSQ_ALLOCATION_MEM_TYPE2 = 13 };
enum { P4_BSQ_ACTIVE_ENTRIES_REQ_TYPE0 = 0, P4_BSQ_ACTIVE_ENTRIES_REQ_TYPE1 = 1,
	P4_BSQ_ACTIVE_ENTRIES_REQ_LEN0 = 2, P4_BSQ_ACTIVE_ENTRIES_REQ_LEN1 = 3,
	P4_BSQ_ACTIVE_ENTRIES_REQ_IO_TYPE = 5, P4_BSQ_ACTIVE_ENTRIES_REQ_LOCK_TYPE = 6,
	P4_BSQ_ACTIVE_ENTRIES_REQ_CACHE_TYPE = 7, P4_BSQ_ACTIVE_ENTRIES_REQ_SPLIT_TYPE = 8,
	P4_BSQ_ACTIVE_ENTRIES_REQ_DEM_TYPE = 9, P4_BSQ_ACTIVE_ENTRIES_REQ_ORD_TYPE = 10,
	P4_BSQ_ACTIVE_ENTRIES_MEM_TYPE0 = 11, P4_BSQ_ACTIVE_ENTRIES_MEM_TYPE1 = 12,
	P4_BSQ_ACTIVE_ENTRIES_MEM_TYPE2 = 13 };
enum { P4_SSE_INPUT_ASSIST_ALL = 15 };
enum { P4_PACKED_SP_UOP_ALL = 15 };
enum { P4_PACKED_DP_UOP_ALL = 15 };
enum { P4_SCALAR_SP_UOP_ALL = 15 };
enum { P4_SCALAR_DP_UOP_ALL = 15 };
enum { P4_64BIT_MMX_UOP_ALL = 15 };
enum { P4_128BIT_MMX_UOP_ALL = 15 };
enum { P4_X87_FP_UOP_ALL = 15 };
enum { P4_X87_SIMD_MOVES_UOP_ALLP0 = 3, P4_X87_SIMD_MOVES_UOP_ALLP2 = 4 };
enum { P4_TC_MISC_FLUSH = 4 };
enum { P4_GLOBAL_POWER_EVENTS_RUNNING = 0 };
enum { P4_TC_MS_XFER_CISC = 0 };
enum { P4_UOP_QUEUE_WRITES_FROM_TC_BUILD = 0, P4_UOP_QUEUE_WRITES_FROM_TC_DELIVER = 1,
	P4_UOP_QUEUE_WRITES_FROM_ROM = 2 };
enum { P4_RETIRED_MISPRED_BRANCH_TYPE_CONDITIONAL = 1,
	P4_RETIRED_MISPRED_BRANCH_TYPE_CALL = 2, P4_RETIRED_MISPRED_BRANCH_TYPE_RETURN = 3,
	P4_RETIRED_MISPRED_BRANCH_TYPE_INDIRECT = 4 };
enum { P4_RETIRED_BRANCH_TYPE_CONDITIONAL = 1, P4_RETIRED_BRANCH_TYPE_CALL = 2,
	P4_RETIRED_BRANCH_TYPE_RETURN = 3, P4_RETIRED_BRANCH_TYPE_INDIRECT = 4 };
enum { P4_RESOURCE_STALL_SBFULL = 5 };
enum { P4_WC_BUFFER_WCB_EVICTS = 0, P4_WC_BUFFER_WCB_FULL_EVICT = 1 };
enum { P4_B2B_CYCLES_BIT1 = 1, P4_B2B_CYCLES_BIT2 = 2, P4_B2B_CYCLES_BIT3 = 3,
	P4_B2B_CYCLES_BIT4 = 4, P4_B2B_CYCLES_BIT5 = 5, P4_B2B_CYCLES_BIT6 = 6 };
enum { P4_BNR_BIT0 = 0, P4_BNR_BIT1 = 1, P4_BNR_BIT2 = 2 };
enum { P4_SNOOP_BIT2 = 2, P4_SNOOP_BIT6 = 6, P4_SNOOP_BIT7 = 7 };
enum { P4_RESPONSE_BIT1 = 1, P4_RESPONSE_BIT2 = 2, P4_RESPONSE_BIT8 = 8,
	P4_RESPONSE_BIT9 = 9 };
enum { P4_FRONT_END_EVENT_NBOGUS = 0, P4_FRONT_END_EVENT_BOGUS = 1 };
enum { P4_EXECUTION_EVENT_NBOGUS0 = 0, P4_EXECUTION_EVENT_NBOGUS1 = 1,
	P4_EXECUTION_EVENT_NBOGUS2 = 2, P4_EXECUTION_EVENT_NBOGUS3 = 3,
	P4_EXECUTION_EVENT_BOGUS0 = 4, P4_EXECUTION_EVENT_BOGUS1 = 5,
	P4_EXECUTION_EVENT_BOGUS2 = 6, P4_EXECUTION_EVENT_BOGUS3 = 7 };
enum { P4_REPLAY_EVENT_NBOGUS = 0, P4_REPLAY_EVENT_BOGUS = 1 };
enum { P4_INSTR_RETIRED_NBOGUSNTAG = 0, P4_INSTR_RETIRED_NBOGUSTAG = 1,
	P4_INSTR_RETIRED_BOGUSNTAG = 2, P4_INSTR_RETIRED_BOGUSTAG = 3 };
enum { P4_UOPS_RETIRED_NBOGUS = 0, P4_UOPS_RETIRED_BOGUS = 1 };
enum { P4_UOP_TYPE_TAGLOADS = 1, P4_UOP_TYPE_TAGSTORES = 2 };
enum { P4_BRANCH_RETIRED_MMNP = 0, P4_BRANCH_RETIRED_MMNM = 1,
	P4_BRANCH_RETIRED_MMTP = 2, P4_BRANCH_RETIRED_MMTM = 3 };
enum { P4_MISPRED_BRANCH_RETIRED_NBOGUS = 0 };
enum { P4_X87_ASSIST_FPSU = 0, P4_X87_ASSIST_FPSO = 1, P4_X87_ASSIST_POAO = 2,
	P4_X87_ASSIST_POAU = 3, P4_X87_ASSIST_PREA = 4 };
enum { P4_MACHINE_CLEAR_CLEAR = 0, P4_MACHINE_CLEAR_MOCLEAR = 2,
	P4_MACHINE_CLEAR_SMCLEAR = 6 };
enum { P4_INSTR_COMPLETED_NBOGUS = 0, P4_INSTR_COMPLETED_BOGUS = 1 };

/* Event flags. */
#define P4_EVF_TI		(1u << 0)  /* thread independent (FreeBSD, Linux .shared) */
#define P4_EVF_AT_RETIREMENT	(1u << 1)  /* SDM Table 19-29 */
#define P4_EVF_PEBS		(1u << 2)  /* may drive PEBS (front_end, execution, replay) */
#define P4_EVF_WANTS_EDGE	(1u << 3)  /* Edge on by default (SDM IOQ text; FreeBSD forces it) */
#define P4_EVF_TAG_ONLY		(1u << 4)  /* tags uops, never increments a counter */
#define P4_EVF_UPSTREAM_TAG	(1u << 5)  /* may set ESCR tag enable/value (execution tagging) */
#define P4_EVF_NEEDS_MASK	(1u << 6)  /* no default mask: the user must name bits */
#define P4_EVF_UNVERIFIED_MASKS	(1u << 7)  /* mask bits from libpfm4 only */
#define P4_EVF_TYPE_FIELD	(1u << 8)  /* mask bits 4:0 form one request-type field */

/* A capability (struct p4_caps) the event needs. */
enum p4_event_need {
	P4_NEED_NONE,
	P4_NEED_INSTR_COMPLETED,
};

struct p4_event_desc {
	const char *name;		/* SDM spelling; specs match it case-insensitively */
	uint8_t event_select;		/* ESCR[30:25] */
	uint8_t escr_select;		/* CCCR[15:13] */
	enum p4_escr escrs[2];		/* ESCR0 side, ESCR1 side; P4_ESCR_NONE if absent */
	const char *masks[P4_NMASK_BITS]; /* name of mask bit k, NULL if undefined */
	uint16_t default_mask;
	uint16_t exclusive[2];		/* at most one bit of each group may be set */
	uint32_t flags;			/* P4_EVF_* */
	enum p4_event_need need;
	const char *desc;
	const char *note;		/* programming hint or source decision, or NULL */
};

extern const struct p4_event_desc p4_events[P4_NEVENT];

/* Case-insensitive lookups; false when not found. */
bool p4_event_by_name(const char *name, unsigned len, enum p4_event *out);
bool p4_event_mask_by_name(enum p4_event ev, const char *name, unsigned len, unsigned *bit);

/* All mask bits the event defines. */
uint16_t p4_event_valid_mask(enum p4_event ev);

/* The event whose ESCR is `escr` with event select `evsel`, if any. */
bool p4_event_by_escr(enum p4_escr escr, unsigned evsel, enum p4_event *out);

/* True when the event may use `escr` (one of its two sides). */
bool p4_event_uses_escr(enum p4_event ev, enum p4_escr escr);

#endif
