// Command relr readies a Linux library linked with -z pack-relative-relocs
// (./build.sh runs it on every Linux library) so that it relocates itself
// on every glibc:
//
//	go run ./tools/relr FILE
//
// Packed (DT_RELR) relocations take 21 kB where RELA takes 1.5 MB, but
// only glibc 2.36 and later apply them: the linker marks the library as
// needing the version GLIBC_ABI_DT_RELR, which older loaders lack, and a
// 2.36+ loader refuses a DT_RELR table without that need. relr removes
// the need and renames the DT_RELR tags into a range every loader ignores;
// the library's DT_INIT (bindings/godot/relr_linux.c) applies the table
// before any other code of it runs, on every glibc alike. relr checks
// that the library has the table and that its DT_INIT is that function.
// Run twice, it changes nothing the second time.
//
// One flag is for test/release, which checks that the library can fail:
//
//	-drop-init  also renames DT_INIT: nothing relocates, the library
//	            must crash when loaded
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
)

func main() {
	dropInit := flag.Bool("drop-init", false, "rename DT_INIT as well, so nothing relocates (tests)")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: relr [-drop-init] FILE")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *dropInit); err != nil {
		slog.Error("relr", "file", flag.Arg(0), "err", err)
		os.Exit(1)
	}
}

func run(path string, dropInit bool) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	st, err := Prepare(b)
	if err != nil {
		return err
	}
	if err := Hide(b, dropInit); err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o755); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	fmt.Printf("relr: %s: %d bytes of DT_RELR, %d relative relocations left in RELA; GLIBC_ABI_DT_RELR need %s\n",
		path, st.RelrSize, st.RelativeRela, map[bool]string{true: "removed", false: "absent"}[st.Removed])
	return nil
}
