/*
 * p4_events.c - the NetBurst event table (PMU reference 4.1 non-retirement,
 * 4.2 at-retirement, 4.3 model-specific), const data keyed by enum p4_event.
 *
 * Decisions where the sources disagree (PMU reference 4.4), each cited:
 *   - machine_clear MOCLEAR/SMCLEAR are DISPUTED (Linux 1/2, FreeBSD 2/3,
 *     libpfm 2/6, OProfile 6/7); we use libpfm's 2/6, transcribed from SDM
 *     Appendix A, as the PMU reference prefers.
 *   - TC_deliver_mode has IB = bit 7 (SDM; Linux omits it).
 *   - IOQ_allocation bits 4:0 are one request-type field (SDM); named
 *     TYPE_BIT0..4 as libpfm4 does.
 *   - x87_SIMD_moves_uop exists (FreeBSD, OProfile, perfctr).
 *   - mispred_branch_retired bit 0 is NBOGUS (libpfm mislabels it BOGUS).
 *   - instr_completed is on CRU_ESCR0/1 with select 4 (Linux, perfctr;
 *     libpfm's CRU_ESCR2 and select 5 are typos).
 *   - b2b_cycles, bnr, snoop, response: the sources give ESCR select 3 with
 *     FSB_ESCR0/1, but select 3 on counters 0-3 names ITLB_ESCR0/1; a CCCR
 *     reaches FSB_ESCR0/1 only with select 6, which we use. Their mask
 *     bits are libpfm4's (UNVERIFIED); libpfm4's BIT5/BIT6 typo (both coded
 *     as bit 4) is not copied.
 * TS/TI: SDM Vol. 3B Table 19-34 "Event Mask Qualification for Logical
 *   Processors" (Table A-15 in the 2008 editions) gives TS or TI per mask
 *   bit; every event it lists is wholly one or the other, so one flag per
 *   event holds it, and it agrees with FreeBSD pm_is_ti_event and Linux
 *   .shared. b2b_cycles, bnr, snoop, response are not in it: TI after
 *   FreeBSD. (Table 19-34 also lists a WC_Buffer bit 2 WCB_HITM_EVICT that
 *   the event's own table does not define; the event table is followed.)
 * Default masks: see p4_events.h.
 */
#include "pmu/p4_events.h"

const struct p4_event_desc p4_events[P4_NEVENT] = {
	[P4_EV_TC_DELIVER_MODE] = {
		.name = "TC_deliver_mode", .event_select = 0x01, .escr_select = 1,
		.escrs = { P4_TC_ESCR0, P4_TC_ESCR1 },
		.masks = {
			[P4_TC_DELIVER_MODE_DD] = "DD",
			[P4_TC_DELIVER_MODE_DB] = "DB",
			[P4_TC_DELIVER_MODE_DI] = "DI",
			[P4_TC_DELIVER_MODE_BD] = "BD",
			[P4_TC_DELIVER_MODE_BB] = "BB",
			[P4_TC_DELIVER_MODE_BI] = "BI",
			[P4_TC_DELIVER_MODE_ID] = "ID",
			[P4_TC_DELIVER_MODE_IB] = "IB",
		},
		.default_mask = P4_EVMASK(P4_TC_DELIVER_MODE_DD) |
			P4_EVMASK(P4_TC_DELIVER_MODE_DB) | P4_EVMASK(P4_TC_DELIVER_MODE_DI) |
			P4_EVMASK(P4_TC_DELIVER_MODE_BD) | P4_EVMASK(P4_TC_DELIVER_MODE_BB) |
			P4_EVMASK(P4_TC_DELIVER_MODE_BI) | P4_EVMASK(P4_TC_DELIVER_MODE_ID) |
			P4_EVMASK(P4_TC_DELIVER_MODE_IB),
		.flags = P4_EVF_TI,
		.desc = "cycles the trace cache and decoder spend in each deliver/build mode (LP0 mode, LP1 mode)",
	},
	[P4_EV_BPU_FETCH_REQUEST] = {
		.name = "BPU_fetch_request", .event_select = 0x03, .escr_select = 0,
		.escrs = { P4_BPU_ESCR0, P4_BPU_ESCR1 },
		.masks = {
			[P4_BPU_FETCH_REQUEST_TCMISS] = "TCMISS",
		},
		.default_mask = P4_EVMASK(P4_BPU_FETCH_REQUEST_TCMISS),
		.flags = 0,
		.desc = "instruction fetch requests by the branch prediction unit",
	},
	[P4_EV_ITLB_REFERENCE] = {
		.name = "ITLB_reference", .event_select = 0x18, .escr_select = 3,
		.escrs = { P4_ITLB_ESCR0, P4_ITLB_ESCR1 },
		.masks = {
			[P4_ITLB_REFERENCE_HIT] = "HIT",
			[P4_ITLB_REFERENCE_MISS] = "MISS",
			[P4_ITLB_REFERENCE_HIT_UC] = "HIT_UC",
		},
		.default_mask = P4_EVMASK(P4_ITLB_REFERENCE_HIT) |
			P4_EVMASK(P4_ITLB_REFERENCE_MISS) | P4_EVMASK(P4_ITLB_REFERENCE_HIT_UC),
		.flags = 0,
		.desc = "translations through the instruction TLB",
	},
	[P4_EV_MEMORY_CANCEL] = {
		.name = "memory_cancel", .event_select = 0x02, .escr_select = 5,
		.escrs = { P4_DAC_ESCR0, P4_DAC_ESCR1 },
		.masks = {
			[P4_MEMORY_CANCEL_ST_RB_FULL] = "ST_RB_FULL",
			[P4_MEMORY_CANCEL_64K_CONF] = "64K_CONF",
		},
		.default_mask = P4_EVMASK(P4_MEMORY_CANCEL_ST_RB_FULL) |
			P4_EVMASK(P4_MEMORY_CANCEL_64K_CONF),
		.flags = 0,
		.desc = "requests cancelled in the data cache address control unit",
	},
	[P4_EV_MEMORY_COMPLETE] = {
		.name = "memory_complete", .event_select = 0x08, .escr_select = 2,
		.escrs = { P4_SAAT_ESCR0, P4_SAAT_ESCR1 },
		.masks = {
			[P4_MEMORY_COMPLETE_LSC] = "LSC",
			[P4_MEMORY_COMPLETE_SSC] = "SSC",
		},
		.default_mask = P4_EVMASK(P4_MEMORY_COMPLETE_LSC) |
			P4_EVMASK(P4_MEMORY_COMPLETE_SSC),
		.flags = 0,
		.desc = "completed load splits and store splits",
	},
	[P4_EV_LOAD_PORT_REPLAY] = {
		.name = "load_port_replay", .event_select = 0x04, .escr_select = 2,
		.escrs = { P4_SAAT_ESCR0, P4_SAAT_ESCR1 },
		.masks = {
			[P4_LOAD_PORT_REPLAY_SPLIT_LD] = "SPLIT_LD",
		},
		.default_mask = P4_EVMASK(P4_LOAD_PORT_REPLAY_SPLIT_LD),
		.flags = 0,
		.desc = "replays at the load port",
		.note = "the replay metric split_load_retired needs it on SAAT_ESCR1 (SDM "
			"replay table, PMU reference 5.5)",
	},
	[P4_EV_STORE_PORT_REPLAY] = {
		.name = "store_port_replay", .event_select = 0x05, .escr_select = 2,
		.escrs = { P4_SAAT_ESCR0, P4_SAAT_ESCR1 },
		.masks = {
			[P4_STORE_PORT_REPLAY_SPLIT_ST] = "SPLIT_ST",
		},
		.default_mask = P4_EVMASK(P4_STORE_PORT_REPLAY_SPLIT_ST),
		.flags = 0,
		.desc = "replays at the store port",
		.note = "the replay metric split_store_retired needs it on SAAT_ESCR0 (SDM "
			"replay table, PMU reference 5.5)",
	},
	[P4_EV_MOB_LOAD_REPLAY] = {
		.name = "MOB_load_replay", .event_select = 0x03, .escr_select = 2,
		.escrs = { P4_MOB_ESCR0, P4_MOB_ESCR1 },
		.masks = {
			[P4_MOB_LOAD_REPLAY_NO_STA] = "NO_STA",
			[P4_MOB_LOAD_REPLAY_NO_STD] = "NO_STD",
			[P4_MOB_LOAD_REPLAY_PARTIAL_DATA] = "PARTIAL_DATA",
			[P4_MOB_LOAD_REPLAY_UNALGN_ADDR] = "UNALGN_ADDR",
		},
		.default_mask = P4_EVMASK(P4_MOB_LOAD_REPLAY_NO_STA) |
			P4_EVMASK(P4_MOB_LOAD_REPLAY_NO_STD) |
			P4_EVMASK(P4_MOB_LOAD_REPLAY_PARTIAL_DATA) |
			P4_EVMASK(P4_MOB_LOAD_REPLAY_UNALGN_ADDR),
		.flags = 0,
		.desc = "loads replayed by the memory order buffer",
	},
	[P4_EV_PAGE_WALK_TYPE] = {
		.name = "page_walk_type", .event_select = 0x01, .escr_select = 4,
		.escrs = { P4_PMH_ESCR0, P4_PMH_ESCR1 },
		.masks = {
			[P4_PAGE_WALK_TYPE_DTMISS] = "DTMISS",
			[P4_PAGE_WALK_TYPE_ITMISS] = "ITMISS",
		},
		.default_mask = P4_EVMASK(P4_PAGE_WALK_TYPE_DTMISS) |
			P4_EVMASK(P4_PAGE_WALK_TYPE_ITMISS),
		.flags = P4_EVF_TI,
		.desc = "page walks by the page miss handler",
	},
	[P4_EV_BSQ_CACHE_REFERENCE] = {
		.name = "BSQ_cache_reference", .event_select = 0x0c, .escr_select = 7,
		.escrs = { P4_BSU_ESCR0, P4_BSU_ESCR1 },
		.masks = {
			[P4_BSQ_CACHE_REFERENCE_RD_2NDL_HITS] = "RD_2ndL_HITS",
			[P4_BSQ_CACHE_REFERENCE_RD_2NDL_HITE] = "RD_2ndL_HITE",
			[P4_BSQ_CACHE_REFERENCE_RD_2NDL_HITM] = "RD_2ndL_HITM",
			[P4_BSQ_CACHE_REFERENCE_RD_3RDL_HITS] = "RD_3rdL_HITS",
			[P4_BSQ_CACHE_REFERENCE_RD_3RDL_HITE] = "RD_3rdL_HITE",
			[P4_BSQ_CACHE_REFERENCE_RD_3RDL_HITM] = "RD_3rdL_HITM",
			[P4_BSQ_CACHE_REFERENCE_RD_2NDL_MISS] = "RD_2ndL_MISS",
			[P4_BSQ_CACHE_REFERENCE_RD_3RDL_MISS] = "RD_3rdL_MISS",
			[P4_BSQ_CACHE_REFERENCE_WR_2NDL_MISS] = "WR_2ndL_MISS",
		},
		.default_mask = P4_EVMASK(P4_BSQ_CACHE_REFERENCE_RD_2NDL_HITS) |
			P4_EVMASK(P4_BSQ_CACHE_REFERENCE_RD_2NDL_HITE) |
			P4_EVMASK(P4_BSQ_CACHE_REFERENCE_RD_2NDL_HITM) |
			P4_EVMASK(P4_BSQ_CACHE_REFERENCE_RD_3RDL_HITS) |
			P4_EVMASK(P4_BSQ_CACHE_REFERENCE_RD_3RDL_HITE) |
			P4_EVMASK(P4_BSQ_CACHE_REFERENCE_RD_3RDL_HITM) |
			P4_EVMASK(P4_BSQ_CACHE_REFERENCE_RD_2NDL_MISS) |
			P4_EVMASK(P4_BSQ_CACHE_REFERENCE_RD_3RDL_MISS) |
			P4_EVMASK(P4_BSQ_CACHE_REFERENCE_WR_2NDL_MISS),
		.flags = 0,
		.desc = "2nd/3rd-level cache references seen by the bus unit",
	},
	[P4_EV_IOQ_ALLOCATION] = {
		.name = "IOQ_allocation", .event_select = 0x03, .escr_select = 6,
		.escrs = { P4_FSB_ESCR0, P4_FSB_ESCR1 },
		.masks = {
			[P4_IOQ_ALLOCATION_TYPE_BIT0] = "TYPE_BIT0",
			[P4_IOQ_ALLOCATION_TYPE_BIT1] = "TYPE_BIT1",
			[P4_IOQ_ALLOCATION_TYPE_BIT2] = "TYPE_BIT2",
			[P4_IOQ_ALLOCATION_TYPE_BIT3] = "TYPE_BIT3",
			[P4_IOQ_ALLOCATION_TYPE_BIT4] = "TYPE_BIT4",
			[P4_IOQ_ALLOCATION_ALL_READ] = "ALL_READ",
			[P4_IOQ_ALLOCATION_ALL_WRITE] = "ALL_WRITE",
			[P4_IOQ_ALLOCATION_MEM_UC] = "MEM_UC",
			[P4_IOQ_ALLOCATION_MEM_WC] = "MEM_WC",
			[P4_IOQ_ALLOCATION_MEM_WT] = "MEM_WT",
			[P4_IOQ_ALLOCATION_MEM_WP] = "MEM_WP",
			[P4_IOQ_ALLOCATION_MEM_WB] = "MEM_WB",
			[P4_IOQ_ALLOCATION_OWN] = "OWN",
			[P4_IOQ_ALLOCATION_OTHER] = "OTHER",
			[P4_IOQ_ALLOCATION_PREFETCH] = "PREFETCH",
		},
		.default_mask = P4_EVMASK(P4_IOQ_ALLOCATION_TYPE_BIT0) |
			P4_EVMASK(P4_IOQ_ALLOCATION_ALL_READ) |
			P4_EVMASK(P4_IOQ_ALLOCATION_ALL_WRITE) |
			P4_EVMASK(P4_IOQ_ALLOCATION_MEM_UC) |
			P4_EVMASK(P4_IOQ_ALLOCATION_MEM_WC) |
			P4_EVMASK(P4_IOQ_ALLOCATION_MEM_WT) |
			P4_EVMASK(P4_IOQ_ALLOCATION_MEM_WP) |
			P4_EVMASK(P4_IOQ_ALLOCATION_MEM_WB) | P4_EVMASK(P4_IOQ_ALLOCATION_OWN) |
			P4_EVMASK(P4_IOQ_ALLOCATION_OTHER) |
			P4_EVMASK(P4_IOQ_ALLOCATION_PREFETCH),
		.flags = P4_EVF_WANTS_EDGE | P4_EVF_TYPE_FIELD,
		.desc = "bus transactions allocated into the in-order queue",
		.note = "bits 4:0 are one request-type field (00001b default); SDM: use Edge "
			"to avoid double counting; trigger logic differs for model < 2",
	},
	[P4_EV_IOQ_ACTIVE_ENTRIES] = {
		.name = "IOQ_active_entries", .event_select = 0x1a, .escr_select = 6,
		.escrs = { P4_ESCR_NONE, P4_FSB_ESCR1 },
		.masks = {
			[P4_IOQ_ACTIVE_ENTRIES_TYPE_BIT0] = "TYPE_BIT0",
			[P4_IOQ_ACTIVE_ENTRIES_TYPE_BIT1] = "TYPE_BIT1",
			[P4_IOQ_ACTIVE_ENTRIES_TYPE_BIT2] = "TYPE_BIT2",
			[P4_IOQ_ACTIVE_ENTRIES_TYPE_BIT3] = "TYPE_BIT3",
			[P4_IOQ_ACTIVE_ENTRIES_TYPE_BIT4] = "TYPE_BIT4",
			[P4_IOQ_ACTIVE_ENTRIES_ALL_READ] = "ALL_READ",
			[P4_IOQ_ACTIVE_ENTRIES_ALL_WRITE] = "ALL_WRITE",
			[P4_IOQ_ACTIVE_ENTRIES_MEM_UC] = "MEM_UC",
			[P4_IOQ_ACTIVE_ENTRIES_MEM_WC] = "MEM_WC",
			[P4_IOQ_ACTIVE_ENTRIES_MEM_WT] = "MEM_WT",
			[P4_IOQ_ACTIVE_ENTRIES_MEM_WP] = "MEM_WP",
			[P4_IOQ_ACTIVE_ENTRIES_MEM_WB] = "MEM_WB",
			[P4_IOQ_ACTIVE_ENTRIES_OWN] = "OWN",
			[P4_IOQ_ACTIVE_ENTRIES_OTHER] = "OTHER",
			[P4_IOQ_ACTIVE_ENTRIES_PREFETCH] = "PREFETCH",
		},
		.default_mask = P4_EVMASK(P4_IOQ_ACTIVE_ENTRIES_TYPE_BIT0) |
			P4_EVMASK(P4_IOQ_ACTIVE_ENTRIES_ALL_READ) |
			P4_EVMASK(P4_IOQ_ACTIVE_ENTRIES_ALL_WRITE) |
			P4_EVMASK(P4_IOQ_ACTIVE_ENTRIES_MEM_UC) |
			P4_EVMASK(P4_IOQ_ACTIVE_ENTRIES_MEM_WC) |
			P4_EVMASK(P4_IOQ_ACTIVE_ENTRIES_MEM_WT) |
			P4_EVMASK(P4_IOQ_ACTIVE_ENTRIES_MEM_WP) |
			P4_EVMASK(P4_IOQ_ACTIVE_ENTRIES_MEM_WB) |
			P4_EVMASK(P4_IOQ_ACTIVE_ENTRIES_OWN) |
			P4_EVMASK(P4_IOQ_ACTIVE_ENTRIES_OTHER) |
			P4_EVMASK(P4_IOQ_ACTIVE_ENTRIES_PREFETCH),
		.flags = P4_EVF_TYPE_FIELD,
		.desc = "active in-order queue entries per cycle (clipped at 15)",
		.note = "program together with IOQ_allocation",
	},
	[P4_EV_FSB_DATA_ACTIVITY] = {
		.name = "FSB_data_activity", .event_select = 0x17, .escr_select = 6,
		.escrs = { P4_FSB_ESCR0, P4_FSB_ESCR1 },
		.masks = {
			[P4_FSB_DATA_ACTIVITY_DRDY_DRV] = "DRDY_DRV",
			[P4_FSB_DATA_ACTIVITY_DRDY_OWN] = "DRDY_OWN",
			[P4_FSB_DATA_ACTIVITY_DRDY_OTHER] = "DRDY_OTHER",
			[P4_FSB_DATA_ACTIVITY_DBSY_DRV] = "DBSY_DRV",
			[P4_FSB_DATA_ACTIVITY_DBSY_OWN] = "DBSY_OWN",
			[P4_FSB_DATA_ACTIVITY_DBSY_OTHER] = "DBSY_OTHER",
		},
		.default_mask = P4_EVMASK(P4_FSB_DATA_ACTIVITY_DRDY_DRV) |
			P4_EVMASK(P4_FSB_DATA_ACTIVITY_DRDY_OWN),
		.exclusive = { P4_EVMASK(P4_FSB_DATA_ACTIVITY_DRDY_OWN) |
			P4_EVMASK(P4_FSB_DATA_ACTIVITY_DRDY_OTHER), P4_EVMASK(P4_FSB_DATA_ACTIVITY_DBSY_OWN) |
			P4_EVMASK(P4_FSB_DATA_ACTIVITY_DBSY_OTHER) },
		.flags = P4_EVF_TI | P4_EVF_WANTS_EDGE,
		.desc = "DRDY/DBSY activity on the front side bus",
		.note = "DRDY_OWN/DRDY_OTHER and DBSY_OWN/DBSY_OTHER are mutually exclusive (SDM)",
	},
	[P4_EV_BSQ_ALLOCATION] = {
		.name = "BSQ_allocation", .event_select = 0x05, .escr_select = 7,
		.escrs = { P4_BSU_ESCR0, P4_ESCR_NONE },
		.masks = {
			[P4_BSQ_ALLOCATION_REQ_TYPE0] = "REQ_TYPE0",
			[P4_BSQ_ALLOCATION_REQ_TYPE1] = "REQ_TYPE1",
			[P4_BSQ_ALLOCATION_REQ_LEN0] = "REQ_LEN0",
			[P4_BSQ_ALLOCATION_REQ_LEN1] = "REQ_LEN1",
			[P4_BSQ_ALLOCATION_REQ_IO_TYPE] = "REQ_IO_TYPE",
			[P4_BSQ_ALLOCATION_REQ_LOCK_TYPE] = "REQ_LOCK_TYPE",
			[P4_BSQ_ALLOCATION_REQ_CACHE_TYPE] = "REQ_CACHE_TYPE",
			[P4_BSQ_ALLOCATION_REQ_SPLIT_TYPE] = "REQ_SPLIT_TYPE",
			[P4_BSQ_ALLOCATION_REQ_DEM_TYPE] = "REQ_DEM_TYPE",
			[P4_BSQ_ALLOCATION_REQ_ORD_TYPE] = "REQ_ORD_TYPE",
			[P4_BSQ_ALLOCATION_MEM_TYPE0] = "MEM_TYPE0",
			[P4_BSQ_ALLOCATION_MEM_TYPE1] = "MEM_TYPE1",
			[P4_BSQ_ALLOCATION_MEM_TYPE2] = "MEM_TYPE2",
		},
		.default_mask = 0,
		.flags = P4_EVF_WANTS_EDGE | P4_EVF_NEEDS_MASK,
		.desc = "allocations in the bus sequence queue",
		.note = "request type, length and memory type are encoded fields: give mask "
			"bits for each",
	},
	[P4_EV_BSQ_ACTIVE_ENTRIES] = {
		.name = "BSQ_active_entries", .event_select = 0x06, .escr_select = 7,
		.escrs = { P4_ESCR_NONE, P4_BSU_ESCR1 },
		.masks = {
			[P4_BSQ_ACTIVE_ENTRIES_REQ_TYPE0] = "REQ_TYPE0",
			[P4_BSQ_ACTIVE_ENTRIES_REQ_TYPE1] = "REQ_TYPE1",
			[P4_BSQ_ACTIVE_ENTRIES_REQ_LEN0] = "REQ_LEN0",
			[P4_BSQ_ACTIVE_ENTRIES_REQ_LEN1] = "REQ_LEN1",
			[P4_BSQ_ACTIVE_ENTRIES_REQ_IO_TYPE] = "REQ_IO_TYPE",
			[P4_BSQ_ACTIVE_ENTRIES_REQ_LOCK_TYPE] = "REQ_LOCK_TYPE",
			[P4_BSQ_ACTIVE_ENTRIES_REQ_CACHE_TYPE] = "REQ_CACHE_TYPE",
			[P4_BSQ_ACTIVE_ENTRIES_REQ_SPLIT_TYPE] = "REQ_SPLIT_TYPE",
			[P4_BSQ_ACTIVE_ENTRIES_REQ_DEM_TYPE] = "REQ_DEM_TYPE",
			[P4_BSQ_ACTIVE_ENTRIES_REQ_ORD_TYPE] = "REQ_ORD_TYPE",
			[P4_BSQ_ACTIVE_ENTRIES_MEM_TYPE0] = "MEM_TYPE0",
			[P4_BSQ_ACTIVE_ENTRIES_MEM_TYPE1] = "MEM_TYPE1",
			[P4_BSQ_ACTIVE_ENTRIES_MEM_TYPE2] = "MEM_TYPE2",
		},
		.default_mask = 0,
		.flags = P4_EVF_NEEDS_MASK,
		.desc = "active bus sequence queue entries (clipped at 15)",
		.note = "program together with BSQ_allocation; ESCR choice follows "
			"Linux/OProfile (a guess there)",
	},
	[P4_EV_SSE_INPUT_ASSIST] = {
		.name = "SSE_input_assist", .event_select = 0x34, .escr_select = 1,
		.escrs = { P4_FIRM_ESCR0, P4_FIRM_ESCR1 },
		.masks = {
			[P4_SSE_INPUT_ASSIST_ALL] = "ALL",
		},
		.default_mask = P4_EVMASK(P4_SSE_INPUT_ASSIST_ALL),
		.flags = P4_EVF_TI | P4_EVF_UPSTREAM_TAG,
		.desc = "assists for SSE/SSE2/SSE3 input operands",
	},
	[P4_EV_PACKED_SP_UOP] = {
		.name = "packed_SP_uop", .event_select = 0x08, .escr_select = 1,
		.escrs = { P4_FIRM_ESCR0, P4_FIRM_ESCR1 },
		.masks = {
			[P4_PACKED_SP_UOP_ALL] = "ALL",
		},
		.default_mask = P4_EVMASK(P4_PACKED_SP_UOP_ALL),
		.flags = P4_EVF_TI | P4_EVF_UPSTREAM_TAG,
		.desc = "packed single-precision uops",
	},
	[P4_EV_PACKED_DP_UOP] = {
		.name = "packed_DP_uop", .event_select = 0x0c, .escr_select = 1,
		.escrs = { P4_FIRM_ESCR0, P4_FIRM_ESCR1 },
		.masks = {
			[P4_PACKED_DP_UOP_ALL] = "ALL",
		},
		.default_mask = P4_EVMASK(P4_PACKED_DP_UOP_ALL),
		.flags = P4_EVF_TI | P4_EVF_UPSTREAM_TAG,
		.desc = "packed double-precision uops",
	},
	[P4_EV_SCALAR_SP_UOP] = {
		.name = "scalar_SP_uop", .event_select = 0x0a, .escr_select = 1,
		.escrs = { P4_FIRM_ESCR0, P4_FIRM_ESCR1 },
		.masks = {
			[P4_SCALAR_SP_UOP_ALL] = "ALL",
		},
		.default_mask = P4_EVMASK(P4_SCALAR_SP_UOP_ALL),
		.flags = P4_EVF_TI | P4_EVF_UPSTREAM_TAG,
		.desc = "scalar single-precision uops",
	},
	[P4_EV_SCALAR_DP_UOP] = {
		.name = "scalar_DP_uop", .event_select = 0x0e, .escr_select = 1,
		.escrs = { P4_FIRM_ESCR0, P4_FIRM_ESCR1 },
		.masks = {
			[P4_SCALAR_DP_UOP_ALL] = "ALL",
		},
		.default_mask = P4_EVMASK(P4_SCALAR_DP_UOP_ALL),
		.flags = P4_EVF_TI | P4_EVF_UPSTREAM_TAG,
		.desc = "scalar double-precision uops",
	},
	[P4_EV_64BIT_MMX_UOP] = {
		.name = "64bit_MMX_uop", .event_select = 0x02, .escr_select = 1,
		.escrs = { P4_FIRM_ESCR0, P4_FIRM_ESCR1 },
		.masks = {
			[P4_64BIT_MMX_UOP_ALL] = "ALL",
		},
		.default_mask = P4_EVMASK(P4_64BIT_MMX_UOP_ALL),
		.flags = P4_EVF_TI | P4_EVF_UPSTREAM_TAG,
		.desc = "MMX uops on 64-bit SIMD operands",
	},
	[P4_EV_128BIT_MMX_UOP] = {
		.name = "128bit_MMX_uop", .event_select = 0x1a, .escr_select = 1,
		.escrs = { P4_FIRM_ESCR0, P4_FIRM_ESCR1 },
		.masks = {
			[P4_128BIT_MMX_UOP_ALL] = "ALL",
		},
		.default_mask = P4_EVMASK(P4_128BIT_MMX_UOP_ALL),
		.flags = P4_EVF_TI | P4_EVF_UPSTREAM_TAG,
		.desc = "SIMD integer uops on 128-bit operands",
	},
	[P4_EV_X87_FP_UOP] = {
		.name = "x87_FP_uop", .event_select = 0x04, .escr_select = 1,
		.escrs = { P4_FIRM_ESCR0, P4_FIRM_ESCR1 },
		.masks = {
			[P4_X87_FP_UOP_ALL] = "ALL",
		},
		.default_mask = P4_EVMASK(P4_X87_FP_UOP_ALL),
		.flags = P4_EVF_TI | P4_EVF_UPSTREAM_TAG,
		.desc = "x87 floating-point uops",
	},
	[P4_EV_X87_SIMD_MOVES_UOP] = {
		.name = "x87_SIMD_moves_uop", .event_select = 0x2e, .escr_select = 1,
		.escrs = { P4_FIRM_ESCR0, P4_FIRM_ESCR1 },
		.masks = {
			[P4_X87_SIMD_MOVES_UOP_ALLP0] = "ALLP0",
			[P4_X87_SIMD_MOVES_UOP_ALLP2] = "ALLP2",
		},
		.default_mask = P4_EVMASK(P4_X87_SIMD_MOVES_UOP_ALLP0) |
			P4_EVMASK(P4_X87_SIMD_MOVES_UOP_ALLP2),
		.flags = P4_EVF_TI | P4_EVF_UPSTREAM_TAG,
		.desc = "x87/SIMD store/move (ALLP0) and load (ALLP2) uops",
	},
	[P4_EV_TC_MISC] = {
		.name = "TC_misc", .event_select = 0x06, .escr_select = 1,
		.escrs = { P4_TC_ESCR0, P4_TC_ESCR1 },
		.masks = {
			[P4_TC_MISC_FLUSH] = "FLUSH",
		},
		.default_mask = P4_EVMASK(P4_TC_MISC_FLUSH),
		.flags = 0,
		.desc = "trace cache flushes (counts twice per flush)",
	},
	[P4_EV_GLOBAL_POWER_EVENTS] = {
		.name = "global_power_events", .event_select = 0x13, .escr_select = 6,
		.escrs = { P4_FSB_ESCR0, P4_FSB_ESCR1 },
		.masks = {
			[P4_GLOBAL_POWER_EVENTS_RUNNING] = "RUNNING",
		},
		.default_mask = P4_EVMASK(P4_GLOBAL_POWER_EVENTS_RUNNING),
		.flags = 0,
		.desc = "cycles the processor is not stopped",
	},
	[P4_EV_TC_MS_XFER] = {
		.name = "tc_ms_xfer", .event_select = 0x05, .escr_select = 0,
		.escrs = { P4_MS_ESCR0, P4_MS_ESCR1 },
		.masks = {
			[P4_TC_MS_XFER_CISC] = "CISC",
		},
		.default_mask = P4_EVMASK(P4_TC_MS_XFER_CISC),
		.flags = 0,
		.desc = "uop delivery changes from trace cache to microcode ROM",
	},
	[P4_EV_UOP_QUEUE_WRITES] = {
		.name = "uop_queue_writes", .event_select = 0x09, .escr_select = 0,
		.escrs = { P4_MS_ESCR0, P4_MS_ESCR1 },
		.masks = {
			[P4_UOP_QUEUE_WRITES_FROM_TC_BUILD] = "FROM_TC_BUILD",
			[P4_UOP_QUEUE_WRITES_FROM_TC_DELIVER] = "FROM_TC_DELIVER",
			[P4_UOP_QUEUE_WRITES_FROM_ROM] = "FROM_ROM",
		},
		.default_mask = P4_EVMASK(P4_UOP_QUEUE_WRITES_FROM_TC_BUILD) |
			P4_EVMASK(P4_UOP_QUEUE_WRITES_FROM_TC_DELIVER) |
			P4_EVMASK(P4_UOP_QUEUE_WRITES_FROM_ROM),
		.flags = 0,
		.desc = "valid uops written to the uop queue",
	},
	[P4_EV_RETIRED_MISPRED_BRANCH_TYPE] = {
		.name = "retired_mispred_branch_type", .event_select = 0x05, .escr_select = 2,
		.escrs = { P4_TBPU_ESCR0, P4_TBPU_ESCR1 },
		.masks = {
			[P4_RETIRED_MISPRED_BRANCH_TYPE_CONDITIONAL] = "CONDITIONAL",
			[P4_RETIRED_MISPRED_BRANCH_TYPE_CALL] = "CALL",
			[P4_RETIRED_MISPRED_BRANCH_TYPE_RETURN] = "RETURN",
			[P4_RETIRED_MISPRED_BRANCH_TYPE_INDIRECT] = "INDIRECT",
		},
		.default_mask = P4_EVMASK(P4_RETIRED_MISPRED_BRANCH_TYPE_CONDITIONAL) |
			P4_EVMASK(P4_RETIRED_MISPRED_BRANCH_TYPE_CALL) |
			P4_EVMASK(P4_RETIRED_MISPRED_BRANCH_TYPE_RETURN) |
			P4_EVMASK(P4_RETIRED_MISPRED_BRANCH_TYPE_INDIRECT),
		.flags = 0,
		.desc = "retired mispredicted branches by type",
	},
	[P4_EV_RETIRED_BRANCH_TYPE] = {
		.name = "retired_branch_type", .event_select = 0x04, .escr_select = 2,
		.escrs = { P4_TBPU_ESCR0, P4_TBPU_ESCR1 },
		.masks = {
			[P4_RETIRED_BRANCH_TYPE_CONDITIONAL] = "CONDITIONAL",
			[P4_RETIRED_BRANCH_TYPE_CALL] = "CALL",
			[P4_RETIRED_BRANCH_TYPE_RETURN] = "RETURN",
			[P4_RETIRED_BRANCH_TYPE_INDIRECT] = "INDIRECT",
		},
		.default_mask = P4_EVMASK(P4_RETIRED_BRANCH_TYPE_CONDITIONAL) |
			P4_EVMASK(P4_RETIRED_BRANCH_TYPE_CALL) |
			P4_EVMASK(P4_RETIRED_BRANCH_TYPE_RETURN) |
			P4_EVMASK(P4_RETIRED_BRANCH_TYPE_INDIRECT),
		.flags = 0,
		.desc = "retired branches by type",
	},
	[P4_EV_RESOURCE_STALL] = {
		.name = "resource_stall", .event_select = 0x01, .escr_select = 1,
		.escrs = { P4_ALF_ESCR0, P4_ALF_ESCR1 },
		.masks = {
			[P4_RESOURCE_STALL_SBFULL] = "SBFULL",
		},
		.default_mask = P4_EVMASK(P4_RESOURCE_STALL_SBFULL),
		.flags = 0,
		.desc = "allocator stalls for lack of store buffers",
		.note = "optimization manual: non-standard, may not exist on all models",
	},
	[P4_EV_WC_BUFFER] = {
		.name = "WC_Buffer", .event_select = 0x05, .escr_select = 5,
		.escrs = { P4_DAC_ESCR0, P4_DAC_ESCR1 },
		.masks = {
			[P4_WC_BUFFER_WCB_EVICTS] = "WCB_EVICTS",
			[P4_WC_BUFFER_WCB_FULL_EVICT] = "WCB_FULL_EVICT",
		},
		.default_mask = P4_EVMASK(P4_WC_BUFFER_WCB_EVICTS) |
			P4_EVMASK(P4_WC_BUFFER_WCB_FULL_EVICT),
		.flags = P4_EVF_TI,
		.desc = "write-combining buffer evictions",
	},
	[P4_EV_B2B_CYCLES] = {
		.name = "b2b_cycles", .event_select = 0x16, .escr_select = 6,
		.escrs = { P4_FSB_ESCR0, P4_FSB_ESCR1 },
		.masks = {
			[P4_B2B_CYCLES_BIT1] = "BIT1",
			[P4_B2B_CYCLES_BIT2] = "BIT2",
			[P4_B2B_CYCLES_BIT3] = "BIT3",
			[P4_B2B_CYCLES_BIT4] = "BIT4",
			[P4_B2B_CYCLES_BIT5] = "BIT5",
			[P4_B2B_CYCLES_BIT6] = "BIT6",
		},
		.default_mask = P4_EVMASK(P4_B2B_CYCLES_BIT1) | P4_EVMASK(P4_B2B_CYCLES_BIT2) |
			P4_EVMASK(P4_B2B_CYCLES_BIT3) | P4_EVMASK(P4_B2B_CYCLES_BIT4) |
			P4_EVMASK(P4_B2B_CYCLES_BIT5) | P4_EVMASK(P4_B2B_CYCLES_BIT6),
		.flags = P4_EVF_TI | P4_EVF_UNVERIFIED_MASKS,
		.desc = "back-to-back bus cycles",
		.note = "sources give ESCR select 3, which names ITLB_ESCR on counters 0-3; "
			"the FSB ESCRs need select 6 (used here); masks UNVERIFIED",
	},
	[P4_EV_BNR] = {
		.name = "bnr", .event_select = 0x08, .escr_select = 6,
		.escrs = { P4_FSB_ESCR0, P4_FSB_ESCR1 },
		.masks = {
			[P4_BNR_BIT0] = "BIT0",
			[P4_BNR_BIT1] = "BIT1",
			[P4_BNR_BIT2] = "BIT2",
		},
		.default_mask = P4_EVMASK(P4_BNR_BIT0) | P4_EVMASK(P4_BNR_BIT1) |
			P4_EVMASK(P4_BNR_BIT2),
		.flags = P4_EVF_TI | P4_EVF_UNVERIFIED_MASKS,
		.desc = "bus-not-ready conditions",
		.note = "sources give ESCR select 3, which names ITLB_ESCR on counters 0-3; "
			"the FSB ESCRs need select 6 (used here); masks UNVERIFIED",
	},
	[P4_EV_SNOOP] = {
		.name = "snoop", .event_select = 0x06, .escr_select = 6,
		.escrs = { P4_FSB_ESCR0, P4_FSB_ESCR1 },
		.masks = {
			[P4_SNOOP_BIT2] = "BIT2",
			[P4_SNOOP_BIT6] = "BIT6",
			[P4_SNOOP_BIT7] = "BIT7",
		},
		.default_mask = P4_EVMASK(P4_SNOOP_BIT2) | P4_EVMASK(P4_SNOOP_BIT6) |
			P4_EVMASK(P4_SNOOP_BIT7),
		.flags = P4_EVF_TI | P4_EVF_UNVERIFIED_MASKS,
		.desc = "snoop hit-modified bus traffic",
		.note = "sources give ESCR select 3, which names ITLB_ESCR on counters 0-3; "
			"the FSB ESCRs need select 6 (used here); masks UNVERIFIED",
	},
	[P4_EV_RESPONSE] = {
		.name = "response", .event_select = 0x04, .escr_select = 6,
		.escrs = { P4_FSB_ESCR0, P4_FSB_ESCR1 },
		.masks = {
			[P4_RESPONSE_BIT1] = "BIT1",
			[P4_RESPONSE_BIT2] = "BIT2",
			[P4_RESPONSE_BIT8] = "BIT8",
			[P4_RESPONSE_BIT9] = "BIT9",
		},
		.default_mask = P4_EVMASK(P4_RESPONSE_BIT1) | P4_EVMASK(P4_RESPONSE_BIT2) |
			P4_EVMASK(P4_RESPONSE_BIT8) | P4_EVMASK(P4_RESPONSE_BIT9),
		.flags = P4_EVF_TI | P4_EVF_UNVERIFIED_MASKS,
		.desc = "bus responses by type",
		.note = "sources give ESCR select 3, which names ITLB_ESCR on counters 0-3; "
			"the FSB ESCRs need select 6 (used here); masks UNVERIFIED",
	},
	[P4_EV_FRONT_END_EVENT] = {
		.name = "front_end_event", .event_select = 0x08, .escr_select = 5,
		.escrs = { P4_CRU_ESCR2, P4_CRU_ESCR3 },
		.masks = {
			[P4_FRONT_END_EVENT_NBOGUS] = "NBOGUS",
			[P4_FRONT_END_EVENT_BOGUS] = "BOGUS",
		},
		.default_mask = P4_EVMASK(P4_FRONT_END_EVENT_NBOGUS),
		.flags = P4_EVF_AT_RETIREMENT | P4_EVF_PEBS,
		.desc = "retired uops tagged by front-end tagging (uop_type)",
	},
	[P4_EV_EXECUTION_EVENT] = {
		.name = "execution_event", .event_select = 0x0c, .escr_select = 5,
		.escrs = { P4_CRU_ESCR2, P4_CRU_ESCR3 },
		.masks = {
			[P4_EXECUTION_EVENT_NBOGUS0] = "NBOGUS0",
			[P4_EXECUTION_EVENT_NBOGUS1] = "NBOGUS1",
			[P4_EXECUTION_EVENT_NBOGUS2] = "NBOGUS2",
			[P4_EXECUTION_EVENT_NBOGUS3] = "NBOGUS3",
			[P4_EXECUTION_EVENT_BOGUS0] = "BOGUS0",
			[P4_EXECUTION_EVENT_BOGUS1] = "BOGUS1",
			[P4_EXECUTION_EVENT_BOGUS2] = "BOGUS2",
			[P4_EXECUTION_EVENT_BOGUS3] = "BOGUS3",
		},
		.default_mask = P4_EVMASK(P4_EXECUTION_EVENT_NBOGUS0) |
			P4_EVMASK(P4_EXECUTION_EVENT_NBOGUS1) |
			P4_EVMASK(P4_EXECUTION_EVENT_NBOGUS2) |
			P4_EVMASK(P4_EXECUTION_EVENT_NBOGUS3),
		.flags = P4_EVF_AT_RETIREMENT | P4_EVF_PEBS,
		.desc = "retired uops tagged by execution tagging (slot n = upstream tag bit n)",
	},
	[P4_EV_REPLAY_EVENT] = {
		.name = "replay_event", .event_select = 0x09, .escr_select = 5,
		.escrs = { P4_CRU_ESCR2, P4_CRU_ESCR3 },
		.masks = {
			[P4_REPLAY_EVENT_NBOGUS] = "NBOGUS",
			[P4_REPLAY_EVENT_BOGUS] = "BOGUS",
		},
		.default_mask = P4_EVMASK(P4_REPLAY_EVENT_NBOGUS),
		.flags = P4_EVF_AT_RETIREMENT | P4_EVF_PEBS,
		.desc = "retired uops tagged by replay tagging",
		.note = "needs PEBS_ENABLE and PEBS_MATRIX_VERT set up for a metric (PMU "
			"reference 5.5)",
	},
	[P4_EV_INSTR_RETIRED] = {
		.name = "instr_retired", .event_select = 0x02, .escr_select = 4,
		.escrs = { P4_CRU_ESCR0, P4_CRU_ESCR1 },
		.masks = {
			[P4_INSTR_RETIRED_NBOGUSNTAG] = "NBOGUSNTAG",
			[P4_INSTR_RETIRED_NBOGUSTAG] = "NBOGUSTAG",
			[P4_INSTR_RETIRED_BOGUSNTAG] = "BOGUSNTAG",
			[P4_INSTR_RETIRED_BOGUSTAG] = "BOGUSTAG",
		},
		.default_mask = P4_EVMASK(P4_INSTR_RETIRED_NBOGUSNTAG) |
			P4_EVMASK(P4_INSTR_RETIRED_NBOGUSTAG),
		.flags = P4_EVF_AT_RETIREMENT,
		.desc = "retired instructions",
	},
	[P4_EV_UOPS_RETIRED] = {
		.name = "uops_retired", .event_select = 0x01, .escr_select = 4,
		.escrs = { P4_CRU_ESCR0, P4_CRU_ESCR1 },
		.masks = {
			[P4_UOPS_RETIRED_NBOGUS] = "NBOGUS",
			[P4_UOPS_RETIRED_BOGUS] = "BOGUS",
		},
		.default_mask = P4_EVMASK(P4_UOPS_RETIRED_NBOGUS),
		.flags = P4_EVF_AT_RETIREMENT,
		.desc = "retired uops",
	},
	[P4_EV_UOP_TYPE] = {
		.name = "uop_type", .event_select = 0x02, .escr_select = 2,
		.escrs = { P4_RAT_ESCR0, P4_RAT_ESCR1 },
		.masks = {
			[P4_UOP_TYPE_TAGLOADS] = "TAGLOADS",
			[P4_UOP_TYPE_TAGSTORES] = "TAGSTORES",
		},
		.default_mask = P4_EVMASK(P4_UOP_TYPE_TAGLOADS) | P4_EVMASK(P4_UOP_TYPE_TAGSTORES),
		.flags = P4_EVF_AT_RETIREMENT | P4_EVF_TAG_ONLY,
		.desc = "tags load/store uops for front_end_event (never counts itself)",
	},
	[P4_EV_BRANCH_RETIRED] = {
		.name = "branch_retired", .event_select = 0x06, .escr_select = 5,
		.escrs = { P4_CRU_ESCR2, P4_CRU_ESCR3 },
		.masks = {
			[P4_BRANCH_RETIRED_MMNP] = "MMNP",
			[P4_BRANCH_RETIRED_MMNM] = "MMNM",
			[P4_BRANCH_RETIRED_MMTP] = "MMTP",
			[P4_BRANCH_RETIRED_MMTM] = "MMTM",
		},
		.default_mask = P4_EVMASK(P4_BRANCH_RETIRED_MMNP) |
			P4_EVMASK(P4_BRANCH_RETIRED_MMNM) | P4_EVMASK(P4_BRANCH_RETIRED_MMTP) |
			P4_EVMASK(P4_BRANCH_RETIRED_MMTM),
		.flags = P4_EVF_AT_RETIREMENT,
		.desc = "retired branches (not-taken/taken x predicted/mispredicted)",
	},
	[P4_EV_MISPRED_BRANCH_RETIRED] = {
		.name = "mispred_branch_retired", .event_select = 0x03, .escr_select = 4,
		.escrs = { P4_CRU_ESCR0, P4_CRU_ESCR1 },
		.masks = {
			[P4_MISPRED_BRANCH_RETIRED_NBOGUS] = "NBOGUS",
		},
		.default_mask = P4_EVMASK(P4_MISPRED_BRANCH_RETIRED_NBOGUS),
		.flags = P4_EVF_AT_RETIREMENT,
		.desc = "retired mispredicted branches",
	},
	[P4_EV_X87_ASSIST] = {
		.name = "x87_assist", .event_select = 0x03, .escr_select = 5,
		.escrs = { P4_CRU_ESCR2, P4_CRU_ESCR3 },
		.masks = {
			[P4_X87_ASSIST_FPSU] = "FPSU",
			[P4_X87_ASSIST_FPSO] = "FPSO",
			[P4_X87_ASSIST_POAO] = "POAO",
			[P4_X87_ASSIST_POAU] = "POAU",
			[P4_X87_ASSIST_PREA] = "PREA",
		},
		.default_mask = P4_EVMASK(P4_X87_ASSIST_FPSU) | P4_EVMASK(P4_X87_ASSIST_FPSO) |
			P4_EVMASK(P4_X87_ASSIST_POAO) | P4_EVMASK(P4_X87_ASSIST_POAU) |
			P4_EVMASK(P4_X87_ASSIST_PREA),
		.flags = P4_EVF_AT_RETIREMENT,
		.desc = "retired x87 instructions that needed an assist",
	},
	[P4_EV_MACHINE_CLEAR] = {
		.name = "machine_clear", .event_select = 0x02, .escr_select = 5,
		.escrs = { P4_CRU_ESCR2, P4_CRU_ESCR3 },
		.masks = {
			[P4_MACHINE_CLEAR_CLEAR] = "CLEAR",
			[P4_MACHINE_CLEAR_MOCLEAR] = "MOCLEAR",
			[P4_MACHINE_CLEAR_SMCLEAR] = "SMCLEAR",
		},
		.default_mask = P4_EVMASK(P4_MACHINE_CLEAR_CLEAR),
		.flags = P4_EVF_AT_RETIREMENT,
		.desc = "machine clears (whole pipeline flushed)",
		.note = "MOCLEAR/SMCLEAR bits DISPUTED: libpfm (from SDM Appendix A) bits 2/6 "
			"used; add :edge to count occurrences of CLEAR",
	},
	[P4_EV_INSTR_COMPLETED] = {
		.name = "instr_completed", .event_select = 0x07, .escr_select = 4,
		.escrs = { P4_CRU_ESCR0, P4_CRU_ESCR1 },
		.masks = {
			[P4_INSTR_COMPLETED_NBOGUS] = "NBOGUS",
			[P4_INSTR_COMPLETED_BOGUS] = "BOGUS",
		},
		.default_mask = P4_EVMASK(P4_INSTR_COMPLETED_NBOGUS),
		.flags = P4_EVF_AT_RETIREMENT,
		.need = P4_NEED_INSTR_COMPLETED,
		.desc = "instructions completed and retired (models 3, 4, 6)",
	},
};

static int p4_lower(int c)
{
	return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c;
}

/* s[0..len) equals the NUL-terminated name, ignoring case. */
static bool p4_name_eq(const char *name, const char *s, unsigned len)
{
	unsigned i;

	for (i = 0; i < len; i++)
		if (name[i] == '\0' || p4_lower(name[i]) != p4_lower(s[i]))
			return false;
	return name[i] == '\0';
}

bool p4_event_by_name(const char *name, unsigned len, enum p4_event *out)
{
	for (int e = 0; e < P4_NEVENT; e++) {
		if (p4_name_eq(p4_events[e].name, name, len)) {
			*out = (enum p4_event)e;
			return true;
		}
	}
	return false;
}

bool p4_event_mask_by_name(enum p4_event ev, const char *name, unsigned len, unsigned *bit)
{
	for (unsigned k = 0; k < P4_NMASK_BITS; k++) {
		const char *m = p4_events[ev].masks[k];

		if (m && p4_name_eq(m, name, len)) {
			*bit = k;
			return true;
		}
	}
	return false;
}

uint16_t p4_event_valid_mask(enum p4_event ev)
{
	uint16_t m = 0;

	for (unsigned k = 0; k < P4_NMASK_BITS; k++)
		if (p4_events[ev].masks[k])
			m |= P4_EVMASK(k);
	return m;
}

bool p4_event_uses_escr(enum p4_event ev, enum p4_escr escr)
{
	return escr != P4_ESCR_NONE &&
	       (p4_events[ev].escrs[0] == escr || p4_events[ev].escrs[1] == escr);
}

bool p4_event_by_escr(enum p4_escr escr, unsigned evsel, enum p4_event *out)
{
	for (int e = 0; e < P4_NEVENT; e++) {
		if (p4_events[e].event_select == evsel && p4_event_uses_escr((enum p4_event)e, escr)) {
			*out = (enum p4_event)e;
			return true;
		}
	}
	return false;
}
