/* gp_an_run(): opens the traces, merges their events in time order (each
 * trace is in order on its own, see source.c; several traces of one run
 * share one clock), feeds them to the per-process state, and writes the
 * report.
 *
 * Native mode needs to know which device allocations are PyTorch's, and
 * PyTorch names its segments only at exit; what stays allocated to the end
 * without a name belongs to another library. So a native trace whose first
 * pass finds such allocations is read a second time, with them set apart
 * from the start: the peak of reserved memory is then PyTorch's alone.
 * So is a trace with PyTorch's allocator history (--torch-history), whose
 * marks come at the end: pass 2 feeds its points in time order with the
 * events (history.h). And so is a native trace with gpuprof's allocator
 * hook: each cudaMalloc of a PyTorch segment comes just before the
 * segment's own event, which tells it is PyTorch's; pass 2 leaves those
 * cudaMallocs out from the start, and counts PyTorch's blocks.
 *
 * That last, the default mode's trace, is read once where it can be: the
 * source reads ahead to the hook's first event (what leaves the reorder
 * window meanwhile waits, a bounded number), and a segment's own event is
 * read before its cudaMalloc leaves the window (CUPTI hands the cudaMalloc
 * over later). Such a process is analyzed
 * as pass 2 would from the start (guess), with the cudaMallocs the source
 * marked left out; each segment checks that pass 1 would have found the
 * same one (memory.c's seg_claim). Where one check fails, the traces are
 * read in two passes after all. */
#include "analyze.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "build.h"
#include "exporters/env_vars.h"
#include "state.h"

#define PROGRESS_EVERY 65536

struct run {
	struct an_analysis a;
	struct an_source *src;
	size_t nsrc;
	const struct gp_an_input **inputs; /* per source */
	struct an_ev *head;
	int *has_head;
	uint64_t total_size;
	double last_progress;
	int progress_shown;
	void (*note)(void *, const char *);
	void *note_ctx;
	int guess; /* this pass may read native traces with the hook as pass 2 would */
	unsigned passes; /* how many times the traces were read */
	const char *why_again; /* why they were read again (GPUPROF_TEST_PASSES=say) */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void progress(struct run *r, int done)
{
	uint64_t in = 0;
	double t = now_s();

	if (!r->a.settings->progress)
		return;
	if (done) {
		if (r->progress_shown)
			fputs("\r\033[K", stderr);
		r->progress_shown = 0;
		return;
	}
	if (t - r->last_progress < 0.5)
		return;
	r->last_progress = t;
	for (size_t i = 0; i < r->nsrc; i++)
		in += gp_tr_state(r->src[i].in)->bytes_in;
	fprintf(stderr, "\r\033[Kgpuprof: analyzing%s: %.0f%% of %.1f MiB", r->a.pass == 2 ? " (pass 2)" : "",
		r->total_size ? 100.0 * (double)in / (double)r->total_size : 0.0,
		(double)r->total_size / 1048576.0);
	fflush(stderr);
	r->progress_shown = 1;
}

static void close_sources(struct run *r)
{
	for (size_t i = 0; i < r->nsrc; i++) {
		if (r->has_head && r->has_head[i])
			an_str_unref(&r->a.st, r->head[i].name);
		an_source_close(&r->src[i]);
	}
	free(r->src);
	free(r->head);
	free(r->has_head);
	free(r->inputs);
	r->src = NULL;
	r->head = NULL;
	r->has_head = NULL;
	r->inputs = NULL;
	r->nsrc = 0;
}

static void free_procs(struct run *r)
{
	for (size_t i = 0; i < r->a.nprocs; i++) {
		an_proc_free(&r->a, r->a.procs[i]);
		free(r->a.procs[i]);
	}
	free(r->a.procs);
	r->a.procs = NULL;
	r->a.nprocs = 0;
	for (size_t g = 0; g < r->a.ngpus; g++) {
		an_str_unref(&r->a.st, r->a.gpus[g].uuid);
		free(r->a.gpus[g].pds);
		free(r->a.gpus[g].peak_by_pd);
	}
	free(r->a.gpus);
	r->a.gpus = NULL;
	r->a.ngpus = r->a.gpus_cap = 0;
	r->a.seq = 0;
	r->a.live_records = 0;
}

static int fail(struct run *r, int status, const char *what)
{
	snprintf(r->a.err, r->a.errcap, "%s", what);
	r->a.status = status;
	return status;
}

/* --device N: whether some process used GPU N; where none did, the error
 * names the GPUs they used, as check and compare refuse it too. */
static int device_seen(struct run *r, int device)
{
	char used[256] = "";
	size_t n = 0;
	int seen[AN_MAX_DEVICES] = { 0 };

	for (size_t i = 0; i < r->a.nprocs; i++)
		for (int d = 0; d < AN_MAX_DEVICES; d++)
			seen[d] |= r->a.procs[i]->pd[d] != NULL;
	if (seen[device])
		return 1;
	for (int d = 0; d < AN_MAX_DEVICES && n < sizeof(used); d++) {
		if (seen[d]) {
			int k = snprintf(used + n, sizeof(used) - n, "%scuda:%d", n ? ", " : "", d);

			n = k < 0 ? sizeof(used) : n + (size_t)k;
		}
	}
	snprintf(r->a.err, r->a.errcap, "--device %d: no memory activity on cuda:%d in %s (%s%s)",
		 device, device, r->a.settings->n_inputs > 1 ? "these traces" : "the trace",
		 used[0] ? "memory activity on " : "no memory activity on any GPU", used);
	r->a.status = GP_AN_BAD_INPUT;
	return 0;
}

/* What pass 1 found and pass 2 starts with, per input (indexed like the
 * settings' inputs); each member moves into its process. */
struct carry {
	struct gp_u64map *other, *named, *seg;
	struct an_history *hist;
	int *blocks;
	int *no_torch; /* recorded in a PyTorch mode, PyTorch never seen */
	int *guessed;  /* blocks, and read as pass 2 would in pass 1 (p->seg_guess) */
	uint64_t *statics_from; /* an_proc.statics_from, .statics_to */
	uint32_t *statics_to;
};

/* Opens every input (those of --process only); one process each. */
static int open_all(struct run *r, struct carry *keep)
{
	const struct gp_an_settings *s = r->a.settings;
	int64_t origin = INT64_MAX;

	r->src = calloc(s->n_inputs, sizeof(*r->src));
	r->head = calloc(s->n_inputs, sizeof(*r->head));
	r->has_head = calloc(s->n_inputs, sizeof(*r->has_head));
	r->inputs = calloc(s->n_inputs, sizeof(*r->inputs));
	r->a.procs = calloc(s->n_inputs, sizeof(*r->a.procs));
	if (!r->src || !r->head || !r->has_head || !r->inputs || !r->a.procs)
		return fail(r, GP_AN_FAIL, "out of memory");
	r->total_size = 0;
	for (size_t i = 0; i < s->n_inputs; i++) {
		struct an_source *src = &r->src[r->nsrc];
		struct an_proc *p;
		int st = an_source_open(src, &s->inputs[i], &r->a.st, r->a.err, r->a.errcap);

		if (st) {
			r->nsrc++; /* closed with the others */
			r->a.status = st;
			return st;
		}
		r->nsrc++;
		if (s->pid >= 0 && src->pid != s->pid) {
			an_source_close(src);
			r->nsrc--;
			continue;
		}
		if (keep) {
			src->hist = keep->hist[i];
			src->hist_given = 1;
			memset(&keep->hist[i], 0, sizeof(keep->hist[i]));
		}
		r->inputs[r->nsrc - 1] = &s->inputs[i];
		r->total_size += gp_tr_state(src->in)->size;
		if (src->ts_base_ns < origin)
			origin = src->ts_base_ns;
		p = calloc(1, sizeof(*p));
		if (!p)
			return fail(r, GP_AN_FAIL, "out of memory");
		an_proc_init(p, src, (int)i);
		r->a.procs[r->a.nprocs++] = p;
		if (keep && keep->no_torch[i]) {
			p->no_torch = 1;
			p->mode = MODE_CUDA;
		}
		if (keep) {
			p->other_keys = keep->other[i];
			p->named_segs = keep->named[i];
			p->seg_keys = keep->seg[i];
			p->blocks = keep->blocks[i];
			p->seg_guess = keep->guessed[i];
			p->statics_from = keep->statics_from[i];
			p->statics_to = keep->statics_to[i];
			memset(&keep->other[i], 0, sizeof(keep->other[i]));
			memset(&keep->named[i], 0, sizeof(keep->named[i]));
			memset(&keep->seg[i], 0, sizeof(keep->seg[i]));
		}
	}
	if (!r->nsrc) {
		snprintf(r->a.err, r->a.errcap, "no trace of process %ld among the %zu given", s->pid,
			 s->n_inputs);
		r->a.status = GP_AN_BAD_INPUT;
		return GP_AN_BAD_INPUT;
	}
	r->a.origin = origin;
	if (s->has_at) {
		r->a.has_at = 1;
		r->a.at_ns = origin + (int64_t)llround(s->at_s * 1e9);
	}
	return 0;
}

static int refill(struct run *r, size_t i)
{
	int got = an_source_next(&r->src[i], &r->head[i], r->a.err, r->a.errcap);

	if (got < 0) {
		r->a.status = -got;
		r->has_head[i] = 0;
		return -got;
	}
	r->has_head[i] = got;
	return 0;
}

static int process(struct run *r, struct an_proc *p, const struct an_ev *ev)
{
	int64_t ts = p->src->ts_base_ns + ev->ts;
	int err;

	p->events++;
	switch (ev->type) {
	case AE_ALLOC:
	case AE_FREE:
	case AE_POOL:
	case AE_OOM:
	case AE_SEGMENT:
	case AE_ATTACH:
		err = an_memory_event(&r->a, p, ev, ts);
		break;
	case AE_HISTORY:
		err = an_memory_torch_hist(&r->a, p, ev->device, ev->history.allocated,
					   ev->history.reserved, ts);
		break;
	case AE_COLL:
		/* a device with no memory yet has no moment to tell of */
		if (ev->device < AN_MAX_DEVICES && p->pd[ev->device])
			an_coll_event(&r->a, p->pd[ev->device], ev, ts);
		err = 0;
		break;
	default:
		err = ev->type == AE_MARK ? an_mark_event(&r->a, p, ev, ts)
					  : an_attrib_event(&r->a, p, ev, ts);
		if (!err)
			an_memory_phase(&r->a, p, ts);
		break;
	}
	if (err == -ENOMEM)
		return fail(r, GP_AN_FAIL, "out of memory");
	if (err)
		return r->a.status ? r->a.status : fail(r, GP_AN_BAD_INPUT, "bad input");
	return 0;
}

/* Whether a trace may be read as pass 2 would from the start (the file's
 * head comment): native mode, not of older recorders, whose module
 * globals may move devices in pass 2. */
static int may_guess(const struct an_source *src)
{
	return src->mode == MODE_NATIVE && src->memory_by_context;
}

/* Whether p, whose source has read ahead (an_source_look_ahead()), is
 * read as pass 2 would from the start. */
static void guess(struct an_proc *p)
{
	if (may_guess(p->src) && p->src->hook_seen) {
		p->blocks = 1;
		p->seg_guess = 1;
	}
}

/* Whether a process read as pass 2 would was read wrong (see guess()),
 * as far as known before the end (at_end 0) or at the end. */
static int guess_failed(const struct run *r, int at_end)
{
	for (size_t i = 0; i < r->a.nprocs; i++) {
		const struct an_proc *p = r->a.procs[i];

		if (p->src->held_dev)
			return 1; /* what was held saw a device it should not have */
		if (!p->seg_guess)
			continue;
		if (p->guess_failed)
			return 1;
		if (!at_end)
			continue;
		/* marked, never claimed: pass 1 would not have left it out */
		for (int d = 0; d < AN_MAX_DEVICES; d++)
			for (size_t k = 0; p->pd[d] && k < p->pd[d]->seg_cuda.cap; k++)
				if (p->pd[d]->seg_cuda.slots[k].val == SEG_CUDA_MARKED)
					return 1;
	}
	return 0;
}

/* One pass over every trace, merged in time order. */
static int run_pass(struct run *r)
{
	uint64_t n = 0;

	r->passes++;
	for (size_t i = 0; i < r->nsrc; i++) {
		/* PyTorch's hook may come seconds in (torch.distributed set
		 * up first): what leaves the window before it waits */
		if (r->guess && may_guess(&r->src[i]))
			an_source_look_ahead(&r->src[i], AN_LOOK_AHEAD_MAX);
		if (refill(r, i))
			return r->a.status;
		if (r->guess) /* procs[i] reads src[i] (open_all) */
			guess(r->a.procs[i]);
	}
	for (;;) {
		size_t best = SIZE_MAX;
		int64_t best_ts = 0;
		struct an_history *hist = NULL; /* best is a point of this history */
		int st;

		for (size_t i = 0; i < r->nsrc; i++) {
			struct an_history *h = &r->src[i].hist;
			int64_t ts;

			if (r->has_head[i]) {
				ts = r->src[i].ts_base_ns + r->head[i].ts;
				if (best == SIZE_MAX || ts < best_ts) {
					best = i;
					best_ts = ts;
					hist = NULL;
				}
			}
			/* pass 2: the history's next point (pass 1 only collects it) */
			if (r->src[i].hist_given && h->next < h->n) {
				ts = r->src[i].ts_base_ns + h->pt[h->next].ts;
				if (best == SIZE_MAX || ts < best_ts) {
					best = i;
					best_ts = ts;
					hist = h;
				}
			}
		}
		if (best == SIZE_MAX)
			break;
		if (hist) {
			const struct an_hist_pt *pt = &hist->pt[hist->next++];
			struct an_ev ev = { .type = AE_HISTORY, .device = pt->device, .ts = pt->ts,
					    .history = { .allocated = pt->allocated,
							 .reserved = pt->reserved } };

			st = process(r, r->a.procs[best], &ev);
			if (st)
				return st;
			continue;
		}
		st = process(r, r->a.procs[best], &r->head[best]);
		an_str_unref(&r->a.st, r->head[best].name);
		r->has_head[best] = 0;
		if (st)
			return st;
		if (refill(r, best))
			return r->a.status;
		if (++n % PROGRESS_EVERY == 0) {
			progress(r, 0);
			if (r->guess && guess_failed(r, 0))
				return 0; /* read again in two passes */
		}
	}
	progress(r, 1);
	return 0;
}

/* After pass 1 of native traces: device allocations live at the end that
 * PyTorch did not name. 1 if any process has some. */
static int find_others(struct run *r, struct gp_u64map *other, struct gp_u64map *named)
{
	int any = 0;

	for (size_t i = 0; i < r->a.nprocs; i++) {
		struct an_proc *p = r->a.procs[i];
		size_t slot = (size_t)p->idx;

		if (p->mode != MODE_NATIVE || !p->named_segs.count || p->saw_blocks)
			continue;
		for (int d = 0; d < AN_MAX_DEVICES; d++) {
			struct an_pd *pd = p->pd[d];

			if (!pd)
				continue;
			for (size_t k = 0; k < pd->live.cap; k++) {
				struct an_rec *rec = pd->live.slots[k].val;

				if (!rec || !(rec->flags & R_DEVICE) ||
				    gp_u64map_get(&p->named_segs, rec->addr))
					continue;
				if (gp_u64map_put(&other[slot], an_other_key(rec->addr, rec->ts), (void *)1))
					return -ENOMEM;
				any = 1;
			}
		}
		named[slot] = p->named_segs;
		memset(&p->named_segs, 0, sizeof(p->named_segs));
	}
	return any;
}

static int any_torch_mem(const struct an_proc *p)
{
	for (int d = 0; d < AN_MAX_DEVICES; d++)
		if (p->pd[d] && p->pd[d]->has_torch_mem)
			return 1;
	return 0;
}

static void notes(struct run *r)
{
	char line[1024];

	if (!r->note)
		return;
	for (size_t i = 0; i < r->nsrc; i++) {
		const struct an_source *s = &r->src[i];

		if (s->cut_short) {
			snprintf(line, sizeof(line),
				 "%s was cut short (%s): analyzed the %" PRIu64 " events it holds",
				 s->path, gp_tr_state(s->in)->gzip_cut ? "truncated gzip stream" :
				 gp_tr_state(s->in)->gzip_damaged ? "damaged gzip data" : "no gpuprof.end",
				 s->events);
			r->note(r->note_ctx, line);
		}
	}
}

int gp_an_analyze(const struct gp_an_settings *s, struct gp_an_result **out, char *err,
		  size_t errcap, void (*note)(void *ctx, const char *line), void *note_ctx)
{
	struct run r;
	struct gp_u64map *other = NULL, *named = NULL, *seg = NULL;
	struct an_history *hist = NULL;
	int *blocks = NULL, *no_torch = NULL, *guessed = NULL;
	uint64_t *statics_from = NULL;
	uint32_t *statics_to = NULL;
	struct carry keep;
	const char *passes_env;
	int st, any, two_passes;

	*out = NULL;
	memset(&r, 0, sizeof(r));
	r.a.settings = s;
	r.a.err = err;
	r.a.errcap = errcap;
	r.a.pass = 1;
	r.note = note;
	r.note_ctx = note_ctx;
	passes_env = getenv(GP_ENV_TEST_PASSES);
	two_passes = passes_env && strcmp(passes_env, "2") == 0;
	r.guess = !two_passes;
	err[0] = '\0';
	if (an_strtab_init(&r.a.st)) {
		snprintf(err, errcap, "out of memory");
		return GP_AN_FAIL;
	}
	st = open_all(&r, NULL);
	if (!st)
		st = run_pass(&r);
	if (!st && r.guess && guess_failed(&r, 1)) {
		r.why_again = "a check of the one pass failed";
		/* read as pass 2 would, wrongly: pass 1 after all */
		free_procs(&r);
		close_sources(&r);
		r.guess = 0;
		st = open_all(&r, NULL);
		if (!st)
			st = run_pass(&r);
	}
	r.guess = 0;
	if (st)
		goto cleanup;

	other = calloc(s->n_inputs, sizeof(*other));
	named = calloc(s->n_inputs, sizeof(*named));
	seg = calloc(s->n_inputs, sizeof(*seg));
	hist = calloc(s->n_inputs, sizeof(*hist));
	blocks = calloc(s->n_inputs, sizeof(*blocks));
	no_torch = calloc(s->n_inputs, sizeof(*no_torch));
	guessed = calloc(s->n_inputs, sizeof(*guessed));
	statics_from = calloc(s->n_inputs, sizeof(*statics_from));
	statics_to = calloc(s->n_inputs, sizeof(*statics_to));
	if (!other || !named || !seg || !hist || !blocks || !no_torch || !guessed || !statics_from ||
	    !statics_to) {
		st = fail(&r, GP_AN_FAIL, "out of memory");
		goto cleanup;
	}
	any = find_others(&r, other, named);
	if (any > 0)
		r.why_again = "device allocations PyTorch did not name";
	if (any < 0) {
		st = fail(&r, GP_AN_FAIL, "out of memory");
		goto cleanup;
	}
	for (size_t i = 0; i < r.a.nprocs; i++) {
		struct an_source *src = r.a.procs[i]->src;
		size_t slot = (size_t)r.a.procs[i]->idx;
		char why[200];
		int e;

		if (!src->hist.nmarks)
			continue;
		e = an_history_finish(&src->hist, why, sizeof(why));
		if (e) {
			if (e == -ENOMEM) {
				st = fail(&r, GP_AN_FAIL, "out of memory");
			} else {
				snprintf(err, errcap, "%s: gpuprof:torch.history marks: %s", src->path, why);
				st = r.a.status = GP_AN_BAD_INPUT;
			}
			goto cleanup;
		}
		hist[slot] = src->hist;
		hist[slot].next = 0;
		memset(&src->hist, 0, sizeof(src->hist));
		any = 1;
		r.why_again = "PyTorch's allocator history";
	}
	for (size_t i = 0; i < r.a.nprocs; i++) {
		struct an_proc *p = r.a.procs[i];
		size_t slot = (size_t)p->idx;
		uint64_t used, only = an_statics_only_devices(p, &used);

		/* An older trace's module globals on a device the process used
		 * for nothing else (CUPTI said device 0 for every module): they
		 * are the one device's it used. With several, which is not known. */
		if (!p->src->memory_by_context && only && used && !(used & (used - 1))) {
			statics_from[slot] = only;
			statics_to[slot] = (uint32_t)__builtin_ctzll(used);
			any = 1;
			r.why_again = "an older trace's module globals";
		}
		/* a Python program that never imported torch: what it is.
		 * One that gave the analysis no event at all (a launcher, as
		 * torchrun) is that already: it needs no second pass. */
		if (p->mode != MODE_CUDA && !p->torch_seen && !p->saw_blocks && !any_torch_mem(p)) {
			no_torch[slot] = 1;
			if (p->events || two_passes) {
				any = 1;
				r.why_again = "a process that never used PyTorch";
			}
			continue;
		}
		if (p->mode != MODE_NATIVE || !p->saw_blocks)
			continue;
		blocks[slot] = 1;
		if (p->seg_guess) { /* read as pass 2 would already */
			guessed[slot] = 1;
			continue;
		}
		seg[slot] = p->seg_found;
		memset(&p->seg_found, 0, sizeof(p->seg_found));
		any = 1;
		if (!r.why_again)
			r.why_again = !p->src->memory_by_context ? "a trace without memory_device"
				      : "the hook not seen within the look ahead";
	}
	if (any) {
		free_procs(&r);
		close_sources(&r);
		r.a.pass = 2;
		keep = (struct carry){ other, named, seg, hist, blocks, no_torch, guessed, statics_from,
				       statics_to };
		st = open_all(&r, &keep);
		if (!st)
			st = run_pass(&r);
		if (st)
			goto cleanup;
	} else {
		/* the named segments stay with their process */
		for (size_t i = 0; i < r.a.nprocs; i++) {
			size_t slot = (size_t)r.a.procs[i]->idx;

			if (no_torch[slot]) { /* as open_all() would have made it */
				r.a.procs[i]->no_torch = 1;
				r.a.procs[i]->mode = MODE_CUDA;
			}
			if (named[slot].count) {
				r.a.procs[i]->named_segs = named[slot];
				memset(&named[slot], 0, sizeof(named[slot]));
			}
		}
	}
	notes(&r);
	if (s->device >= 0 && !device_seen(&r, s->device)) {
		st = r.a.status;
		goto cleanup;
	}
	*out = an_result_build(&r.a);
	if (!*out)
		st = fail(&r, GP_AN_FAIL, "out of memory");
cleanup:
	progress(&r, 1);
	if (passes_env && strcmp(passes_env, "say") == 0)
		fprintf(stderr, "gpuprof: the traces were read %u time%s%s%s%s\n", r.passes,
			r.passes == 1 ? "" : "s", r.why_again ? " (" : "", r.why_again ? r.why_again : "",
			r.why_again ? ")" : "");
	free_procs(&r);
	close_sources(&r);
	for (size_t i = 0; other && i < s->n_inputs; i++)
		gp_u64map_free(&other[i]);
	for (size_t i = 0; named && i < s->n_inputs; i++)
		gp_u64map_free(&named[i]);
	for (size_t i = 0; seg && i < s->n_inputs; i++)
		gp_u64map_free(&seg[i]);
	for (size_t i = 0; hist && i < s->n_inputs; i++)
		an_history_free(&hist[i]);
	free(other);
	free(named);
	free(seg);
	free(blocks);
	free(no_torch);
	free(guessed);
	free(statics_from);
	free(statics_to);
	free(hist);
	an_strtab_free(&r.a.st);
	return st;
}

int gp_an_run(const struct gp_an_settings *s, char *err, size_t errcap,
	      void (*note)(void *ctx, const char *line), void *note_ctx)
{
	struct gp_an_result *res;
	int st = gp_an_analyze(s, &res, err, errcap, note, note_ctx);
	int rc;

	if (st)
		return st;
	rc = s->json ? gp_an_render_json(res, s->out) : gp_an_render_text(res, s->out, s->color, s->top);
	gp_an_result_free(res);
	if (rc == -ENOMEM) {
		snprintf(err, errcap, "out of memory");
		return GP_AN_FAIL;
	}
	if (rc || fflush(s->out) != 0 || ferror(s->out)) {
		snprintf(err, errcap, "cannot write the report: %s", strerror(rc && rc != -EIO ? -rc : errno));
		return GP_AN_FAIL;
	}
	return GP_AN_OK;
}
