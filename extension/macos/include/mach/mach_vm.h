/*
 * mach/mach_vm.h for cross builds with zig cc, whose macOS headers lack this
 * one (Apple's SDK generates it with MIG). Written for nearzero: it declares
 * only what the Go modules the library builds use, mach_vm_region (in
 * libSystem; github.com/prometheus/client_golang reads the task's memory
 * with it). zigcc puts this directory after zig's own headers (-idirafter),
 * so a header zig has always wins.
 */
#ifndef NEARZERO_MACH_VM_H
#define NEARZERO_MACH_VM_H

#include <mach/mach_types.h>
#include <mach/message.h>
#include <mach/vm_region.h>

kern_return_t mach_vm_region(vm_map_t target_task, mach_vm_address_t *address, mach_vm_size_t *size,
	vm_region_flavor_t flavor, vm_region_info_t info, mach_msg_type_number_t *infoCnt,
	mach_port_t *object_name);

#endif
