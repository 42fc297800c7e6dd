/* GOT patching (profiler/got_patch.c) on stand-in libraries (got/): calls
 * through lazy and bound slots, PLT and address-taken slots, are redirected;
 * a caller bound to a second copy of the library is left alone; watched
 * names are counted; objects loaded later are patched by gp_got_refresh, and
 * a slot that lost its patch gets it back. */
#include "check.h"
#include "got_patch.h"

#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int user_lazy_alloc(int x);
int user_lazy_free(int x);
int user_now_alloc(int x);
int (*user_now_alloc_ptr(void))(int);

static int alloc_calls, free_calls;
static struct gp_got_target targets[2];

static int wrap_alloc(int x)
{
	alloc_calls++;
	int (*real)(int) = (int (*)(int))atomic_load(&targets[0].real);
	return real(x);
}

static int wrap_free(int x)
{
	free_calls++;
	int (*real)(int) = (int (*)(int))atomic_load(&targets[1].real);
	return real(x);
}

static const char *const watch[] = { "gp_fake_driver_alloc", NULL };

static void *must_dlsym(void *h, const char *name)
{
	void *p = h ? dlsym(h, name) : NULL;
	if (!p) {
		fprintf(stderr, "dlsym %s: %s\n", name, dlerror());
		exit(1);
	}
	return p;
}

/* Finds the slot of an object (by a substring of its path) that holds value. */
struct find {
	const char *object;
	void *value;
	void **found;
};

static int find_slot(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find *f = arg;
	(void)size;
	if (!info->dlpi_name || !strstr(info->dlpi_name, f->object))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
			continue;
		void **p = (void **)(info->dlpi_addr + ph->p_vaddr);
		for (size_t k = 0; k < ph->p_memsz / sizeof(void *); k++)
			if (p[k] == f->value) {
				f->found = &p[k];
				return 1;
			}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct gp_got_result res;
	const char *dir = argc > 1 ? argv[1] : ".";
	char path[4096];

	targets[0] = (struct gp_got_target){ .name = "gp_fake_alloc", .replacement = (void *)wrap_alloc };
	targets[1] = (struct gp_got_target){ .name = "gp_fake_free", .replacement = (void *)wrap_free };
	static struct gp_got_set set;
	set.targets = targets;
	set.n = 2;
	set.also_watch = watch;

	/* A caller bound to the second copy (its symbol version), as a library
	 * with its own libcudart would be, and one calling the watched name. */
	snprintf(path, sizeof(path), "%s/libgot_user_b.so", dir);
	void *user_b = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	int (*user_b_alloc)(int) = (int (*)(int))must_dlsym(user_b, "user_b_alloc");
	snprintf(path, sizeof(path), "%s/libgot_user_drv.so", dir);
	void *user_drv = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	int (*user_drv_driver)(int) = (int (*)(int))must_dlsym(user_drv, "user_drv_driver");
	CHECK(user_b_alloc(1) == 5001);
	CHECK(user_now_alloc(1) == 1001);

	/* user_lazy has not called yet: its slots are unresolved. */
	CHECK(gp_got_patch(&set, &res) == 0);
	fprintf(stderr, "patched %u, left %u, others %u\n", res.patched, res.left, res.others);
	CHECK(res.patched >= 3); /* lazy alloc and free; now alloc (PLT, pointer) */
	CHECK(res.left == 1);    /* user_b */
	CHECK(res.others == 1);  /* user_drv */
	CHECK(strcmp(res.first_unpatched, "libgot_user_b.so") == 0 ||
	      strcmp(res.first_unpatched, "libgot_user_drv.so") == 0);
	void *provider = dlopen("libgot_provider_a.so", RTLD_NOW | RTLD_NOLOAD);
	CHECK(provider && atomic_load(&targets[0].real) == must_dlsym(provider, "gp_fake_alloc"));
	CHECK(provider && atomic_load(&targets[1].real) == must_dlsym(provider, "gp_fake_free"));

	CHECK(user_lazy_alloc(1) == 1001 && alloc_calls == 1);
	CHECK(user_now_alloc(2) == 1002 && alloc_calls == 2);
	CHECK(user_now_alloc_ptr()(3) == 1003 && alloc_calls == 3);
	CHECK(user_lazy_free(1) == 2001 && free_calls == 1);
	CHECK(user_b_alloc(1) == 5001 && alloc_calls == 3);
	CHECK(user_drv_driver(1) == 3001);

	/* Patching again changes nothing: no wrapper calls itself. */
	unsigned before = res.patched;
	CHECK(gp_got_patch(&set, &res) == 0);
	CHECK(res.patched == before && res.left == 1);
	CHECK(user_lazy_alloc(4) == 1004 && alloc_calls == 4);

	/* Nothing loaded since: no new scan. */
	CHECK(gp_got_refresh(&set, &res) == 0);

	/* A slot that lost its patch to a racing lazy resolution gets it back. */
	struct find f = { "libgot_user_lazy.so", (void *)wrap_alloc, NULL };
	dl_iterate_phdr(find_slot, &f);
	CHECK(f.found != NULL);
	if (f.found) {
		*f.found = atomic_load(&targets[0].real);
		CHECK(user_lazy_alloc(5) == 1005 && alloc_calls == 4);
		CHECK(gp_got_refresh(&set, &res) == 0);
		CHECK(user_lazy_alloc(6) == 1006 && alloc_calls == 5);
	}

	/* An object loaded later is patched by the next refresh. */
	snprintf(path, sizeof(path), "%s/libgot_user_late.so", dir);
	void *late = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
	int (*late_alloc)(int) = (int (*)(int))must_dlsym(late, "user_late_alloc");
	CHECK(gp_got_refresh(&set, &res) == 1);
	CHECK(res.patched == before + 1 && res.left == 1 && res.others == 1);
	CHECK(late_alloc(7) == 1007 && alloc_calls == 6);

	/* ... and unloading one makes the next refresh scan again. */
	dlclose(late);
	CHECK(gp_got_refresh(&set, &res) == 1);
	CHECK(res.patched == before);

	if (provider)
		dlclose(provider);
	dlclose(user_b);
	dlclose(user_drv);
	return CHECK_DONE();
}
