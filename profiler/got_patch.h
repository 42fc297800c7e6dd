/* Redirecting the calls that loaded libraries make to a named function of
 * another library, by rewriting their global offset table (GOT) slots.
 * Used by alloc_patch.c; no CUDA here, so that it is tested on its own
 * (tests/recorder/test_got_patch.c). Linux (glibc), x86_64 and aarch64;
 * elsewhere gp_got_patch returns -ENOTSUP. */
#ifndef GPUPROF_GOT_PATCH_H
#define GPUPROF_GOT_PATCH_H

#include <stdatomic.h>
#include <stddef.h>

struct gp_got_target {
	const char *name;  /* the imported symbol, e.g. "cudaMallocAsync" */
	void *replacement; /* what patched slots call instead */
	/* The function the first patched slot called, set by that patch and
	 * never changed: a slot that would call another function (a second
	 * copy of the library) is left alone and counted in left. */
	void *_Atomic real;
};

/* A slot patched, remembered to repair it (got_patch.c). */
struct gp_got_slot {
	void **at;
	unsigned target;
	int relro; /* on a page the loader made read-only */
};
#define GP_GOT_MAX_SLOTS 256

/* One client's patching: what it redirects, and what its last scan saw and
 * patched. Each client (alloc_patch.c, signals.c) owns one, in static
 * storage, so that the fields below start zeroed; they are got_patch.c's,
 * read and written under its lock. */
struct gp_got_set {
	struct gp_got_target *targets;
	size_t n;
	/* NULL-terminated, or NULL: names only counted, in others (e.g. the
	 * driver calls beneath the targets, which the caller must then watch
	 * another way) */
	const char *const *also_watch;
	unsigned long long seen_adds, seen_subs;
	int seen_valid;
	unsigned npatched;
	struct gp_got_slot patched[GP_GOT_MAX_SLOTS];
};

struct gp_got_result {
	unsigned patched; /* slots calling a replacement */
	unsigned left;    /* slots of a target not patched (see real) */
	unsigned others;  /* slots importing a name of also_watch */
	char first_unpatched[128]; /* the first object with a left or other slot */
};

/* Patches every slot, in every loaded object but the one holding the
 * replacements, that imports a name of set's targets (JUMP_SLOT and GLOB_DAT
 * relocations). Each object keeps its own lookup: a lazy slot not yet
 * resolved gets what dlsym finds from the object's handle. Serialised; safe
 * while other threads call through the slots (one aligned store each). 0,
 * -ENOTSUP, -EINVAL (no targets) or -ENOMEM; *res says what it found. */
int gp_got_patch(struct gp_got_set *set, struct gp_got_result *res);

/* To call now and then after gp_got_patch: if objects were loaded or
 * unloaded since, patches set again ( returns 1, *res
 * filled); else writes the replacement again into any patched slot that
 * lost it (a lazy resolution racing with the patch) and returns 0. Or
 * -errno. One step of dl_iterate_phdr when nothing changed. */
int gp_got_refresh(struct gp_got_set *set, struct gp_got_result *res);

#endif
