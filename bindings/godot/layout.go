package godot

// #include "gdx.h"
import "C"

import "unsafe"

// cLayout reports the sizes and field offsets of the C declarations in
// gdx.h as this compiler lays them out, for abi_test.go (test files cannot
// use cgo). Keys are "struct" for sizes and "struct.field" for offsets.
func cLayout() map[string]uintptr {
	var (
		init  C.gdx_init
		ver   C.gdx_version
		ver2  C.gdx_version2
		ce    C.gdx_call_error
		pi    C.gdx_property_info
		mi    C.gdx_method_info
		bc    C.gdx_binding_callbacks
		class C.gdx_class_info4
	)
	return map[string]uintptr{
		"init":                                    unsafe.Sizeof(init),
		"init.userdata":                           unsafe.Offsetof(init.userdata),
		"init.initialize":                         unsafe.Offsetof(init.initialize),
		"init.deinitialize":                       unsafe.Offsetof(init.deinitialize),
		"version":                                 unsafe.Sizeof(ver),
		"version.string":                          unsafe.Offsetof(ver.string),
		"version2":                                unsafe.Sizeof(ver2),
		"version2.status":                         unsafe.Offsetof(ver2.status),
		"version2.timestamp":                      unsafe.Offsetof(ver2.timestamp),
		"version2.string":                         unsafe.Offsetof(ver2.string),
		"call_error":                              unsafe.Sizeof(ce),
		"call_error.argument":                     unsafe.Offsetof(ce.argument),
		"call_error.expected":                     unsafe.Offsetof(ce.expected),
		"property_info":                           unsafe.Sizeof(pi),
		"property_info.name":                      unsafe.Offsetof(pi.name),
		"property_info.class_name":                unsafe.Offsetof(pi.class_name),
		"property_info.hint":                      unsafe.Offsetof(pi.hint),
		"property_info.hint_string":               unsafe.Offsetof(pi.hint_string),
		"property_info.usage":                     unsafe.Offsetof(pi.usage),
		"method_info":                             unsafe.Sizeof(mi),
		"method_info.method_userdata":             unsafe.Offsetof(mi.method_userdata),
		"method_info.call_func":                   unsafe.Offsetof(mi.call_func),
		"method_info.ptrcall_func":                unsafe.Offsetof(mi.ptrcall_func),
		"method_info.method_flags":                unsafe.Offsetof(mi.method_flags),
		"method_info.has_return_value":            unsafe.Offsetof(mi.has_return_value),
		"method_info.return_value_info":           unsafe.Offsetof(mi.return_value_info),
		"method_info.return_value_metadata":       unsafe.Offsetof(mi.return_value_metadata),
		"method_info.argument_count":              unsafe.Offsetof(mi.argument_count),
		"method_info.arguments_info":              unsafe.Offsetof(mi.arguments_info),
		"method_info.arguments_metadata":          unsafe.Offsetof(mi.arguments_metadata),
		"method_info.default_argument_count":      unsafe.Offsetof(mi.default_argument_count),
		"method_info.default_arguments":           unsafe.Offsetof(mi.default_arguments),
		"binding_callbacks":                       unsafe.Sizeof(bc),
		"binding_callbacks.free":                  unsafe.Offsetof(bc.free),
		"binding_callbacks.reference":             unsafe.Offsetof(bc.reference),
		"class_info4":                             unsafe.Sizeof(class),
		"class_info4.is_runtime":                  unsafe.Offsetof(class.is_runtime),
		"class_info4.icon_path":                   unsafe.Offsetof(class.icon_path),
		"class_info4.set_func":                    unsafe.Offsetof(class.set_func),
		"class_info4.notification_func":           unsafe.Offsetof(class.notification_func),
		"class_info4.to_string_func":              unsafe.Offsetof(class.to_string_func),
		"class_info4.create_instance_func":        unsafe.Offsetof(class.create_instance_func),
		"class_info4.free_instance_func":          unsafe.Offsetof(class.free_instance_func),
		"class_info4.recreate_instance_func":      unsafe.Offsetof(class.recreate_instance_func),
		"class_info4.get_virtual_func":            unsafe.Offsetof(class.get_virtual_func),
		"class_info4.get_virtual_call_data_func":  unsafe.Offsetof(class.get_virtual_call_data_func),
		"class_info4.call_virtual_with_data_func": unsafe.Offsetof(class.call_virtual_with_data_func),
		"class_info4.class_userdata":              unsafe.Offsetof(class.class_userdata),
	}
}
