#!/usr/bin/env bash
# build.sh: builds the nearzero GDExtension library into the addon, the
# room server into bin/, and the release zip into dist/. Run ./build.sh --help
# for the targets.
set -euo pipefail
cd "$(dirname "$0")"

ADDON_BIN=godot_project/addons/nearzero/bin
# MACOS_MIN is the oldest macOS the macOS libraries run on (their
# LC_BUILD_VERSION minos): Go 1.25 and later need macOS 12 Monterey, and
# crypto/x509 calls SecTrustCopyCertificateChain, new in macOS 12.
MACOS_MIN=12.0
SERVER_OUT=bin/nearzero-server
VERSION_FILE=netcode/version/version.go

usage() {
	cat <<'USAGE'
Usage: ./build.sh [TARGET...]

Targets (default: addon server):
  addon    the GDExtension library for this machine, into godot_project/addons/nearzero/bin/
  server   the room server, into bin/nearzero-server (a static binary, no cgo)
  cross    the library for every other platform whose C cross-compiler is installed:
             linux arm64    aarch64-linux-gnu-gcc   (Debian: gcc-aarch64-linux-gnu)
             windows x86_64 x86_64-w64-mingw32-gcc  (Debian: gcc-mingw-w64-x86-64)
             macos arm64    zig ($ZIG, or zig on PATH: zig cc, with extension/macos/zigcc)
             macos x86_64   zig (the same)
           platforms without one are skipped with a note
  all      addon server cross
  package  the release zip for the Godot Asset Library, dist/nearzero-VERSION.zip:
             addons/nearzero/ with the .gdextension (listing only the libraries
             inside), icons, README, LICENSE and the libraries for linux x86_64,
             linux arm64 and windows x86_64 (needs all three C compilers above;
             Debian: apt-get install gcc gcc-aarch64-linux-gnu gcc-mingw-w64-x86-64),
             and for macos arm64 and x86_64 when zig is installed (without it
             the zip has no macOS libraries, and says so)
  version  print the release version (the one in netcode/version/version.go)
  clean    remove the built files (and dist/)

Environment:
  GO       the go command to use (default: go)
  CC       the C compiler for the addon target (default: gcc, then cc, then clang)
  DIST     where the package target writes the zip (default: dist)
  ZIG      the zig command for the macOS libraries (default: zig; Zig 0.11.0
           is the version .ci/run installs and the one checked)

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

# LIB_TAGS and LIB_GCFLAGS make the game library smaller; neither is used
# for the server, whose speed matters more than its size.
#   nethttpomithttp2  leaves out net/http's bundled HTTP/2 (0.6 MB): the
#                     server link is a WebSocket over HTTP/1.1 and the
#                     embedded server serves a LAN, so nothing speaks h2.
#   -l                no inlining in the packages below (0.75 MB): TLS, DTLS,
#                     ICE, JSON and the HTTP handshake run a few times a
#                     second at most; our code, the runtime, math, time,
#                     sync and the small std helpers it calls stay inlined.
LIB_TAGS=nethttpomithttp2
LIB_GCFLAGS=()
for p in crypto/... net/... encoding/json encoding/asn1 encoding/gob encoding/pem \
	encoding/base64 encoding/hex math/big compress/... vendor/... golang.org/x/... \
	github.com/pion/... github.com/coder/... github.com/wlynxg/... github.com/google/... \
	log/slog/... text/... regexp/... mime/... fmt; do
	LIB_GCFLAGS+=("-gcflags=$p=-l")
done

build_lib() { # goos goarch cc os-tag arch-tag [dir, default the addon's bin/]
	local out name dir=${6:-$ADDON_BIN} ldflags='-s -w'
	name=$(lib_name "$4" "$5")
	out="$dir/$name"
	mkdir -p "$dir"
	# A macOS library's install name (LC_ID_DYLIB) is @rpath/ and its name,
	# not the path it was linked at.
	[ "$1" = darwin ] && ldflags="$ldflags -extldflags=-Wl,-install_name,@rpath/$name"
	echo "build.sh: library $4/$5 -> $out"
	CGO_ENABLED=1 GOOS="$1" GOARCH="$2" CC="$3" \
		"$GO" build -trimpath -buildmode=c-shared -tags "$LIB_TAGS" "${LIB_GCFLAGS[@]}" \
		-ldflags="$ldflags" -o "$out" ./extension
	rm -f "${out%.*}.h"
	# zig's linker keeps the 25,000 local symbols Go asks to drop (-Wl,-x);
	# llvm-strip drops them (1.5 MB) and signs the arm64 library again.
	if [ "$1" = darwin ]; then
		local strip
		if strip=$(find_llvm_strip); then
			"$strip" -x "$out"
		else
			echo "build.sh: no llvm-strip, so $name keeps its local symbols (1.5 MB more; Debian: apt-get install llvm)" >&2
		fi
	fi
}

# find_llvm_strip prints llvm-strip, or the newest llvm-strip-N, when there.
find_llvm_strip() {
	command -v llvm-strip 2>/dev/null && return
	compgen -c llvm-strip- 2>/dev/null | sort -t- -k3 -n | tail -1 | grep .
}

# find_zig prints the zig command (ZIG, or zig on PATH) when it runs.
find_zig() {
	local z=${ZIG:-zig}
	command -v "$z" >/dev/null 2>&1 && "$z" version >/dev/null 2>&1 && echo "$z"
}

# zig_cc prints the CC for cgo that cross-compiles for macOS on arch
# (aarch64 or x86_64) with zig: extension/macos/zigcc, which adds the
# framework stubs of extension/macos (Apple's SDK is not needed).
# zigcc reads ZIG (find_zig's answer, exported).
zig_cc() { # arch
	echo "'$PWD/extension/macos/zigcc' $1-macos.$MACOS_MIN"
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
	local zig
	if zig=$(find_zig); then
		export ZIG=$zig
		[ "$host" = macos.arm64 ] || build_lib darwin arm64 "$(zig_cc aarch64)" macos arm64
		[ "$host" = macos.x86_64 ] || build_lib darwin amd64 "$(zig_cc x86_64)" macos x86_64
	else
		echo "build.sh: skipped macos/arm64 and macos/x86_64: zig not found (set ZIG, or put zig on PATH; .ci/run fetches Zig 0.11.0)"
	fi
}

# release_version prints netcode/version.Version, the one release version
# (package version's doc says who else reads it).
release_version() {
	local v
	v=$(sed -n 's/^const Version = "\([^"]*\)"$/\1/p' "$VERSION_FILE")
	if ! [[ "$v" =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]+)?$ ]]; then
		echo "build.sh: no 'const Version = \"X.Y.Z\"' line in $VERSION_FILE (found '$v')" >&2
		exit 1
	fi
	echo "$v"
}

# package_gdextension prints the repository's .gdextension for a package
# whose libraries are in $1: the [libraries] lines naming a file not there
# are dropped, and the build notes at the top give way to the version.
package_gdextension() { # bin-dir version
	echo "; nearzero $2: near-zero-lag multiplayer nodes (NetRoom, NetPredictor)."
	echo "; Release package: [libraries] lists the libraries this package holds."
	echo "; Other platforms: see README.md (Platforms)."
	awk -v bin="$1" '
		top && /^;/ { next }
		{ top = 0 }
		/^\[/ { section = $0 }
		section == "[libraries]" && /^[a-z].*=/ {
			name = $0
			sub(/^[^"]*"res:\/\/addons\/nearzero\/bin\//, "", name)
			sub(/".*$/, "", name)
			if (system("test -f \"" bin "/" name "\"") != 0) next
		}
		{ print }
	' top=1 godot_project/addons/nearzero/nearzero.gdextension
}

target_package() {
	local v cc_x64 cc_arm64 cc_win missing=() hostpair stage addon dist zipfile zig
	v=$(release_version)
	hostpair="$("$GO" env GOOS)/$("$GO" env GOARCH)"
	# The host's own compiler builds its own platform; cross compilers the rest.
	cc_x64=x86_64-linux-gnu-gcc
	cc_arm64=aarch64-linux-gnu-gcc
	cc_win=x86_64-w64-mingw32-gcc
	case "$hostpair" in
	linux/amd64) cc_x64=$(find_cc) || missing+=("gcc") ;;
	linux/arm64) cc_arm64=$(find_cc) || missing+=("gcc") ;;
	esac
	command -v "$cc_x64" >/dev/null 2>&1 || missing+=("gcc-x86-64-linux-gnu ($cc_x64)")
	command -v "$cc_arm64" >/dev/null 2>&1 || missing+=("gcc-aarch64-linux-gnu ($cc_arm64)")
	command -v "$cc_win" >/dev/null 2>&1 || missing+=("gcc-mingw-w64-x86-64 ($cc_win)")
	if [ ${#missing[@]} -gt 0 ]; then
		echo "build.sh: package needs the C compilers of all three platforms; missing:" >&2
		printf '  %s\n' "${missing[@]}" >&2
		echo "  Debian/Ubuntu: apt-get install gcc gcc-aarch64-linux-gnu gcc-mingw-w64-x86-64" >&2
		exit 1
	fi
	if ! command -v zip >/dev/null 2>&1 && ! command -v python3 >/dev/null 2>&1; then
		echo "build.sh: package needs zip (Debian: apt-get install zip) or python3" >&2
		exit 1
	fi

	stage=$(mktemp -d "${TMPDIR:-/tmp}/nearzero-package.XXXXXX")
	trap 'rm -rf "$stage"' EXIT
	addon="$stage/addons/nearzero"
	mkdir -p "$addon/bin" "$addon/icons"
	build_lib linux amd64 "$cc_x64" linux x86_64 "$addon/bin"
	build_lib linux arm64 "$cc_arm64" linux arm64 "$addon/bin"
	build_lib windows amd64 "$cc_win" windows x86_64 "$addon/bin"
	if zig=$(find_zig); then
		export ZIG=$zig
		build_lib darwin arm64 "$(zig_cc aarch64)" macos arm64 "$addon/bin"
		build_lib darwin amd64 "$(zig_cc x86_64)" macos x86_64 "$addon/bin"
	else
		echo "build.sh: no zig (set ZIG, or put zig on PATH): the zip has no macOS libraries"
	fi
	cp godot_project/addons/nearzero/icons/*.svg "$addon/icons/"
	cp godot_project/addons/nearzero/README.md LICENSE "$addon/"
	package_gdextension "$addon/bin" "$v" >"$addon/nearzero.gdextension"
	# The class reference is compiled into the libraries (extension/doc_classes).

	dist=${DIST:-dist}
	mkdir -p "$dist"
	zipfile="$(cd "$dist" && pwd)/nearzero-$v.zip"
	rm -f "$zipfile"
	find "$stage" -exec touch -t 202601010000 {} + # the same bytes in, the same zip out
	if command -v zip >/dev/null 2>&1; then
		(cd "$stage" && find addons | LC_ALL=C sort | zip -X -q -9 "$zipfile" -@)
	else
		(cd "$stage" && python3 -m zipfile -c "$zipfile" addons)
	fi
	rm -rf "$stage"
	trap - EXIT
	echo "build.sh: package -> $zipfile ($(wc -c <"$zipfile") bytes)"
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
	package) target_package ;;
	version) release_version ;;
	clean) rm -rf "$ADDON_BIN" bin "${DIST:-dist}"; echo "build.sh: cleaned" ;;
	*) echo "build.sh: unknown target '$t'" >&2; usage >&2; exit 2 ;;
	esac
done
