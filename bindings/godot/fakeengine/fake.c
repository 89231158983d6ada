// fake.c: a tiny stand-in for the Godot engine's GDExtension interface, so
// tests can drive the binding's real entry symbol, C shims, registration and
// dispatch without Godot. Only what the binding uses is modelled: Strings,
// interned StringNames, scalar and string Variants, Arrays, Dictionaries,
// scenes loaded by path (a Node2D, with a NetPredictor for a path naming
// "predictor"), ClassDB registration
// (recorded), objects with extension instances, and a few method binds.
// Not thread-safe; single test process only.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake.h"

void fake_method_add(const char *cls, const char *name, void *userdata, void *call, void *ptrcall);
void fake_method_defaults(const char *cls, const char *name, uint32_t argc, uint32_t ndefaults, const void *const *defaults);

extern gdx_bool nearzero_init(gdx_get_proc_t get_proc, void *library, gdx_init *r_init);

// ---- strings: an opaque String is a pointer to fstr (NULL = empty) ----
typedef struct {
	int64_t refs;
	int64_t len;
	char data[];
} fstr;

static fstr *fstr_new(const char *p, int64_t n) {
	if (n <= 0) {
		return NULL;
	}
	fstr *s = malloc(sizeof(fstr) + (size_t)n + 1);
	s->refs = 1, s->len = n;
	memcpy(s->data, p, (size_t)n);
	s->data[n] = 0;
	return s;
}

static void fstr_unref(fstr *s) {
	if (s && --s->refs == 0) {
		free(s);
	}
}

// ---- StringNames: interned, never freed; pointer equality = string equality ----
typedef struct fsn {
	struct fsn *next;
	int64_t len;
	char data[];
} fsn;

static fsn *names;

static fsn *intern(const char *p, int64_t n) {
	if (n <= 0) {
		return NULL;
	}
	for (fsn *e = names; e; e = e->next) {
		if (e->len == n && memcmp(e->data, p, (size_t)n) == 0) {
			return e;
		}
	}
	fsn *e = malloc(sizeof(fsn) + (size_t)n + 1);
	e->len = n;
	memcpy(e->data, p, (size_t)n);
	e->data[n] = 0;
	e->next = names;
	names = e;
	return e;
}

static const char *sn_text(const void *sn) {
	const fsn *e = *(fsn *const *)sn;
	return e ? e->data : "";
}

// ---- Variants: u32 type at 0, payload at 8 ----
typedef struct {
	uint32_t type;
	uint32_t pad;
	union {
		uint8_t b;
		int64_t i;
		double f;
		void *p;
		uint8_t raw[16];
	} v;
} fvariant;

enum { T_NIL = 0, T_BOOL = 1, T_INT = 2, T_FLOAT = 3, T_STRING = 4, T_STRING_NAME = 21, T_NODE_PATH = 22, T_OBJECT = 24,
	T_DICTIONARY = 27, T_ARRAY = 28 };

// ---- Arrays, Dictionaries and the packed arrays of numbers and vectors:
// an opaque handle (8 bytes; a packed array's first 8) points to an fcoll
// of Variants, reference counted. Packed arrays convert to and from Arrays
// element for element (no narrowing: a test sees the Go side's values). ----
typedef struct {
	int64_t refs;
	int64_t n, cap;
	fvariant *keys; // a Dictionary's, in insertion order
	fvariant *vals;
} fcoll;

static int is_coll(uint32_t t) {
	return t == T_DICTIONARY || t == T_ARRAY || (t >= 30 && t <= 33) || t == 35 || t == 36;
}

static void variant_new_copy(void *dst, const void *src);
static void variant_destroy(void *p);

static fcoll *fcoll_new(void) {
	fcoll *c = calloc(1, sizeof *c);
	c->refs = 1;
	return c;
}

static void fcoll_unref(fcoll *c) {
	if (!c || --c->refs > 0) {
		return;
	}
	for (int64_t i = 0; i < c->n; i++) {
		if (c->keys) {
			variant_destroy(&c->keys[i]);
		}
		variant_destroy(&c->vals[i]);
	}
	free(c->keys);
	free(c->vals);
	free(c);
}

static int64_t fcoll_add(fcoll *c, const fvariant *key, const fvariant *val) {
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 4;
		c->vals = realloc(c->vals, (size_t)c->cap * sizeof(fvariant));
		if (key || c->keys) {
			c->keys = realloc(c->keys, (size_t)c->cap * sizeof(fvariant));
		}
	}
	memset(&c->vals[c->n], 0, sizeof(fvariant));
	if (val) {
		variant_new_copy(&c->vals[c->n], val);
	}
	if (key) {
		variant_new_copy(&c->keys[c->n], key);
	}
	return c->n++;
}

// fcoll_copy returns a new collection holding copies of c's elements.
static fcoll *fcoll_copy(const fcoll *c) {
	fcoll *d = fcoll_new();
	for (int64_t i = 0; c && i < c->n; i++) {
		fcoll_add(d, c->keys ? &c->keys[i] : NULL, &c->vals[i]);
	}
	return d;
}

static size_t payload_size(uint32_t t) {
	switch (t) {
		case 1: return 1;
		case 5: case 6: return 8;
		case 9: case 10: return 12;
		case 11: return 24;
		case 7: case 12: case 15: case 20: return 16;
		case 17: return 36;
		case 18: return 48;
		case 29: case 34: return 16;
		default: return 8;
	}
}

static void f_variant_from(uint32_t t, void *r_variant, void *value) {
	fvariant *v = r_variant;
	memset(v, 0, sizeof *v);
	v->type = t;
	size_t n = payload_size(t);
	if (n > 16) {
		// Large values (transforms) do not fit the payload; the fake keeps a copy.
		void *copy = malloc(n);
		memcpy(copy, value, n);
		v->v.p = copy;
		return;
	}
	memcpy(v->v.raw, value, n);
	if (t == T_STRING || t == T_NODE_PATH) {
		fstr *s = v->v.p;
		if (s) {
			s->refs++;
		}
	}
	if (is_coll(t) && v->v.p) {
		((fcoll *)v->v.p)->refs++;
	}
}

static void f_variant_to(uint32_t t, void *r_value, void *variant) {
	fvariant *v = variant;
	size_t n = payload_size(t);
	if (n > 16) {
		memcpy(r_value, v->v.p, n);
		return;
	}
	memcpy(r_value, v->v.raw, n);
	if (t == T_STRING || t == T_NODE_PATH) {
		fstr *s = v->v.p;
		if (s) {
			s->refs++;
		}
	}
	if (is_coll(t) && v->v.p) {
		((fcoll *)v->v.p)->refs++;
	}
}

#define CONV(T) \
	static void from_##T(void *v, void *x) { f_variant_from(T, v, x); } \
	static void to_##T(void *x, void *v) { f_variant_to(T, x, v); }
CONV(1) CONV(2) CONV(3) CONV(4) CONV(5) CONV(6) CONV(7) CONV(9) CONV(10) CONV(11) CONV(12) CONV(15) CONV(17) CONV(18) CONV(20)
CONV(21) CONV(22) CONV(24) CONV(27) CONV(28) CONV(29) CONV(34)
#undef CONV

static void *get_from(uint32_t t) {
	switch (t) {
		case 1: return (void *)from_1; case 2: return (void *)from_2; case 3: return (void *)from_3;
		case 4: return (void *)from_4; case 5: return (void *)from_5; case 9: return (void *)from_9;
		case 6: return (void *)from_6; case 7: return (void *)from_7; case 10: return (void *)from_10;
		case 12: return (void *)from_12; case 17: return (void *)from_17;
		case 11: return (void *)from_11; case 15: return (void *)from_15; case 18: return (void *)from_18;
		case 20: return (void *)from_20; case 21: return (void *)from_21; case 22: return (void *)from_22;
		case 24: return (void *)from_24; case 27: return (void *)from_27; case 28: return (void *)from_28;
		case 29: return (void *)from_29; case 34: return (void *)from_34;
	}
	return NULL;
}

static void *get_to(uint32_t t) {
	switch (t) {
		case 1: return (void *)to_1; case 2: return (void *)to_2; case 3: return (void *)to_3;
		case 4: return (void *)to_4; case 5: return (void *)to_5; case 9: return (void *)to_9;
		case 6: return (void *)to_6; case 7: return (void *)to_7; case 10: return (void *)to_10;
		case 12: return (void *)to_12; case 17: return (void *)to_17;
		case 11: return (void *)to_11; case 15: return (void *)to_15; case 18: return (void *)to_18;
		case 20: return (void *)to_20; case 21: return (void *)to_21; case 22: return (void *)to_22;
		case 24: return (void *)to_24; case 27: return (void *)to_27; case 28: return (void *)to_28;
		case 29: return (void *)to_29; case 34: return (void *)to_34;
	}
	return NULL;
}

static void variant_new_copy(void *dst, const void *src) {
	memcpy(dst, src, sizeof(fvariant));
	const fvariant *v = src;
	if ((v->type == T_STRING || v->type == T_NODE_PATH) && v->v.p) {
		((fstr *)v->v.p)->refs++;
	}
	if (is_coll(v->type) && v->v.p) {
		((fcoll *)v->v.p)->refs++;
	}
}

static void variant_new_nil(void *dst) { memset(dst, 0, sizeof(fvariant)); }

static void variant_destroy(void *p) {
	fvariant *v = p;
	if (v->type == T_STRING || v->type == T_NODE_PATH) {
		fstr_unref(v->v.p);
	}
	if (is_coll(v->type)) {
		fcoll_unref(v->v.p);
	}
	memset(v, 0, sizeof *v);
}

static uint32_t variant_get_type(const void *p) { return ((const fvariant *)p)->type; }

static void variant_stringify(const void *p, void *r_string) {
	char buf[64];
	const fvariant *v = p;
	int n = snprintf(buf, sizeof buf, "variant(%u)", v->type);
	*(fstr **)r_string = fstr_new(buf, n);
}

// packed_array reports whether t is a packed array the fake converts
// to and from an Array.
static int packed_array(uint32_t t) { return is_coll(t) && t != T_ARRAY && t != T_DICTIONARY; }

static gdx_bool can_convert_strict(uint32_t from, uint32_t to) {
	return from == to || (from == T_INT && to == T_FLOAT) || (from == T_FLOAT && to == T_INT) ||
			(from == T_NIL && to == T_OBJECT) || (from == T_ARRAY && packed_array(to)) ||
			(packed_array(from) && to == T_ARRAY);
}

static void variant_construct(uint32_t type, void *r, const void **args, int32_t argc, gdx_call_error *err) {
	fvariant *out = r;
	const fvariant *in = argc > 0 ? args[0] : NULL;
	memset(out, 0, sizeof *out);
	out->type = type;
	if (!in) {
		return;
	}
	if (in->type == type) {
		variant_new_copy(out, in);
	} else if (type == T_FLOAT && in->type == T_INT) {
		out->v.f = (double)in->v.i;
	} else if (type == T_INT && in->type == T_FLOAT) {
		out->v.i = (int64_t)in->v.f;
	} else if ((in->type == T_ARRAY && packed_array(type)) || (packed_array(in->type) && type == T_ARRAY)) {
		out->v.p = fcoll_copy(in->v.p);
	} else if (!(type == T_OBJECT && in->type == T_NIL)) {
		err->error = 2;
	}
}

// ---- builtin constructors/destructors ----
static void str_ctor0(void *r, const void **a) { (void)a; *(fstr **)r = NULL; }
static void str_ctor1(void *r, const void **a) {
	fstr *s = *(fstr *const *)a[0];
	if (s) {
		s->refs++;
	}
	*(fstr **)r = s;
}
static void str_from_sn(void *r, const void **a) {
	const char *t = sn_text(a[0]);
	*(fstr **)r = fstr_new(t, (int64_t)strlen(t));
}
static void sn_ctor0(void *r, const void **a) { (void)a; *(fsn **)r = NULL; }
static void sn_ctor1(void *r, const void **a) { *(fsn **)r = *(fsn *const *)a[0]; }
static void sn_from_str(void *r, const void **a) {
	fstr *s = *(fstr *const *)a[0];
	*(fsn **)r = s ? intern(s->data, s->len) : NULL;
}
static void str_dtor(void *p) { fstr_unref(*(fstr **)p); }
static void nop_dtor(void *p) { (void)p; }
static void blob_ctor0(void *r, const void **a) { (void)a; memset(r, 0, 16); }
static void blob_ctor1(void *r, const void **a) { memcpy(r, a[0], 16); }

static void coll_ctor0(void *r, const void **a) { (void)a; *(fcoll **)r = fcoll_new(); }
static void coll_ctor1(void *r, const void **a) {
	fcoll *c = *(fcoll *const *)a[0];
	if (c) {
		c->refs++;
	}
	*(fcoll **)r = c;
}
static void coll_dtor(void *p) { fcoll_unref(*(fcoll **)p); *(fcoll **)p = NULL; }

static void *get_ctor(uint32_t t, int32_t index) {
	switch (t) {
		case T_ARRAY: case T_DICTIONARY:
			return index == 0 ? (void *)coll_ctor0 : index == 1 ? (void *)coll_ctor1 : NULL;
		case T_STRING: case T_NODE_PATH:
			switch (index) {
				case 0: return (void *)str_ctor0;
				case 1: return (void *)str_ctor1;
				case 2: return t == T_STRING ? (void *)str_from_sn : (void *)str_ctor1; // NodePath from String
				case 3: return (void *)str_ctor1; // String from NodePath
			}
			return NULL;
		case T_STRING_NAME:
			switch (index) {
				case 0: return (void *)sn_ctor0;
				case 1: return (void *)sn_ctor1;
				case 2: return (void *)sn_from_str;
			}
			return NULL;
		default:
			return index == 0 ? (void *)blob_ctor0 : (void *)blob_ctor1;
	}
}

static void *get_dtor(uint32_t t) {
	if (t == T_ARRAY || t == T_DICTIONARY) {
		return (void *)coll_dtor;
	}
	return (t == T_STRING || t == T_NODE_PATH) ? (void *)str_dtor : (void *)nop_dtor;
}

static void builtin_nop(void *base, const void **args, void *ret, int argc) { (void)base, (void)args, (void)ret, (void)argc; }

static int variant_equal(const fvariant *a, const fvariant *b) {
	if (a->type != b->type) {
		return 0;
	}
	switch (a->type) {
		case T_NIL: return 1;
		case T_BOOL: return a->v.b == b->v.b;
		case T_INT: return a->v.i == b->v.i;
		case T_FLOAT: return a->v.f == b->v.f;
		case T_STRING: case T_NODE_PATH: {
			const fstr *x = a->v.p, *y = b->v.p;
			int64_t nx = x ? x->len : 0, ny = y ? y->len : 0;
			return nx == ny && (nx == 0 || memcmp(x->data, y->data, (size_t)nx) == 0);
		}
		default: return memcmp(a->v.raw, b->v.raw, 16) == 0;
	}
}

static int64_t dict_find(const fcoll *c, const fvariant *key) {
	for (int64_t i = 0; c && i < c->n; i++) {
		if (variant_equal(&c->keys[i], key)) {
			return i;
		}
	}
	return -1;
}

static void coll_size(void *base, const void **args, void *ret, int argc) {
	(void)args, (void)argc;
	const fcoll *c = *(fcoll **)base;
	*(int64_t *)ret = c ? c->n : 0;
}
static void array_push_back(void *base, const void **args, void *ret, int argc) {
	(void)ret, (void)argc;
	fcoll *c = *(fcoll **)base;
	if (c) {
		fcoll_add(c, NULL, args[0]);
	}
}
static void dict_has(void *base, const void **args, void *ret, int argc) {
	(void)argc;
	*(uint8_t *)ret = dict_find(*(fcoll **)base, args[0]) >= 0;
}
static void dict_keys(void *base, const void **args, void *ret, int argc) {
	(void)args, (void)argc;
	const fcoll *c = *(fcoll **)base;
	fcoll *k = fcoll_new();
	for (int64_t i = 0; c && i < c->n; i++) {
		fcoll_add(k, NULL, &c->keys[i]);
	}
	*(fcoll **)ret = k;
}

static void *get_builtin(uint32_t t, const void *name, gdx_int hash) {
	(void)hash;
	const char *n = sn_text(name);
	if (t == T_ARRAY && strcmp(n, "size") == 0) return (void *)coll_size;
	if (t == T_ARRAY && strcmp(n, "push_back") == 0) return (void *)array_push_back;
	if (t == T_DICTIONARY && strcmp(n, "size") == 0) return (void *)coll_size;
	if (t == T_DICTIONARY && strcmp(n, "has") == 0) return (void *)dict_has;
	if (t == T_DICTIONARY && strcmp(n, "keys") == 0) return (void *)dict_keys;
	return (void *)builtin_nop;
}

// ---- recording ----
#define MAX_REC 4096
static char rec[MAX_REC][256];
static int nrec;

static void record(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#include <stdarg.h>
static void record(const char *fmt, ...) {
	if (nrec >= MAX_REC) {
		return;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rec[nrec++], sizeof rec[0], fmt, ap);
	va_end(ap);
}

int fake_record_count(void) { return nrec; }
const char *fake_record(int i) { return i >= 0 && i < nrec ? rec[i] : ""; }
void fake_record_reset(void) { nrec = 0; }

static void print_error(const char *d, const char *f, const char *file, int32_t line, gdx_bool n) {
	(void)n;
	(void)f;
	const char *slash = strrchr(file, '/');
	record("error %s:%d | %s", slash ? slash + 1 : file, line, d);
}
static void print_warning(const char *d, const char *f, const char *file, int32_t line, gdx_bool n) {
	(void)n, (void)f;
	const char *slash = strrchr(file, '/');
	record("warning %s:%d | %s", slash ? slash + 1 : file, line, d);
}
static void utility_print(void *ret, const void **args, int argc) {
	(void)ret;
	for (int i = 0; i < argc; i++) {
		const fvariant *v = args[i];
		if (v->type == T_STRING && v->v.p) {
			record("print %s", ((fstr *)v->v.p)->data);
		}
	}
}
static void *get_utility(const void *name, gdx_int hash) { (void)name, (void)hash; return (void *)utility_print; }

static void get_version(gdx_version *v) { v->major = 4, v->minor = 4, v->patch = 0, v->string = "fake 4.4.0"; }

static gdx_int str_new_len2(void *r, const char *p, gdx_int n) { *(fstr **)r = fstr_new(p, n); return 0; }
static gdx_int str_to_utf8(const void *s, char *buf, gdx_int max) {
	const fstr *f = *(fstr *const *)s;
	if (!f) {
		return 0;
	}
	if (buf) {
		memcpy(buf, f->data, (size_t)(max < f->len ? max : f->len));
	}
	return f->len;
}
static void sn_new_len(void *r, const char *p, gdx_int n) { *(fsn **)r = intern(p, n); }

static uint8_t byte_slot;
static uint8_t *pba_index(void *a, gdx_int i) { (void)a, (void)i; return &byte_slot; }
static fvariant var_slot;
static void *variant_index(void *a, const void *k) {
	fcoll *c = *(fcoll **)a;
	if (!c) {
		return &var_slot;
	}
	int64_t i = dict_find(c, k);
	if (i < 0) {
		i = fcoll_add(c, k, NULL);
	}
	return &c->vals[i];
}
static void *variant_index_i(void *a, gdx_int i) {
	fcoll *c = *(fcoll **)a;
	return c && i >= 0 && i < c->n ? (void *)&c->vals[i] : (void *)&var_slot;
}
static fstr *str_slot;
static void *psa_index(void *a, gdx_int i) { (void)a, (void)i; return &str_slot; }

// ---- objects ----
#define MAX_CLASSES 16

typedef struct {
	fsn *name, *parent;
	gdx_class_info4 info;
	int live;
} fclass;

static fclass classes[MAX_CLASSES];
static int nclasses;

#define MAX_CHILDREN 16

typedef struct fobject {
	uint64_t magic;
	fsn *cls;          // engine class it was constructed as
	fclass *ext;       // extension class, when set_instance ran
	void *instance;    // extension instance handle
	void *binding;     // instance binding for our token
	void *token;
	uint64_t id;
	struct fobject *next_live; // every live object, for object_get_instance_from_id
	// Scene tree and node state.
	struct fobject *parent;
	struct fobject *children[MAX_CHILDREN];
	int nchildren;
	int in_tree;
	char name[48];
	uint8_t visible;
	float xform[12];   // Transform3D (basis rows, origin) or Transform2D in the first 6
	float modulate[4];
} fobject;

static uint64_t next_id = 1000;
static fobject *live_objects;

static const char *obj_name(const fobject *o) { return o->name[0] ? o->name : (o->cls ? o->cls->data : "?"); }

static void identity(fobject *o) {
	memset(o->xform, 0, sizeof o->xform);
	o->xform[0] = o->xform[4] = o->xform[8] = 1; // 3D basis rows; in 2D x=(1,0), y=(0,1)
	if (o->cls && strstr(o->cls->data, "2D")) {
		o->xform[0] = 1, o->xform[1] = 0, o->xform[2] = 0, o->xform[3] = 1, o->xform[4] = 0, o->xform[5] = 0;
	}
	o->visible = 1;
	o->modulate[0] = o->modulate[1] = o->modulate[2] = o->modulate[3] = 1;
}

static fclass *find_class(const fsn *name) {
	for (int i = 0; i < nclasses; i++) {
		if (classes[i].name == name && classes[i].live) {
			return &classes[i];
		}
	}
	return NULL;
}

static void *construct_object2(const void *class_name) {
	fsn *name = *(fsn *const *)class_name;
	fclass *c = find_class(name);
	if (c) {
		record("construct %s (extension)", name->data);
		return c->info.create_instance_func(c->info.class_userdata, 0);
	}
	fobject *o = calloc(1, sizeof *o);
	o->magic = 0x0B1EC7, o->cls = name, o->id = next_id++;
	identity(o);
	o->next_live = live_objects;
	live_objects = o;
	record("construct %s", name ? name->data : "?");
	return o;
}

static void object_set_instance(void *obj, const void *cls, void *inst) {
	fobject *o = obj;
	o->ext = find_class(*(fsn *const *)cls);
	o->instance = inst;
}

static void set_binding(void *obj, void *token, void *binding, const gdx_binding_callbacks *cb) {
	(void)cb;
	fobject *o = obj;
	o->token = token, o->binding = binding;
}

static void *get_binding(void *obj, void *token, const gdx_binding_callbacks *cb) {
	(void)cb;
	fobject *o = obj;
	return o->token == token ? o->binding : NULL;
}

static void object_destroy(void *obj) {
	fobject *o = obj;
	if (o->ext) {
		o->ext->info.free_instance_func(o->ext->info.class_userdata, o->instance);
	}
	record("destroy %s", obj_name(o));
	for (fobject **p = &live_objects; *p; p = &(*p)->next_live) {
		if (*p == o) {
			*p = o->next_live;
			break;
		}
	}
	if (o->parent) {
		fobject *par = o->parent;
		for (int i = 0; i < par->nchildren; i++) {
			if (par->children[i] == o) {
				par->children[i] = par->children[--par->nchildren];
				break;
			}
		}
	}
	for (int i = 0; i < o->nchildren; i++) {
		o->children[i]->parent = NULL;
	}
	memset(o, 0xdd, sizeof *o); // a use after free reads garbage, not the old values
	free(o);
}

static uint64_t object_id(void *obj) { return ((fobject *)obj)->id; }
static void *object_from_id(uint64_t id) {
	for (fobject *o = live_objects; o; o = o->next_live) {
		if (o->id == id) {
			return o;
		}
	}
	return NULL;
}
static void *class_tag(const void *name) {
	fsn *n = *(fsn *const *)name;
	if (!n) {
		return NULL;
	}
	// Engine classes the binding asks about exist; extension classes once registered.
	static const char *engine[] = { "Object", "Node", "Node3D", "Node2D", "CanvasItem", "RefCounted", "Resource",
		"PackedScene", "CharacterBody2D", "CharacterBody3D", "RigidBody2D", "RigidBody3D" };
	for (size_t i = 0; i < sizeof engine / sizeof engine[0]; i++) {
		if (strcmp(n->data, engine[i]) == 0) {
			return n;
		}
	}
	return find_class(n) ? (void *)n : NULL;
}
// engine_parent returns the parent of an engine class, NULL at Object.
static const char *engine_parent(const char *c) {
	static const char *pairs[][2] = { { "Node", "Object" }, { "Node3D", "Node" }, { "CanvasItem", "Node" },
		{ "Node2D", "CanvasItem" }, { "CharacterBody3D", "Node3D" }, { "RigidBody3D", "Node3D" },
		{ "CharacterBody2D", "Node2D" }, { "RigidBody2D", "Node2D" }, { "RefCounted", "Object" },
		{ "Resource", "RefCounted" }, { "PackedScene", "Resource" } };
	for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
		if (strcmp(pairs[i][0], c) == 0) {
			return pairs[i][1];
		}
	}
	return NULL;
}

static void *cast_to(void *obj, void *tag) {
	fobject *o = obj;
	const char *want = ((fsn *)tag)->data;
	if (o->ext && strcmp(o->ext->name->data, want) == 0) {
		return obj;
	}
	for (const char *c = o->cls ? o->cls->data : "Node"; c; c = engine_parent(c)) {
		if (strcmp(c, want) == 0) {
			return obj;
		}
	}
	return NULL;
}

static int double_build; // OS.has_feature("double")
static int debugger_active; // EngineDebugger.is_active
static char free_on_signal[64]; // emit_signal of this name frees the emitter, as a handler calling free() would
// emit_signal of read_signal calls read_class.read_method (no arguments)
// on the emitter and records its int result, as a handler reading a
// property would ("" signal: every signal).
static char read_signal[64], read_class[48], read_method[48];
static int read_on;
int fake_method_call(const char *cls, const char *name, void *obj, const void **args, gdx_int argc, void *ret, gdx_call_error *err);
static void ref_set_object(void *ref, void *obj) { *(void **)ref = obj; }

static int singleton_dummy;
static void *get_singleton(const void *name) { (void)name; return &singleton_dummy; }

// Method binds: a pointer to one of these names.
typedef struct {
	char cls[48], method[48];
	gdx_int hash;
} fbind;
static fbind binds[128];
static int nbinds;

static void *get_method_bind(const void *cls, const void *method, gdx_int hash) {
	if (nbinds >= 128) {
		return NULL;
	}
	fbind *b = &binds[nbinds++];
	snprintf(b->cls, sizeof b->cls, "%s", sn_text(cls));
	snprintf(b->method, sizeof b->method, "%s", sn_text(method));
	b->hash = hash;
	return b;
}

static fobject *find_child(fobject *o, const char *name, size_t n) {
	for (int i = 0; i < o->nchildren; i++) {
		if (strlen(o->children[i]->name) == n && strncmp(o->children[i]->name, name, n) == 0) {
			return o->children[i];
		}
	}
	return NULL;
}

// resolve follows a relative NodePath ("..", ".", "Child/Grandchild").
static fobject *resolve(fobject *o, const char *path) {
	if (!path || !*path) {
		return NULL;
	}
	while (o && *path) {
		const char *slash = strchr(path, '/');
		size_t n = slash ? (size_t)(slash - path) : strlen(path);
		if (n == 2 && strncmp(path, "..", 2) == 0) {
			o = o->parent;
		} else if (!(n == 1 && path[0] == '.')) {
			o = find_child(o, path, n);
		}
		path = slash ? slash + 1 : path + n;
	}
	return o;
}

static void method_ptrcall(void *mb, void *obj, const void **args, void *ret) {
	fbind *b = mb;
	fobject *o = obj;
	const char *m = b->method;
	if (strcmp(m, "notification") == 0) {
		record("ptrcall notification %lld", (long long)*(const int64_t *)args[0]);
	} else if (strcmp(m, "set_global_position") == 0 && strcmp(b->cls, "Node3D") == 0) {
		const float *v = args[0];
		record("ptrcall Node3D.set_global_position %g %g %g", v[0], v[1], v[2]);
	} else if (strcmp(m, "has_feature") == 0) {
		const fstr *tag = *(fstr *const *)args[0];
		*(uint8_t *)ret = double_build && tag && strcmp(tag->data, "double") == 0;
	} else if (strcmp(b->cls, "EngineDebugger") == 0 && strcmp(m, "is_active") == 0) {
		*(uint8_t *)ret = (uint8_t)debugger_active;
	} else if (strcmp(b->cls, "EngineDebugger") == 0 && strcmp(m, "send_message") == 0) {
		const fstr *msg = *(fstr *const *)args[0];
		const fcoll *data = *(fcoll *const *)args[1];
		record("debugger send_message %s %lld", msg ? msg->data : "", (long long)(data ? data->n : 0));
	} else if (strcmp(m, "load") == 0) {
		// ResourceLoader.load: a PackedScene named by its path (see instantiate).
		const fstr *path = *(fstr *const *)args[0];
		fsn *cls = intern("PackedScene", 11);
		fobject *scene = construct_object2(&cls);
		snprintf(scene->name, sizeof scene->name, "%s", path ? path->data : "");
		*(void **)ret = scene;
	} else if (!o || o->magic != 0x0B1EC7) {
		return; // singletons and the like: zero results
	} else if (strcmp(m, "instantiate") == 0) {
		// A Node2D "Scene"; a scene whose path names "predictor" has a
		// NetPredictor child.
		fsn *cls = intern("Node2D", 6);
		fobject *root = construct_object2(&cls);
		snprintf(root->name, sizeof root->name, "Scene");
		if (strstr(o->name, "predictor")) {
			fsn *pc = intern("NetPredictor", 12);
			fobject *p = construct_object2(&pc);
			snprintf(p->name, sizeof p->name, "NetPredictor");
			fake_add_child(root, p);
		}
		*(void **)ret = root;
	} else if (strcmp(m, "get_child_count") == 0) {
		*(int64_t *)ret = o->nchildren;
	} else if (strcmp(m, "get_child") == 0) {
		int64_t i = *(const int64_t *)args[0];
		*(void **)ret = i >= 0 && i < o->nchildren ? o->children[i] : NULL;
	} else if (strcmp(m, "get_parent") == 0) {
		*(void **)ret = o->parent;
	} else if (strcmp(m, "get_node_or_null") == 0 || strcmp(m, "get_node") == 0) {
		const fstr *path = *(fstr *const *)args[0];
		*(void **)ret = resolve(o, path ? path->data : NULL);
	} else if (strcmp(m, "add_child") == 0) {
		fobject *c = *(fobject *const *)args[0];
		if (c && o->nchildren < MAX_CHILDREN) {
			o->children[o->nchildren++] = c;
			c->parent = o;
			c->in_tree = o->in_tree;
			record("add_child %s %s", obj_name(o), obj_name(c));
		}
	} else if (strcmp(m, "is_inside_tree") == 0) {
		*(uint8_t *)ret = (uint8_t)o->in_tree;
	} else if (strcmp(m, "queue_free") == 0) {
		record("queue_free %s", obj_name(o));
	} else if (strcmp(m, "get_name") == 0) {
		*(fsn **)ret = intern(obj_name(o), (int64_t)strlen(obj_name(o)));
	} else if (strcmp(m, "set_name") == 0) {
		const fstr *n = *(fstr *const *)args[0];
		snprintf(o->name, sizeof o->name, "%s", n ? n->data : "");
	} else if (strcmp(m, "get_class") == 0) {
		const char *c = o->cls ? o->cls->data : "Object";
		*(fstr **)ret = fstr_new(c, (int64_t)strlen(c));
	} else if (strcmp(m, "set_process_mode") == 0) {
		record("process_mode %s %lld", obj_name(o), (long long)*(const int64_t *)args[0]);
	} else if (strcmp(m, "set_process_priority") == 0) {
		record("process_priority %s %lld", obj_name(o), (long long)*(const int64_t *)args[0]);
	} else if (strcmp(m, "set_physics_interpolation_mode") == 0) {
		record("interpolation_mode %s %lld", obj_name(o), (long long)*(const int64_t *)args[0]);
	} else if (strcmp(m, "reset_physics_interpolation") == 0) {
		record("reset_interpolation %s", obj_name(o));
	} else if (strcmp(m, "set_visible") == 0) {
		o->visible = *(const uint8_t *)args[0];
		record("visible %s %s", obj_name(o), o->visible ? "true" : "false");
	} else if (strcmp(m, "is_visible") == 0) {
		*(uint8_t *)ret = o->visible;
	} else if (strcmp(m, "set_global_transform") == 0) {
		const float *t = args[0];
		int two = strcmp(b->cls, "Node2D") == 0;
		memcpy(o->xform, t, two ? 24 : 48);
		if (two) {
			record("transform2d %s %g %g", obj_name(o), t[4], t[5]);
		} else {
			record("transform3d %s %g %g %g", obj_name(o), t[9], t[10], t[11]);
		}
	} else if (strcmp(m, "get_global_transform") == 0) {
		memcpy(ret, o->xform, strcmp(b->cls, "CanvasItem") == 0 ? 24 : 48);
	} else if (strcmp(m, "get_modulate") == 0) {
		memcpy(ret, o->modulate, 16);
	} else if (strcmp(m, "set_modulate") == 0) {
		memcpy(o->modulate, args[0], 16);
		record("modulate %s %g", obj_name(o), o->modulate[3]);
	}
}

static void method_call(void *mb, void *obj, const void **args, gdx_int argc, void *r_ret, gdx_call_error *err) {
	fbind *b = mb;
	memset(r_ret, 0, sizeof(fvariant));
	err->error = 0;
	if (strcmp(b->method, "emit_signal") == 0) {
		const fvariant *name = args[0];
		char line[200];
		int n = snprintf(line, sizeof line, "emit %s", name->type == T_STRING_NAME ? sn_text(&name->v.p) : "?");
		for (gdx_int i = 1; i < argc && n < (int)sizeof line; i++) {
			const fvariant *a = args[i];
			switch (a->type) {
				case T_BOOL: n += snprintf(line + n, sizeof line - (size_t)n, " %s", a->v.b ? "true" : "false"); break;
				case T_INT: n += snprintf(line + n, sizeof line - (size_t)n, " %lld", (long long)a->v.i); break;
				case T_FLOAT: n += snprintf(line + n, sizeof line - (size_t)n, " %g", a->v.f); break;
				case T_STRING: n += snprintf(line + n, sizeof line - (size_t)n, " %s", a->v.p ? ((fstr *)a->v.p)->data : ""); break;
				case T_ARRAY: { // the element types: [5,6] is a Vector2 then a Vector2i
					const fcoll *c = a->v.p;
					n += snprintf(line + n, sizeof line - (size_t)n, " [");
					for (int64_t j = 0; c && j < c->n && n < (int)sizeof line; j++) {
						n += snprintf(line + n, sizeof line - (size_t)n, j ? ",%u" : "%u", c->vals[j].type);
					}
					if (n < (int)sizeof line) {
						n += snprintf(line + n, sizeof line - (size_t)n, "]");
					}
					break;
				}
				default: n += snprintf(line + n, sizeof line - (size_t)n, " <%u>", a->type);
			}
		}
		record("%s", line);
		if (read_on && name->type == T_STRING_NAME && (!read_signal[0] || strcmp(sn_text(&name->v.p), read_signal) == 0)) {
			fvariant got;
			gdx_call_error cerr;
			if (fake_method_call(read_class, read_method, obj, NULL, 0, &got, &cerr)) {
				record("read in %s: %s = %lld", sn_text(&name->v.p), read_method, (long long)(got.type == T_INT ? got.v.i : -999));
			}
		}
		fvariant *r = r_ret;
		r->type = T_INT; // Error OK
		if (name->type == T_STRING_NAME && free_on_signal[0] && strcmp(sn_text(&name->v.p), free_on_signal) == 0) {
			free_on_signal[0] = 0;
			object_destroy(obj); // a handler that calls free() on the emitter
			return;
		}
		// Like the engine: a signal nobody listens to answers ERR_UNAVAILABLE;
		// "jammed" stands for any other failure (ERR_INVALID_PARAMETER).
		if (name->type == T_STRING_NAME && strcmp(sn_text(&name->v.p), "unheard") == 0) {
			r->v.i = 2;
		} else if (name->type == T_STRING_NAME && strcmp(sn_text(&name->v.p), "jammed") == 0) {
			r->v.i = 31;
		}
	}
}

// ---- ClassDB registration (recorded) ----
static void register_class(void *lib, const void *name, const void *parent, const gdx_class_info4 *info) {
	(void)lib;
	if (nclasses >= MAX_CLASSES) {
		return;
	}
	fclass *c = &classes[nclasses++];
	c->name = *(fsn *const *)name, c->parent = *(fsn *const *)parent, c->info = *info, c->live = 1;
	record("class %s extends %s runtime=%d notification=%d", sn_text(name), sn_text(parent), info->is_runtime,
			info->notification_func != NULL);
}

static const char *pi_text(const gdx_property_info *p) {
	static char buf[200];
	const fstr *hs = *(fstr *const *)p->hint_string;
	snprintf(buf, sizeof buf, "%s:%u class=%s hint=%u/%s usage=%u", sn_text(p->name), p->type,
			sn_text(p->class_name), p->hint, hs ? hs->data : "", p->usage);
	return buf;
}

static void register_method(void *lib, const void *cls, const gdx_method_info *m) {
	(void)lib;
	char line[256];
	int n = snprintf(line, sizeof line, "method %s.%s flags=%u args=%u", sn_text(cls), sn_text(m->name),
			m->method_flags, m->argument_count);
	for (uint32_t i = 0; i < m->argument_count && n < (int)sizeof line; i++) {
		n += snprintf(line + n, sizeof line - (size_t)n, " [%s meta=%u]", pi_text(&m->arguments_info[i]),
				m->arguments_metadata[i]);
	}
	if (m->has_return_value && n < (int)sizeof line) {
		n += snprintf(line + n, sizeof line - (size_t)n, " -> %u", m->return_value_info->type);
		const char *rc = sn_text(m->return_value_info->class_name);
		if (*rc && n < (int)sizeof line) {
			n += snprintf(line + n, sizeof line - (size_t)n, " class=%s usage=%u", rc, m->return_value_info->usage);
		}
	}
	for (uint32_t i = 0; i < m->default_argument_count && n < (int)sizeof line; i++) {
		const fvariant *d = m->default_arguments[i];
		if (d->type == T_INT) {
			n += snprintf(line + n, sizeof line - (size_t)n, " default=%lld", (long long)d->v.i);
		} else {
			n += snprintf(line + n, sizeof line - (size_t)n, " default=type%d", (int)d->type);
		}
	}
	record("%s", line);
	// Keep the entry points so tests can call the method.
	fake_method_add(sn_text(cls), sn_text(m->name), m->method_userdata, m->call_func, m->ptrcall_func);
	fake_method_defaults(sn_text(cls), sn_text(m->name), m->argument_count, m->default_argument_count,
			(const void *const *)m->default_arguments);
}

static void register_property(void *lib, const void *cls, const gdx_property_info *p, const void *setter, const void *getter) {
	(void)lib;
	record("property %s.%s set=%s get=%s", sn_text(cls), pi_text(p), sn_text(setter), sn_text(getter));
}

static void register_group(void *lib, const void *cls, const void *group, const void *prefix) {
	(void)lib;
	const fstr *g = *(fstr *const *)group, *p = *(fstr *const *)prefix;
	record("group %s.%s prefix=%s", sn_text(cls), g ? g->data : "", p ? p->data : "");
}

static void register_subgroup(void *lib, const void *cls, const void *group, const void *prefix) {
	(void)lib;
	const fstr *g = *(fstr *const *)group, *p = *(fstr *const *)prefix;
	record("subgroup %s.%s prefix=%s", sn_text(cls), g ? g->data : "", p ? p->data : "");
}

static void register_signal(void *lib, const void *cls, const void *name, const gdx_property_info *args, gdx_int argc) {
	(void)lib;
	char line[256];
	int n = snprintf(line, sizeof line, "signal %s.%s", sn_text(cls), sn_text(name));
	for (gdx_int i = 0; i < argc && n < (int)sizeof line; i++) {
		n += snprintf(line + n, sizeof line - (size_t)n, " [%s]", pi_text(&args[i]));
	}
	record("%s", line);
}

static void register_constant(void *lib, const void *cls, const void *e, const void *name, gdx_int value, gdx_bool bitfield) {
	(void)lib;
	record("constant %s.%s.%s=%lld bitfield=%d", sn_text(cls), sn_text(e), sn_text(name), (long long)value, bitfield);
}

static void unregister_class(void *lib, const void *cls) {
	(void)lib;
	fclass *c = find_class(*(fsn *const *)cls);
	if (c) {
		c->live = 0;
	}
	record("unregister %s", sn_text(cls));
}

static void library_path(void *lib, void *r) { (void)lib; *(fstr **)r = fstr_new("fake.so", 7); }
static void editor_help(const char *xml, gdx_int len) { record("docs %.*s", (int)(len > 40 ? 40 : len), xml); }

// ---- get_proc ----
typedef struct {
	const char *name;
	void *fn;
} entry;

static const entry table[] = {
	{ "print_error", (void *)print_error },
	{ "print_warning", (void *)print_warning },
	{ "get_godot_version", (void *)get_version },
	{ "get_library_path", (void *)library_path },
	{ "variant_new_copy", (void *)variant_new_copy },
	{ "variant_new_nil", (void *)variant_new_nil },
	{ "variant_destroy", (void *)variant_destroy },
	{ "variant_get_type", (void *)variant_get_type },
	{ "variant_stringify", (void *)variant_stringify },
	{ "variant_can_convert_strict", (void *)can_convert_strict },
	{ "variant_construct", (void *)variant_construct },
	{ "get_variant_from_type_constructor", (void *)get_from },
	{ "get_variant_to_type_constructor", (void *)get_to },
	{ "variant_get_ptr_constructor", (void *)get_ctor },
	{ "variant_get_ptr_destructor", (void *)get_dtor },
	{ "variant_get_ptr_builtin_method", (void *)get_builtin },
	{ "variant_get_ptr_utility_function", (void *)get_utility },
	{ "string_new_with_utf8_chars_and_len2", (void *)str_new_len2 },
	{ "string_to_utf8_chars", (void *)str_to_utf8 },
	{ "string_name_new_with_utf8_chars_and_len", (void *)sn_new_len },
	{ "packed_byte_array_operator_index", (void *)pba_index },
	{ "packed_string_array_operator_index", (void *)psa_index },
	{ "dictionary_operator_index", (void *)variant_index },
	{ "array_operator_index", (void *)variant_index_i },
	{ "object_method_bind_call", (void *)method_call },
	{ "object_method_bind_ptrcall", (void *)method_ptrcall },
	{ "object_destroy", (void *)object_destroy },
	{ "global_get_singleton", (void *)get_singleton },
	{ "object_get_instance_binding", (void *)get_binding },
	{ "object_set_instance_binding", (void *)set_binding },
	{ "object_set_instance", (void *)object_set_instance },
	{ "object_cast_to", (void *)cast_to },
	{ "object_get_instance_from_id", (void *)object_from_id },
	{ "object_get_instance_id", (void *)object_id },
	{ "ref_set_object", (void *)ref_set_object },
	{ "classdb_construct_object2", (void *)construct_object2 },
	{ "classdb_get_method_bind", (void *)get_method_bind },
	{ "classdb_get_class_tag", (void *)class_tag },
	{ "classdb_register_extension_class4", (void *)register_class },
	{ "classdb_register_extension_class_method", (void *)register_method },
	{ "classdb_register_extension_class_integer_constant", (void *)register_constant },
	{ "classdb_register_extension_class_property", (void *)register_property },
	{ "classdb_register_extension_class_property_group", (void *)register_group },
	{ "classdb_register_extension_class_property_subgroup", (void *)register_subgroup },
	{ "classdb_register_extension_class_signal", (void *)register_signal },
	{ "classdb_unregister_extension_class", (void *)unregister_class },
	{ "editor_help_load_xml_from_utf8_chars_and_len", (void *)editor_help },
};

static gdx_fnptr get_proc(const char *name) {
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
		if (strcmp(table[i].name, name) == 0) {
			return (gdx_fnptr)table[i].fn;
		}
	}
	record("missing interface function %s", name);
	return NULL;
}

static gdx_init init;
static int library_token;

int fake_load(void) { return nearzero_init(get_proc, &library_token, &init); }
uint32_t fake_minimum_level(void) { return init.minimum_level; }
void fake_initialize(uint32_t level) { init.initialize(init.userdata, level); }
void fake_deinitialize(uint32_t level) { init.deinitialize(init.userdata, level); }

void *fake_construct(const char *cls) {
	fsn *n = intern(cls, (int64_t)strlen(cls));
	return construct_object2(&n);
}

void fake_destroy(void *obj) { object_destroy(obj); }

uintptr_t fake_virtual(void *obj, const char *name, uint32_t hash) {
	fobject *o = obj;
	fsn *n = intern(name, (int64_t)strlen(name));
	return (uintptr_t)o->ext->info.get_virtual_call_data_func(o->ext->info.class_userdata, &n, hash);
}

void fake_call_virtual(void *obj, const char *name, uintptr_t data, const void **args, void *ret) {
	fobject *o = obj;
	fsn *n = intern(name, (int64_t)strlen(name));
	o->ext->info.call_virtual_with_data_func(o->instance, &n, (void *)data, args, ret);
}

void fake_notify(void *obj, int32_t what) {
	fobject *o = obj;
	if (o->ext && o->ext->info.notification_func) {
		o->ext->info.notification_func(o->instance, what, 0);
	}
}

void *fake_instance(void *obj) { return ((fobject *)obj)->instance; }

void fake_variant_int(void *r, int64_t i) { fvariant *v = r; memset(v, 0, sizeof *v); v->type = T_INT; v->v.i = i; }
void fake_variant_bool(void *r, int b) { fvariant *v = r; memset(v, 0, sizeof *v); v->type = T_BOOL; v->v.b = (uint8_t)(b != 0); }
void fake_variant_float(void *r, double f) { fvariant *v = r; memset(v, 0, sizeof *v); v->type = T_FLOAT; v->v.f = f; }
void fake_variant_string(void *r, const char *s) {
	fvariant *v = r;
	memset(v, 0, sizeof *v);
	v->type = T_STRING;
	v->v.p = fstr_new(s, (int64_t)strlen(s));
}
int64_t fake_variant_get_int(const void *r) { return ((const fvariant *)r)->v.i; }
uint32_t fake_variant_get_type(const void *r) { return ((const fvariant *)r)->type; }
const char *fake_variant_get_string(const void *r) {
	const fvariant *v = r;
	return v->type == T_STRING && v->v.p ? ((fstr *)v->v.p)->data : "";
}
void fake_variant_destroy(void *r) { variant_destroy(r); }
const char *fake_string_text(const void *s) { const fstr *f = *(fstr *const *)s; return f ? f->data : ""; }
void fake_string_destroy(void *s) { fstr_unref(*(fstr **)s); *(fstr **)s = NULL; }

// ---- registered methods, callable from tests ----
typedef struct {
	char cls[48], name[48];
	void *userdata, *call, *ptrcall;
	// Default arguments as registered, int ones only (what a test may
	// check): argc is the declared count.
	uint32_t argc, ndefaults;
	fvariant defaults[4];
} fmethod;
static fmethod methods[256];
static int nmethods;

void fake_method_add(const char *cls, const char *name, void *userdata, void *call, void *ptrcall) {
	if (nmethods >= 256) {
		return;
	}
	fmethod *m = &methods[nmethods++];
	snprintf(m->cls, sizeof m->cls, "%s", cls);
	snprintf(m->name, sizeof m->name, "%s", name);
	m->userdata = userdata, m->call = call, m->ptrcall = ptrcall;
}

static fmethod *find_method(const char *cls, const char *name);

void fake_method_defaults(const char *cls, const char *name, uint32_t argc, uint32_t ndefaults, const void *const *defaults) {
	fmethod *m = find_method(cls, name);
	if (!m || ndefaults > 4) {
		return;
	}
	m->argc = argc;
	m->ndefaults = ndefaults;
	for (uint32_t i = 0; i < ndefaults; i++) {
		const fvariant *d = defaults[i];
		memset(&m->defaults[i], 0, sizeof m->defaults[i]);
		if (d->type == T_INT) {
			m->defaults[i] = *d; // plain bits: no reference to take
		}
	}
}

static fmethod *find_method(const char *cls, const char *name) {
	for (int i = 0; i < nmethods; i++) {
		if (strcmp(methods[i].cls, cls) == 0 && strcmp(methods[i].name, name) == 0) {
			return &methods[i];
		}
	}
	return NULL;
}

typedef void (*ptrcall_fn)(void *, void *, const void **, void *);
typedef void (*call_fn)(void *, void *, const void **, gdx_int, void *, gdx_call_error *);

int fake_method_ptrcall(const char *cls, const char *name, void *obj, const void **args, void *ret) {
	fmethod *m = find_method(cls, name);
	if (!m) {
		return 0;
	}
	((ptrcall_fn)m->ptrcall)(m->userdata, ((fobject *)obj)->instance, args, ret);
	return 1;
}

int fake_method_call(const char *cls, const char *name, void *obj, const void **args, gdx_int argc, void *ret, gdx_call_error *err) {
	fmethod *m = find_method(cls, name);
	if (!m) {
		return 0;
	}
	memset(ret, 0, sizeof(fvariant));
	memset(err, 0, sizeof *err);
	// As the engine does (GDExtensionMethodBind::call), the arguments go
	// over as they came: an extension fills in its own defaults.
	((call_fn)m->call)(m->userdata, ((fobject *)obj)->instance, args, argc, ret, err);
	return 1;
}

// ---- scene helpers for tests ----
void fake_set_double(int on) { double_build = on; }
void fake_set_debugger(int on) { debugger_active = on; }
void fake_free_on_signal(const char *name) { snprintf(free_on_signal, sizeof free_on_signal, "%s", name); }
void fake_read_on_signal(const char *signal, const char *cls, const char *method) {
	read_on = method[0] != 0;
	snprintf(read_signal, sizeof read_signal, "%s", signal);
	snprintf(read_class, sizeof read_class, "%s", cls);
	snprintf(read_method, sizeof read_method, "%s", method);
}

void fake_set_name(void *obj, const char *name) { snprintf(((fobject *)obj)->name, sizeof ((fobject *)obj)->name, "%s", name); }

void fake_add_child(void *parent, void *child) {
	fobject *p = parent, *c = child;
	if (p->nchildren < MAX_CHILDREN) {
		p->children[p->nchildren++] = c;
		c->parent = p;
	}
}

static void set_tree(fobject *o, int on) {
	o->in_tree = on;
	for (int i = 0; i < o->nchildren; i++) {
		set_tree(o->children[i], on);
	}
}
void fake_set_in_tree(void *root, int on) { set_tree(root, on); }
uint64_t fake_object_id(void *obj) { return ((fobject *)obj)->id; }
int fake_alive(uint64_t id) { return object_from_id(id) != NULL; }
int fake_visible(void *obj) { return ((fobject *)obj)->visible; }
void fake_xform(void *obj, float *out) { memcpy(out, ((fobject *)obj)->xform, 48); }
double fake_variant_get_float(const void *r) { return ((const fvariant *)r)->v.f; }
