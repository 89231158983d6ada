// gdx.h: this package's own declarations of the parts of Godot's GDExtension C
// interface it uses, written from Godot's gdextension_interface.h (the rows this
// library uses per version are in ../testdata/interface_functions.json),
// plus the flat helpers gdx.c gives the Go side. Layouts are for 64-bit targets
// and are checked at compile time below (and again from Go in abi_test.go).
//
// Only declarations live here: cgo copies this header into _cgo_export.h, and a
// header that defines functions would then be defined twice.
#ifndef NEARZERO_GDX_H
#define NEARZERO_GDX_H

#include <stddef.h>
#include <stdint.h>

typedef uint8_t gdx_bool;
typedef int64_t gdx_int;

// Initialization levels (GDExtensionInitializationLevel).
enum {
	GDX_LEVEL_CORE = 0,
	GDX_LEVEL_SERVERS = 1,
	GDX_LEVEL_SCENE = 2,
	GDX_LEVEL_EDITOR = 3,
};

typedef void (*gdx_fnptr)(void);
typedef gdx_fnptr (*gdx_get_proc_t)(const char *name);

// GDExtensionInitialization, filled by the entry symbol (32 B).
typedef struct {
	uint32_t minimum_level;
	void *userdata;
	void (*initialize)(void *userdata, uint32_t level);
	void (*deinitialize)(void *userdata, uint32_t level);
} gdx_init;

// GDExtensionGodotVersion (4.1, 24 B) and GDExtensionGodotVersion2 (4.5, 56 B).
typedef struct {
	uint32_t major, minor, patch;
	const char *string;
} gdx_version;

typedef struct {
	uint32_t major, minor, patch, hex;
	const char *status;
	const char *build;
	const char *hash;
	uint64_t timestamp;
	const char *string;
} gdx_version2;

// GDExtensionCallError (12 B).
typedef struct {
	uint32_t error;
	int32_t argument;
	int32_t expected;
} gdx_call_error;

// GDExtensionPropertyInfo (48 B). The three pointers must never be NULL.
typedef struct {
	uint32_t type;
	void *name;        // StringName*
	void *class_name;  // StringName*
	uint32_t hint;
	void *hint_string; // String*
	uint32_t usage;
} gdx_property_info;

// GDExtensionClassMethodInfo (88 B).
typedef struct {
	void *name; // StringName*
	void *method_userdata;
	void *call_func;
	void *ptrcall_func;
	uint32_t method_flags;
	gdx_bool has_return_value;
	gdx_property_info *return_value_info;
	uint32_t return_value_metadata;
	uint32_t argument_count;
	gdx_property_info *arguments_info;
	uint32_t *arguments_metadata;
	uint32_t default_argument_count;
	void **default_arguments; // Variant**
} gdx_method_info;

// GDExtensionInstanceBindingCallbacks (24 B).
typedef struct {
	void *(*create)(void *token, void *object);
	void (*free)(void *token, void *object, void *binding);
	gdx_bool (*reference)(void *token, void *binding, gdx_bool reference);
} gdx_binding_callbacks;

// GDExtensionMainLoopCallbacks (24 B, 4.5+): each may be NULL.
typedef struct {
	void (*startup)(void);
	void (*shutdown)(void);
	void (*frame)(void);
} gdx_main_loop_callbacks;

// GDExtensionClassCreationInfo4 (4.4) = GDExtensionClassCreationInfo5 (4.5), 160 B.
typedef struct {
	gdx_bool is_virtual;
	gdx_bool is_abstract;
	gdx_bool is_exposed;
	gdx_bool is_runtime;
	const void *icon_path; // String*, may be NULL
	void *set_func;
	void *get_func;
	void *get_property_list_func;
	void *free_property_list_func;
	void *property_can_revert_func;
	void *property_get_revert_func;
	void *validate_property_func;
	void (*notification_func)(void *instance, int32_t what, gdx_bool reversed);
	void *to_string_func;
	void *reference_func;
	void *unreference_func;
	void *(*create_instance_func)(void *class_userdata, gdx_bool notify_postinitialize);
	void (*free_instance_func)(void *class_userdata, void *instance);
	void *recreate_instance_func;
	void *get_virtual_func;
	void *(*get_virtual_call_data_func)(void *class_userdata, const void *name, uint32_t hash);
	void (*call_virtual_with_data_func)(void *instance, const void *name, void *call_data, const void **args, void *ret);
	void *class_userdata;
} gdx_class_info4;

// Compile-time layout checks (the numbers of the facts sheet, 64-bit targets).
#if UINTPTR_MAX == 0xffffffffffffffffu
_Static_assert(sizeof(gdx_init) == 32, "gdx_init size");
_Static_assert(offsetof(gdx_init, initialize) == 16, "gdx_init.initialize");
_Static_assert(offsetof(gdx_init, deinitialize) == 24, "gdx_init.deinitialize");
_Static_assert(sizeof(gdx_version) == 24, "gdx_version size");
_Static_assert(sizeof(gdx_version2) == 56, "gdx_version2 size");
_Static_assert(offsetof(gdx_version2, timestamp) == 40, "gdx_version2.timestamp");
_Static_assert(sizeof(gdx_call_error) == 12, "gdx_call_error size");
_Static_assert(sizeof(gdx_property_info) == 48, "gdx_property_info size");
_Static_assert(offsetof(gdx_property_info, hint) == 24, "gdx_property_info.hint");
_Static_assert(offsetof(gdx_property_info, hint_string) == 32, "gdx_property_info.hint_string");
_Static_assert(offsetof(gdx_property_info, usage) == 40, "gdx_property_info.usage");
_Static_assert(sizeof(gdx_method_info) == 88, "gdx_method_info size");
_Static_assert(offsetof(gdx_method_info, method_flags) == 32, "gdx_method_info.method_flags");
_Static_assert(offsetof(gdx_method_info, has_return_value) == 36, "gdx_method_info.has_return_value");
_Static_assert(offsetof(gdx_method_info, return_value_info) == 40, "gdx_method_info.return_value_info");
_Static_assert(offsetof(gdx_method_info, return_value_metadata) == 48, "gdx_method_info.return_value_metadata");
_Static_assert(offsetof(gdx_method_info, argument_count) == 52, "gdx_method_info.argument_count");
_Static_assert(offsetof(gdx_method_info, arguments_info) == 56, "gdx_method_info.arguments_info");
_Static_assert(offsetof(gdx_method_info, arguments_metadata) == 64, "gdx_method_info.arguments_metadata");
_Static_assert(offsetof(gdx_method_info, default_argument_count) == 72, "gdx_method_info.default_argument_count");
_Static_assert(offsetof(gdx_method_info, default_arguments) == 80, "gdx_method_info.default_arguments");
_Static_assert(sizeof(gdx_binding_callbacks) == 24, "gdx_binding_callbacks size");
_Static_assert(sizeof(gdx_class_info4) == 160, "gdx_class_info4 size");
_Static_assert(offsetof(gdx_class_info4, icon_path) == 8, "gdx_class_info4.icon_path");
_Static_assert(offsetof(gdx_class_info4, notification_func) == 72, "gdx_class_info4.notification_func");
_Static_assert(offsetof(gdx_class_info4, create_instance_func) == 104, "gdx_class_info4.create_instance_func");
_Static_assert(offsetof(gdx_class_info4, free_instance_func) == 112, "gdx_class_info4.free_instance_func");
_Static_assert(offsetof(gdx_class_info4, get_virtual_func) == 128, "gdx_class_info4.get_virtual_func");
_Static_assert(offsetof(gdx_class_info4, get_virtual_call_data_func) == 136, "gdx_class_info4.get_virtual_call_data_func");
_Static_assert(offsetof(gdx_class_info4, call_virtual_with_data_func) == 144, "gdx_class_info4.call_virtual_with_data_func");
_Static_assert(offsetof(gdx_class_info4, class_userdata) == 152, "gdx_class_info4.class_userdata");
#endif

// ---- Flat helpers implemented in gdx.c (Go calls these). ----

// Values crossing by value, so that no Go pointer is passed on hot paths
// (cgo moves the pointee of a pointer argument to the heap unless the C
// function is both noescape and nocallback, and engine calls may call back).
typedef struct {
	uint64_t w[6]; // 48 B: any ptrcall argument or return up to Transform3D
} gdx_blob;

typedef struct {
	uint64_t w[3]; // one Variant
} gdx_variant;

enum { GDX_MAX_CALL_ARGS = 9 };

typedef struct {
	gdx_variant v[GDX_MAX_CALL_ARGS];
} gdx_variants;

typedef struct {
	gdx_variant ret;
	gdx_call_error error;
} gdx_call_result;

// State after the entry symbol ran.
int gdx_loaded(void);
void gdx_godot_version(uint32_t *major, uint32_t *minor, uint32_t *patch);
const char *gdx_godot_version_string(void);
void gdx_library_path(void *r_string);

// Console.
void gdx_print_error(const char *desc, gdx_int desc_len, const char *func, gdx_int func_len,
		const char *file, gdx_int file_len, int32_t line, int warning, int notify_editor);
void gdx_print(const void *variant_args, int32_t argc);
void gdx_editor_help_load(const char *xml, gdx_int len);

// Main thread.
void gdx_record_main_thread(void);
int gdx_is_main_thread(void);

// Strings (values are the engine's opaque 8-byte handles).
// gdx_string_new and gdx_string_name_new return the new 8-byte value rather
// than writing through a pointer: they may print (invalid UTF-8), so they
// are not nocallback, and a Go out-pointer would then move to the heap.
uint64_t gdx_string_new(const char *utf8, gdx_int len);
gdx_int gdx_string_utf8(const void *string, char *buf, gdx_int max);
uint64_t gdx_string_name_new(const char *utf8, gdx_int len);

// Builtin constructors and destructors by Variant type and constructor index.
int gdx_construct(uint32_t type, int32_t index, void *r_value, const void *arg0);
void gdx_destroy(uint32_t type, void *value);
void gdx_destroy_value(uint32_t type, gdx_blob value);

// Variants (24 B, opaque).
void gdx_variant_copy(void *r_variant, const void *src);
void gdx_variant_destroy(void *variant);
void gdx_variant_destroy_value(gdx_variant variant);
uint32_t gdx_variant_type(const void *variant);
void gdx_variant_from(uint32_t type, void *r_variant, void *value);
void gdx_variant_to(uint32_t type, void *r_value, void *variant);
typedef struct {
	gdx_variant value;
	int ok;
} gdx_convert_result;
gdx_convert_result gdx_variant_convert(uint32_t type, gdx_variant src);
void gdx_variant_stringify(const void *variant, void *r_string);

// Builtin-type methods and container element access.
void *gdx_builtin_method(uint32_t type, const char *name, gdx_int name_len, gdx_int hash);
void gdx_builtin_call(void *fn, void *base, const void *a0, const void *a1, void *ret, int32_t argc);
uint8_t *gdx_packed_byte_array_ptr(void *array, gdx_int index);
void *gdx_packed_string_array_at(void *array, gdx_int index);
void *gdx_dictionary_at(void *dict, const void *key);
void *gdx_array_at(void *array, gdx_int index);

// Engine objects and method binds.
void *gdx_method_bind(const char *cls, gdx_int cls_len, const char *method, gdx_int method_len, gdx_int hash);
gdx_blob gdx_ptrcall_words(void *mb, void *obj, uint64_t a0, uint64_t a1, uint64_t a2);
gdx_blob gdx_ptrcall_blob(void *mb, void *obj, gdx_blob a0);
gdx_call_result gdx_call(void *mb, void *obj, gdx_variants args, gdx_int argc);
void *gdx_singleton(const void *name);
int gdx_has_class_tags(void);
int gdx_has_shutdown_callback(void);
void *gdx_class_tag(const void *name);
void *gdx_cast_to(void *obj, void *tag);
void *gdx_construct_object(const void *class_name);
void gdx_object_bind(void *obj, const void *class_name, uintptr_t handle);
uintptr_t gdx_object_binding(void *obj);
void gdx_object_destroy(void *obj);
uint64_t gdx_object_id(void *obj);
void *gdx_object_from_id(uint64_t id);
void gdx_ref_set_object(void *ref_slot, void *obj);

// Class registration (class4 on 4.4, class5 on 4.5+).
enum {
	GDX_CLASS_VIRTUAL = 1,
	GDX_CLASS_ABSTRACT = 2,
	GDX_CLASS_RUNTIME = 4,
	GDX_CLASS_NOTIFICATION = 8,
};
void gdx_register_class(const void *name, const void *parent, const void *icon_path, uint32_t flags, uintptr_t class_handle);
void gdx_register_method(const void *cls, gdx_method_info *info, uintptr_t handle);
void gdx_register_property(const void *cls, const gdx_property_info *info, const void *setter, const void *getter);
void gdx_register_group(const void *cls, const void *group, const void *prefix, int subgroup);
void gdx_register_signal(const void *cls, const void *name, const gdx_property_info *args, gdx_int argc);
void gdx_register_constant(const void *cls, const void *enum_name, const void *name, gdx_int value, int bitfield);
void gdx_unregister_class(const void *cls);

#endif
