package godot

import (
	"errors"
	"fmt"
)

var (
	// errTooManyArgs indicates a signal emitted with more arguments than
	// maxSignalArgs.
	errTooManyArgs = errors.New("too many arguments")
	// errLoadFailed indicates ResourceLoader.load returned null (the engine
	// prints the reason).
	errLoadFailed = errors.New("resource not loaded")
	// ErrNotRegistered indicates a use of a class that is not (or no
	// longer) registered with the engine.
	ErrNotRegistered = errors.New("class not registered")
)

func errNotRegistered(name string) error { return fmt.Errorf("%s: %w", name, ErrNotRegistered) }

// CallError is a failed engine call through the Variant path
// (GDExtensionCallError).
type CallError struct {
	// Code is the engine's error code: 1 invalid method, 2 invalid argument,
	// 3 too many arguments, 4 too few, 5 null instance, 6 method not const.
	Code int
	// Argument is the index of the offending argument (code 2).
	Argument int
	// Expected is the expected Variant type (code 2) or argument count (3, 4).
	Expected int
}

func (e *CallError) Error() string {
	switch e.Code {
	case 1:
		return "invalid method"
	case 2:
		return fmt.Sprintf("argument %d: expected %s", e.Argument, VariantType(e.Expected))
	case 3:
		return fmt.Sprintf("too many arguments (expected %d)", e.Expected)
	case 4:
		return fmt.Sprintf("too few arguments (expected %d)", e.Expected)
	case 5:
		return "instance is null"
	case 6:
		return "method not const"
	}
	return fmt.Sprintf("call error %d", e.Code)
}

// EngineError is a non-OK Godot Error code returned by an engine method.
type EngineError int

func (e EngineError) Error() string { return fmt.Sprintf("engine error %d", int(e)) }
