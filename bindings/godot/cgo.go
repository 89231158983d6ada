package godot

// The cgo directives of the package. noescape: the helper keeps no Go
// pointer after it returns, so Go values passed by address may stay on the
// stack (no allocation per call). nocallback: the helper cannot re-enter Go,
// which lets cgo skip the callback bookkeeping; only helpers that run no
// engine method qualify, since any engine method may print an error and an
// error handler (an editor hook, a script Logger) may call back into Go,
// and a nocallback helper that calls back aborts the process. So string
// construction (invalid UTF-8 is reported) and container indexing (an index
// out of range is reported) are not nocallback; nocallbackSafe in
// cgo_test.go lists the helpers that may be, and why.

/*
#cgo CFLAGS: -O2 -std=gnu11 -Wall -Wno-unused-function
#cgo noescape gdx_godot_version
#cgo noescape gdx_library_path
#cgo noescape gdx_print_error
#cgo noescape gdx_print
#cgo noescape gdx_editor_help_load
#cgo noescape gdx_string_new
#cgo noescape gdx_string_utf8
#cgo nocallback gdx_string_utf8
#cgo noescape gdx_string_name_new
#cgo noescape gdx_construct
#cgo nocallback gdx_construct
#cgo noescape gdx_destroy
#cgo noescape gdx_variant_copy
#cgo nocallback gdx_variant_copy
#cgo noescape gdx_variant_destroy
#cgo noescape gdx_variant_type
#cgo nocallback gdx_variant_type
#cgo noescape gdx_variant_from
#cgo nocallback gdx_variant_from
#cgo noescape gdx_variant_to
#cgo nocallback gdx_variant_to
#cgo noescape gdx_variant_stringify
#cgo noescape gdx_builtin_method
#cgo noescape gdx_builtin_call
#cgo noescape gdx_packed_byte_array_ptr
#cgo noescape gdx_packed_string_array_at
#cgo noescape gdx_dictionary_at
#cgo noescape gdx_array_at
#cgo noescape gdx_method_bind
#cgo noescape gdx_singleton
#cgo noescape gdx_class_tag
#cgo noescape gdx_construct_object
#cgo noescape gdx_object_bind
#cgo nocallback gdx_object_binding
#cgo nocallback gdx_object_id
#cgo nocallback gdx_object_from_id
#cgo nocallback gdx_cast_to
#cgo nocallback gdx_has_class_tags
#cgo nocallback gdx_has_shutdown_callback
#cgo nocallback gdx_is_main_thread
#cgo noescape gdx_register_class
#cgo noescape gdx_register_property
#cgo noescape gdx_register_group
#cgo noescape gdx_register_signal
#cgo noescape gdx_register_constant
#cgo noescape gdx_unregister_class
#include <stdlib.h>
#include "gdx.h"
*/
import "C"

import "unsafe"

// loaded reports whether the engine called the entry symbol (false in unit
// tests and before start-up); engine calls are only valid when it is true.
func loaded() bool { return C.gdx_loaded() != 0 }

// strPtr returns the address of s's bytes for a C call, or nil when empty.
func strPtr(s string) *C.char {
	if s == "" {
		return nil
	}
	return (*C.char)(unsafe.Pointer(unsafe.StringData(s)))
}
