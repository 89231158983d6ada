// Package apihash recomputes the hashes Godot gives engine methods in
// extension_api.json, from a method's signature, so that the binding's
// method table can be checked without the engine: a wrong hash makes
// classdb_get_method_bind return NULL at start-up.
//
// Two algorithms exist. Class methods (MethodInfo::get_compatibility_hash)
// mix, with 32-bit MurmurHash3 steps seeded 0x7F07C65: has-return, argument
// count, return type (and the djb2 hash of its class name), each argument type
// (and class name), the count and Variant hashes of default arguments, the
// const and vararg flags; then the MurmurHash3 finalizer. Builtin-type
// methods (Variant::get_builtin_method_hash) mix const, static, vararg,
// has-return, return type, argument count and argument types, with no class
// names and no defaults.
//
// Type names are those of extension_api.json: builtin names ("int",
// "Vector3"), "Variant", "enum::Class.Enum", "bitfield::Class.Flags",
// "typedarray::T" and engine class names ("Node").
//
// Invariants: pure functions, no engine, no cgo; an unsupported default value
// is an error, never a guess.
package apihash
