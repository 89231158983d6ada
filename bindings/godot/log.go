package godot

// #include "gdx.h"
import "C"

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unsafe"
)

type level int

// fallbackOut receives messages printed before the engine loads (tests).
var fallbackOut io.Writer = os.Stderr

const (
	levelInfo level = iota
	levelWarning
	levelError
)

// PrintError reports msg as an error in the Godot console and the editor's
// Output/Debugger panels, with the caller's Go file and line. Safe from any
// goroutine. Before the engine loads (unit tests) it writes to stderr.
func PrintError(msg string) { printAt(2, levelError, msg) }

// PrintErrorf is PrintError with fmt formatting.
func PrintErrorf(format string, args ...any) { printAt(2, levelError, fmt.Sprintf(format, args...)) }

// PrintWarning reports msg as a warning, with the caller's Go file and line.
func PrintWarning(msg string) { printAt(2, levelWarning, msg) }

// PrintWarningf is PrintWarning with fmt formatting.
func PrintWarningf(format string, args ...any) {
	printAt(2, levelWarning, fmt.Sprintf(format, args...))
}

// Print writes msg to the Godot console (the GDScript print function).
func Print(msg string) { printAt(2, levelInfo, msg) }

// Printf is Print with fmt formatting.
func Printf(format string, args ...any) { printAt(2, levelInfo, fmt.Sprintf(format, args...)) }

// printAt prints msg with the file and line skip frames up the stack.
func printAt(skip int, lv level, msg string) {
	pc, file, line, ok := runtime.Caller(skip)
	fn := ""
	if ok {
		if f := runtime.FuncForPC(pc); f != nil {
			fn = f.Name()
		}
	} else {
		file, line = "?", 0
	}
	printLocated(lv, msg, fn, file, line)
}

// printLocated sends one message to the engine (or stderr before start-up).
func printLocated(lv level, msg, fn, file string, line int) {
	if !loaded() {
		prefix := [...]string{"", "WARNING: ", "ERROR: "}[lv]
		fmt.Fprintf(fallbackOut, "%s%s\n   at: %s (%s:%d)\n", prefix, msg, fn, file, line)
		return
	}
	if lv == levelInfo {
		v := NewVariant(msg)
		C.gdx_print(unsafe.Pointer(&v), 1)
		v.Destroy()
		return
	}
	warn := C.int(0)
	if lv == levelWarning {
		warn = 1
	}
	C.gdx_print_error(strPtr(msg), C.gdx_int(len(msg)), strPtr(fn), C.gdx_int(len(fn)),
		strPtr(file), C.gdx_int(len(file)), C.int32_t(line), warn, 0)
}

// HandlerOptions configures NewLogHandler.
type HandlerOptions struct {
	// Level is the minimum level written; the default (nil) is slog.LevelInfo.
	Level slog.Leveler
}

// NewLogHandler returns a slog.Handler that writes to the Godot console:
// errors through print_error and warnings through print_warning (each with
// the Go file and line of the log call), info and debug through print. The
// message is followed by the attributes as key=value. Safe for concurrent
// use. opts may be nil.
func NewLogHandler(opts *HandlerOptions) slog.Handler {
	h := &logHandler{level: slog.LevelInfo}
	if opts != nil && opts.Level != nil {
		h.level = opts.Level
	}
	return h
}

type logHandler struct {
	level  slog.Leveler
	prefix string // preformatted attributes from WithAttrs, with groups applied
	group  string // current group prefix ("a.b.") for later attributes
}

func (h *logHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

func (h *logHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	b.WriteString(h.prefix)
	r.Attrs(func(a slog.Attr) bool {
		appendAttr(&b, h.group, a)
		return true
	})
	fn, file, line := "", "?", 0
	if r.PC != 0 {
		f, _ := runtime.CallersFrames([]uintptr{r.PC}).Next()
		fn, file, line = f.Function, f.File, f.Line
	}
	lv := levelInfo
	switch {
	case r.Level >= slog.LevelError:
		lv = levelError
	case r.Level >= slog.LevelWarn:
		lv = levelWarning
	}
	printLocated(lv, b.String(), fn, file, line)
	return nil
}

func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	var b strings.Builder
	b.WriteString(h.prefix)
	for _, a := range attrs {
		appendAttr(&b, h.group, a)
	}
	return &logHandler{level: h.level, prefix: b.String(), group: h.group}
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &logHandler{level: h.level, prefix: h.prefix, group: h.group + name + "."}
}

// appendAttr writes " key=value", flattening groups into dotted keys.
func appendAttr(b *strings.Builder, group string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		g := group
		if a.Key != "" {
			g += a.Key + "."
		}
		for _, sub := range a.Value.Group() {
			appendAttr(b, g, sub)
		}
		return
	}
	b.WriteByte(' ')
	b.WriteString(group)
	b.WriteString(a.Key)
	b.WriteByte('=')
	s := a.Value.String()
	if s == "" || strings.ContainsAny(s, " =\"\n\t") {
		s = strconv.Quote(s)
	}
	b.WriteString(s)
}

// Panic reporting. Every callback from the engine defers catch: a Go panic
// unwinding into C would abort the editor, so it is reported and dropped.

var panicMu sync.Mutex // keeps concurrent panic reports whole

// catch recovers a panic in a callback and prints it with the Go file and
// line where it happened, plus the stack.
func catch(where string) {
	r := recover()
	if r == nil {
		return
	}
	reportPanic(where, r)
}

func reportPanic(where string, r any) {
	panicMu.Lock()
	defer panicMu.Unlock()
	fn, file, line := panicSite()
	buf := make([]byte, 16<<10)
	buf = buf[:runtime.Stack(buf, false)]
	printLocated(levelError, fmt.Sprintf("Go panic in %s: %v\n%s", where, r, buf), fn, file, line)
}

// panicSite returns the first frame outside the runtime and this file's
// recovery code: where the panic was raised.
func panicSite() (fn, file string, line int) {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, "runtime.") && !strings.HasSuffix(f.Function, "godot.reportPanic") &&
			!strings.HasSuffix(f.Function, "godot.catch") {
			return f.Function, f.File, f.Line
		}
		if !more {
			return "", "?", 0
		}
	}
}
