/* GOT patching (see got_patch.h).
 *
 * A call from a shared object to a function of another goes through a slot
 * of the caller's GOT that the dynamic loader fills: a JUMP_SLOT relocation
 * (called through the PLT; filled at the first call when bound lazily) or a
 * GLOB_DAT one (the function's address taken). Writing another address into
 * that slot redirects that object's calls, and only its calls: every other
 * object, and the function itself, stay as they were.
 *
 * Locks: dl_iterate_phdr holds the loader's list lock while it calls back,
 * so nothing is unloaded under the scan, and dlopen takes the loader's other
 * lock first, then that one: so no dlopen or dlsym runs inside the callback
 * (it would take them in the opposite order). Slots already resolved are
 * patched inside it; lazy ones are resolved and patched after it, with their
 * object pinned by dlopen(RTLD_NOLOAD). */
#include "got_patch.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__x86_64__)
#define GP_R_JUMP_SLOT R_X86_64_JUMP_SLOT
#define GP_R_GLOB_DAT R_X86_64_GLOB_DAT
#define GP_GOT_SUPPORTED 1
#elif defined(__aarch64__)
#define GP_R_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define GP_R_GLOB_DAT R_AARCH64_GLOB_DAT
#define GP_GOT_SUPPORTED 1
#else
#define GP_R_JUMP_SLOT (~0UL)
#define GP_R_GLOB_DAT (~0UL)
#define GP_GOT_SUPPORTED 0
#endif

#define MAX_LAZY 64
#define MAX_DYN 4096 /* entries of one .dynamic section read at most */

/* A lazy slot found inside the callback, resolved after it. */
struct lazy {
	struct gp_got_slot s;
	uintptr_t base;
	char name[512]; /* the object's path; "" for the main program */
};

/* Guards every set's private fields, and serialises the scans. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* One scan's state, handed to the dl_iterate_phdr callback. */
struct scan {
	struct gp_got_set *set;
	struct gp_got_target *targets;
	size_t n;
	const char *const *also_watch;
	uintptr_t self_base; /* the replacements' object: never patched */
	struct gp_got_result res;
	struct lazy *lazy;
	unsigned nlazy;
	unsigned long long adds, subs;
	int have_counts;
	size_t page;
};

static int has_counts(size_t size)
{
	return size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(unsigned long long);
}

/* Whether [p, p + len) lies in one loaded segment of the object. */
static int in_object(const struct dl_phdr_info *info, uintptr_t p, size_t len)
{
	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (p >= lo && p <= hi && len <= hi - p)
			return 1;
	}
	return 0;
}

/* Whether p is on a page that the loader made read-only after relocation
 * (PT_GNU_RELRO, its end rounded down to a page, as the loader does). */
static int in_relro(const struct dl_phdr_info *info, uintptr_t p, size_t page)
{
	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_GNU_RELRO)
			continue;
		uintptr_t lo = (info->dlpi_addr + ph->p_vaddr) & ~(page - 1);
		uintptr_t hi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz) & ~(page - 1);
		if (p >= lo && p < hi)
			return 1;
	}
	return 0;
}

/* One aligned store; a read-only page is opened for it and closed again. */
static int write_slot(const struct gp_got_slot *s, void *value, size_t page)
{
	void *pg = (void *)((uintptr_t)s->at & ~(uintptr_t)(page - 1));
	if (s->relro && mprotect(pg, page, PROT_READ | PROT_WRITE) != 0)
		return -errno;
	__atomic_store_n(s->at, value, __ATOMIC_RELEASE);
	if (s->relro)
		mprotect(pg, page, PROT_READ);
	return 0;
}

/* Counts a slot not patched (left or others) and names the first object
 * that had one. */
static void not_patched(struct gp_got_result *res, unsigned *count, const char *object)
{
	(*count)++;
	if (!res->first_unpatched[0] && object) {
		const char *base = strrchr(object, '/');
		base = base ? base + 1 : object;
		if (!*base)
			base = "(the program)";
		size_t n = strnlen(base, sizeof(res->first_unpatched) - 1);
		memcpy(res->first_unpatched, base, n); /* a long name is cut */
		res->first_unpatched[n] = '\0';
	}
}

static void remember(struct gp_got_set *set, const struct gp_got_slot *s)
{
	if (set->npatched < GP_GOT_MAX_SLOTS)
		set->patched[set->npatched++] = *s;
}

/* Takes real as the target's function if it has none yet; whether the slot
 * may call the replacement instead. */
static int same_real(struct gp_got_target *t, void *real)
{
	void *expected = NULL;
	if (!real)
		return 0;
	if (atomic_compare_exchange_strong(&t->real, &expected, real))
		return 1;
	return expected == real;
}

static void patch_resolved(struct scan *sc, const struct gp_got_slot *s, void *current, const char *object)
{
	struct gp_got_target *t = &sc->targets[s->target];
	if (current != t->replacement) {
		if (!same_real(t, current) || write_slot(s, t->replacement, sc->page) != 0) {
			not_patched(&sc->res, &sc->res.left, object);
			return;
		}
	}
	sc->res.patched++;
	remember(sc->set, s);
}

static int watched(const char *const *names, const char *name)
{
	for (size_t i = 0; names && names[i]; i++)
		if (strcmp(names[i], name) == 0)
			return 1;
	return 0;
}

static int target_of(const struct scan *sc, const char *name)
{
	for (size_t i = 0; i < sc->n; i++)
		if (strcmp(sc->targets[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* Pointers in .dynamic: glibc adds the load address to them in place;
 * other loaders leave them as addresses in the file. */
static uintptr_t dyn_ptr(const struct dl_phdr_info *info, uintptr_t v)
{
	return v < info->dlpi_addr ? v + info->dlpi_addr : v;
}

static void scan_relocs(struct scan *sc, const struct dl_phdr_info *info, const ElfW(Rela) *r,
			size_t count, const ElfW(Sym) *symtab, const char *strtab, size_t strsz)
{
	for (size_t i = 0; i < count; i++, r++) {
		unsigned long type = ELF64_R_TYPE(r->r_info), symi = ELF64_R_SYM(r->r_info);
		if ((type != GP_R_JUMP_SLOT && type != GP_R_GLOB_DAT) || symi == 0)
			continue;
		const ElfW(Sym) *sym = &symtab[symi];
		if (!in_object(info, (uintptr_t)sym, sizeof(*sym)) || sym->st_shndx != SHN_UNDEF ||
		    sym->st_name >= strsz)
			continue; /* not an import */
		const char *name = strtab + sym->st_name;
		if (!memchr(name, '\0', strsz - sym->st_name))
			continue;
		if (watched(sc->also_watch, name)) {
			not_patched(&sc->res, &sc->res.others, info->dlpi_name);
			continue;
		}
		int ti = target_of(sc, name);
		if (ti < 0)
			continue;
		uintptr_t at = info->dlpi_addr + r->r_offset;
		if (!in_object(info, at, sizeof(void *)) || at % sizeof(void *)) {
			not_patched(&sc->res, &sc->res.left, info->dlpi_name);
			continue;
		}
		struct gp_got_slot s = { (void **)at, (unsigned)ti, in_relro(info, at, sc->page) };
		void *current = __atomic_load_n(s.at, __ATOMIC_ACQUIRE);
		/* A lazy slot points back into its own object's PLT. */
		if (current == sc->targets[ti].replacement || !in_object(info, (uintptr_t)current, 1)) {
			patch_resolved(sc, &s, current, info->dlpi_name);
			continue;
		}
		const char *object = info->dlpi_name ? info->dlpi_name : "";
		size_t len = strlen(object);
		if (sc->nlazy == MAX_LAZY || len >= sizeof(sc->lazy[0].name)) {
			not_patched(&sc->res, &sc->res.left, object);
			continue;
		}
		struct lazy *l = &sc->lazy[sc->nlazy++];
		l->s = s;
		l->base = info->dlpi_addr;
		memcpy(l->name, object, len + 1);
	}
}

static int scan_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct scan *sc = arg;
	if (!sc->have_counts) {
		sc->have_counts = 1;
		if (has_counts(size)) {
			sc->adds = info->dlpi_adds;
			sc->subs = info->dlpi_subs;
		}
	}
	if (info->dlpi_addr == sc->self_base && sc->self_base != 0)
		return 0;
	const ElfW(Dyn) *dyn = NULL;
	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	if (!dyn || !in_object(info, (uintptr_t)dyn, sizeof(*dyn)))
		return 0;
	uintptr_t symtab = 0, strtab = 0, jmprel = 0, rela = 0;
	size_t strsz = 0, pltrelsz = 0, relasz = 0, relaent = sizeof(ElfW(Rela));
	long pltrel = DT_RELA;
	for (int i = 0; i < MAX_DYN && in_object(info, (uintptr_t)&dyn[i], sizeof(*dyn)); i++) {
		const ElfW(Dyn) *d = &dyn[i];
		if (d->d_tag == DT_NULL)
			break;
		switch (d->d_tag) {
		case DT_SYMTAB: symtab = dyn_ptr(info, d->d_un.d_ptr); break;
		case DT_STRTAB: strtab = dyn_ptr(info, d->d_un.d_ptr); break;
		case DT_STRSZ: strsz = d->d_un.d_val; break;
		case DT_JMPREL: jmprel = dyn_ptr(info, d->d_un.d_ptr); break;
		case DT_PLTRELSZ: pltrelsz = d->d_un.d_val; break;
		case DT_PLTREL: pltrel = (long)d->d_un.d_val; break;
		case DT_RELA: rela = dyn_ptr(info, d->d_un.d_ptr); break;
		case DT_RELASZ: relasz = d->d_un.d_val; break;
		case DT_RELAENT: relaent = d->d_un.d_val; break;
		default: break;
		}
	}
	if (!symtab || !strtab || !strsz || relaent != sizeof(ElfW(Rela)) ||
	    !in_object(info, strtab, strsz))
		return 0;
	if (jmprel && pltrel == DT_RELA && in_object(info, jmprel, pltrelsz))
		scan_relocs(sc, info, (const ElfW(Rela) *)jmprel, pltrelsz / sizeof(ElfW(Rela)),
			    (const ElfW(Sym) *)symtab, (const char *)strtab, strsz);
	if (rela && in_object(info, rela, relasz))
		scan_relocs(sc, info, (const ElfW(Rela) *)rela, relasz / sizeof(ElfW(Rela)),
			    (const ElfW(Sym) *)symtab, (const char *)strtab, strsz);
	return 0;
}

/* After the scan: a lazy slot gets what its object's lookup finds. */
static void patch_lazy(struct scan *sc, const struct lazy *l)
{
	struct gp_got_target *t = &sc->targets[l->s.target];
	void *h = dlopen(l->name[0] ? l->name : NULL, RTLD_LAZY | RTLD_NOLOAD);
	struct link_map *lm = NULL;
	if (!h) {
		not_patched(&sc->res, &sc->res.left, l->name); /* unloaded since */
		return;
	}
	void *real = NULL;
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && (uintptr_t)lm->l_addr == l->base)
		real = dlsym(h, t->name);
	if (real)
		patch_resolved(sc, &l->s, real, l->name);
	else
		not_patched(&sc->res, &sc->res.left, l->name);
	dlclose(h);
}

static int patch_locked(struct gp_got_set *set, struct gp_got_result *res)
{
	struct gp_got_target *targets = set->targets;
	size_t n = set->n;
	struct scan sc;
	Dl_info self;

	memset(res, 0, sizeof(*res));
	if (!GP_GOT_SUPPORTED)
		return -ENOTSUP;
	if (n == 0)
		return -EINVAL;
	memset(&sc, 0, sizeof(sc));
	sc.set = set;
	sc.targets = targets;
	sc.n = n;
	sc.also_watch = set->also_watch;
	sc.page = (size_t)sysconf(_SC_PAGESIZE);
	if (dladdr(targets[0].replacement, &self) && self.dli_fbase)
		sc.self_base = (uintptr_t)self.dli_fbase;
	sc.lazy = calloc(MAX_LAZY, sizeof(*sc.lazy));
	if (!sc.lazy)
		return -ENOMEM;
	set->npatched = 0;
	dl_iterate_phdr(scan_object, &sc);
	for (unsigned i = 0; i < sc.nlazy; i++)
		patch_lazy(&sc, &sc.lazy[i]);
	free(sc.lazy);
	set->seen_adds = sc.adds;
	set->seen_subs = sc.subs;
	set->seen_valid = 1;
	*res = sc.res;
	return 0;
}

int gp_got_patch(struct gp_got_set *set, struct gp_got_result *res)
{
	pthread_mutex_lock(&lock);
	int err = patch_locked(set, res);
	pthread_mutex_unlock(&lock);
	return err;
}

struct repair {
	struct gp_got_set *set;
	int changed;
	size_t page;
};

/* Inside the loader's list lock: nothing is unloaded while the slots are
 * read and written. */
static int repair_slots(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct repair *rp = arg;
	struct gp_got_set *set = rp->set;
	if (!has_counts(size) || info->dlpi_adds != set->seen_adds || info->dlpi_subs != set->seen_subs) {
		rp->changed = 1;
		return 1;
	}
	/* Only a slot holding the real function again is rewritten (the
	 * loader's lazy resolution wrote it): anything else is someone else's. */
	for (unsigned i = 0; i < set->npatched; i++) {
		struct gp_got_target *t = &set->targets[set->patched[i].target];
		void *real = atomic_load(&t->real);
		if (real && __atomic_load_n(set->patched[i].at, __ATOMIC_ACQUIRE) == real)
			write_slot(&set->patched[i], t->replacement, rp->page);
	}
	return 1; /* one call is enough */
}

int gp_got_refresh(struct gp_got_set *set, struct gp_got_result *res)
{
	struct repair rp = { set, 0, (size_t)sysconf(_SC_PAGESIZE) };
	int ret = 0;

	pthread_mutex_lock(&lock);
	if (!set->seen_valid) {
		rp.changed = 1;
	} else {
		dl_iterate_phdr(repair_slots, &rp);
	}
	if (rp.changed) {
		ret = patch_locked(set, res);
		if (ret == 0)
			ret = 1;
	}
	pthread_mutex_unlock(&lock);
	return ret;
}
