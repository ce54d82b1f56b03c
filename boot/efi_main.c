/*
 * efi_main.c - the only code that talks to UEFI.
 *
 * Runs once, under boot services: reads the optional nbprof.cfg from the
 * root of the volume we were loaded from and the users' programs in its
 * nbprof/ folder (into EfiLoaderData pages, which the kernel keeps), finds the ACPI RSDP and the GOP
 * framebuffer, allocates the kernel's stacks and one page below 1 MiB (kept
 * for the application-processor start-up trampoline), then reads the memory
 * map and calls ExitBootServices, retrying while the map key is stale.
 * Everything the kernel needs is copied into one struct bootinfo inside the
 * image (EfiLoaderCode/Data, so it survives); firmware is never called again.
 *
 * Hazards:
 *  - efi_main is called by gnu-efi's crt0 with the SysV ABI, so it must not
 *    be EFIAPI (QEMU notes P1). Calls *into* the firmware are ms_abi
 *    through the prototypes (GNU_EFI_USE_MS_ABI).
 *  - After ExitBootServices our stack and the firmware's page tables are in
 *    EfiBootServicesData (QEMU notes P4): the hand-off switches to the
 *    kernel stack allocated here at once, and the kernel builds its own
 *    page tables before it reclaims that memory.
 *  - Between a failed ExitBootServices and the next attempt only
 *    GetMemoryMap may be called (UEFI 2.x, 7.4), so the map buffer is
 *    allocated once, with slack, before the first attempt.
 *  - .bss is a section that takes no room in the file (linker.ld). A PE
 *    loader zero-fills a section past its SizeOfRawData up to its
 *    VirtualSize (PE/COFF specification; EDK2's BasePeCoffLib, hence OVMF,
 *    does so in PeCoffLoaderLoadImage), but a firmware with another loader
 *    might not: efi_main clears .bss itself before anything uses it.
 */
/* gnu-efi 3.0.15's headers have old-style declarations (efiapi.h). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <efi.h>
#pragma GCC diagnostic pop

#include "arch/x86/arch.h"
#include "arch/x86/bootinfo.h"
#include "arch/x86/memmap.h"
#include "lib/string.h"

#define EBS_MAX_ATTEMPTS	8
#define MAP_SLACK_DESCRIPTORS	64

/* Called by gnu-efi's crt0 (SysV ABI, see above). */
EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *st);

static struct bootinfo bootinfo;

/* Bounds of .bss (linker.ld). */
extern char __bss_start[] __attribute__((visibility("hidden")));
extern char __bss_end[] __attribute__((visibility("hidden")));

/*
 * The protocol and table GUIDs this file asks the firmware for: constants.
 * The boot services take them through non-const pointers (EFI_GUID *) but
 * only read them (UEFI 2.x, HandleProtocol and LocateProtocol: IN
 * parameters), hence efi_guid().
 */
static const EFI_GUID loaded_image_guid = EFI_LOADED_IMAGE_PROTOCOL_GUID;
static const EFI_GUID sfs_guid = EFI_SIMPLE_FILE_SYSTEM_PROTOCOL_GUID;
static const EFI_GUID gop_guid = EFI_GRAPHICS_OUTPUT_PROTOCOL_GUID;
static const EFI_GUID acpi20_guid = ACPI_20_TABLE_GUID;
static const EFI_GUID acpi10_guid = ACPI_TABLE_GUID;

static EFI_GUID *efi_guid(const EFI_GUID *g)
{
	return (EFI_GUID *)(uintptr_t)g;
}

static void boot_say(EFI_SYSTEM_TABLE *st, CHAR16 *msg)
{
	st->ConOut->OutputString(st->ConOut, msg);
}

/* Read all of nbprof.cfg into bi->cfg; a missing file is not an error. */
static void boot_read_cfg(EFI_BOOT_SERVICES *bs, EFI_HANDLE device, struct bootinfo *bi)
{
	static CHAR16 name[] = L"nbprof.cfg";
	EFI_SIMPLE_FILE_SYSTEM_PROTOCOL *fs;
	EFI_FILE_HANDLE root, file;
	UINTN n = BOOT_CFG_MAX, extra = 1;
	char probe;

	bi->cfg_status = BOOT_CFG_ABSENT;
	if (bs->HandleProtocol(device, efi_guid(&sfs_guid), (void **)&fs) != EFI_SUCCESS)
		return;
	if (fs->OpenVolume(fs, &root) != EFI_SUCCESS)
		return;
	if (root->Open(root, &file, name, EFI_FILE_MODE_READ, 0) != EFI_SUCCESS) {
		root->Close(root);
		return;
	}
	if (file->Read(file, &n, bi->cfg) != EFI_SUCCESS) {
		bi->cfg_status = BOOT_CFG_READ_ERROR;
	} else if (n == BOOT_CFG_MAX && file->Read(file, &extra, &probe) == EFI_SUCCESS &&
		   extra != 0) {
		bi->cfg_status = BOOT_CFG_TOO_BIG;
	} else {
		bi->cfg_status = BOOT_CFG_OK;
		bi->cfg_len = (uint32_t)n;
	}
	file->Close(file);
	root->Close(root);
}

/* One file of the nbprof/ folder into fresh EfiLoaderData pages. */
static EFI_STATUS boot_alloc_pages(EFI_BOOT_SERVICES *bs, UINTN bytes, uint64_t *out);

static void boot_read_one(EFI_BOOT_SERVICES *bs, EFI_FILE_HANDLE dir, EFI_FILE_INFO *info,
			  struct boot_file *f)
{
	EFI_FILE_HANDLE file;
	UINTN n = info->FileSize;

	f->size = info->FileSize;
	f->status = BOOT_CFG_READ_ERROR;
	if (info->FileSize == 0 || info->FileSize > BOOT_FILE_MAX) {
		f->status = BOOT_CFG_TOO_BIG;
		return;
	}
	if (dir->Open(dir, &file, info->FileName, EFI_FILE_MODE_READ, 0) != EFI_SUCCESS)
		return;
	if (boot_alloc_pages(bs, n, &f->base) == EFI_SUCCESS &&
	    file->Read(file, &n, (void *)(UINTN)f->base) == EFI_SUCCESS && n == info->FileSize)
		f->status = BOOT_CFG_OK;
	else
		f->base = 0;
	file->Close(file);
}

/* ASCII copy of a FAT long name; false when it does not fit or is not ASCII. */
static int boot_file_name(const CHAR16 *in, char *out)
{
	unsigned i;

	for (i = 0; in[i]; i++) {
		if (i + 1 >= BOOT_FILE_NAME || in[i] > 0x7e || in[i] < 0x20)
			return 0;
		out[i] = (char)in[i];
	}
	out[i] = '\0';
	return i > 0;
}

/*
 * The files of \nbprof\ (users' programs; UEFI 2.x 13.5 EFI_FILE_PROTOCOL:
 * Read on a directory returns one EFI_FILE_INFO per call, size 0 at the end).
 */
static void boot_read_programs(EFI_BOOT_SERVICES *bs, EFI_HANDLE device, struct bootinfo *bi)
{
	static CHAR16 name[] = L"nbprof";
	static uint64_t buf[128];	/* EFI_FILE_INFO with its name */
	EFI_SIMPLE_FILE_SYSTEM_PROTOCOL *fs;
	EFI_FILE_HANDLE root, dir;
	EFI_FILE_INFO *info = (EFI_FILE_INFO *)buf;

	if (bs->HandleProtocol(device, efi_guid(&sfs_guid), (void **)&fs) != EFI_SUCCESS ||
	    fs->OpenVolume(fs, &root) != EFI_SUCCESS)
		return;
	if (root->Open(root, &dir, name, EFI_FILE_MODE_READ, 0) == EFI_SUCCESS) {
		for (;;) {
			UINTN n = sizeof(buf);
			struct boot_file *f = &bi->files[bi->nfiles];

			if (dir->Read(dir, &n, info) != EFI_SUCCESS || n == 0)
				break;
			if (info->Attribute & EFI_FILE_DIRECTORY)
				continue;
			if (bi->nfiles >= BOOT_MAX_FILES || !boot_file_name(info->FileName, f->name)) {
				bi->files_skipped++;
				continue;
			}
			boot_read_one(bs, dir, info, f);
			bi->nfiles++;
		}
		dir->Close(dir);
	}
	root->Close(root);
}

/* The ACPI 2.0+ RSDP if the firmware lists one, else the 1.0 one. */
static void boot_find_rsdp(EFI_SYSTEM_TABLE *st, struct bootinfo *bi)
{
	for (UINTN i = 0; i < st->NumberOfTableEntries; i++) {
		EFI_CONFIGURATION_TABLE *t = &st->ConfigurationTable[i];

		if (memcmp(&t->VendorGuid, &acpi20_guid, sizeof(EFI_GUID)) == 0) {
			bi->rsdp = (uint64_t)(UINTN)t->VendorTable;
			bi->rsdp_revision = 2;
			return;
		}
		if (memcmp(&t->VendorGuid, &acpi10_guid, sizeof(EFI_GUID)) == 0 && !bi->rsdp)
			bi->rsdp = (uint64_t)(UINTN)t->VendorTable;
	}
}

static void boot_find_gop(EFI_BOOT_SERVICES *bs, struct bootinfo *bi)
{
	EFI_GRAPHICS_OUTPUT_PROTOCOL *gop;
	EFI_GRAPHICS_OUTPUT_MODE_INFORMATION *info;

	if (bs->LocateProtocol(efi_guid(&gop_guid), NULL, (void **)&gop) != EFI_SUCCESS || !gop->Mode)
		return;
	info = gop->Mode->Info;
	if (!info || info->PixelFormat == PixelBltOnly)
		return;
	bi->fb.base = gop->Mode->FrameBufferBase;
	bi->fb.size = gop->Mode->FrameBufferSize;
	bi->fb.width = info->HorizontalResolution;
	bi->fb.height = info->VerticalResolution;
	bi->fb.stride = info->PixelsPerScanLine;
	bi->fb.format = (uint32_t)info->PixelFormat;
}

static EFI_STATUS boot_alloc_pages(EFI_BOOT_SERVICES *bs, UINTN bytes, uint64_t *out)
{
	EFI_PHYSICAL_ADDRESS a = 0;
	EFI_STATUS s = bs->AllocatePages(AllocateAnyPages, EfiLoaderData,
					 (bytes + EFI_PAGE_SIZE - 1) / EFI_PAGE_SIZE, &a);

	*out = a;
	return s;
}

/*
 * Kernel stacks and the low page. Only the low page may fail. The low page
 * is a page below 1 MiB that AllocatePages takes from EfiConventionalMemory
 * (UEFI 2.x, 7.2). The UEFI memory map is authoritative: memory the firmware
 * or a CSM keeps (an EBDA included) has another type there, and the legacy
 * BIOS data area (40EH, 413H) that boot/multiboot.c must believe need not
 * exist under UEFI at all. So no EBDA cap here.
 */
static EFI_STATUS boot_alloc_stacks(EFI_BOOT_SERVICES *bs, struct bootinfo *bi)
{
	EFI_PHYSICAL_ADDRESS low = 0xFFFFF;
	EFI_STATUS s = boot_alloc_pages(bs, BOOT_STACK_SIZE, &bi->stack_base);

	for (int i = 0; i < BOOT_NIST && s == EFI_SUCCESS; i++)
		s = boot_alloc_pages(bs, BOOT_IST_SIZE, &bi->ist_base[i]);
	if (s != EFI_SUCCESS)
		return s;
	if (bs->AllocatePages(AllocateMaxAddress, EfiLoaderData, 1, &low) == EFI_SUCCESS)
		bi->low_page = low;
	return EFI_SUCCESS;
}

static enum boot_mem_type boot_mem_type(UINT32 efi_type)
{
	switch (efi_type) {
	case EfiConventionalMemory:	return BMEM_FREE;
	case EfiBootServicesCode:
	case EfiBootServicesData:	return BMEM_BOOT;
	case EfiLoaderCode:
	case EfiLoaderData:		return BMEM_LOADER;
	case EfiACPIReclaimMemory:	return BMEM_ACPI;
	case EfiACPIMemoryNVS:		return BMEM_ACPI_NVS;
	case EfiRuntimeServicesCode:
	case EfiRuntimeServicesData:	return BMEM_RUNTIME;
	case EfiMemoryMappedIO:
	case EfiMemoryMappedIOPortSpace: return BMEM_MMIO;
	default:			return BMEM_RESERVED;
	}
}

/* The firmware's map as read; memmap_normalize makes bi->regions of it. */
static struct boot_region boot_raw[BOOT_MAX_REGIONS];

/* Pure: runs after ExitBootServices on the firmware's final map. */
static void boot_convert_map(struct bootinfo *bi, const uint8_t *map, UINTN map_size, UINTN desc_size)
{
	uint32_t n = 0;

	if (desc_size < sizeof(EFI_MEMORY_DESCRIPTOR))
		return;		/* no map we can read: no memory is free */
	bi->efi_map_entries = (uint32_t)(map_size / desc_size);
	for (UINTN off = 0; off + desc_size <= map_size && n < BOOT_MAX_REGIONS; off += desc_size) {
		const EFI_MEMORY_DESCRIPTOR *d = (const EFI_MEMORY_DESCRIPTOR *)(map + off);
		uint64_t pages = d->NumberOfPages;

		if (pages == 0)
			continue;
		boot_raw[n++] = (struct boot_region){
			.base = d->PhysicalStart,
			.size = pages > UINT64_MAX / EFI_PAGE_SIZE ? UINT64_MAX : pages * EFI_PAGE_SIZE,
			.type = boot_mem_type(d->Type),
		};
	}
	bi->nregions = memmap_normalize(boot_raw, n, bi->regions, BOOT_MAX_REGIONS);
}

static EFI_STATUS boot_exit(EFI_HANDLE image, EFI_BOOT_SERVICES *bs, struct bootinfo *bi)
{
	UINTN size = 0, cap, key, desc_size;
	UINT32 desc_version;
	uint8_t *map = NULL;
	EFI_STATUS s;

	s = bs->GetMemoryMap(&size, NULL, &key, &desc_size, &desc_version);
	if (s != EFI_BUFFER_TOO_SMALL)
		return s;
	cap = size + MAP_SLACK_DESCRIPTORS * desc_size;
	s = bs->AllocatePool(EfiLoaderData, cap, (void **)&map);
	if (s != EFI_SUCCESS)
		return s;
	for (int attempt = 1; attempt <= EBS_MAX_ATTEMPTS; attempt++) {
		size = cap;
		s = bs->GetMemoryMap(&size, (EFI_MEMORY_DESCRIPTOR *)map, &key, &desc_size,
				     &desc_version);
		if (s != EFI_SUCCESS)
			return s;
		s = bs->ExitBootServices(image, key);
		if (s == EFI_SUCCESS) {
			bi->ebs_attempts = (uint32_t)attempt;
			boot_convert_map(bi, map, size, desc_size);
			return EFI_SUCCESS;
		}
		if (s != EFI_INVALID_PARAMETER)	/* anything but a stale key is fatal */
			return s;
	}
	return s;
}

static void boot_enter_kernel(void *arg)
{
	kmain(arg);
}

/* Zero .bss; nothing before efi_main (crt0, _relocate) writes to it. */
static void boot_clear_bss(void)
{
	memset(__bss_start, 0, (size_t)(__bss_end - __bss_start));
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *st)
{
	EFI_BOOT_SERVICES *bs = st->BootServices;
	struct bootinfo *bi = &bootinfo;
	EFI_LOADED_IMAGE *li;

	boot_clear_bss();
	if (bs->HandleProtocol(image, efi_guid(&loaded_image_guid), (void **)&li) != EFI_SUCCESS) {
		boot_say(st, L"nbprof: no LoadedImage protocol\r\n");
		return EFI_LOAD_ERROR;
	}
	bi->image_base = (uint64_t)(UINTN)li->ImageBase;
	bi->image_size = li->ImageSize;
	boot_read_cfg(bs, li->DeviceHandle, bi);
	boot_read_programs(bs, li->DeviceHandle, bi);
	boot_find_rsdp(st, bi);
	boot_find_gop(bs, bi);
	if (boot_alloc_stacks(bs, bi) != EFI_SUCCESS) {
		boot_say(st, L"nbprof: cannot allocate kernel stacks\r\n");
		return EFI_OUT_OF_RESOURCES;
	}
	if (boot_exit(image, bs, bi) != EFI_SUCCESS) {
		/* Boot services may be partly shut down; ConOut is the best we have. */
		boot_say(st, L"nbprof: ExitBootServices failed\r\n");
		return EFI_ABORTED;
	}
	arch_call_on_stack(bi->stack_base + BOOT_STACK_SIZE, boot_enter_kernel, bi);
}
