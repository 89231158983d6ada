package release

import (
	"bytes"
	"crypto/sha256"
	"debug/macho"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The macOS libraries: ./build.sh package builds them with zig cc (and the
// stubs of extension/macos) when zig is installed.
var macosLibraries = []library{
	{key: "macos.arm64", file: "libnearzero.macos.arm64.dylib", macho: macho.CpuArm64},
	{key: "macos.x86_64", file: "libnearzero.macos.x86_64.dylib", macho: macho.CpuAmd64},
}

// macosMinimum is the oldest macOS the libraries say they run on (their
// LC_BUILD_VERSION minos; build.sh's MACOS_MIN), as major<<16|minor<<8|patch.
const macosMinimum = 12 << 16

// macosDylibs are the libraries a macOS library may load: what every macOS
// has. libSystem always; CoreFoundation and Security for crypto/x509 (and
// the cgo runtime on arm64); libresolv for the net package's DNS.
var macosDylibs = []string{
	"/usr/lib/libSystem.B.dylib",
	"/usr/lib/libresolv.9.dylib",
	"/System/Library/Frameworks/CoreFoundation.framework/Versions/A/CoreFoundation",
	"/System/Library/Frameworks/Security.framework/Versions/A/Security",
}

// macosSymbolPrefix is what the names imported from each library other
// than libSystem start with: the stubs in extension/macos list them.
var macosSymbolPrefix = map[string]string{
	"/usr/lib/libresolv.9.dylib": "_res_9_",
	"/System/Library/Frameworks/CoreFoundation.framework/Versions/A/CoreFoundation": "_CF",
	"/System/Library/Frameworks/Security.framework/Versions/A/Security":             "_Sec",
}

// Mach-O load commands debug/macho has no names for.
const (
	lcIDDylib         = 0xd
	lcLoadDylinker    = 0xe
	lcCodeSignature   = 0x1d
	lcVersionMinMacOS = 0x24
	lcBuildVersion    = 0x32
	lcDyldInfoOnly    = 0x80000022
	lcDyldExportsTrie = 0x80000033
	lcLoadWeakDylib   = 0x80000018
	lcReexportDylib   = 0x8000001f
	lcLazyLoadDylib   = 0x20
	lcLoadUpwardDylib = 0x80000023

	mhTwoLevel    = 0x80 // MH_TWOLEVEL: imports bind to a named library
	platformMacOS = 1
)

// zigCommand returns the zig that ./build.sh finds (ZIG, or zig on PATH,
// when "zig version" runs), or "".
func zigCommand() string {
	z := os.Getenv("ZIG")
	if z == "" {
		z = "zig"
	}
	p, err := exec.LookPath(z)
	if err != nil {
		return ""
	}
	if err := exec.Command(p, "version").Run(); err != nil {
		return ""
	}
	return p
}

// zipLibraries returns the libraries the zip must hold: linux x86_64 and
// arm64, windows x86_64, and the macOS ones when zig is installed. Under
// CI (CI set) zig must be: .ci/run installs it.
func zipLibraries(t *testing.T) []library {
	t.Helper()
	if zigCommand() != "" {
		return append(slices.Clip(libraries), macosLibraries...)
	}
	if os.Getenv("CI") != "" {
		t.Fatal("zig is not installed (ZIG, or zig on PATH), so the zip has no macOS libraries; .ci/run installs Zig 0.11.0")
	}
	t.Log("no zig (ZIG, or zig on PATH): the zip has no macOS libraries and its .gdextension lists none")
	return libraries
}

// checkMachO checks a macOS library: its architecture, that it is a
// dylib whose install name is @rpath/ and its file name, the
// nearzero_init export (Mach-O symbol _nearzero_init, in the export trie
// dlsym reads), that it loads only macosDylibs and binds every import to
// one of them by two-level namespace, its LC_BUILD_VERSION (macOS,
// macosMinimum) and, on arm64, a valid ad-hoc code signature. It logs the
// size and the load commands.
func checkMachO(t *testing.T, b []byte, l library) {
	f, err := macho.NewFile(bytes.NewReader(b))
	require.NoError(t, err)
	assert.Equal(t, l.macho, f.Cpu, "architecture")
	assert.Equal(t, macho.TypeDylib, f.Type, "a dynamic library")
	assert.NotZero(t, f.Flags&mhTwoLevel, "two-level namespace: each import binds to a named library")

	var (
		id, dylinker string
		dylibs       []string // in load order: the imports' library ordinals count from 1
		build        []uint32 // LC_BUILD_VERSION's platform, minos, sdk
		sigOff       uint32
		sigSize      uint32
		summary      []string
	)
	bo := f.ByteOrder
	for _, load := range f.Loads {
		raw := load.Raw()
		require.GreaterOrEqual(t, len(raw), 8)
		cmd := bo.Uint32(raw)
		switch cmd {
		case lcIDDylib:
			id = loadString(bo, raw)
			summary = append(summary, "LC_ID_DYLIB "+id)
		case uint32(macho.LoadCmdDylib), lcLoadWeakDylib, lcReexportDylib, lcLazyLoadDylib, lcLoadUpwardDylib:
			name := loadString(bo, raw)
			dylibs = append(dylibs, name)
			summary = append(summary, fmt.Sprintf("%s %s", loadName(cmd), name))
			assert.Equal(t, uint32(macho.LoadCmdDylib), cmd, "%s is an ordinary LC_LOAD_DYLIB", name)
		case lcLoadDylinker:
			dylinker = loadString(bo, raw)
			summary = append(summary, "LC_LOAD_DYLINKER "+dylinker)
		case lcBuildVersion:
			require.GreaterOrEqual(t, len(raw), 24)
			build = []uint32{bo.Uint32(raw[8:]), bo.Uint32(raw[12:]), bo.Uint32(raw[16:])}
			summary = append(summary, fmt.Sprintf("LC_BUILD_VERSION platform %d minos %s sdk %s",
				build[0], macosVersion(build[1]), macosVersion(build[2])))
		case lcVersionMinMacOS:
			summary = append(summary, "LC_VERSION_MIN_MACOSX")
			t.Error("LC_VERSION_MIN_MACOSX: the library should say its minimum with LC_BUILD_VERSION")
		case lcCodeSignature:
			require.GreaterOrEqual(t, len(raw), 16)
			sigOff, sigSize = bo.Uint32(raw[8:]), bo.Uint32(raw[12:])
			summary = append(summary, fmt.Sprintf("LC_CODE_SIGNATURE %d bytes at %d", sigSize, sigOff))
		case lcDyldInfoOnly:
			summary = append(summary, "LC_DYLD_INFO_ONLY")
		case lcDyldExportsTrie:
			summary = append(summary, "LC_DYLD_EXPORTS_TRIE")
		default:
			if seg, ok := load.(*macho.Segment); ok {
				summary = append(summary, "LC_SEGMENT_64 "+seg.Name)
			} else {
				summary = append(summary, loadName(cmd))
			}
		}
	}
	t.Logf("%s: %d bytes; load commands:\n  %s", l.file, len(b), strings.Join(summary, "\n  "))

	assert.Equal(t, "@rpath/"+l.file, id, "install name (LC_ID_DYLIB)")
	if dylinker != "" {
		assert.Equal(t, "/usr/lib/dyld", dylinker, "LC_LOAD_DYLINKER (zig's linker writes one in a dylib too)")
	}
	assert.Contains(t, dylibs, "/usr/lib/libSystem.B.dylib", "loads libSystem")
	for _, d := range dylibs {
		assert.Contains(t, macosDylibs, d, "loads only what every macOS has")
	}
	if assert.Len(t, build, 3, "one LC_BUILD_VERSION") {
		assert.Equal(t, uint32(platformMacOS), build[0], "platform macOS")
		assert.Equal(t, macosVersion(macosMinimum), macosVersion(build[1]), "minimum macOS (minos)")
	}

	// Every import binds to one of the loaded libraries by its ordinal
	// (two-level namespace): none is looked up flat (0xfe) or in the
	// main executable (0xff) at load time.
	require.NotNil(t, f.Symtab, "a symbol table")
	imports := map[string][]string{}
	var exported *macho.Symbol
	for i, s := range f.Symtab.Syms {
		const nExt, nType, nUndf, nSect = 0x01, 0x0e, 0x0, 0xe
		if s.Name == "_nearzero_init" {
			exported = &f.Symtab.Syms[i]
		}
		if s.Type&nExt == 0 || s.Type&nType != nUndf {
			continue
		}
		ord := int(s.Desc >> 8)
		if !assert.True(t, ord >= 1 && ord <= len(dylibs), "%s binds to a loaded library (ordinal %d)", s.Name, ord) {
			continue
		}
		imports[dylibs[ord-1]] = append(imports[dylibs[ord-1]], s.Name)
	}
	for d, names := range imports {
		t.Logf("imports %d symbols from %s", len(names), d)
		if prefix, ok := macosSymbolPrefix[d]; ok {
			for _, n := range names {
				assert.True(t, strings.HasPrefix(n, prefix), "%s from %s", n, d)
			}
		}
	}
	if assert.NotNil(t, exported, "_nearzero_init is in the symbol table") {
		const nExt, nType, nSect = 0x01, 0x0e, 0x0e
		assert.Equal(t, uint8(nSect), exported.Type&nType, "_nearzero_init is defined here")
		assert.NotZero(t, exported.Type&nExt, "_nearzero_init is external")
		if assert.Greater(t, int(exported.Sect), 0) && int(exported.Sect) <= len(f.Sections) {
			sect := f.Sections[exported.Sect-1]
			assert.Equal(t, "__TEXT/__text", sect.Seg+"/"+sect.Name, "_nearzero_init is code")
		}
	}
	trie, err := exportTrie(f, b)
	require.NoError(t, err)
	addr, err := trieLookup(trie, "_nearzero_init")
	if assert.NoError(t, err, "_nearzero_init is in the export trie (what dlsym reads)") && exported != nil {
		text := f.Segment("__TEXT")
		require.NotNil(t, text)
		assert.Equal(t, exported.Value-text.Addr, addr, "the trie's _nearzero_init is the symbol table's")
	}

	switch {
	case sigSize != 0:
		info, err := checkAdHocSignature(b, sigOff, sigSize)
		if assert.NoError(t, err, "the code signature") {
			t.Logf("code signature: %s", info)
		}
	case l.macho == macho.CpuArm64:
		t.Error("no LC_CODE_SIGNATURE: Apple Silicon refuses to load unsigned code")
	default:
		t.Logf("%s has no code signature (Intel Macs load unsigned libraries)", l.file)
	}
}

// loadString reads the string a dylib-style load command points at (its
// offset is the word after cmd and cmdsize).
func loadString(bo binary.ByteOrder, raw []byte) string {
	if len(raw) < 12 {
		return ""
	}
	off := bo.Uint32(raw[8:])
	if int(off) >= len(raw) {
		return ""
	}
	s := raw[off:]
	if i := bytes.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	return string(s)
}

// loadName names a load command for the log.
func loadName(cmd uint32) string {
	names := map[uint32]string{
		0x2: "LC_SYMTAB", 0xb: "LC_DYSYMTAB", 0xc: "LC_LOAD_DYLIB", 0x19: "LC_SEGMENT_64", 0x1b: "LC_UUID",
		0x26: "LC_FUNCTION_STARTS", 0x29: "LC_DATA_IN_CODE", 0x2a: "LC_SOURCE_VERSION",
		0x80000034: "LC_DYLD_CHAINED_FIXUPS", 0x8000001c: "LC_RPATH",
		lcLoadWeakDylib: "LC_LOAD_WEAK_DYLIB", lcReexportDylib: "LC_REEXPORT_DYLIB",
		lcLazyLoadDylib: "LC_LAZY_LOAD_DYLIB", lcLoadUpwardDylib: "LC_LOAD_UPWARD_DYLIB",
	}
	if n, ok := names[cmd]; ok {
		return n
	}
	return fmt.Sprintf("load command %#x", cmd)
}

// macosVersion formats a Mach-O version (xxxx.yy.zz nibbles).
func macosVersion(v uint32) string {
	return fmt.Sprintf("%d.%d.%d", v>>16, v>>8&0xff, v&0xff)
}

// trieLookup finds name in a Mach-O export trie and returns its address
// (relative to the image's base).
func trieLookup(trie []byte, name string) (uint64, error) {
	uleb := func(p *int) (uint64, error) {
		var v uint64
		for shift := uint(0); ; shift += 7 {
			if *p >= len(trie) || shift > 63 {
				return 0, errors.New("truncated uleb128")
			}
			c := trie[*p]
			*p++
			v |= uint64(c&0x7f) << shift
			if c&0x80 == 0 {
				return v, nil
			}
		}
	}
	node, rest := 0, name
	for steps := 0; steps < 4096; steps++ {
		p := node
		termSize, err := uleb(&p)
		if err != nil {
			return 0, err
		}
		if rest == "" {
			if termSize == 0 {
				return 0, fmt.Errorf("%s is a prefix in the trie, not an export", name)
			}
			flags, err := uleb(&p)
			if err != nil {
				return 0, err
			}
			if flags&0x3 != 0 { // EXPORT_SYMBOL_FLAGS_KIND_MASK: 0 is a regular symbol
				return 0, fmt.Errorf("%s: export kind %d, want regular", name, flags&0x3)
			}
			return uleb(&p)
		}
		p += int(termSize)
		if p >= len(trie) {
			return 0, errors.New("truncated trie node")
		}
		children := int(trie[p])
		p++
		next := -1
		for range children {
			end := bytes.IndexByte(trie[p:], 0)
			if end < 0 {
				return 0, errors.New("unterminated edge label")
			}
			label := string(trie[p : p+end])
			p += end + 1
			off, err := uleb(&p)
			if err != nil {
				return 0, err
			}
			if next < 0 && strings.HasPrefix(rest, label) && label != "" {
				next = int(off)
				rest = rest[len(label):]
			}
		}
		if next < 0 || next >= len(trie) {
			return 0, fmt.Errorf("%s is not in the export trie", name)
		}
		node = next
	}
	return 0, errors.New("export trie too deep")
}

// checkAdHocSignature checks the embedded code signature at off: a
// SuperBlob whose CodeDirectory is ad hoc (no identity), hashes with
// SHA-256 and covers the file up to the signature, every page's hash
// matching the bytes. It returns a line for the log.
func checkAdHocSignature(b []byte, off, size uint32) (string, error) {
	const (
		magicEmbedded  = 0xfade0cc0
		magicCodeDir   = 0xfade0c02
		slotCodeDir    = 0
		csAdHoc        = 0x2
		csLinkerSigned = 0x20000
		hashSHA256     = 2
	)
	be := binary.BigEndian
	if uint64(off)+uint64(size) > uint64(len(b)) || size < 12 {
		return "", fmt.Errorf("signature [%d, +%d) is outside the %d-byte file", off, size, len(b))
	}
	sb := b[off : off+size]
	if m := be.Uint32(sb); m != magicEmbedded {
		return "", fmt.Errorf("SuperBlob magic %#x, want %#x", m, magicEmbedded)
	}
	count := be.Uint32(sb[8:])
	if 12+8*uint64(count) > uint64(len(sb)) {
		return "", errors.New("SuperBlob index runs past the blob")
	}
	var cd []byte
	for i := range count {
		typ, at := be.Uint32(sb[12+8*i:]), be.Uint32(sb[16+8*i:])
		if typ == slotCodeDir && uint64(at)+8 <= uint64(len(sb)) {
			n := be.Uint32(sb[at+4:])
			if uint64(at)+uint64(n) > uint64(len(sb)) || n < 44 {
				return "", errors.New("CodeDirectory runs past the blob")
			}
			cd = sb[at : at+n]
		}
	}
	if cd == nil {
		return "", errors.New("no CodeDirectory")
	}
	if m := be.Uint32(cd); m != magicCodeDir {
		return "", fmt.Errorf("CodeDirectory magic %#x, want %#x", m, magicCodeDir)
	}
	version, flags := be.Uint32(cd[8:]), be.Uint32(cd[12:])
	hashOff, identOff := be.Uint32(cd[16:]), be.Uint32(cd[20:])
	nCode, codeLimit := be.Uint32(cd[28:]), be.Uint32(cd[32:])
	hashSize, hashType, pageShift := cd[36], cd[37], cd[39]
	if flags&csAdHoc == 0 {
		return "", fmt.Errorf("CodeDirectory flags %#x: not ad hoc", flags)
	}
	if hashType != hashSHA256 || hashSize != sha256.Size {
		return "", fmt.Errorf("hash type %d size %d, want SHA-256", hashType, hashSize)
	}
	if codeLimit != off {
		return "", fmt.Errorf("the signature covers %d bytes; the code ends at %d", codeLimit, off)
	}
	if pageShift == 0 || pageShift > 20 {
		return "", fmt.Errorf("page size 2^%d", pageShift)
	}
	page := uint64(1) << pageShift
	if want := (uint64(codeLimit) + page - 1) / page; uint64(nCode) != want {
		return "", fmt.Errorf("%d code slots, want %d", nCode, want)
	}
	if uint64(hashOff)+uint64(nCode)*sha256.Size > uint64(len(cd)) {
		return "", errors.New("the hashes run past the CodeDirectory")
	}
	for i := range uint64(nCode) {
		sum := sha256.Sum256(b[i*page : min((i+1)*page, uint64(codeLimit))])
		if want := cd[uint64(hashOff)+i*sha256.Size:][:sha256.Size]; !bytes.Equal(sum[:], want) {
			return "", fmt.Errorf("page %d: hash does not match the bytes", i)
		}
	}
	ident := ""
	if int(identOff) < len(cd) {
		ident = string(cd[identOff:])
		if i := strings.IndexByte(ident, 0); i >= 0 {
			ident = ident[:i]
		}
	}
	return fmt.Sprintf("ad hoc (flags %#x%s), CodeDirectory version %#x, identifier %q, SHA-256 of %d pages of %d bytes, all match",
		flags, map[bool]string{true: " linker-signed", false: ""}[flags&csLinkerSigned != 0], version, ident, nCode, page), nil
}

// loadCommand returns the raw bytes of the file's first load command cmd,
// or nil.
func loadCommand(f *macho.File, cmd uint32) []byte {
	for _, l := range f.Loads {
		if raw := l.Raw(); len(raw) >= 8 && f.ByteOrder.Uint32(raw) == cmd {
			return raw
		}
	}
	return nil
}

// exportTrie returns the export trie's bytes, which LC_DYLD_INFO_ONLY or
// LC_DYLD_EXPORTS_TRIE locates.
func exportTrie(f *macho.File, b []byte) ([]byte, error) {
	var off, size uint32
	if raw := loadCommand(f, lcDyldInfoOnly); len(raw) >= 48 {
		off, size = f.ByteOrder.Uint32(raw[40:]), f.ByteOrder.Uint32(raw[44:])
	} else if raw := loadCommand(f, lcDyldExportsTrie); len(raw) >= 16 {
		off, size = f.ByteOrder.Uint32(raw[8:]), f.ByteOrder.Uint32(raw[12:])
	}
	if size == 0 {
		return nil, errors.New("no export trie (LC_DYLD_INFO_ONLY or LC_DYLD_EXPORTS_TRIE)")
	}
	if uint64(off)+uint64(size) > uint64(len(b)) {
		return nil, fmt.Errorf("export trie [%d, +%d) is outside the %d-byte file", off, size, len(b))
	}
	return b[off : off+size], nil
}

// TestMachOChecksCatchFaults shows the checks of checkMachO fail on a
// broken library: the zip's arm64 library with one byte of its code
// changed no longer matches its signature, and the export trie answers
// only for the exact name.
func TestMachOChecksCatchFaults(t *testing.T) {
	zipPath := buildPackage(t)
	if !slices.ContainsFunc(zipLibraries(t), func(l library) bool { return l.macho == macho.CpuArm64 }) {
		t.Skip("skipped: no zig, so the zip has no macOS libraries")
	}
	b := readZip(t, zipPath)[addonDir+"bin/libnearzero.macos.arm64.dylib"]
	require.NotEmpty(t, b)
	f, err := macho.NewFile(bytes.NewReader(b))
	require.NoError(t, err)
	bo := f.ByteOrder

	sig := loadCommand(f, lcCodeSignature)
	require.NotNil(t, sig, "LC_CODE_SIGNATURE")
	off, size := bo.Uint32(sig[8:]), bo.Uint32(sig[12:])
	_, err = checkAdHocSignature(b, off, size)
	require.NoError(t, err, "the library as built")

	broken := slices.Clone(b)
	broken[3*4096+17] ^= 0x01 // in page 3
	_, err = checkAdHocSignature(broken, off, size)
	assert.ErrorContains(t, err, "page 3: hash does not match", "a changed byte breaks the signature")
	_, err = checkAdHocSignature(b, off-4096, size)
	assert.Error(t, err, "a signature that does not start where the code ends")

	trie, err := exportTrie(f, b)
	require.NoError(t, err)
	_, err = trieLookup(trie, "_nearzero_init")
	require.NoError(t, err)
	for _, name := range []string{"_nearzero_ini", "_nearzero_initx", "nearzero_init", "_nope"} {
		_, err := trieLookup(trie, name)
		assert.Error(t, err, "%q is not exported", name)
	}
}
