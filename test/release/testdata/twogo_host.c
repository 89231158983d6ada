// twogo_host: loads the nearzero extension library and two other Go
// c-shared libraries (each its own Go runtime) into one process with
// dlopen, as an engine loading several Go-built GDExtensions would, then
// runs the two stress libraries at once from four C threads.
//
//   twogo_host NEARZERO.so GOLIB_A.so GOLIB_B.so ITERATIONS
//
// Prints "twogo: ok ..." and exits 0, or prints the failure and exits 1.
// Builds for Windows too (MinGW, -static; LoadLibrary for dlopen).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef _WIN32
#include <windows.h>
static void *lib_open(const char *path) { return (void *)LoadLibraryA(path); }
static void *lib_sym(void *h, const char *name) { return (void *)GetProcAddress((HMODULE)h, name); }
static const char *lib_error(void) {
	static char buf[32];
	snprintf(buf, sizeof buf, "error %lu", (unsigned long)GetLastError());
	return buf;
}
#else
#include <dlfcn.h>
static void *lib_open(const char *path) { return dlopen(path, RTLD_NOW | RTLD_LOCAL); }
static void *lib_sym(void *h, const char *name) { return dlsym(h, name); }
static const char *lib_error(void) { return dlerror(); }
#endif

typedef long long (*stress_fn)(int, int);

struct job {
	stress_fn fn;
	int iterations;
	long long want;
	int bad;
};

static void *run(void *arg) {
	struct job *j = arg;
	for (int i = 0; i < j->iterations; i++) {
		if (j->fn(4, 24) != j->want) j->bad++;
	}
	return NULL;
}

static void *open_lib(const char *path) {
	void *h = lib_open(path);
	if (!h) {
		fprintf(stderr, "twogo: load %s: %s\n", path, lib_error());
		exit(1);
	}
	return h;
}

int main(int argc, char **argv) {
	if (argc != 5) {
		fprintf(stderr, "usage: twogo_host NEARZERO.so GOLIB_A.so GOLIB_B.so ITERATIONS\n");
		return 2;
	}
	int iterations = atoi(argv[4]);
	void *nz = open_lib(argv[1]);
	if (!lib_sym(nz, "nearzero_init")) {
		fprintf(stderr, "twogo: %s has no nearzero_init\n", argv[1]);
		return 1;
	}
	stress_fn a = (stress_fn)lib_sym(open_lib(argv[2]), "golib_stress");
	stress_fn b = (stress_fn)lib_sym(open_lib(argv[3]), "golib_stress");
	if (!a || !b || a == b) {
		fprintf(stderr, "twogo: golib_stress missing or shared (a=%p b=%p)\n", (void *)a, (void *)b);
		return 1;
	}
	long long want = a(4, 24); // the checksum depends only on the arguments
	if (b(4, 24) != want) {
		fprintf(stderr, "twogo: the two libraries disagree on one call\n");
		return 1;
	}
	struct job jobs[4] = {{a, iterations, want, 0}, {b, iterations, want, 0},
	                      {a, iterations, want, 0}, {b, iterations, want, 0}};
	pthread_t th[4];
	for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, run, &jobs[i]);
	int bad = 0;
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		bad += jobs[i].bad;
	}
	if (bad) {
		fprintf(stderr, "twogo: %d wrong checksums\n", bad);
		return 1;
	}
	printf("twogo: ok: 3 Go runtimes in one process, %d concurrent calls per thread on 4 threads\n", iterations);
	return 0;
}
