/*
 * program.h - a user's own program as a workload: the ELF loader, the
 * table of loaded programs and their symbols.
 *
 * A program is a static, position-independent ELF executable of the
 * kernel's own mode (ET_DYN without PT_INTERP or PT_DYNAMIC needs beyond
 * RELATIVE relocations, what `gcc -static-pie -nostdlib` and
 * sdk/program.ld produce): ELF64 x86-64 for the 64-bit kernel, ELF32 i386
 * (`nbprof-cc -m32`) for the 32-bit one; each kernel refuses the other
 * class with that reason. Or a flat binary of position-independent code
 * whose entry is at a given offset, in the kernel's own mode.
 * The kernel has one identity-mapped address space (arch/x86/64/paging.c), so
 * a program runs where the page allocator put it: the loader copies its
 * PT_LOAD segments to that base, zeroes what the file does not hold (.bss)
 * and adds the base to every RELATIVE slot (R_X86_64_RELATIVE of the x86-64
 * psABI 4.4 and R_386_RELATIVE of the i386 psABI, both type 8: B + A).
 *
 * Or a static Linux executable (ET_EXEC, `musl-gcc -static`, `gcc -static`):
 * linked at a fixed address, it is loaded there, into the window the page
 * allocator never hands out (arch/x86/mem.h MEM_FIXED_*); its heap, its
 * mappings and its stack are in an arena of their own (workload/linux.h,
 * LINUX_ARENA_SIZE, allocated with the first such program). Every such
 * program shares the window: the image is copied in before each run, and
 * one such program runs at a time. It starts at its ELF entry with the
 * stack Linux gives a new process and makes Linux system calls
 * (workload/linux.c).
 *
 * The image is reloaded from the kept file before every run, so each run
 * starts from the same .data and .bss. The file is kept for the symbols:
 * the ELF .symtab's STT_FUNC entries name the program's samples and faults.
 * Layout of a loaded program, from base: the image (PT_LOAD span, page
 * rounded), then PROGRAM_ARGV_PAGES for argc/argv.
 *
 * Entry: called like a C function, entry(argc, argv) under the SysV ABI
 * (RDI, RSI); its return value is the run's status (sdk/nbprof.h). The
 * 32-bit kernel calls it as every workload, with 64-bit argument slots on
 * the stack (sdk/crt0.S); argv's pointers are the program's own width.
 * One image per program: it runs on one logical processor at a time.
 *
 * Portable (host-tested): the caller hands in memory; workload/programs_k.c
 * does the page allocation in the kernel.
 */
#ifndef NBPROF_PROF_PROGRAM_H
#define NBPROF_PROF_PROGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/mem.h"
#include "sdk/nbprof_abi.h"
#include "workload/workload.h"

#define PROGRAM_MAX		8
#define PROGRAM_NAME_MAX	24	/* including the NUL */
#define PROGRAM_FILE_MAX	(4u << 20)	/* bytes */
#define PROGRAM_ARGV_PAGES	1
#define PROGRAM_PAGE		4096u
/* The kernel's own mode, the only class of program it runs: 64 (ELF64) or 32 (ELF32). */
#define PROGRAM_KERNEL_BITS	(UINTPTR_MAX > 0xffffffffu ? 64 : 32)
#define PROGRAM_LOADS_MAX	16	/* non-empty PT_LOAD segments in one file */

/*
 * A program's calls through `int 0x82` (arch/x86/user.h): their numbers and
 * limits (NB_CALL_*, NB_WRITE_MAX) are the SDK's ABI header's, the one
 * place the kernel, the start file and programs take them from.
 */
#define PROGRAM_TIME_LIMIT_S	60	/* an unstepped run is stopped after this by default */
/*
 * A stepped run (the model's backend steps every instruction, some
 * thousand times slower) is stopped after this many seconds of stepping
 * by default: a program that never returns from main would otherwise be
 * stepped until the host gave up. `programs --timeout` sets both limits
 * (workload_parse_limits).
 */
#define PROGRAM_STEP_LIMIT_S	10
#define PROGRAM_LIMIT_MAX_S	86400	/* either limit: a day */
/* The fixed-address window of a kernel of bits (arch/x86/mem.h), and what an image leaves free in it. */
#define PROGRAM_FIXED_LO(bits)	((bits) == 64 ? MEM_FIXED_LO_64 : MEM_FIXED_LO_32)
#define PROGRAM_FIXED_HI(bits)	(PROGRAM_FIXED_LO(bits) + MEM_FIXED_SIZE)
/* A program that has this symbol starts with counting off (it calls nb_count_start()). */
#define PROGRAM_REGION_SYMBOL	NB_STRINGIFY(NB_COUNT_REGION)

/* What the file says about its image, offsets from the image base. */
struct program_layout {
	uint64_t span;			/* bytes from the lowest PT_LOAD page to the end, page rounded */
	uint64_t vaddr0;		/* lowest PT_LOAD address, page aligned (0 for the SDK) */
	uint64_t entry;			/* entry point, offset from base */
	uint64_t text_lo, text_hi;	/* executable segments' bounds, offsets from base */
	bool flat;			/* a flat binary, not an ELF file */
	bool fixed;			/* ET_EXEC: a Linux program at its linked addresses */
	uint8_t word;			/* bytes of its pointers: 4 (ELF32) or 8 (ELF64) */
	uint64_t phdr;			/* fixed: the program headers' offset from base (AT_PHDR) */
	uint16_t phent, phnum;		/* fixed: their size and number (AT_PHENT, AT_PHNUM) */
};

/*
 * Check an ELF file (class, data, machine, type, segments, relocations)
 * for this kernel (PROGRAM_KERNEL_BITS) and fill *l. 0, or -1 with one
 * reason in err.
 */
int program_elf_check(const uint8_t *file, size_t len, struct program_layout *l,
		      char *err, size_t errlen);
/* The same for a kernel of kernel_bits (32 or 64): the host tests check both. */
int program_elf_check_for(unsigned kernel_bits, const uint8_t *file, size_t len,
			  struct program_layout *l, char *err, size_t errlen);

/* A flat binary: the whole file is code and data, entry at entry_off. */
int program_flat_check(size_t len, uint64_t entry_off, struct program_layout *l,
		       char *err, size_t errlen);

/*
 * Copy the image of a checked file to dst (l->span bytes, which it zeroes
 * first) and relocate it for runtime address base. 0, or -1 with err.
 */
int program_image_load(const uint8_t *file, size_t len, const struct program_layout *l,
		       uint8_t *dst, uint64_t base, char *err, size_t errlen);

/*
 * The function symbol (STT_FUNC, or the nearest symbol below for a symbol
 * of size 0) holding image offset off, and off's distance from it; NULL
 * when the file has no .symtab or no symbol covers off.
 */
const char *program_elf_symbol(const uint8_t *file, size_t len, uint64_t off, uint64_t *symoff);

/* Call fn(ctx, value, size, name) for every function symbol; returns how many. */
unsigned program_elf_symbols(const uint8_t *file, size_t len,
			     void (*fn)(void *ctx, uint64_t value, uint64_t size, const char *name),
			     void *ctx);

/* --- the table of loaded programs ------------------------------------------------ */

struct program {
	struct workload wl;		/* id WL_PROGRAM, name = name[] */
	char name[PROGRAM_NAME_MAX];
	const uint8_t *file;		/* kept copy of the file */
	size_t file_len;
	uint32_t crc;			/* CRC-32 of the file (lib/crc32.h) */
	uint64_t base;			/* runtime address of the image */
	uint64_t pages;			/* pages from base: image + argv */
	struct program_layout layout;
	const char *origin;		/* "stick" or "serial" */
	bool used;
	uint32_t running;		/* LPs running it (at most 1: one .data, one .bss) */
};

/* A valid program name: 1..23 of [A-Za-z0-9._-], not a built-in workload's name. */
int program_name_check(const char *name, char *err, size_t errlen);

/* The loaded program called name, or NULL. */
struct program *program_find(const char *name);
/* Slot i (0..PROGRAM_MAX-1), used or not. */
struct program *program_slot(unsigned i);
/* The program that holds address addr (image + argv pages), or NULL. */
const struct program *program_at(uint64_t addr);
/*
 * The fixed-address program whose image the window holds (the last one
 * run), which program_at() takes for the window's addresses; NULL: none yet.
 */
const struct program *program_fixed_owner(void);
void program_set_fixed_owner(const struct program *p);
/* The program whose workload entry is w, or NULL for a built-in workload. */
const struct program *program_of(const struct workload *w);

/*
 * Symbol lookup over every loaded program, as "name" with the program's
 * functions (ksym_lookup's fallback): NULL when addr is in no program.
 */
const char *program_lookup(uint64_t addr, uint64_t *offset);

/*
 * Fill argv's page at dst (runtime address base_rt) with argc pointers of
 * word bytes (the layout's) and the strings of a->argbuf; returns the
 * runtime address of argv[0]'s slot.
 */
uint64_t program_build_argv(const struct workload_args *a, unsigned word, uint8_t *dst,
			    uint64_t base_rt);

/*
 * dump's line for program p: "NBP: NAME base=HEX span=HEX crc=FILECRC|LINECRC",
 * the runtime address of link address 0, the bytes from there to the end
 * of the image and argv pages (a fixed-address program's image starts at
 * its link address, so its span counts from 0) and the file's CRC-32; LINECRC (upper-case hex, as NBS: lines) is the CRC-32 of
 * the text between "NBP:" and '|', so a decoder trusts no damaged line.
 * Its length, or -1 when n is too small.
 */
#define PROGRAM_NBP_LINE_MAX	(5 + PROGRAM_NAME_MAX + 6 + 16 + 6 + 16 + 5 + 8 + 9 + 1)
int program_nbp_line(const struct program *p, char *buf, size_t n);

#endif

/* --- kernel side (workload/programs_k.c) --------------------------------------------- */

/*
 * Load file[0..len) as program name: checked, copied (the caller's buffer
 * may go), image pages allocated and loaded once. An existing program of
 * the same name is replaced only once the new one has loaded; on any error
 * nothing changes. flat: a flat binary with its entry at entry_off.
 * 0, or -1 with one reason in err.
 */
int program_add(const char *name, const uint8_t *file, size_t len, bool flat, uint64_t entry_off,
		const char *origin, char *err, size_t errlen);

/* Unload program name. 0, or -1 when there is none. */
int program_remove(const char *name);

/*
 * Reload p's image from its file (fresh .data and .bss) and lay out a's
 * argv; *fn = the entry's runtime address, *argv = argv's. 0 or -1 (err).
 */
int program_prepare(const struct program *p, const struct workload_args *a, uint64_t *fn,
		    uint64_t *argv, char *err, size_t errlen);

/*
 * A fixed-address program p (layout.fixed): load its image into the window
 * and lay out a new Linux process's stack there (workload/linux.h) with a's
 * argv, random's bytes for AT_RANDOM and hwcap for AT_HWCAP; *lx is the
 * run's state, o the memory access the stack is written through, *fn the
 * entry and *sp the stack pointer at entry. Takes the window: call
 * program_release_fixed() after the run. 0, or -1 with err (nothing taken).
 */
struct linux_ops;
struct linux_proc;
int program_prepare_fixed(const struct program *p, const struct workload_args *a,
			  const struct linux_ops *o, struct linux_proc *lx,
			  const uint8_t random[16], uint64_t hwcap,
			  uint64_t *fn, uint64_t *sp, char *err, size_t errlen);
void program_release_fixed(void);

/* Does p contain the symbol name (a function the SDK links in only when it is called)? */
bool program_has_symbol(const struct program *p, const char *name);
