package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
)

// Dynamic tags debug/elf may lack, and the offset Hide adds to them
// (NZ_DT_HIDDEN in bindings/godot/relr_linux.c: a range loaders ignore).
const (
	dtRelrSz  = 35
	dtRelr    = 36
	dtRelrEnt = 37
	dtHidden  = 0x6000d000
)

// initSymbol is the library's own relocator (bindings/godot/relr_linux.c),
// which must be its DT_INIT.
const initSymbol = "nearzero_relr_init"

// relrVersion is the version the linker makes a DT_RELR library need.
const relrVersion = "GLIBC_ABI_DT_RELR"

// Stats is what Prepare found.
type Stats struct {
	RelrSize     uint64 // bytes of DT_RELR
	RelativeRela int    // relative relocations still in the RELA table
	Removed      bool   // the GLIBC_ABI_DT_RELR need was there and is gone
}

// dynEntry is one entry of the dynamic section: its tag, value and file
// offset.
type dynEntry struct {
	tag, val uint64
	off      int
}

// library is a parsed 64-bit little-endian ELF shared object.
type library struct {
	f   *elf.File
	b   []byte
	dyn []dynEntry
}

func open(b []byte) (*library, error) {
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("not an ELF file: %w", err)
	}
	if f.Class != elf.ELFCLASS64 || f.Data != elf.ELFDATA2LSB || f.Type != elf.ET_DYN {
		return nil, errors.New("not a 64-bit little-endian shared object")
	}
	ds := f.Section(".dynamic")
	if ds == nil {
		return nil, errors.New("no .dynamic section")
	}
	l := &library{f: f, b: b}
	for off := int(ds.Offset); off+16 <= int(ds.Offset+ds.Size); off += 16 {
		tag := binary.LittleEndian.Uint64(b[off:])
		l.dyn = append(l.dyn, dynEntry{tag, binary.LittleEndian.Uint64(b[off+8:]), off})
		if tag == uint64(elf.DT_NULL) {
			break
		}
	}
	return l, nil
}

func (l *library) tag(t uint64) (dynEntry, bool) {
	for _, d := range l.dyn {
		if d.tag == t {
			return d, true
		}
	}
	return dynEntry{}, false
}

// Prepare checks that b (the library's bytes) has a DT_RELR table, hidden
// or not, and initSymbol as its DT_INIT, and removes the
// GLIBC_ABI_DT_RELR version need in place.
func Prepare(b []byte) (Stats, error) {
	var st Stats
	l, err := open(b)
	if err != nil {
		return st, err
	}
	_, plain := l.tag(dtRelr)
	_, hidden := l.tag(dtRelr + dtHidden)
	if !plain && !hidden {
		return st, errors.New("no DT_RELR: link it with -Wl,-z,pack-relative-relocs")
	}
	for _, t := range []uint64{dtRelrSz, dtRelrSz + dtHidden} {
		if sz, ok := l.tag(t); ok {
			st.RelrSize = sz.val
		}
	}
	if st.RelativeRela, err = l.relativeRela(); err != nil {
		return st, err
	}
	if err := l.checkInit(); err != nil {
		return st, err
	}
	st.Removed, err = l.dropVersionNeed(relrVersion)
	return st, err
}

// relativeRela counts the R_*_RELATIVE entries left in .rela.dyn.
func (l *library) relativeRela() (int, error) {
	s := l.f.Section(".rela.dyn")
	if s == nil {
		return 0, nil
	}
	data, err := s.Data()
	if err != nil {
		return 0, fmt.Errorf(".rela.dyn: %w", err)
	}
	relative := map[elf.Machine]uint32{elf.EM_X86_64: uint32(elf.R_X86_64_RELATIVE), elf.EM_AARCH64: uint32(elf.R_AARCH64_RELATIVE)}
	want, ok := relative[l.f.Machine]
	if !ok {
		return 0, fmt.Errorf("machine %v: only x86-64 and arm64 are known", l.f.Machine)
	}
	n := 0
	for off := 0; off+24 <= len(data); off += 24 {
		if uint32(binary.LittleEndian.Uint64(data[off+8:])) == want {
			n++
		}
	}
	return n, nil
}

// checkInit checks that DT_INIT is initSymbol's address.
func (l *library) checkInit() error {
	init, ok := l.tag(uint64(elf.DT_INIT))
	if !ok {
		return fmt.Errorf("no DT_INIT: link it with -Wl,-init,%s", initSymbol)
	}
	syms, err := l.f.DynamicSymbols()
	if err != nil {
		return fmt.Errorf("dynamic symbols: %w", err)
	}
	for _, s := range syms {
		if s.Name == initSymbol {
			if s.Value != init.val {
				return fmt.Errorf("DT_INIT is %#x, not %s (%#x): link it with -Wl,-init,%s", init.val, initSymbol, s.Value, initSymbol)
			}
			return nil
		}
	}
	return fmt.Errorf("no symbol %s: the library lacks bindings/godot/relr_linux.c", initSymbol)
}

// dropVersionNeed unlinks the version need named name from
// .gnu.version_r (its entry stays, unreferenced) and reports whether it
// was there. It refuses when a symbol is bound to that version, or when
// it is the file's only need.
func (l *library) dropVersionNeed(name string) (bool, error) {
	vr := l.f.Section(".gnu.version_r")
	if vr == nil {
		return false, nil
	}
	strs := l.f.Section(".dynstr")
	if strs == nil {
		return false, errors.New("no .dynstr")
	}
	str := func(off uint32) string {
		start := int(strs.Offset) + int(off)
		if start >= len(l.b) {
			return ""
		}
		end := bytes.IndexByte(l.b[start:], 0)
		if end < 0 {
			return ""
		}
		return string(l.b[start : start+end])
	}
	le := binary.LittleEndian
	base, end := int(vr.Offset), int(vr.Offset+vr.Size)
	for vn := base; vn+16 <= end; {
		cnt, aux, next := le.Uint16(l.b[vn+2:]), le.Uint32(l.b[vn+8:]), le.Uint32(l.b[vn+12:])
		prev := -1
		for i, a := 0, vn+int(aux); i < int(cnt) && a+16 <= end; i++ {
			anext := le.Uint32(l.b[a+12:])
			if str(le.Uint32(l.b[a+8:])) == name {
				if cnt == 1 {
					return false, fmt.Errorf("%s is the only version needed of its library", name)
				}
				if err := l.checkUnused(le.Uint16(l.b[a+6:]) & 0x7fff); err != nil {
					return false, err
				}
				switch {
				case prev < 0 && anext == 0:
					return false, fmt.Errorf("%s: broken chain", name)
				case prev < 0: // the first: the entry starts at the next
					le.PutUint32(l.b[vn+8:], aux+anext)
				case anext == 0: // the last: the one before ends the chain
					le.PutUint32(l.b[prev+12:], 0)
				default:
					le.PutUint32(l.b[prev+12:], le.Uint32(l.b[prev+12:])+anext)
				}
				le.PutUint16(l.b[vn+2:], cnt-1)
				return true, nil
			}
			if anext == 0 {
				break
			}
			prev, a = a, a+int(anext)
		}
		if next == 0 {
			break
		}
		vn += int(next)
	}
	return false, nil
}

// checkUnused fails when a dynamic symbol is bound to version index idx.
func (l *library) checkUnused(idx uint16) error {
	vs := l.f.Section(".gnu.version")
	if vs == nil {
		return nil
	}
	data, err := vs.Data()
	if err != nil {
		return fmt.Errorf(".gnu.version: %w", err)
	}
	for i := 0; i+2 <= len(data); i += 2 {
		if binary.LittleEndian.Uint16(data[i:])&0x7fff == idx {
			return fmt.Errorf("symbol %d is bound to the version index %d being removed", i/2, idx)
		}
	}
	return nil
}

// Hide renames the DT_RELR tags in place into a range every loader
// ignores (the library applies the table itself), and with dropInit
// DT_INIT too. Tags already renamed stay as they are.
func Hide(b []byte, dropInit bool) error {
	l, err := open(b)
	if err != nil {
		return err
	}
	for _, d := range l.dyn {
		switch {
		case d.tag == dtRelr || d.tag == dtRelrSz || d.tag == dtRelrEnt,
			dropInit && d.tag == uint64(elf.DT_INIT):
			binary.LittleEndian.PutUint64(b[d.off:], d.tag+dtHidden)
		}
	}
	return nil
}
