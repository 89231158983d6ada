// gdx.c: every C definition of the binding: the entry symbol, the interface
// function pointers (loaded once), the callbacks the engine calls (thin shims
// that forward handles to Go //export functions) and the flat helpers Go calls.
// Engine callbacks never see a Go pointer: userdata and instances are integer
// handles into Go tables.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdx.h"
#include "_cgo_export.h"

#ifdef _WIN32
#include <windows.h>
#define GDX_EXPORT __declspec(dllexport)
#else
#include <pthread.h>
#define GDX_EXPORT __attribute__((visibility("default")))
#endif
#ifdef __APPLE__
#include <dlfcn.h>
#endif

// Variant types used here (Variant::Type).
enum {
	T_NIL = 0,
	T_BOOL = 1,
	T_STRING = 4,
	T_STRING_NAME = 21,
	T_NODE_PATH = 22,
	T_OBJECT = 24,
	T_DICTIONARY = 27,
	T_ARRAY = 28,
	T_PACKED_BYTE_ARRAY = 29,
	T_PACKED_STRING_ARRAY = 34,
	T_MAX = 39,
};

typedef void (*from_type_fn)(void *r_variant, void *value);
typedef void (*to_type_fn)(void *r_value, void *variant);
typedef void (*ptr_ctor_fn)(void *r_value, const void **args);
typedef void (*ptr_dtor_fn)(void *value);
typedef void (*ptr_builtin_fn)(void *base, const void **args, void *ret, int argc);
typedef void (*ptr_utility_fn)(void *ret, const void **args, int argc);

static gdx_get_proc_t get_proc;
static void *library;
static int loaded;
static uint32_t version[3];
static char version_string[160];

// Interface functions, loaded by load_interface.
static void (*p_print_error)(const char *, const char *, const char *, int32_t, gdx_bool);
static void (*p_print_warning)(const char *, const char *, const char *, int32_t, gdx_bool);
static void (*p_get_library_path)(void *, void *);
static void (*p_variant_new_copy)(void *, const void *);
static void (*p_variant_new_nil)(void *);
static void (*p_variant_destroy)(void *);
static uint32_t (*p_variant_get_type)(const void *);
static void (*p_variant_stringify)(const void *, void *);
static gdx_bool (*p_variant_can_convert_strict)(uint32_t, uint32_t);
static void (*p_variant_construct)(uint32_t, void *, const void **, int32_t, gdx_call_error *);
static from_type_fn (*p_get_variant_from_type_constructor)(uint32_t);
static to_type_fn (*p_get_variant_to_type_constructor)(uint32_t);
static ptr_ctor_fn (*p_variant_get_ptr_constructor)(uint32_t, int32_t);
static ptr_dtor_fn (*p_variant_get_ptr_destructor)(uint32_t);
static ptr_builtin_fn (*p_variant_get_ptr_builtin_method)(uint32_t, const void *, gdx_int);
static ptr_utility_fn (*p_variant_get_ptr_utility_function)(const void *, gdx_int);
static gdx_int (*p_string_new_with_utf8_chars_and_len2)(void *, const char *, gdx_int);
static gdx_int (*p_string_to_utf8_chars)(const void *, char *, gdx_int);
static void (*p_string_name_new_with_utf8_chars_and_len)(void *, const char *, gdx_int);
static uint8_t *(*p_packed_byte_array_operator_index)(void *, gdx_int);
static void *(*p_packed_string_array_operator_index)(void *, gdx_int);
static void *(*p_dictionary_operator_index)(void *, const void *);
static void *(*p_array_operator_index)(void *, gdx_int);
static void (*p_object_method_bind_call)(void *, void *, const void **, gdx_int, void *, gdx_call_error *);
static void (*p_object_method_bind_ptrcall)(void *, void *, const void **, void *);
static void (*p_object_destroy)(void *);
static void *(*p_global_get_singleton)(const void *);
static void *(*p_object_get_instance_binding)(void *, void *, const gdx_binding_callbacks *);
static void (*p_object_set_instance_binding)(void *, void *, void *, const gdx_binding_callbacks *);
static void (*p_object_set_instance)(void *, const void *, void *);
static void *(*p_object_cast_to)(void *, void *); // before 4.7 only
static void *(*p_object_get_instance_from_id)(uint64_t);
static uint64_t (*p_object_get_instance_id)(void *);
static void (*p_ref_set_object)(void *, void *);
static void *(*p_classdb_construct_object)(const void *); // object3 on 4.7+, object2 before
static void *(*p_classdb_get_method_bind)(const void *, const void *, gdx_int);
static void *(*p_classdb_get_class_tag)(const void *); // before 4.7 only
static void (*p_classdb_register_class)(void *, const void *, const void *, const gdx_class_info4 *);
static void (*p_classdb_register_extension_class_method)(void *, const void *, const gdx_method_info *);
static void (*p_classdb_register_extension_class_integer_constant)(void *, const void *, const void *, const void *, gdx_int, gdx_bool);
static void (*p_classdb_register_extension_class_property)(void *, const void *, const gdx_property_info *, const void *, const void *);
static void (*p_classdb_register_extension_class_property_group)(void *, const void *, const void *, const void *);
static void (*p_classdb_register_extension_class_property_subgroup)(void *, const void *, const void *, const void *);
static void (*p_classdb_register_extension_class_signal)(void *, const void *, const void *, const gdx_property_info *, gdx_int);
static void (*p_classdb_unregister_extension_class)(void *, const void *);
static void (*p_editor_help_load_xml_from_utf8_chars_and_len)(const char *, gdx_int);
static void (*p_register_main_loop_callbacks)(void *, const gdx_main_loop_callbacks *); // 4.5+

// Per-type caches, filled at load.
static from_type_fn from_type[T_MAX];
static to_type_fn to_type[T_MAX];
static ptr_dtor_fn dtor[T_MAX];
static ptr_ctor_fn ctor[T_MAX][4];
static ptr_utility_fn utility_print;

#ifdef _WIN32
static DWORD main_thread;
#else
static pthread_t main_thread;
#endif
static int main_thread_set;

static int load_error(const char *name) {
	if (p_print_error) {
		char buf[256];
		snprintf(buf, sizeof buf, "nearzero: the engine lacks the GDExtension interface function '%s' (Godot 4.4 or later is required)", name);
		p_print_error(buf, "load_interface", __FILE__, __LINE__, 1);
	}
	return 0;
}

#define LOAD(var, name) \
	do { \
		var = (__typeof__(var))get_proc(name); \
		if (!var) \
			return load_error(name); \
	} while (0)

static void load_version(void) {
	// Official builds of 4.4 and later all have get_godot_version; only builds
	// made without deprecated APIs (4.5+) lack it and need the 4.5 variant.
	// Asking for a missing name prints an engine error, so ask in this order.
	void (*v1)(gdx_version *) = (__typeof__(v1))get_proc("get_godot_version");
	if (v1) {
		gdx_version v = { 0 };
		v1(&v);
		version[0] = v.major, version[1] = v.minor, version[2] = v.patch;
		snprintf(version_string, sizeof version_string, "%s", v.string ? v.string : "");
		return;
	}
	void (*v2)(gdx_version2 *) = (__typeof__(v2))get_proc("get_godot_version2");
	if (v2) {
		gdx_version2 v = { 0 };
		v2(&v);
		version[0] = v.major, version[1] = v.minor, version[2] = v.patch;
		snprintf(version_string, sizeof version_string, "%s", v.string ? v.string : "");
	}
}

static int at_least(uint32_t major, uint32_t minor) {
	return version[0] > major || (version[0] == major && version[1] >= minor);
}

static int load_interface(void) {
	LOAD(p_print_error, "print_error");
	LOAD(p_print_warning, "print_warning");
	load_version();
	if (!at_least(4, 4)) {
		char buf[200];
		snprintf(buf, sizeof buf, "nearzero: Godot %u.%u.%u is too old; 4.4 or later is required", version[0], version[1], version[2]);
		p_print_error(buf, "load_interface", __FILE__, __LINE__, 1);
		return 0;
	}
	LOAD(p_get_library_path, "get_library_path");
	LOAD(p_variant_new_copy, "variant_new_copy");
	LOAD(p_variant_new_nil, "variant_new_nil");
	LOAD(p_variant_destroy, "variant_destroy");
	LOAD(p_variant_get_type, "variant_get_type");
	LOAD(p_variant_stringify, "variant_stringify");
	LOAD(p_variant_can_convert_strict, "variant_can_convert_strict");
	LOAD(p_variant_construct, "variant_construct");
	LOAD(p_get_variant_from_type_constructor, "get_variant_from_type_constructor");
	LOAD(p_get_variant_to_type_constructor, "get_variant_to_type_constructor");
	LOAD(p_variant_get_ptr_constructor, "variant_get_ptr_constructor");
	LOAD(p_variant_get_ptr_destructor, "variant_get_ptr_destructor");
	LOAD(p_variant_get_ptr_builtin_method, "variant_get_ptr_builtin_method");
	LOAD(p_variant_get_ptr_utility_function, "variant_get_ptr_utility_function");
	LOAD(p_string_new_with_utf8_chars_and_len2, "string_new_with_utf8_chars_and_len2");
	LOAD(p_string_to_utf8_chars, "string_to_utf8_chars");
	LOAD(p_string_name_new_with_utf8_chars_and_len, "string_name_new_with_utf8_chars_and_len");
	LOAD(p_packed_byte_array_operator_index, "packed_byte_array_operator_index");
	LOAD(p_packed_string_array_operator_index, "packed_string_array_operator_index");
	LOAD(p_dictionary_operator_index, "dictionary_operator_index");
	LOAD(p_array_operator_index, "array_operator_index");
	LOAD(p_object_method_bind_call, "object_method_bind_call");
	LOAD(p_object_method_bind_ptrcall, "object_method_bind_ptrcall");
	LOAD(p_object_destroy, "object_destroy");
	LOAD(p_global_get_singleton, "global_get_singleton");
	LOAD(p_object_get_instance_binding, "object_get_instance_binding");
	LOAD(p_object_set_instance_binding, "object_set_instance_binding");
	LOAD(p_object_set_instance, "object_set_instance");
	LOAD(p_object_get_instance_from_id, "object_get_instance_from_id");
	LOAD(p_object_get_instance_id, "object_get_instance_id");
	LOAD(p_ref_set_object, "ref_set_object");
	LOAD(p_classdb_get_method_bind, "classdb_get_method_bind");
	// The newest entry point the running engine has: the older ones are
	// deprecated there, and compiled out of builds made without deprecated
	// APIs. class4, class5 and class6 take the same creation-info struct;
	// object3 and class6 differ from their elders only for RefCounted
	// classes (a reference count of 1), and this library constructs and
	// registers Node classes alone. From 4.7 a cast is Object.is_class
	// (class tags are deprecated there).
	if (at_least(4, 7)) {
		LOAD(p_classdb_construct_object, "classdb_construct_object3");
		LOAD(p_classdb_register_class, "classdb_register_extension_class6");
	} else {
		LOAD(p_classdb_construct_object, "classdb_construct_object2");
		LOAD(p_classdb_get_class_tag, "classdb_get_class_tag");
		LOAD(p_object_cast_to, "object_cast_to");
		if (at_least(4, 5)) {
			LOAD(p_classdb_register_class, "classdb_register_extension_class5");
		} else {
			LOAD(p_classdb_register_class, "classdb_register_extension_class4");
		}
	}
	LOAD(p_classdb_register_extension_class_method, "classdb_register_extension_class_method");
	LOAD(p_classdb_register_extension_class_integer_constant, "classdb_register_extension_class_integer_constant");
	LOAD(p_classdb_register_extension_class_property, "classdb_register_extension_class_property");
	LOAD(p_classdb_register_extension_class_property_group, "classdb_register_extension_class_property_group");
	LOAD(p_classdb_register_extension_class_property_subgroup, "classdb_register_extension_class_property_subgroup");
	LOAD(p_classdb_register_extension_class_signal, "classdb_register_extension_class_signal");
	LOAD(p_classdb_unregister_extension_class, "classdb_unregister_extension_class");
	LOAD(p_editor_help_load_xml_from_utf8_chars_and_len, "editor_help_load_xml_from_utf8_chars_and_len");
	if (at_least(4, 5)) {
		LOAD(p_register_main_loop_callbacks, "register_main_loop_callbacks");
	}

	// Conversions and constructors of the types the Go side uses.
	static const uint32_t convertible[] = { 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 15, 17, 18, 20, 21, 22, 24, 27, 28, 29, 34 };
	for (size_t i = 0; i < sizeof convertible / sizeof convertible[0]; i++) {
		uint32_t t = convertible[i];
		from_type[t] = p_get_variant_from_type_constructor(t);
		to_type[t] = p_get_variant_to_type_constructor(t);
	}
	static const uint32_t owned[] = { T_STRING, T_STRING_NAME, T_NODE_PATH, T_DICTIONARY, T_ARRAY,
		T_PACKED_BYTE_ARRAY, T_PACKED_STRING_ARRAY };
	for (size_t i = 0; i < sizeof owned / sizeof owned[0]; i++) {
		uint32_t t = owned[i];
		dtor[t] = p_variant_get_ptr_destructor(t);
		ctor[t][0] = p_variant_get_ptr_constructor(t, 0); // empty
		ctor[t][1] = p_variant_get_ptr_constructor(t, 1); // copy
	}
	ctor[T_STRING][2] = p_variant_get_ptr_constructor(T_STRING, 2); // from StringName
	ctor[T_STRING][3] = p_variant_get_ptr_constructor(T_STRING, 3); // from NodePath
	ctor[T_STRING_NAME][2] = p_variant_get_ptr_constructor(T_STRING_NAME, 2); // from String
	ctor[T_NODE_PATH][2] = p_variant_get_ptr_constructor(T_NODE_PATH, 2); // from String

	uint64_t sn = 0;
	p_string_name_new_with_utf8_chars_and_len(&sn, "print", 5);
	utility_print = p_variant_get_ptr_utility_function(&sn, 2648703342);
	dtor[T_STRING_NAME](&sn);
	return 1;
}

// ---- Callbacks from the engine (shims into Go). ----

static void on_initialize(void *userdata, uint32_t level) {
	(void)userdata;
	nzInitialize(level);
}

static void on_deinitialize(void *userdata, uint32_t level) {
	(void)userdata;
	nzDeinitialize(level);
}

static void *on_create_instance(void *class_userdata, gdx_bool notify) {
	return nzCreateInstance((uintptr_t)class_userdata, notify);
}

static void on_free_instance(void *class_userdata, void *instance) {
	nzFreeInstance((uintptr_t)class_userdata, (uintptr_t)instance);
}

static void *on_get_virtual_call_data(void *class_userdata, const void *name, uint32_t hash) {
	return (void *)nzVirtualCallData((uintptr_t)class_userdata, (void *)name, hash);
}

static void on_call_virtual(void *instance, const void *name, void *call_data, const void **args, void *ret) {
	(void)name;
	nzCallVirtual((uintptr_t)instance, (uintptr_t)call_data, (void **)args, ret);
}

static void on_notification(void *instance, int32_t what, gdx_bool reversed) {
	nzNotification((uintptr_t)instance, what, reversed);
}

static void on_method_call(void *method_userdata, void *instance, const void **args, gdx_int argc, void *ret, gdx_call_error *err) {
	nzMethodCall((uintptr_t)method_userdata, (uintptr_t)instance, (void **)args, argc, ret, err);
}

static void on_method_ptrcall(void *method_userdata, void *instance, const void **args, void *ret) {
	nzMethodPtrcall((uintptr_t)method_userdata, (uintptr_t)instance, (void **)args, ret);
}

// Instance bindings carry the same handle as the instance; Go owns the value,
// so the binding callbacks have nothing to do.
static void *on_binding_create(void *token, void *object) {
	(void)token, (void)object;
	return NULL;
}

static void on_binding_free(void *token, void *object, void *binding) {
	(void)token, (void)object, (void)binding;
}

static gdx_bool on_binding_reference(void *token, void *binding, gdx_bool reference) {
	(void)token, (void)binding, (void)reference;
	return 1;
}

static const gdx_binding_callbacks binding_callbacks = { on_binding_create, on_binding_free, on_binding_reference };

// The main loop's shutdown runs before the engine's last flush of deferred
// calls (4.5+); see nzShutdown.
static void on_shutdown(void) {
	nzShutdown();
}

static const gdx_main_loop_callbacks main_loop_callbacks = { NULL, on_shutdown, NULL };

// ---- The entry symbol named by the .gdextension file. ----

GDX_EXPORT gdx_bool nearzero_init(gdx_get_proc_t p_get_proc, void *p_library, gdx_init *r_init);

// pin_library keeps this library mapped until the process exits: the Go
// runtime cannot be unloaded, and its threads keep running after the engine
// closes the library at shutdown. ELF needs nothing (Go links c-shared
// objects with -z nodelete).
static void pin_library(void) {
#if defined(_WIN32)
	HMODULE self = NULL;
	GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_PIN,
			(LPCWSTR)(void *)&nearzero_init, &self);
#elif defined(__APPLE__)
	Dl_info info;
	if (dladdr((void *)&nearzero_init, &info) && info.dli_fname) {
		dlopen(info.dli_fname, RTLD_LAZY | RTLD_NODELETE);
	}
#endif
}

GDX_EXPORT gdx_bool nearzero_init(gdx_get_proc_t p_get_proc, void *p_library, gdx_init *r_init) {
	pin_library();
	get_proc = p_get_proc;
	library = p_library;
	if (!load_interface()) {
		return 0;
	}
	r_init->minimum_level = GDX_LEVEL_SCENE;
	r_init->userdata = NULL;
	r_init->initialize = on_initialize;
	r_init->deinitialize = on_deinitialize;
	if (p_register_main_loop_callbacks) {
		p_register_main_loop_callbacks(library, &main_loop_callbacks);
	}
	loaded = 1;
	return 1;
}

// ---- Helpers for Go. ----

int gdx_loaded(void) {
	return loaded;
}

void gdx_godot_version(uint32_t *major, uint32_t *minor, uint32_t *patch) {
	*major = version[0], *minor = version[1], *patch = version[2];
}

const char *gdx_godot_version_string(void) {
	return version_string;
}

void gdx_library_path(void *r_string) {
	p_get_library_path(library, r_string);
}

// Go strings are not NUL-terminated; copy each part into one buffer.
void gdx_print_error(const char *desc, gdx_int desc_len, const char *func, gdx_int func_len,
		const char *file, gdx_int file_len, int32_t line, int warning, int notify_editor) {
	size_t total = (size_t)desc_len + (size_t)func_len + (size_t)file_len + 3;
	char stack[1024];
	char *buf = total <= sizeof stack ? stack : malloc(total);
	if (!buf) {
		return;
	}
	char *d = buf, *f = buf + desc_len + 1, *l = f + func_len + 1;
	memcpy(d, desc, (size_t)desc_len), d[desc_len] = 0;
	memcpy(f, func, (size_t)func_len), f[func_len] = 0;
	memcpy(l, file, (size_t)file_len), l[file_len] = 0;
	if (warning) {
		p_print_warning(d, f, l, line, (gdx_bool)notify_editor);
	} else {
		p_print_error(d, f, l, line, (gdx_bool)notify_editor);
	}
	if (buf != stack) {
		free(buf);
	}
}

void gdx_print(const void *variant_args, int32_t argc) {
	if (!loaded || !utility_print) {
		return;
	}
	const void *args[8];
	if (argc > 8) {
		argc = 8;
	}
	for (int32_t i = 0; i < argc; i++) {
		args[i] = (const uint8_t *)variant_args + 24 * i;
	}
	utility_print(NULL, args, argc);
}

void gdx_editor_help_load(const char *xml, gdx_int len) {
	p_editor_help_load_xml_from_utf8_chars_and_len(xml, len);
}

void gdx_record_main_thread(void) {
#ifdef _WIN32
	main_thread = GetCurrentThreadId();
#else
	main_thread = pthread_self();
#endif
	main_thread_set = 1;
}

int gdx_is_main_thread(void) {
	if (!main_thread_set) {
		return 0;
	}
#ifdef _WIN32
	return GetCurrentThreadId() == main_thread;
#else
	return pthread_equal(pthread_self(), main_thread);
#endif
}

uint64_t gdx_string_new(const char *utf8, gdx_int len) {
	uint64_t r = 0;
	if (!loaded) {
		return r;
	}
	if (len <= 0) {
		ctor[T_STRING][0](&r, NULL);
		return r;
	}
	p_string_new_with_utf8_chars_and_len2(&r, utf8, len);
	return r;
}

gdx_int gdx_string_utf8(const void *string, char *buf, gdx_int max) {
	if (!loaded) {
		return 0;
	}
	return p_string_to_utf8_chars(string, buf, max);
}

uint64_t gdx_string_name_new(const char *utf8, gdx_int len) {
	uint64_t r = 0;
	if (!loaded) {
		return r;
	}
	if (len <= 0) {
		ctor[T_STRING_NAME][0](&r, NULL);
		return r;
	}
	p_string_name_new_with_utf8_chars_and_len(&r, utf8, len);
	return r;
}

int gdx_construct(uint32_t type, int32_t index, void *r_value, const void *arg0) {
	if (!loaded || type >= T_MAX || index < 0 || index > 3 || !ctor[type][index]) {
		return 0;
	}
	const void *args[1] = { arg0 };
	ctor[type][index](r_value, args);
	return 1;
}

void gdx_destroy(uint32_t type, void *value) {
	if (loaded && type < T_MAX && dtor[type]) {
		dtor[type](value);
	}
}

void gdx_variant_destroy_value(gdx_variant variant) {
	if (loaded) {
		p_variant_destroy(&variant);
	}
}

void gdx_destroy_value(uint32_t type, gdx_blob value) {
	if (loaded && type < T_MAX && dtor[type]) {
		dtor[type](&value);
	}
}

void gdx_variant_copy(void *r_variant, const void *src) {
	if (!loaded) {
		memset(r_variant, 0, 24);
		return;
	}
	p_variant_new_copy(r_variant, src);
}

void gdx_variant_destroy(void *variant) {
	if (!loaded) {
		return;
	}
	p_variant_destroy(variant);
}

uint32_t gdx_variant_type(const void *variant) {
	if (!loaded) {
		return T_NIL;
	}
	return p_variant_get_type(variant);
}

void gdx_variant_from(uint32_t type, void *r_variant, void *value) {
	if (!loaded) {
		memset(r_variant, 0, 24);
	} else if (type < T_MAX && from_type[type]) {
		from_type[type](r_variant, value);
	} else {
		p_variant_new_nil(r_variant);
	}
}

void gdx_variant_to(uint32_t type, void *r_value, void *variant) {
	if (loaded && type < T_MAX && to_type[type]) {
		to_type[type](r_value, variant);
	}
}

gdx_convert_result gdx_variant_convert(uint32_t type, gdx_variant src) {
	gdx_convert_result r;
	memset(&r, 0, sizeof r);
	if (!loaded || !p_variant_can_convert_strict(p_variant_get_type(&src), type)) {
		return r;
	}
	const void *args[1] = { &src };
	gdx_call_error err = { 0 };
	p_variant_construct(type, &r.value, args, 1, &err);
	if (err.error != 0) {
		p_variant_destroy(&r.value);
		memset(&r.value, 0, sizeof r.value);
		return r;
	}
	r.ok = 1;
	return r;
}

void gdx_variant_stringify(const void *variant, void *r_string) {
	if (!loaded) {
		memset(r_string, 0, 8); // unit tests: the empty String
		return;
	}
	p_variant_stringify(variant, r_string);
}

void *gdx_builtin_method(uint32_t type, const char *name, gdx_int name_len, gdx_int hash) {
	uint64_t sn = 0;
	p_string_name_new_with_utf8_chars_and_len(&sn, name, name_len);
	void *fn = (void *)p_variant_get_ptr_builtin_method(type, &sn, hash);
	dtor[T_STRING_NAME](&sn);
	return fn;
}

void gdx_builtin_call(void *fn, void *base, const void *a0, const void *a1, void *ret, int32_t argc) {
	const void *args[2] = { a0, a1 };
	((ptr_builtin_fn)fn)(base, args, ret, argc);
}

uint8_t *gdx_packed_byte_array_ptr(void *array, gdx_int index) {
	if (!loaded) {
		return NULL;
	}
	return p_packed_byte_array_operator_index(array, index);
}

void *gdx_packed_string_array_at(void *array, gdx_int index) {
	if (!loaded) {
		return NULL;
	}
	return p_packed_string_array_operator_index(array, index);
}

void *gdx_dictionary_at(void *dict, const void *key) {
	if (!loaded) {
		return NULL;
	}
	return p_dictionary_operator_index(dict, key);
}

void *gdx_array_at(void *array, gdx_int index) {
	if (!loaded) {
		return NULL;
	}
	return p_array_operator_index(array, index);
}

void *gdx_method_bind(const char *cls, gdx_int cls_len, const char *method, gdx_int method_len, gdx_int hash) {
	uint64_t c = 0, m = 0;
	p_string_name_new_with_utf8_chars_and_len(&c, cls, cls_len);
	p_string_name_new_with_utf8_chars_and_len(&m, method, method_len);
	void *mb = p_classdb_get_method_bind(&c, &m, hash);
	dtor[T_STRING_NAME](&c);
	dtor[T_STRING_NAME](&m);
	return mb;
}

// The engine reads only as many arguments as the method takes; each
// argument lives in a local word (bool in its low byte, ints as int64,
// floats as double, opaque 8-byte values and Object* as is).
gdx_blob gdx_ptrcall_words(void *mb, void *obj, uint64_t a0, uint64_t a1, uint64_t a2) {
	gdx_blob ret;
	memset(&ret, 0, sizeof ret);
	if (!loaded) {
		return ret;
	}
	uint64_t words[3] = { a0, a1, a2 };
	const void *args[3] = { &words[0], &words[1], &words[2] };
	p_object_method_bind_ptrcall(mb, obj, args, &ret);
	return ret;
}

// One argument of up to 48 bytes (vectors, colours, transforms).
gdx_blob gdx_ptrcall_blob(void *mb, void *obj, gdx_blob a0) {
	gdx_blob ret;
	memset(&ret, 0, sizeof ret);
	if (!loaded) {
		return ret;
	}
	const void *args[1] = { &a0 };
	p_object_method_bind_ptrcall(mb, obj, args, &ret);
	return ret;
}

gdx_call_result gdx_call(void *mb, void *obj, gdx_variants args, gdx_int argc) {
	gdx_call_result r;
	memset(&r, 0, sizeof r);
	if (!loaded) {
		return r; // unit tests: a Nil result
	}
	const void *ptrs[GDX_MAX_CALL_ARGS];
	if (argc > GDX_MAX_CALL_ARGS) {
		argc = GDX_MAX_CALL_ARGS;
	}
	for (gdx_int i = 0; i < argc; i++) {
		ptrs[i] = &args.v[i];
	}
	p_object_method_bind_call(mb, obj, ptrs, argc, &r.ret, &r.error);
	return r;
}

void *gdx_singleton(const void *name) {
	return p_global_get_singleton(name);
}

int gdx_has_shutdown_callback(void) {
	return p_register_main_loop_callbacks != NULL;
}

int gdx_has_class_tags(void) {
	return p_classdb_get_class_tag != NULL && p_object_cast_to != NULL;
}

void *gdx_class_tag(const void *name) {
	if (!loaded || !p_classdb_get_class_tag) {
		return NULL;
	}
	return p_classdb_get_class_tag(name);
}

void *gdx_cast_to(void *obj, void *tag) {
	if (!loaded || !obj || !tag || !p_object_cast_to) {
		return NULL;
	}
	return p_object_cast_to(obj, tag);
}

void *gdx_construct_object(const void *class_name) {
	return p_classdb_construct_object(class_name);
}

void gdx_object_bind(void *obj, const void *class_name, uintptr_t handle) {
	p_object_set_instance(obj, class_name, (void *)handle);
	p_object_set_instance_binding(obj, library, (void *)handle, &binding_callbacks);
}

uintptr_t gdx_object_binding(void *obj) {
	if (!loaded || !obj) {
		return 0;
	}
	return (uintptr_t)p_object_get_instance_binding(obj, library, NULL);
}

void gdx_object_destroy(void *obj) {
	p_object_destroy(obj);
}

uint64_t gdx_object_id(void *obj) {
	return loaded && obj ? p_object_get_instance_id(obj) : 0;
}

void *gdx_object_from_id(uint64_t id) {
	return loaded && id ? p_object_get_instance_from_id(id) : NULL;
}

void gdx_ref_set_object(void *ref_slot, void *obj) {
	p_ref_set_object(ref_slot, obj);
}

void gdx_register_class(const void *name, const void *parent, const void *icon_path, uint32_t flags, uintptr_t class_handle) {
	gdx_class_info4 info;
	memset(&info, 0, sizeof info);
	info.is_virtual = (flags & GDX_CLASS_VIRTUAL) != 0;
	info.is_abstract = (flags & GDX_CLASS_ABSTRACT) != 0;
	info.is_exposed = 1;
	info.is_runtime = (flags & GDX_CLASS_RUNTIME) != 0;
	info.icon_path = icon_path;
	if (flags & GDX_CLASS_NOTIFICATION) {
		info.notification_func = on_notification;
	}
	info.create_instance_func = on_create_instance;
	info.free_instance_func = on_free_instance;
	info.get_virtual_call_data_func = on_get_virtual_call_data;
	info.call_virtual_with_data_func = on_call_virtual;
	info.class_userdata = (void *)class_handle;
	p_classdb_register_class(library, name, parent, &info);
}

void gdx_register_method(const void *cls, gdx_method_info *info, uintptr_t handle) {
	info->method_userdata = (void *)handle;
	info->call_func = (void *)on_method_call;
	info->ptrcall_func = (void *)on_method_ptrcall;
	p_classdb_register_extension_class_method(library, cls, info);
}

void gdx_register_property(const void *cls, const gdx_property_info *info, const void *setter, const void *getter) {
	p_classdb_register_extension_class_property(library, cls, info, setter, getter);
}

void gdx_register_group(const void *cls, const void *group, const void *prefix, int subgroup) {
	if (subgroup) {
		p_classdb_register_extension_class_property_subgroup(library, cls, group, prefix);
	} else {
		p_classdb_register_extension_class_property_group(library, cls, group, prefix);
	}
}

void gdx_register_signal(const void *cls, const void *name, const gdx_property_info *args, gdx_int argc) {
	p_classdb_register_extension_class_signal(library, cls, name, args, argc);
}

void gdx_register_constant(const void *cls, const void *enum_name, const void *name, gdx_int value, int bitfield) {
	p_classdb_register_extension_class_integer_constant(library, cls, enum_name, name, value, (gdx_bool)bitfield);
}

void gdx_unregister_class(const void *cls) {
	p_classdb_unregister_extension_class(library, cls);
}
