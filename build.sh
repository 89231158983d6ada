#!/usr/bin/env bash
# build.sh: builds the nearzero GDExtension library into the addon and the
# room server into bin/. Run ./build.sh --help for the targets.
set -euo pipefail
cd "$(dirname "$0")"

ADDON_BIN=godot_project/addons/nearzero/bin
SERVER_OUT=bin/nearzero-server

usage() {
	cat <<'USAGE'
Usage: ./build.sh [TARGET...]

Targets (default: addon server):
  addon    the GDExtension library for this machine, into godot_project/addons/nearzero/bin/
  server   the room server, into bin/nearzero-server (a static binary, no cgo)
  cross    the library for every other platform whose C cross-compiler is installed:
             linux arm64    aarch64-linux-gnu-gcc   (Debian: gcc-aarch64-linux-gnu)
             windows x86_64 x86_64-w64-mingw32-gcc  (Debian: gcc-mingw-w64-x86-64)
             macos arm64    oa64-clang              (osxcross; not packaged by Debian)
           platforms without one are skipped with a note
  all      addon server cross
  clean    remove the built files

Environment:
  GO       the go command to use (default: go)
  CC       the C compiler for the addon target (default: gcc, then cc, then clang)

After building: open godot_project/ in Godot 4.4+ and run it, or start the
server with bin/nearzero-server -h to see its flags.
USAGE
}

GO=${GO:-go}
command -v "$GO" >/dev/null 2>&1 || { echo "build.sh: Go is not installed (need Go 1.26+: https://go.dev/dl/)" >&2; exit 1; }

host_tags() {
	local os arch
	os=$("$GO" env GOOS)
	arch=$("$GO" env GOARCH)
	case "$arch" in amd64) arch=x86_64 ;; arm64) arch=arm64 ;; esac
	case "$os" in darwin) os=macos ;; esac
	echo "$os" "$arch"
}

lib_name() { # os arch
	case "$1" in
	windows) echo "nearzero.windows.$2.dll" ;;
	macos) echo "libnearzero.macos.$2.dylib" ;;
	*) echo "libnearzero.$1.$2.so" ;;
	esac
}

find_cc() {
	if [ -n "${CC:-}" ]; then command -v "$CC" >/dev/null 2>&1 && { echo "$CC"; return; }; fi
	for c in gcc cc clang; do
		command -v "$c" >/dev/null 2>&1 && { echo "$c"; return; }
	done
	return 1
}

build_lib() { # goos goarch cc os-tag arch-tag
	local out
	out="$ADDON_BIN/$(lib_name "$4" "$5")"
	mkdir -p "$ADDON_BIN"
	echo "build.sh: library $4/$5 -> $out"
	CGO_ENABLED=1 GOOS="$1" GOARCH="$2" CC="$3" \
		"$GO" build -trimpath -buildmode=c-shared -ldflags='-s -w' -o "$out" ./extension
	rm -f "${out%.*}.h"
}

target_addon() {
	local cc os arch goos
	if ! cc=$(find_cc); then
		cat >&2 <<'MSG'
build.sh: no C compiler found. The GDExtension library uses cgo, which needs one.
  Debian/Ubuntu: sudo apt-get install gcc      macOS: xcode-select --install
  Windows: install MSYS2's mingw-w64 gcc, or build under WSL.
Or set CC to your compiler. (The server needs no C compiler: ./build.sh server)
MSG
		exit 1
	fi
	read -r os arch < <(host_tags)
	goos=$("$GO" env GOOS)
	build_lib "$goos" "$("$GO" env GOARCH)" "$cc" "$os" "$arch"
}

target_server() {
	mkdir -p bin
	echo "build.sh: server -> $SERVER_OUT"
	CGO_ENABLED=0 "$GO" build -trimpath -ldflags='-s -w' -o "$SERVER_OUT" ./server/cmd/nearzero-server
}

target_cross() {
	local host
	host=$(host_tags | tr ' ' .)
	try() { # goos goarch cc os arch package-hint
		[ "$4.$5" = "$host" ] && return 0
		if command -v "$3" >/dev/null 2>&1; then
			build_lib "$1" "$2" "$3" "$4" "$5"
		else
			echo "build.sh: skipped $4/$5: $3 not found ($6)"
		fi
	}
	try linux arm64 aarch64-linux-gnu-gcc linux arm64 "Debian: apt-get install gcc-aarch64-linux-gnu"
	try linux amd64 x86_64-linux-gnu-gcc linux x86_64 "Debian: apt-get install gcc-x86-64-linux-gnu"
	try windows amd64 x86_64-w64-mingw32-gcc windows x86_64 "Debian: apt-get install gcc-mingw-w64-x86-64"
	try darwin arm64 oa64-clang macos arm64 "osxcross; not packaged by Debian"
}

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(addon server)
for t in "${targets[@]}"; do
	case "$t" in
	-h | --help | help) usage; exit 0 ;;
	addon | lib) target_addon ;;
	server) target_server ;;
	cross) target_cross ;;
	all) target_addon; target_server; target_cross ;;
	clean) rm -rf "$ADDON_BIN" bin; echo "build.sh: cleaned" ;;
	*) echo "build.sh: unknown target '$t'" >&2; usage >&2; exit 2 ;;
	esac
done
