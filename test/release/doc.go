// Package release holds the tests of what nearzero ships: the addon zip
// that ./build.sh package writes for the Godot Asset Library, the server's
// container image (Dockerfile), and the one release version
// (netcode/version) everywhere it shows.
//
//	go test ./test/release/ -v          # builds the zip once (minutes on 2 cores)
//	go test -short ./test/release/      # only what needs no build
//	GODOT=/path/to/godot go test ./test/release/ -run Godot -v
//
// The zip is built once per run (./build.sh package into a temporary
// DIST), and only when not -short; without the three C compilers (gcc,
// aarch64-linux-gnu-gcc, x86_64-w64-mingw32-gcc) those tests skip, saying
// so, except under CI (CI set), where .ci/run installs them and a missing
// one fails. Each library is read with debug/elf, debug/pe or debug/macho:
// its machine, its nearzero_init export and what it links against.
//
// The macOS libraries (arm64 and x86_64) are built with zig cc when zig is
// installed (ZIG, or zig on PATH); without it the zip holds none and its
// .gdextension lists none, and the tests check that instead, except under
// CI, where .ci/run installs Zig 0.11.0 and a missing zig fails.
// checkMachO reads each: architecture, install name (@rpath/ and the file
// name), _nearzero_init in the symbol table and in the export trie, only
// libSystem, libresolv, CoreFoundation and Security loaded, every import
// bound to one of them by two-level namespace, LC_BUILD_VERSION macOS
// 12.0, and on arm64 an ad-hoc code signature whose page hashes match the
// bytes. Nothing here runs them: that needs a Mac.
//
// TestLinuxLibraryLoads loads the linux x86_64 library from a small C
// program (its Go runtime starts within dlopen); TestPatchelfedLibraryLoads
// loads it again after patchelf --set-rpath, --add-needed and --set-soname,
// as AppImage, linuxdeploy and Nix's autoPatchelf edit bundled libraries
// (needs patchelf; skipped without it, except under CI). checkELF also
// checks the relocations are plain ones every glibc from 2.34 applies.
//
// TestTwoGoRuntimesInOneProcess loads a library of the zip and two copies
// of a tiny Go c-shared library (testdata/golib) into one C process
// (testdata/twogo_host.c) and runs both tiny ones at once: three Go
// runtimes, as when a project holds several Go-built extensions. It runs
// linux x86_64 natively, and, when installed, linux arm64 under qemu-user
// (Debian: qemu-user) and windows x86_64 under Wine (Debian: wine64); so
// it is also the test that each library loads and starts its runtime.
//
// The image cannot be built here (no container engine, no registry for the
// base images): TestDockerfile checks its instructions instead, and
// TestServerBinaryIsStatic builds the server as the Dockerfile does and
// checks the binary has no dynamic section.
//
// TestPackageInGodot runs only when GODOT names a Godot 4.4+ editor binary:
// it unpacks the zip into a fresh empty project, imports it headless and
// checks that NetRoom and NetPredictor load.
//
// # Invariants
//
//   - Nothing in the repository is written: the zip goes to a temporary
//     DIST, the server binary to a temporary directory.
//   - Bounded by go test's own -timeout, not by wall-clock budgets: each
//     command is cancelled a little before the test binary's deadline
//     (commandContext), so that its output is reported, and a loaded
//     machine makes a run slower, not failed. Alone on 2 idle cores with
//     a warm build cache the run takes about a minute and a half; loaded,
//     or from a cold cache, it can pass go test's default 10 minutes, so
//     .ci/run gives go test a longer -timeout (README, Tests).
package release
