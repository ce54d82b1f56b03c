/*
 * multiboot_entry.S - the Multiboot header and entry of the ia32 kernel
 * booted from a legacy BIOS by GRUB (i386-pc), see boot/multiboot.c.
 *
 * Multiboot 0.6.96 (section 3.1): the header lies in the first 8 KiB of the
 * file, 4-byte aligned: magic 1BADB002H, flags, checksum (the three add up
 * to 0). Flags: bit 0 (modules page aligned), bit 1 (the loader passes the
 * memory map). The kernel is an ELF file, so no address fields (bit 16).
 *
 * At entry (section 3.2): 32-bit protected mode, paging off, CS/DS/ES/SS
 * flat 4 GiB, interrupts off, EAX = 2BADB002H, EBX = the Multiboot
 * information structure, ESP undefined. The entry loads a stack of its own
 * and calls multiboot_main(magic, info), which does not return.
 */

#define MULTIBOOT_MAGIC		0x1badb002
#define MULTIBOOT_FLAGS		0x00000003
#define ENTRY_STACK_SIZE	16384

	.section .multiboot, "a"
	.balign 4
	.long MULTIBOOT_MAGIC
	.long MULTIBOOT_FLAGS
	.long -(MULTIBOOT_MAGIC + MULTIBOOT_FLAGS)

	.text
	.globl multiboot_start
	.type multiboot_start, @function
multiboot_start:
	cli
	cld
	movl $entry_stack + ENTRY_STACK_SIZE, %esp
	xorl %ebp, %ebp
	pushl $0			/* keep the call site 16-byte aligned */
	pushl $0
	pushl %ebx
	pushl %eax
	call multiboot_main
1:	cli
	hlt
	jmp 1b
	.size multiboot_start, . - multiboot_start

	.bss
	.balign 16
entry_stack:
	.skip ENTRY_STACK_SIZE

	.section .note.GNU-stack, "", @progbits
