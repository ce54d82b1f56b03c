# nbprof - bare-metal profiling kernel for Intel NetBurst.
#
#   make            build build/BOOTX64.EFI (x86-64) and build/BOOTIA32.EFI (ia32)
#   make image      build/nbprof.img: GPT disk with a FAT ESP (both kernels) and GRUB for
#                   legacy BIOS (the 32-bit kernel as a Multiboot ELF), ready for dd
#   make iso        build/nbprof.iso: a CD for BIOS and UEFI (also boots from a stick)
#   make pxe        build/pxe/: a TFTP root for network boot (iPXE script, PXELINUX config)
#   make floppy     build/nbprof-floppy.img: a 1.44 MB FAT12 floppy with GRUB and the 32-bit kernel
#   make run        boot it in QEMU with the serial shell on this terminal
#   make check      host unit tests + QEMU, Bochs and documentation tests in two lanes (CHECK_LANES=1: one),
#                   ends with a summary line
#   make doc-test   run every example in README.md and docs/ that shows output, and compare
#   make bench      benchmarks (QEMU, -icount)
#   make model-bench  host timing of the software PMU's event input
#   make fuzz       libFuzzer harnesses, FUZZ_SECONDS each (make fuzz-ci: short CI pass)
#   V=1             show full commands
#
# One make process, no recursion. Packages that are missing are installed by
# tools/build/ensure-deps (apt-get, or sudo apt-get when not root).

CC        ?= gcc
HOST_CC   ?= cc
PYTHON    ?= /usr/bin/python3
Q          = $(if $(V),,@)
B          = build

EFI_INC   := /usr/include/efi
# Two kernels from the same sources: x86-64 (long mode, BOOTX64.EFI, objects
# in build/k) and ia32 (32-bit protected mode with PAE paging, BOOTIA32.EFI,
# objects in build/k32). Only the files in ARCH_MODE64/ARCH_MODE32 differ.
EFI_LIBDIR64 := /usr/lib
EFI_LIBDIR32 := /usr/lib32

# --- sources -----------------------------------------------------------------
# Explicit lists: a new file is added here on purpose.
BOOT_SRCS   := boot/efi_main.c
# The ia32 kernel's other start: GRUB (i386-pc) from a legacy BIOS, Multiboot.
BOOT_MB_SRCS := boot/multiboot.c
BOOT_MB_ASM  := boot/multiboot_entry.S
KERNEL_SRCS := kernel/config.c kernel/kmain.c kernel/platform.c
SHELL_SRCS  := shell/cmd_info.c shell/cmd_pmu.c shell/cmd_record.c shell/cmd_selftest.c \
               shell/cmd_stat.c shell/cmd_workload.c shell/commands.c shell/shell.c shell/stat_opts.c \
               shell/stat_uncore.c
SHELL_KSRCS := shell/cmd_program.c shell/cmd_bench.c shell/cmd_pebs.c
PROF_SRCS   := prof/dump.c prof/jitter.c prof/report.c prof/samples.c prof/storm.c
PROF_KSRCS  := prof/pebs.c prof/perf.c prof/record.c
BACKEND_SRCS  := prof/backend/memfeed.c prof/backend/model_batch.c
BACKEND_KSRCS := prof/backend/hw.c prof/backend/model.c prof/backend/model_feed.c prof/backend/model_pmi.c \
                 prof/backend/tagfeed.c prof/backend/assistfeed.c
WORKLOAD_SRCS  := workload/linux.c workload/program.c workload/snippet.c workload/upload.c workload/workload.c
WORKLOAD_KSRCS := workload/programs_k.c workload/snippet_run.c workload/workloads.c
SELFTEST_SRCS  := selftest/judge.c selftest/report.c selftest/report_qr.c
SELFTEST_KSRCS := selftest/counts.c selftest/overflow.c selftest/pebs.c selftest/selftest.c
ARCH_SRCS   := arch/x86/acpi_tables.c arch/x86/buildid.c arch/x86/cpuid.c arch/x86/insn.c \
               arch/x86/insn_simd.c arch/x86/memmap.c arch/x86/multiboot_mods.c arch/x86/pagewalk.c \
               arch/x86/topology.c arch/x86/screen.c arch/x86/font8x8.c arch/x86/kbd_map.c
ARCH_KSRCS  := arch/x86/acpi.c arch/x86/console.c arch/x86/cpu.c arch/x86/fpu.c arch/x86/idt.c \
               arch/x86/ksyms.c arch/x86/lapic.c arch/x86/mem.c arch/x86/msr.c arch/x86/panic.c \
               arch/x86/percpu.c arch/x86/pic.c arch/x86/power.c arch/x86/progress.c \
               arch/x86/selftest.c arch/x86/serial.c arch/x86/smp.c arch/x86/step.c \
               arch/x86/timer.c arch/x86/user.c arch/x86/kbd.c
# What depends on the CPU mode, side by side: the x86-64 file and its ia32 twin.
ARCH_MODE64 := arch/x86/64/gdt.c arch/x86/64/paging.c arch/x86/64/mode.c
ARCH_MODE32 := arch/x86/32/gdt.c arch/x86/32/paging.c arch/x86/32/mode.c
ARCH_ASM    := arch/x86/64/entry.S arch/x86/64/nmiprobe.S arch/x86/64/trampoline.S arch/x86/64/workloads.S \
               arch/x86/snippet_area.S
ARCH_ASM32  := arch/x86/32/entry.S arch/x86/32/nmiprobe.S arch/x86/32/trampoline.S arch/x86/32/workloads.S \
               arch/x86/snippet_area.S
PMU_SRCS    := pmu/p4_alloc.c pmu/p4_apply.c pmu/p4_caps.c pmu/p4_encode.c pmu/p4_events.c \
               pmu/p4_explain.c pmu/p4_list.c pmu/p4_pebs.c pmu/p4_tagging.c pmu/p4_probe.c pmu/p4_spec.c pmu/p4_tables.c pmu/p4_text.c \
               pmu/p4_uncore.c pmu/p4_uncore_spec.c pmu/p4_uncore_list.c \
               pmu/model/p4_model.c pmu/model/p4_model_msr.c pmu/model/p4_model_pebs.c pmu/model/p4_model_uncore.c \
               pmu/model/p4_mem.c pmu/model/p4_cost.c pmu/model/p4_core.c \
               pmu/model/p4_assist.c pmu/model/p4_sbuf.c pmu/model/p4_tc.c pmu/model/p4_step.c
LIB_SRCS    := lib/base45.c lib/base64.c lib/crc32.c lib/deflate.c lib/parse.c lib/printf.c lib/qr.c \
               lib/stats.c
LIB_KSRCS   := lib/builtins.c lib/string.c	# the host has its own C library

# *_SRCS are portable: compiled for the kernel and, with the unit tests, for
# the build machine. *_KSRCS run only on the target (hardware, interrupts).
PORTABLE_SRCS := $(LIB_SRCS) $(PMU_SRCS) $(ARCH_SRCS) $(WORKLOAD_SRCS) $(PROF_SRCS) $(BACKEND_SRCS) \
                 $(SELFTEST_SRCS) $(SHELL_SRCS) kernel/config.c
KERNEL_ONLY   := $(LIB_KSRCS) $(ARCH_KSRCS) $(WORKLOAD_KSRCS) $(PROF_KSRCS) $(BACKEND_KSRCS) \
                 $(SELFTEST_KSRCS) $(SHELL_KSRCS) \
                 $(filter-out kernel/config.c,$(KERNEL_SRCS)) $(BOOT_SRCS)

HOST_TEST_SRCS := tests/host/test_alloc.c tests/host/test_apply.c tests/host/test_base64.c \
                  tests/host/test_cmd_selftest.c \
                  tests/host/test_commands.c tests/host/test_config.c \
                  tests/host/test_cpuid.c tests/host/test_dump.c tests/host/test_encode.c \
                  tests/host/test_explain.c tests/host/test_insn.c tests/host/test_mem.c \
                  tests/host/test_model.c tests/host/test_paging.c tests/host/test_pebs.c \
                  tests/host/test_perf.c \
                  tests/host/test_printf.c \
                  tests/host/test_probe.c tests/host/test_report.c \
                  tests/host/test_samples.c tests/host/test_selftest.c tests/host/test_shell.c \
                  tests/host/test_spec.c \
                  tests/host/test_stat.c tests/host/test_tables.c tests/host/test_topology.c \
                  tests/host/test_workload.c tests/host/test_model_route.c tests/host/test_model_pebs.c \
                  tests/host/test_insn_simd.c tests/host/test_uncore.c tests/host/test_program.c \
                  tests/host/test_memfeed.c tests/host/test_stat_uncore.c \
                  tests/host/test_model_batch.c tests/host/test_model_pmi.c
HOST_TEST_SRCS += tests/host/test_model_feed.c
HOST_TEST_SRCS += tests/host/test_memmap.c tests/host/test_acpi.c
HOST_TEST_SRCS += tests/host/test_model_random.c
HOST_TEST_SRCS += tests/host/test_snippet.c
HOST_TEST_SRCS += tests/host/test_screen.c
HOST_TEST_SRCS += tests/host/test_linux.c
HOST_TEST_SRCS += tests/host/test_qr.c
HOST_TEST_SRCS += tests/host/test_core.c
HOST_TEST_SRCS += tests/host/test_assist.c
HOST_TEST_SRCS += tests/host/test_sbuf.c
HOST_TEST_SRCS += tests/host/test_tc.c
HOST_TEST_SUPPORT := tests/host/fake_platform.c tests/host/recbus.c
# The profiling runtime stand-in, linked only where the profiling commands are.
HOST_FAKE_PROF := tests/host/fake_prof.c
HOST_TESTS     := $(patsubst tests/host/%.c,$(B)/h/tests/%,$(HOST_TEST_SRCS))

# --- flags -------------------------------------------------------------------
WARN     := -Wall -Wextra -Werror -Wshadow -Wmissing-prototypes -Wstrict-prototypes \
            -Wno-unused-parameter
K_COMMON := -std=gnu11 -g -ffreestanding -fno-stack-protector -fno-stack-check \
            -fpic -fshort-wchar -mgeneral-regs-only \
            -maccumulate-outgoing-args -fno-omit-frame-pointer -fno-strict-aliasing \
            -ffunction-sections -fdata-sections -fvisibility=hidden \
            -I. $(WARN) -MMD -MP
K_CFLAGS := $(K_COMMON) -mno-red-zone -DGNU_EFI_USE_MS_ABI
EFI_CFLAGS := -I$(EFI_INC) -I$(EFI_INC)/x86_64
# -O2 where the cost is time (the model's event feed, stepping); -Os where
# it is instructions a Pentium 4 counts (the overflow path, below) and for
# commands, parsers and text, boot-time walks (memory map, ACPI, page
# tables), the console, the uncore model and the model's register accesses
# (which stand for one RDMSR/WRMSR each and are not stepped), so the image
# stays small (tests/tools/test_image.py).
K_OPT    := -O2
K_OS_OBJS := shell/%.o kernel/%.o boot/%.o lib/printf.o lib/base64.o lib/base45.o lib/qr.o lib/deflate.o arch/x86/buildid.o \
             pmu/p4_explain.o pmu/p4_spec.o pmu/p4_list.o pmu/p4_text.o \
             pmu/p4_uncore_spec.o pmu/p4_uncore_list.o prof/report.o prof/dump.o \
             workload/workload.o arch/x86/cpuid.o workload/program.o workload/programs_k.o workload/linux.o \
             workload/upload.o pmu/p4_alloc.o pmu/p4_caps.o pmu/p4_uncore.o \
             pmu/p4_probe.o arch/x86/acpi.o arch/x86/smp.o arch/x86/power.o \
             arch/x86/selftest.o arch/x86/topology.o arch/x86/mem.o arch/x86/64/gdt.o \
             arch/x86/pic.o arch/x86/serial.o arch/x86/cpu.o arch/x86/ksyms.o \
             arch/x86/panic.o workload/workloads.o selftest/selftest.o selftest/report.o \
             selftest/counts.o selftest/overflow.o selftest/pebs.o selftest/judge.o selftest/report_qr.o \
             workload/snippet.o workload/snippet_run.o pmu/p4_pebs.o prof/pebs.o \
             prof/backend/tagfeed.o pmu/model/p4_model_pebs.o arch/x86/insn_simd.o \
             prof/backend/assistfeed.o pmu/model/p4_assist.o \
             arch/x86/screen.o arch/x86/kbd.o arch/x86/kbd_map.o \
             arch/x86/memmap.o arch/x86/acpi_tables.o lib/parse.o lib/stats.o \
             arch/x86/console.o pmu/model/p4_model_uncore.o pmu/p4_tagging.o pmu/p4_encode.o lib/crc32.o \
             arch/x86/64/paging.o prof/jitter.o prof/backend/model.o pmu/model/p4_model_msr.o \
             prof/storm.o arch/x86/multiboot_mods.o arch/x86/progress.o
# The overflow path and the counting window (perf, record) -Os too: a
# Pentium 4 counts every instruction of them at CPL 0, and -O2 gives the
# PMI handler about 5 % more of them (`make bench`: 792 against 755).
K_OS_OBJS += prof/perf.o prof/record.o
# Frame pointers stay everywhere, the overflow path included, though each
# costs a function three instructions: a sample that lands in kernel code
# (the counting gate, a tick's handler) is walked by `record -g` through
# them, and without them that call chain would be garbage.
$(addprefix $(B)/k/,$(K_OS_OBJS)) $(addprefix $(B)/k32/,$(K_OS_OBJS)): K_OPT := -Os
# The ia32 image holds the same 448 KiB budget with 4-byte pointers but
# more code per operation (64-bit arithmetic in pairs): the overflow path,
# the stepper and its instruction decoder, the software model and its
# feeds, the register write sequences, a few helpers and the GDT's and
# page tables' set-up (as arch/x86/64's) are -Os too (`make bench`
# measures the x86-64 kernel's costs).
K32_OS_OBJS := prof/record.o prof/perf.o prof/backend/model.o arch/x86/step.o \
               arch/x86/insn.o prof/backend/memfeed.o prof/backend/model_feed.o \
               pmu/model/p4_model.o pmu/model/p4_mem.o pmu/model/p4_model_msr.o \
               pmu/p4_apply.o prof/samples.o prof/jitter.o prof/backend/model_pmi.o \
               prof/backend/hw.o pmu/model/p4_core.o pmu/model/p4_sbuf.o \
               arch/x86/32/gdt.o arch/x86/32/paging.o
$(addprefix $(B)/k32/,$(K32_OS_OBJS)): K_OPT := -Os
K_LDFLAGS := -shared -Bsymbolic -nostdlib -znocombreloc --no-undefined --gc-sections --build-id=sha1 -T linker.ld
# ia32: i686 (P6 instructions, every NetBurst part has them), cdecl into the
# firmware (gnu-efi's EFIAPI is empty on ia32); 64-bit divisions come from
# the 32-bit libgcc (gcc-multilib). The same -O2/-Os choice per file as the
# x86-64 kernel (K_OS_OBJS): tests/tools/test_image.py holds both images
# to one size budget.
K32_CFLAGS := $(K_COMMON) -m32 -march=i686
EFI32_CFLAGS := -I$(EFI_INC) -I$(EFI_INC)/ia32
K32_LDFLAGS := -m elf_i386 -shared -Bsymbolic -nostdlib -znocombreloc --no-undefined --build-id=sha1 \
            -z notext -T linker32.ld
K32_LIBGCC = $(shell $(CC) -m32 -print-libgcc-file-name)
H_CFLAGS := -std=gnu11 -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all \
            -fno-omit-frame-pointer -I. $(WARN) -MMD -MP
H_LDLIBS := -lcmocka

K_OBJS := $(patsubst %.c,$(B)/k/%.o,$(PORTABLE_SRCS) $(KERNEL_ONLY) $(ARCH_MODE64)) \
          $(patsubst %.S,$(B)/k/%.o,$(ARCH_ASM))
K32_OBJS := $(patsubst %.c,$(B)/k32/%.o,$(PORTABLE_SRCS) $(KERNEL_ONLY) $(ARCH_MODE32)) \
          $(patsubst %.S,$(B)/k32/%.o,$(ARCH_ASM32))
K32MB_OBJS := $(patsubst %.c,$(B)/k32mb/%.o,$(filter-out $(BOOT_SRCS),$(PORTABLE_SRCS) $(KERNEL_ONLY) $(ARCH_MODE32)) $(BOOT_MB_SRCS)) \
          $(patsubst %.S,$(B)/k32mb/%.o,$(ARCH_ASM32) $(BOOT_MB_ASM))
H_OBJS := $(patsubst %.c,$(B)/h/%.o,$(PORTABLE_SRCS))
H_SUPPORT_OBJS := $(patsubst %.c,$(B)/h/%.o,$(HOST_TEST_SUPPORT))
# Test support objects are built through a pattern rule; keep make from deleting
# them as intermediates (a concurrent build would then fail to link).
.SECONDARY: $(H_SUPPORT_OBJS)

.PHONY: all image iso pxe floppy run check host-test tool-test model-bench qemu-test qemu-test-ia32 qemu-test-bios bochs-test doc-test check-deps bench clean deps-build deps-run deps-check deps-image FORCE
all: $(B)/BOOTX64.EFI $(B)/BOOTIA32.EFI $(B)/nbprof32.elf

# --- kernel ------------------------------------------------------------------
$(B)/k/boot/%.o: boot/%.c | deps-build
	@mkdir -p $(@D)
	$(if $(V),,@echo "  CC      $<")
	$(Q)$(CC) $(K_OPT) $(K_CFLAGS) $(EFI_CFLAGS) -c $< -o $@

$(B)/k/%.o: %.c | deps-build
	@mkdir -p $(@D)
	$(if $(V),,@echo "  CC      $<")
	$(Q)$(CC) $(K_OPT) $(K_CFLAGS) -c $< -o $@

$(B)/k/%.o: %.S | deps-build
	@mkdir -p $(@D)
	$(if $(V),,@echo "  AS      $<")
	$(Q)$(CC) $(K_OPT) $(K_CFLAGS) -D__ASSEMBLY__ -c $< -o $@

# Two links: the first finds every function's address, tools/build/gensyms turns
# them into the kernel's embedded symbol table, the second link includes it.
# The table lives in .data after .text, so text addresses do not move; the
# third nm pass checks that. Which symbols count is nbproflib/symbols.py's
# parse_nm, so the table is remade when either file changes.
GENSYMS := tools/build/gensyms tools/nbproflib/symbols.py
$(B)/nbprof-pass1.so: $(K_OBJS) $(B)/k/syms-empty.o linker.ld
	$(Q)ld $(K_LDFLAGS) $(EFI_LIBDIR64)/crt0-efi-x86_64.o $(K_OBJS) $(B)/k/syms-empty.o -o $@ \
		-L$(EFI_LIBDIR64) -lefi -lgnuefi

$(B)/k/syms-empty.c: $(GENSYMS) | deps-build
	@mkdir -p $(@D)
	$(Q)$(PYTHON) tools/build/gensyms --empty > $@

$(B)/k/syms.c: $(B)/nbprof-pass1.so $(GENSYMS)
	$(Q)nm -n $< | $(PYTHON) tools/build/gensyms > $@

$(B)/k/%.o: $(B)/k/%.c
	$(Q)$(CC) $(K_OPT) $(K_CFLAGS) -c $< -o $@

$(B)/nbprof.so: $(K_OBJS) $(B)/k/syms.o linker.ld
	$(if $(V),,@echo "  LD      $@")
	$(Q)ld $(K_LDFLAGS) $(EFI_LIBDIR64)/crt0-efi-x86_64.o $(K_OBJS) $(B)/k/syms.o -o $@ \
		-L$(EFI_LIBDIR64) -lefi -lgnuefi
	$(Q)nm -n $@ | $(PYTHON) tools/build/gensyms --check $(B)/k/syms.c

# The PE image gets .bss as a section with no file contents (linker.ld), and
# no .dynsym: gnu-efi's _relocate reads only .dynamic and .rela, whose
# entries are all R_X86_64_RELATIVE (tests/tools/test_image.py checks both).
# No COFF symbol table either (--strip-all): no loader reads one, and the
# symbols live in nbprof.so and in the kernel's own table (tools/build/gensyms).
$(B)/BOOTX64.EFI: $(B)/nbprof.so
	$(if $(V),,@echo "  OBJCOPY $@")
	$(Q)objcopy -j .text -j .sdata -j .data -j .bss -j .dynamic -j .rel -j .rela \
		-j .rel.* -j .rela.* -j .reloc --strip-all --target efi-app-x86_64 --subsystem=10 $< $@

# As for BOOTX64.EFI, .bss is a PE section with no file contents (linker32.ld),
# no .dynsym (gnu-efi's ia32 _relocate reads only .dynamic and the
# R_386_RELATIVE entries of .rel) and no COFF symbol table.
EFI32_SECTIONS := -j .text -j .sdata -j .data -j .bss -j .dynamic -j .rel -j .rela \
		-j .rel.* -j .rela.* -j .reloc

# --- the ia32 kernel: the same steps with the 32-bit compiler and gnu-efi ---
$(B)/k32/boot/%.o: boot/%.c | deps-build
	@mkdir -p $(@D)
	$(if $(V),,@echo "  CC32    $<")
	$(Q)$(CC) $(K_OPT) $(K32_CFLAGS) $(EFI32_CFLAGS) -c $< -o $@

# An ia32 object directory's rules: $(1) the directory, $(2) its flags, $(3)
# and $(4) the compiler's and the assembler's tags in the build's output.
define ia32_objs
$$(B)/$(1)/%.o: %.c | deps-build
	@mkdir -p $$(@D)
	$$(if $$(V),,@echo "  $(3) $$<")
	$$(Q)$$(CC) $$(K_OPT) $(2) -c $$< -o $$@

$$(B)/$(1)/%.o: %.S | deps-build
	@mkdir -p $$(@D)
	$$(if $$(V),,@echo "  $(4) $$<")
	$$(Q)$$(CC) $$(K_OPT) $(2) -D__ASSEMBLY__ -c $$< -o $$@

$$(B)/$(1)/syms-empty.c: $$(GENSYMS) | deps-build
	@mkdir -p $$(@D)
	$$(Q)$$(PYTHON) tools/build/gensyms --empty > $$@

$$(B)/$(1)/%.o: $$(B)/$(1)/%.c
	$$(Q)$$(CC) $$(K_OPT) $(2) -c $$< -o $$@
endef
$(eval $(call ia32_objs,k32,$$(K32_CFLAGS),CC32   ,AS32   ))

$(B)/k32/nbprof-pass1.so: $(K32_OBJS) $(B)/k32/syms-empty.o linker32.ld
	$(Q)ld $(K32_LDFLAGS) $(EFI_LIBDIR32)/crt0-efi-ia32.o $(K32_OBJS) $(B)/k32/syms-empty.o \
		-o $@ -L$(EFI_LIBDIR32) -lefi -lgnuefi $(K32_LIBGCC)

$(B)/k32/syms.c: $(B)/k32/nbprof-pass1.so $(GENSYMS)
	$(Q)nm -n $< | $(PYTHON) tools/build/gensyms > $@

$(B)/k32/nbprof.so: $(K32_OBJS) $(B)/k32/syms.o linker32.ld
	$(if $(V),,@echo "  LD32    $@")
	$(Q)ld $(K32_LDFLAGS) $(EFI_LIBDIR32)/crt0-efi-ia32.o $(K32_OBJS) $(B)/k32/syms.o -o $@ \
		-L$(EFI_LIBDIR32) -lefi -lgnuefi $(K32_LIBGCC)
	$(Q)nm -n $@ | $(PYTHON) tools/build/gensyms --check $(B)/k32/syms.c

$(B)/BOOTIA32.EFI: $(B)/k32/nbprof.so
	$(if $(V),,@echo "  OBJCOPY $@")
	$(Q)objcopy $(EFI32_SECTIONS) --strip-all --target efi-app-ia32 --subsystem=10 $< $@

# The ia32 sources as a Multiboot ELF for GRUB on a legacy BIOS: the main
# kernel, objects in build/k32mb. It is linked at a fixed address
# (linker-multiboot.ld), so its code is not position-independent: no PC
# thunk call and GOT base in every function, about a tenth of the PMI
# handler's instructions (`make bench`). Its files are -O2 or -Os as the
# ia32 EFI kernel's: at -O2 its overflow path and counting window are
# longer, not shorter (32-bit code, 64-bit counts).
K32MB_CFLAGS := $(K32_CFLAGS) -fno-pic
K32MB_LDFLAGS := -m elf_i386 -static -nostdlib --build-id=sha1 -T linker-multiboot.ld
$(addprefix $(B)/k32mb/,$(K_OS_OBJS) $(K32_OS_OBJS)): K_OPT := -Os

$(eval $(call ia32_objs,k32mb,$$(K32MB_CFLAGS),CC32MB ,AS32MB ))

$(B)/k32mb/mb-pass1.elf: $(K32MB_OBJS) $(B)/k32mb/syms-empty.o linker-multiboot.ld
	$(Q)ld $(K32MB_LDFLAGS) $(K32MB_OBJS) $(B)/k32mb/syms-empty.o -o $@ $(K32_LIBGCC)

$(B)/k32mb/mb-syms.c: $(B)/k32mb/mb-pass1.elf $(GENSYMS)
	$(Q)nm -n $< | $(PYTHON) tools/build/gensyms > $@

$(B)/nbprof32.elf: $(K32MB_OBJS) $(B)/k32mb/mb-syms.o linker-multiboot.ld
	$(if $(V),,@echo "  LD32    $@")
	$(Q)ld $(K32MB_LDFLAGS) $(K32MB_OBJS) $(B)/k32mb/mb-syms.o -o $@ $(K32_LIBGCC)
	$(Q)nm -n $@ | $(PYTHON) tools/build/gensyms --check $(B)/k32mb/mb-syms.c

# --- host tests --------------------------------------------------------------
$(B)/h/%.o: %.c | deps-check
	@mkdir -p $(@D)
	$(if $(V),,@echo "  HOSTCC  $<")
	$(Q)$(HOST_CC) $(H_CFLAGS) -c $< -o $@

$(B)/h/libportable.a: $(H_OBJS)
	$(Q)rm -f $@ && ar rcs $@ $^

$(B)/h/tests/test_perf: $(B)/h/prof/perf.o $(B)/h/prof/pebs.o
$(B)/h/tests/test_perf: H_EXTRA := $(B)/h/prof/perf.o $(B)/h/prof/pebs.o
$(B)/h/tests/test_model_pmi: $(B)/h/prof/backend/model_pmi.o
$(B)/h/tests/test_model_pmi: H_EXTRA := $(B)/h/prof/backend/model_pmi.o
$(B)/h/tests/test_model_feed: $(B)/h/prof/backend/model_feed.o
$(B)/h/tests/test_model_feed: H_EXTRA := $(B)/h/prof/backend/model_feed.o
$(B)/h/tests/test_commands $(B)/h/tests/test_cmd_selftest: $(B)/h/tests/host/fake_prof.o
$(B)/h/tests/test_commands $(B)/h/tests/test_cmd_selftest: H_EXTRA := $(B)/h/tests/host/fake_prof.o
$(B)/h/tests/%: tests/host/%.c $(B)/h/libportable.a $(H_SUPPORT_OBJS)
	@mkdir -p $(@D)
	$(if $(V),,@echo "  HOSTLD  $@")
	$(Q)$(HOST_CC) $(H_CFLAGS) $< $(H_SUPPORT_OBJS) $(H_EXTRA) $(B)/h/libportable.a $(H_LDLIBS) -o $@

# Programs built with the SDK (sdk/nbprof-cc) for the loader's host tests and the QEMU tests:
# $(B)/sdk for the 64-bit kernel, $(B)/sdk32 with -m32 for the 32-bit one.
SDK_CC    := sdk/nbprof-cc
SDK_NAMES := hello sumloop prog_reloc prog_div64 prog_printf
SDK_ELFS  := $(patsubst %,$(B)/sdk/%.elf,$(SDK_NAMES)) $(patsubst %,$(B)/sdk32/%.elf,$(SDK_NAMES))
SDK_DEPS  := $(SDK_CC) sdk/crt0.S sdk/nbprintf.c sdk/program.ld sdk/nbprof.h sdk/nbprof_abi.h
define sdk_rules
$(B)/$(1)/%.elf: sdk/examples/%.c $(SDK_DEPS)
	@mkdir -p $$(@D)
	$(Q)$(SDK_CC) $(2) $$< -o $$@
$(B)/$(1)/%.elf: sdk/examples/%.S $(SDK_DEPS)
	@mkdir -p $$(@D)
	$(Q)$(SDK_CC) $(2) $$< -o $$@
$(B)/$(1)/%.elf: tests/host/%.c $(SDK_DEPS)
	@mkdir -p $$(@D)
	$(Q)$(SDK_CC) $(2) $$< -o $$@
endef
$(eval $(call sdk_rules,sdk,))
$(eval $(call sdk_rules,sdk32,-m32))
$(B)/h/tests/test_program: $(SDK_ELFS)
$(B)/h/tests/test_program: H_CFLAGS += -DSDK_ELF_DIR='"$(B)/sdk"' -DSDK32_ELF_DIR='"$(B)/sdk32"'

host-test: $(HOST_TESTS)
	$(Q)$(PYTHON) tools/dev/run-host-tests $(HOST_TESTS)

# Host tools (tools/nbprof-decode) against recordings that the kernel's own
# portable formatters print on the host (tests/tools/dumpgen.c).
DUMPGEN     := $(B)/h/tools/dumpgen
SELFTESTGEN := $(B)/h/tools/selftestgen
TOOL_PYTEST := NBPROF_BUILD=$(B) $(PYTHON) -m pytest -p no:cacheprovider -q tests/tools

$(DUMPGEN): tests/tools/dumpgen.c $(B)/h/libportable.a
	@mkdir -p $(@D)
	$(if $(V),,@echo "  HOSTLD  $@")
	$(Q)$(HOST_CC) $(H_CFLAGS) $< $(B)/h/libportable.a -o $@

$(SELFTESTGEN): tests/tools/selftestgen.c $(B)/h/libportable.a
	@mkdir -p $(@D)
	$(if $(V),,@echo "  HOSTLD  $@")
	$(Q)$(HOST_CC) $(H_CFLAGS) $< $(B)/h/libportable.a -o $@

# The QR encoder, compressor and base45 on the host, read back by zbar and Python (tests/tools/test_qr.py).
QRGEN       := $(B)/h/tools/qrgen

$(QRGEN): tests/tools/qrgen.c $(B)/h/libportable.a
	@mkdir -p $(@D)
	$(if $(V),,@echo "  HOSTLD  $@")
	$(Q)$(HOST_CC) $(H_CFLAGS) $< $(B)/h/libportable.a -o $@

# The kernel's x86 decoder on the host, compared with objdump (tests/tools/test_insnlen.py).
INSNLEN     := $(B)/h/tools/insnlen

$(INSNLEN): tests/tools/insnlen.c $(B)/h/libportable.a
	@mkdir -p $(@D)
	$(if $(V),,@echo "  HOSTLD  $@")
	$(Q)$(HOST_CC) $(H_CFLAGS) $< $(B)/h/libportable.a -o $@

tool-test: $(DUMPGEN) $(SELFTESTGEN) $(QRGEN) $(INSNLEN) $(SDK_ELFS) | deps-check
	$(Q)$(TOOL_PYTEST)

# Host timing of the model's event input, optimised and without sanitizers.
MODEL_BENCH := $(B)/o/model_bench
$(MODEL_BENCH): tests/bench/model_bench.c $(PMU_SRCS) $(LIB_SRCS) $(wildcard pmu/*.h pmu/model/*.h)
	@mkdir -p $(@D)
	$(if $(V),,@echo "  HOSTCC  $@")
	$(Q)$(HOST_CC) -std=gnu11 -O2 -I. $(WARN) tests/bench/model_bench.c $(PMU_SRCS) $(LIB_SRCS) -o $@

model-bench: $(MODEL_BENCH)
	$(Q)./$(MODEL_BENCH)

# --- fuzzing -----------------------------------------------------------------
# libFuzzer harnesses (tests/fuzz/), one per input-facing parser, linked with
# the same portable sources as the host tests, built by clang with ASan and
# UBSan into $(B)/fuzz/. `make fuzz` runs each for FUZZ_SECONDS from its
# committed seed corpus; `make fuzz-ci` is the short pass CI runs (fixed
# seed). A crash fails the run; its reproducer stays in $(B)/fuzz/crashes/.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_CI_SECONDS ?= 11
FUZZ_SEED    ?= 1
FUZZ_NAMES   := config console editor explain mb parse samples shell spec stat
# The parsers of what comes from outside the machine's control: programs,
# upload frames, the firmware's memory map and ACPI/MP tables. Their inputs
# are whole files and tables (up to FUZZ_BIG_LEN bytes); in fuzz-ci each
# runs FUZZ_CI_BIG_SECONDS.
FUZZ_BIG_NAMES := elf upload memmap acpi mptable
FUZZ_BIG_LEN   ?= 16384
FUZZ_CI_BIG_SECONDS ?= 4
FUZZ_BINS    := $(patsubst %,$(B)/fuzz/fuzz_%,$(FUZZ_NAMES))
FUZZ_BIG_BINS := $(patsubst %,$(B)/fuzz/fuzz_%,$(FUZZ_BIG_NAMES))
FUZZ_CFLAGS  := -std=gnu11 -g -O1 -fsanitize=fuzzer-no-link,address,undefined \
                -fno-sanitize-recover=all -fno-omit-frame-pointer -I. $(WARN) -MMD -MP
FUZZ_OBJS    := $(patsubst %.c,$(B)/fuzz/%.o,$(PORTABLE_SRCS) tests/host/fake_platform.c)
FUZZ_RUN     := $(PYTHON) tools/dev/run-fuzz --corpus tests/fuzz/corpus --work $(B)/fuzz
.PHONY: fuzz fuzz-ci fuzz-build deps-fuzz

$(B)/fuzz/%.o: %.c | deps-fuzz
	@mkdir -p $(@D)
	$(if $(V),,@echo "  FUZZCC  $<")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

$(B)/fuzz/libportable.a: $(FUZZ_OBJS)
	$(Q)rm -f $@ && ar rcs $@ $^

$(B)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(B)/fuzz/libportable.a | deps-fuzz
	$(if $(V),,@echo "  FUZZLD  $@")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(B)/fuzz/libportable.a -o $@

$(B)/fuzz/fuzz_elf: FUZZ_CFLAGS += -DSDK_ELF_DIR='"$(B)/sdk"'
$(B)/fuzz/fuzz_elf: $(SDK_ELFS)
$(B)/fuzz/fuzz_acpi: tests/fuzz/acpi_image.h

fuzz-build: $(FUZZ_BINS) $(FUZZ_BIG_BINS)

fuzz: $(FUZZ_BINS) $(FUZZ_BIG_BINS)
	$(Q)$(FUZZ_RUN) --seconds $(FUZZ_SECONDS) $(FUZZ_BINS)
	$(Q)$(FUZZ_RUN) --seconds $(FUZZ_SECONDS) --max-len $(FUZZ_BIG_LEN) $(FUZZ_BIG_BINS)

fuzz-ci: $(FUZZ_BINS) $(FUZZ_BIG_BINS)
	$(Q)$(FUZZ_RUN) --seconds $(FUZZ_CI_SECONDS) --seed $(FUZZ_SEED) $(FUZZ_BINS)
	$(Q)$(FUZZ_RUN) --seconds $(FUZZ_CI_BIG_SECONDS) --seed $(FUZZ_SEED) --max-len $(FUZZ_BIG_LEN) \
		$(FUZZ_BIG_BINS)

# The layers include one way (tools/dev/check-layers: sdk < lib < pmu <
# pmu/model < arch/x86 < workload < prof < prof/backend < selftest < shell <
# kernel < boot, every subfolder walked; docs/dev/layout.md), and every
# source file in the tree is in one of the lists above. Every "PMU reference N.N" citation
# names a heading of docs/reference/netburst-pmu.md, every "QEMU notes PN"
# one a heading of docs/reference/qemu-uefi.md (tools/dev/check-citations).
UNLISTED := $(filter-out $(PORTABLE_SRCS) $(KERNEL_ONLY) $(ARCH_ASM) $(ARCH_ASM32) $(BOOT_MB_SRCS) \
              $(ARCH_MODE64) $(ARCH_MODE32) $(HOST_TEST_SRCS) \
              $(HOST_TEST_SUPPORT) $(HOST_FAKE_PROF) tests/host/prog_reloc.c tests/host/prog_div64.c \
              tests/host/prog_printf.c, \
              $(wildcard boot/*.c arch/x86/*.c arch/x86/*.S arch/x86/32/*.[cS] arch/x86/64/*.[cS] \
                         kernel/*.c lib/*.c workload/*.c prof/*.c prof/backend/*.c selftest/*.c \
                         shell/*.c pmu/*.c pmu/model/*.c tests/host/*.c))
check-deps:
	$(Q)$(PYTHON) tools/dev/check-layers
	$(Q)$(PYTHON) tools/dev/check-citations
	$(Q)test -z "$(strip $(UNLISTED))" \
		|| (echo "check-deps: not in the Makefile's source lists: $(strip $(UNLISTED))"; exit 1)

# --- image, QEMU, tests ------------------------------------------------------
# CFG=path puts that file on the ESP as nbprof.cfg. Its content is kept in
# $(B)/image.cfg, rewritten only when it changes, so the image is rebuilt
# exactly when the kernel, the tool or the configuration changed.
IMAGE       := $(B)/nbprof.img
QEMU_FLAGS  ?=
PYTEST      := NBPROF_BUILD=$(B) $(PYTHON) -m pytest -p no:cacheprovider -q tests/qemu $(PYTEST_FLAGS)
# The 32-bit kernel runs representative subsets in `make check`: under OVMF
# ia32 the shell, exact instruction counts, counting and sampling; booted by
# SeaBIOS and GRUB the shell, the counts, sampling, PEBS and Hyper-Threading. Users'
# programs (nbprof-cc -m32) in both: from the stick (the ESP's files under
# UEFI, Multiboot modules under GRUB), uploaded, counted, sampled, through
# tools/nbprof; on both LPs after a BIOS boot; static Linux programs (gcc
# -m32 -static) after a BIOS boot. A CPU without long mode in both. `make qemu-test-ia32 IA32_TESTS=` (or qemu-test-bios BIOS_TESTS=)
# runs every module.
IA32_TESTS  ?= test_shell test_workloads test_stat test_record test_programs
BIOS_TESTS  ?= test_shell test_workloads test_record test_pebs test_ht test_smp test_refuse \
               test_programs test_programs_ht test_selftest_skid test_storm test_linux
qemu_subset = NBPROF_BUILD=$(B) $(PYTHON) -m pytest -p no:cacheprovider -q \
               --nbprof-firmware=$(1) \
               $(if $(strip $(2)),$(patsubst %,tests/qemu/%.py,$(2)),tests/qemu) $(PYTEST_FLAGS)
PYTEST_IA32 := $(call qemu_subset,uefi-ia32,$(IA32_TESTS))
# x86-64 modules that `make check` runs in its second lane, so that the two
# lanes take about as long (LANE2_TESTS= keeps them all in the first). Idle,
# with these three: about 8 1/2 minutes each (the first lane holds the host
# tests, the other x86-64 modules and the documentation examples).
LANE2_TESTS ?= test_stat test_programs test_host_command
PYTEST_LANE1 := $(PYTEST) $(patsubst %,--ignore=tests/qemu/%.py,$(LANE2_TESTS))
PYTEST_LANE2 := $(if $(strip $(LANE2_TESTS)),$(call qemu_subset,uefi-x64,$(LANE2_TESTS)),true)
PYTEST_BIOS := $(call qemu_subset,bios,$(BIOS_TESTS))
# Bochs, a second emulator with real Pentium 4 CPUID and a NetBurst PMU of
# plain registers that never count: the BIOS path of the image (tests/bochs).
PYTEST_BOCHS := NBPROF_BUILD=$(B) $(PYTHON) -m pytest -p no:cacheprovider -q tests/bochs \
                $(PYTEST_FLAGS)

# The documentation's examples (tests/docs, docs/dev/testing.md): every shell
# example that shows output runs on the machine its page names, under QEMU
# -icount, and its output is compared with the page; host examples run too
# (tools/nbprof boots build/nbprof.img). DOC_LANE: the lane of `make check`
# that runs them (1 or 2).
DOC_PYTEST := NBPROF_BUILD=$(B) $(PYTHON) -m pytest -p no:cacheprovider -q tests/docs $(PYTEST_FLAGS)
DOC_LANE ?= 1
DOC_STAGE = NBPROF_COUNTS=$(B)/docs.counts $(DOC_PYTEST) || d=$$?;

doc-test: $(B)/BOOTX64.EFI $(B)/BOOTIA32.EFI $(B)/nbprof32.elf $(IMAGE) tools/build/mkimage | deps-check
	$(Q)$(DOC_PYTEST)

bochs-test: $(B)/BOOTX64.EFI $(B)/nbprof32.elf tools/build/mkimage | deps-check
	$(Q)$(PYTEST_BOCHS)

$(B)/image.cfg: FORCE
	@mkdir -p $(@D)
	$(Q)$(if $(CFG),cat "$(CFG)",true) > $@.new && \
		{ cmp -s $@.new $@ && rm -f $@.new || mv -f $@.new $@; }

# PROGRAMS="a.elf b.elf" puts users' programs in the ESP's nbprof/ folder (read at boot).
$(B)/image.programs: FORCE
	@mkdir -p $(@D)
	$(Q)echo "$(PROGRAMS)" > $@.new && { cmp -s $@.new $@ && rm -f $@.new || mv -f $@.new $@; }

$(IMAGE): $(B)/BOOTX64.EFI $(B)/BOOTIA32.EFI $(B)/nbprof32.elf $(B)/image.cfg \
		$(B)/image.programs $(PROGRAMS) tools/build/mkimage tools/build/grubmenu | deps-image
	$(if $(V),,@echo "  IMAGE   $@")
	$(Q)tools/build/mkimage --ia32 $(B)/BOOTIA32.EFI --bios $(B)/nbprof32.elf $@ $(B)/BOOTX64.EFI \
		"$(if $(CFG),$(B)/image.cfg)" $(PROGRAMS)

image: $(IMAGE)

# The CD (also bootable from a stick): BIOS El Torito with GRUB, UEFI El
# Torito with both EFI kernels; nbprof.cfg and PROGRAMS on it (tools/build/mkiso).
ISO := $(B)/nbprof.iso
$(ISO): $(B)/BOOTX64.EFI $(B)/BOOTIA32.EFI $(B)/nbprof32.elf $(B)/image.cfg \
		$(B)/image.programs $(PROGRAMS) tools/build/mkiso | deps-image
	$(if $(V),,@echo "  ISO     $@")
	$(Q)tools/build/mkiso $@ $(B)/BOOTX64.EFI $(B)/BOOTIA32.EFI $(B)/nbprof32.elf \
		"$(if $(CFG),$(B)/image.cfg)" $(PROGRAMS)

iso: $(ISO)

# A TFTP root for network boot: nbprof32.elf, nbprof.cfg, an iPXE script and
# a PXELINUX configuration (tools/build/mkpxe).
PXE := $(B)/pxe/nbprof.ipxe
$(PXE): $(B)/nbprof32.elf $(B)/image.cfg tools/build/mkpxe
	$(if $(V),,@echo "  PXE     $(@D)")
	$(Q)tools/build/mkpxe $(@D) $(B)/nbprof32.elf "$(if $(CFG),$(B)/image.cfg)"

pxe: $(PXE)

# A 1.44 MB floppy (FAT12) for a legacy BIOS: GRUB, nbprof32.elf and nbprof.cfg
# (tools/build/mkfloppy); written to a stick, it boots where a BIOS shows a
# stick as a floppy (USB-FDD) or a ZIP drive.
FLOPPY := $(B)/nbprof-floppy.img
$(FLOPPY): $(B)/nbprof32.elf $(B)/image.cfg tools/build/mkfloppy tools/build/grubmenu | deps-image
	$(if $(V),,@echo "  FLOPPY  $@")
	$(Q)tools/build/mkfloppy $@ $(B)/nbprof32.elf "$(if $(CFG),$(B)/image.cfg)"

floppy: $(FLOPPY)

# QEMU_FLAGS: tools/qemu.py options, e.g. QEMU_FLAGS="--smp-ht --sig 15,2,9".
run: $(IMAGE) | deps-run
	$(Q)$(PYTHON) tools/qemu.py --image $(IMAGE) $(QEMU_FLAGS)

# The QEMU tests make their own images from build/BOOTX64.EFI (and BOOTIA32.EFI).
qemu-test: $(B)/BOOTX64.EFI $(B)/BOOTIA32.EFI $(B)/nbprof32.elf tools/build/mkimage | deps-check
	$(Q)$(PYTEST)

qemu-test-ia32: $(B)/BOOTX64.EFI $(B)/BOOTIA32.EFI tools/build/mkimage | deps-check
	$(Q)$(PYTEST_IA32)

qemu-test-bios: $(B)/BOOTX64.EFI $(B)/nbprof32.elf tools/build/mkimage | deps-check
	$(Q)$(PYTEST_BIOS)

# Every stage runs even when an earlier one failed; the last line adds up
# host and QEMU test counts. The stages run in two lanes, one machine each
# (two fit two cores): host tests and the x86-64 kernel on this terminal;
# the tools, the x86-64 modules in LANE2_TESTS, the 32-bit kernel (OVMF ia32,
# SeaBIOS) and Bochs beside them, their output
# kept in $(B)/check-lane2.log and shown when both lanes are done.
# CHECK_LANES=1 runs every stage one after the other.
CHECK_LANES ?= 2
LANE2_OUT = $(if $(filter 1,$(CHECK_LANES)),;,> $(B)/check-lane2.log 2>&1 &)
check: $(HOST_TESTS) $(DUMPGEN) $(SELFTESTGEN) $(QRGEN) $(INSNLEN) $(SDK_ELFS) $(B)/BOOTX64.EFI \
		$(B)/BOOTIA32.EFI $(B)/nbprof32.elf $(IMAGE) check-deps | deps-check
	$(Q)rm -f $(B)/host.counts $(B)/tools.counts $(B)/qemu.counts $(B)/qemu-ia32.counts \
		$(B)/qemu-bios.counts $(B)/bochs.counts $(B)/qemu-lane2.counts $(B)/check-lane2.log \
		$(B)/check-lane2.status $(B)/docs.counts $(B)/docs.status; \
	h=0; t=0; q=0; q2=0; i=0; b=0; o=0; d=0; \
	$(if $(filter 1,$(CHECK_LANES)),,echo "check: the tool, 32-bit kernel, Bochs and LANE2_TESTS stages run beside this lane; their output follows at the end";) \
	( t=0; q2=0; i=0; b=0; o=0; d=0; \
	  NBPROF_COUNTS=$(B)/tools.counts $(TOOL_PYTEST) || t=$$?; \
	  $(if $(filter 2,$(DOC_LANE)),$(DOC_STAGE) echo $$d > $(B)/docs.status;) \
	  $(if $(strip $(LANE2_TESTS)),,echo "0 0" > $(B)/qemu-lane2.counts;) \
	  NBPROF_COUNTS=$(B)/qemu-lane2.counts $(PYTEST_LANE2) || q2=$$?; \
	  NBPROF_COUNTS=$(B)/qemu-ia32.counts $(PYTEST_IA32) || i=$$?; \
	  NBPROF_COUNTS=$(B)/qemu-bios.counts $(PYTEST_BIOS) || b=$$?; \
	  NBPROF_COUNTS=$(B)/bochs.counts $(PYTEST_BOCHS) || o=$$?; \
	  echo "$$t $$q2 $$i $$b $$o" > $(B)/check-lane2.status ) $(LANE2_OUT) \
	$(PYTHON) tools/dev/run-host-tests --counts $(B)/host.counts $(HOST_TESTS) || h=$$?; \
	NBPROF_COUNTS=$(B)/qemu.counts $(PYTEST_LANE1) || q=$$?; \
	$(if $(filter 2,$(DOC_LANE)),,$(DOC_STAGE)) \
	wait; \
	if [ -f $(B)/check-lane2.log ]; then echo "check: the tool, 32-bit kernel, Bochs and LANE2_TESTS stages:"; cat $(B)/check-lane2.log; fi; \
	read t q2 i b o < $(B)/check-lane2.status || t=1; \
	$(if $(filter 2,$(DOC_LANE)),read d < $(B)/docs.status || d=1;) \
	$(PYTHON) tools/dev/check-summary host:$$h:$(B)/host.counts tools:$$t:$(B)/tools.counts \
		qemu:$$q:$(B)/qemu.counts qemu-lane2:$$q2:$(B)/qemu-lane2.counts \
		qemu-ia32:$$i:$(B)/qemu-ia32.counts \
		qemu-bios:$$b:$(B)/qemu-bios.counts bochs:$$o:$(B)/bochs.counts \
		docs:$$d:$(B)/docs.counts

# Cost of stat's start/stop/read and the spread of an empty measurement,
# under QEMU -icount shift=7 (1 instruction = 128 TSC cycles).
bench: $(IMAGE) $(SDK_ELFS) $(B)/nbprof32.elf | deps-run
	$(Q)$(PYTHON) tools/dev/bench.py --image $(IMAGE)

FORCE:

deps-build:
	$(Q)tools/build/ensure-deps build
deps-image:
	$(Q)tools/build/ensure-deps image
deps-run:
	$(Q)tools/build/ensure-deps run
deps-check:
	$(Q)tools/build/ensure-deps check
deps-fuzz:
	$(Q)tools/build/ensure-deps fuzz

clean:
	rm -rf $(B)

-include $(shell find $(B) -name '*.d' 2>/dev/null)
