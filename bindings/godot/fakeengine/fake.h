// fake.h: the test-side API of the fake engine (fake.c).
#ifndef NEARZERO_FAKE_H
#define NEARZERO_FAKE_H

#include "gdx.h"

int fake_load(void);
uint32_t fake_minimum_level(void);
void fake_initialize(uint32_t level);
void fake_deinitialize(uint32_t level);

int fake_record_count(void);
const char *fake_record(int i);
void fake_record_reset(void);

void *fake_construct(const char *cls);
void fake_destroy(void *obj);
void *fake_instance(void *obj);
uintptr_t fake_virtual(void *obj, const char *name, uint32_t hash);
void fake_call_virtual(void *obj, const char *name, uintptr_t data, const void **args, void *ret);
void fake_notify(void *obj, int32_t what);

void fake_method_add(const char *cls, const char *name, void *userdata, void *call, void *ptrcall);
int fake_method_ptrcall(const char *cls, const char *name, void *obj, const void **args, void *ret);
int fake_method_call(const char *cls, const char *name, void *obj, const void **args, gdx_int argc, void *ret, gdx_call_error *err);

void fake_variant_int(void *r, int64_t i);
void fake_variant_float(void *r, double f);
void fake_variant_bool(void *r, int b);
void fake_variant_string(void *r, const char *s);
int64_t fake_variant_get_int(const void *r);
uint32_t fake_variant_get_type(const void *r);
const char *fake_variant_get_string(const void *r);
void fake_variant_destroy(void *r);
const char *fake_string_text(const void *s);
void fake_string_destroy(void *s);

void fake_set_double(int on);
void fake_set_debugger(int on);
void fake_free_on_signal(const char *name);
void fake_read_on_signal(const char *signal, const char *cls, const char *method);
void fake_set_name(void *obj, const char *name);
void fake_add_child(void *parent, void *child);
void fake_set_in_tree(void *root, int on);
uint64_t fake_object_id(void *obj);
int fake_alive(uint64_t id);
int fake_visible(void *obj);
void fake_xform(void *obj, float *out);
double fake_variant_get_float(const void *r);

#endif
