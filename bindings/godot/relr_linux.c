//go:build linux

// relr_linux.c: the library applies its own packed relative relocations.
//
// ./build.sh links the Linux libraries with -z pack-relative-relocs: the
// 64,000 relative relocations of a Go library (every pointer in its type
// data and tables) then take 21 kB as DT_RELR instead of 1.5 MB as RELA,
// about an eighth of the library. But only glibc 2.36 and later apply
// DT_RELR, the linker makes such a library need the version
// GLIBC_ABI_DT_RELR (so older loaders refuse it), and a 2.36+ loader
// refuses a DT_RELR table without that need. So build.sh (tools/relr)
// removes the need, renames the DT_RELR tags into a range every loader
// ignores (NZ_DT_HIDDEN), and names nearzero_relr_init as the library's
// DT_INIT, which every glibc calls after its own relocation and before the
// DT_INIT_ARRAY constructors (the Go runtime's start among them). It
// applies the table, the same way on every glibc.
//
// A library built without tools/relr stays correct: plain RELA (a plain
// go build), or DT_RELR the loader applies (2.36+): nz_relr_probe then
// reads as relocated, and nothing is done twice.
//
// Nothing here may use a pointer the table relocates: only PC-relative
// addresses of hidden symbols, values read from the ELF headers and the
// dynamic section (which hold offsets from the load address), and calls
// through the PLT (relocated by the loader with the ordinary RELA table).

#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef DT_RELR
#define DT_RELRSZ 35
#define DT_RELR 36
#endif

// NZ_DT_HIDDEN is what tools/relr adds to the DT_RELR tags: loaders ignore
// tags in this range (DT_LOOS to DT_HIOS, outside the ones glibc knows).
#define NZ_DT_HIDDEN 0x6000d000

typedef ElfW(Addr) nz_relr_t;

extern ElfW(Dyn) _DYNAMIC[] __attribute__((visibility("hidden")));
extern const ElfW(Ehdr) __ehdr_start __attribute__((visibility("hidden")));
extern void _init(void) __attribute__((visibility("hidden")));

// nz_relr_probe points at itself once relocated: before, it holds its
// link-time address, so the difference is the load bias.
static void *const nz_relr_probe __attribute__((used)) = (void *)&nz_relr_probe;

// nz_relr_apply applies the DT_RELR table at relr (size bytes) with load
// bias bias: an even entry is an address to relocate, an odd one a bitmap
// of the 63 (31) words after the last.
static void nz_relr_apply(uintptr_t bias, const nz_relr_t *relr, size_t size) {
	nz_relr_t *where = 0;
	for (size_t i = 0; i < size / sizeof(nz_relr_t); i++) {
		nz_relr_t e = relr[i];
		if ((e & 1) == 0) {
			where = (nz_relr_t *)(bias + e);
			*where++ += bias;
			continue;
		}
		for (size_t j = 0; (e >>= 1) != 0; j++) {
			if (e & 1) {
				where[j] += bias;
			}
		}
		where += 8 * sizeof(nz_relr_t) - 1;
	}
}

// nz_relro_protect sets prot on the whole pages of the library's RELRO
// segment (the ones the loader made read-only). It reports whether it did.
static int nz_relro_protect(uintptr_t bias, int prot) {
	const ElfW(Ehdr) *eh = &__ehdr_start;
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff);
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_GNU_RELRO) {
			continue;
		}
		uintptr_t start = (bias + ph[i].p_vaddr) & ~(page - 1);
		uintptr_t end = (bias + ph[i].p_vaddr + ph[i].p_memsz) & ~(page - 1);
		return end <= start || mprotect((void *)start, end - start, prot) == 0;
	}
	return 1;
}

// nearzero_relr_init is the library's DT_INIT (build.sh links it with
// -init): it relocates what the loader left, then runs the C runtime's
// _init, the DT_INIT it replaces.
void nearzero_relr_init(void) {
	void *const volatile *probe = &nz_relr_probe;
	uintptr_t bias = (uintptr_t)probe - (uintptr_t)*probe;
	if (bias != 0) {
		const nz_relr_t *relr = 0;
		size_t size = 0;
		for (const ElfW(Dyn) *d = _DYNAMIC; d->d_tag != DT_NULL; d++) {
			switch (d->d_tag) {
			case DT_RELR:
			case DT_RELR + NZ_DT_HIDDEN:
				relr = (const nz_relr_t *)(bias + d->d_un.d_ptr);
				break;
			case DT_RELRSZ:
			case DT_RELRSZ + NZ_DT_HIDDEN:
				size = d->d_un.d_val;
				break;
			}
		}
		if (relr != 0 && nz_relro_protect(bias, PROT_READ | PROT_WRITE)) {
			nz_relr_apply(bias, relr, size);
			nz_relro_protect(bias, PROT_READ);
		}
	}
	_init();
}
