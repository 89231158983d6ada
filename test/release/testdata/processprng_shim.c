// processprng_shim: a stand-in bcryptprimitives.dll for Wine releases that
// lack it (Wine 8.0, Debian 12's). Go 1.22 and later load ProcessPrng from
// bcryptprimitives.dll (system32 only) at start and stop without it; this
// one forwards to RtlGenRandom. goruntimes_test.go puts it into a fresh
// WINEPREFIX's system32 only when Wine has none. Never shipped.
#include <windows.h>
#include <ntsecapi.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
	while (len > 0) {
		ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
		if (!RtlGenRandom(data, n)) return FALSE;
		data += n;
		len -= n;
	}
	return TRUE;
}
