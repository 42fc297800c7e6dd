/* The human report of a result (result.h): the same numbers --json
 * writes (render_json.c), for people. Tables are aligned; sizes in binary
 * units; color (only when asked: a terminal, NO_COLOR unset) marks
 * headings, problems and advice. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "result.h"
#include "units.h"
#include "viewer/render/table.h"
#include "viewer/render/term.h"

#define MAX_DEPTH_SHOWN 8

struct out {
	FILE *f;
	int color;
	int top;
	int oom; /* a table lost rows: no report rather than a wrong one */
};

/* A string from the trace (names, paths, notes and advice built from them),
 * as a terminal may show it (term.h); tables escape their cells themselves. */
#define T(s) gp_term_str(s)

static const char *C(const struct out *o, const char *code)
{
	return o->color ? code : "";
}
#define BOLD "\033[1m"
#define RED "\033[1;31m"
#define YEL "\033[33m"
#define DIM "\033[2m"
#define OFF "\033[0m"

/* a number JSON may give as null (NaN), as a reader of the JSON sees it: 0 */
static double num(double v)
{
	return isfinite(v) ? v : 0.0;
}

/* sizes and times into small rotating buffers, for use inside one printf */
static const char *sz(uint64_t v)
{
	static char buf[8][32];
	static int k;

	k = (k + 1) % 8;
	an_fmt_bytes(buf[k], sizeof(buf[k]), v);
	return buf[k];
}

static const char *szo(struct gp_an_opt v)
{
	return v.known ? sz(v.v) : "-";
}

static const char *pct(double share)
{
	static char buf[8][16];
	static int k;

	k = (k + 1) % 8;
	snprintf(buf[k], sizeof(buf[k]), "%.1f%%", share * 100.0);
	return buf[k];
}

/* "12.346 s, step 3, backward"; "0.512 s, before step 1" */
static const char *when(double t, int64_t step, int step_when, const char *phase)
{
	static char buf[4][160];
	static int k;
	char st[48];
	size_t n;

	k = (k + 1) % 4;
	n = (size_t)snprintf(buf[k], sizeof(buf[k]), "%.3f s", t);
	if (step >= 0 && n < sizeof(buf[k]))
		n += (size_t)snprintf(buf[k] + n, sizeof(buf[k]) - n, ", %s",
				      gp_an_step_text(st, sizeof(st), step, step_when));
	if (phase && strcmp(phase, "none") && n < sizeof(buf[k]))
		snprintf(buf[k] + n, sizeof(buf[k]) - n, ", %s", phase);
	return buf[k];
}

/* ---- aligned tables (viewer/render/table.h) ---- */

/* Prints and frees t; its first row is the heading. header: 1 bold on a
 * terminal; 2 also set apart by a blank line before it; 0 plain. */
static void t_print(struct out *o, struct gp_table *t, const char *indent, int header)
{
	struct gp_table_style st = { indent, header ? C(o, BOLD) : "", C(o, OFF) };

	if (header == 2)
		fputc('\n', o->f);
	if (gp_table_print(t, GP_TABLE_TEXT, o->f, &st))
		o->oom = 1;
	gp_table_free(t);
}

/* ---- sections ---- */

static void traces(const struct out *o, const struct gp_an_result *r)
{
	for (size_t i = 0; i < r->ntraces; i++) {
		const struct gp_an_trace *t = &r->traces[i];
		const char *cmd = t->cmdline;

		fprintf(o->f, "%sTrace %zu: %s%s\n", C(o, BOLD), i + 1, t->path ? T(t->path) : "", C(o, OFF));
		fprintf(o->f, "  process %" PRId64 "%s%s, %s mode", t->pid, cmd ? ": " : "",
			cmd ? T(cmd) : "", gp_an_mode_names[t->mode]);
		if (t->has_torch && t->torch_version)
			fprintf(o->f, ", torch %s", T(t->torch_version));
		if (t->has_torch && t->torch_alloc_conf && *t->torch_alloc_conf)
			fprintf(o->f, ", PYTORCH_CUDA_ALLOC_CONF=%s", T(t->torch_alloc_conf));
		fputc('\n', o->f);
		/* a distributed job's process: which one */
		if (t->rank >= 0) {
			fprintf(o->f, "  rank %" PRId64, t->rank);
			if (t->world_size > 0)
				fprintf(o->f, " of %" PRId64, t->world_size);
			if (t->local_rank >= 0)
				fprintf(o->f, ", local rank %" PRId64, t->local_rank);
			if (t->hostname)
				fprintf(o->f, " on %s", T(t->hostname));
			fputc('\n', o->f);
		}
		if (t->complete)
			fprintf(o->f, "  complete%s; %" PRIu64 " events\n",
				t->end_signal ? " (the program was ended by a signal)" :
				t->clean_exit == 0 ? " (the program did not exit normally)" : "", t->events);
		else
			fprintf(o->f, "  %sincomplete%s; %" PRIu64 " events\n", C(o, YEL), C(o, OFF),
				t->events);
		for (size_t k = 0; k < t->nnotes; k++)
			fprintf(o->f, "  %snote:%s %s\n", C(o, YEL), C(o, OFF), T(t->notes[k]));
	}
}

/* "12.346 s" when the time is known, else "" */
static const char *peak_at(double t)
{
	static char buf[4][64];
	static int k;

	if (!isfinite(t))
		return "";
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%.3f s", t);
	return buf[k];
}

/* The cache's fragmentation, where PyTorch's blocks and segments show it. */
static void split(struct out *o, const struct gp_an_split *sp)
{
	const char *sep;

	if (!sp->known)
		return;
	if (!sp->segments) {
		fprintf(o->f, "  fragmentation: none (no segment was reserved while PyTorch's cache held "
			"the bytes of the block it was made for)\n");
		return;
	}
	sep = sp->expandable ? ", expandable segments on" : "";
	fprintf(o->f, "  fragmentation%s: %" PRIu64 " segment%s (%s) reserved while PyTorch's cache held "
		"enough free bytes for the block, in pieces too small; worst at %s: %s free in the cache "
		"for a block of %s\n", sep, sp->segments, sp->segments == 1 ? "" : "s", sz(sp->bytes),
		when(sp->worst.t, sp->worst.step, sp->worst.step_when, sp->worst.phase), sz(sp->worst.cached),
		sz(sp->worst.block));
}

/* The kinds of memory apart from the device's (module globals, pinned host
 * memory), in one line: "not counted above: 224 KiB of device_static (a
 * module's device globals, 938 allocations), ..." */
static void not_counted(struct out *o, const struct gp_an_summary *s)
{
	for (size_t k = 0; k < s->nkinds; k++) {
		const struct gp_an_kind_use *e = &s->kinds[k];
		const char *what = gp_an_kind_meaning(e->kind);

		fprintf(o->f, "%s%s of %s (%s%s%" PRIu64 " allocation%s", k ? ", " : "  not counted above: ",
			sz(e->peak), e->kind, what ? what : "", what ? ", " : "", e->allocations,
			e->allocations == 1 ? "" : "s");
		if (e->end != e->peak)
			fprintf(o->f, "; %s at the end", sz(e->end));
		fputc(')', o->f);
	}
	if (s->nkinds)
		fputc('\n', o->f);
}

static void summary(struct out *o, const struct gp_an_device *d)
{
	const struct gp_an_summary *s = &d->summary;
	const struct gp_an_amount *al = &s->allocated, *rs = &s->reserved;
	struct gp_table t;
	/* native mode without the allocator hook: PyTorch's own counts sampled */
	int native = d->mode == GP_AN_MODE_NATIVE && !(al->source && !strcmp(al->source, "blocks"));
	/* at PyTorch's sampled marks, the worst gap and the peak may lie between two */
	const char *fr_sampled = s->frag.source && !strcmp(s->frag.source, "torch marks")
					 ? "; sampled" : "";
	int torch = d->mode != GP_AN_MODE_CUDA;

	gp_table_init(&t, 4, "lrrl");
	gp_table_row(&t, "memory", "at end", "peak", "peak at");
	if (!al->known)
		gp_table_row(&t, "allocated", "?", "?", "(not known from CUDA alone)");
	else if (!native)
		gp_table_row(&t, "allocated", szo(al->end), szo(al->peak), peak_at(al->peak_t));
	else if (al->source && !strcmp(al->source, "torch history"))
		/* PyTorch's own numbers after every allocation and free */
		gp_table_row(&t, "allocated (PyTorch history)", szo(al->end), szo(al->peak),
			     peak_at(al->peak_t));
	else
		/* PyTorch's own numbers, marked by the hooks every 100 ms or so:
		 * the peak between two marks is not seen */
		gp_table_row(&t, "allocated (sampled)", szo(al->end), szo(al->peak),
			     isfinite(al->peak_t) ? peak_at(al->peak_t) : "(PyTorch's marks)");
	if (rs->known)
		gp_table_row(&t, d->mode == GP_AN_MODE_NATIVE ? "reserved (segments)" : "reserved (pools)",
			     szo(rs->end), szo(rs->peak), peak_at(rs->peak_t));
	if (s->has_other) {
		gp_table_row(&t, "other (not PyTorch)", sz(s->other_end), sz(s->other_peak), "");
		gp_table_row(&t, "device total", sz(s->total_end), sz(s->total_peak), peak_at(s->total_peak_t));
	}
	/* a CUDA program's own kinds of memory; PyTorch's users get one line below */
	for (size_t k = 0; !torch && k < s->nkinds; k++)
		gp_table_row(&t, s->kinds[k].kind, sz(s->kinds[k].end), sz(s->kinds[k].peak), "");
	t_print(o, &t, "  ", 1);
	fprintf(o->f, "  allocations: %" PRIu64 "%s", s->allocations, s->has_other ? " by PyTorch" : "");
	if (s->has_other)
		fprintf(o->f, ", %" PRIu64 " other", s->other_allocations);
	fprintf(o->f, "; %" PRIu64 " freed; %" PRIu64 " live at the end (at most %" PRIu64 " at once)\n",
		s->frees, s->live_allocations_end, s->max_live_allocations);
	if (torch)
		not_counted(o, s);
	for (size_t k = 0; !torch && k < s->nkinds; k++)
		fprintf(o->f, "  %s: %" PRIu64 " allocations (not counted above)\n", s->kinds[k].kind,
			s->kinds[k].allocations);
	/* reserved less allocated: PyTorch's cache, most useful when reserved
	 * peaked; fragmentation is the part of it that could not serve a block */
	if (!s->frag.known) {
		if (native)
			fprintf(o->f, "  cache: not known (%s)\n", s->frag.why ? s->frag.why : "");
	} else if (s->frag.has_worst) {
		const struct gp_an_moment *w = &s->frag.worst, *pk = &s->frag.at_peak;

		fprintf(o->f, "  cache (reserved, not allocated%s): ", fr_sampled);
		if (s->frag.has_at_peak)
			fprintf(o->f, "%s of %s when reserved peaked (%.0f%%), at %s; ", sz(pk->gap),
				sz(pk->reserved), 100.0 * (double)pk->gap / (double)pk->reserved,
				when(pk->t, pk->step, pk->step_when, pk->phase));
		fprintf(o->f, "at most %s at %s (%s reserved, %s allocated); %s at the end\n", sz(w->gap),
			when(w->t, w->step, w->step_when, w->phase), sz(w->reserved), sz(w->allocated), szo(s->frag.end));
	} else {
		fprintf(o->f, "  cache: none (reserved never exceeded allocated)\n");
	}
	split(o, &s->split);
}

static void cats(struct out *o, const struct gp_an_set *x, const char *indent)
{
	struct gp_table t;
	char cnt[32];

	if (!x->ncategories)
		return;
	gp_table_init(&t, 4, "lrrr");
	gp_table_row(&t, "by category", "bytes", "share", "allocations");
	for (size_t i = 0; i < x->ncategories; i++) {
		const struct gp_an_category *c = &x->categories[i];
		const struct gp_an_groups *by = &c->by;

		snprintf(cnt, sizeof(cnt), "%" PRIu64, c->count);
		gp_table_row(&t, c->category, sz(c->bytes), pct(c->share), cnt);
		for (size_t k = 0; k < by->n && k < (size_t)o->top; k++) {
			const struct gp_an_group *e = &by->v[k];
			char name[300];

			snprintf(cnt, sizeof(cnt), "%" PRIu64, e->count);
			snprintf(name, sizeof(name), "  %s", e->name);
			gp_table_row(&t, name, sz(e->bytes), pct(e->share), cnt);
		}
		if (by->n > (size_t)o->top) {
			snprintf(cnt, sizeof(cnt), "  (%zu more)", by->n - (size_t)o->top);
			gp_table_row(&t, cnt, "", "", "");
		}
	}
	t_print(o, &t, indent, 2);
}

/* A node's row and those below it. prefix: "each: " before the name of
 * the children of a run's first, shown for all of the run. */
static void layer_rows(const struct out *o, struct gp_table *t, const struct gp_an_node *node,
		       int depth, const char *sep, const char *prefix)
{
	char name[2048];
	size_t n;
	char cnt[32];
	uint64_t bytes, count;
	double share;

	/* a run of alike siblings: its label, "0-11 (12 alike, each 102 MiB)" */
	n = (size_t)snprintf(name, sizeof(name), "%*s%s%s", depth * 2, "", prefix,
			     node->alike.n ? node->alike.label : node->name);
	/* a chain of single children holding everything: one row */
	while (!node->alike.n && node->nchildren == 1 && node->children[0].bytes == node->bytes &&
	       n < sizeof(name)) {
		node = &node->children[0];
		n += (size_t)snprintf(name + n, sizeof(name) - n, "%s%s", sep, node->name);
	}
	bytes = node->bytes;
	count = node->count;
	share = node->share;
	if (node->alike.n) {
		bytes = node->alike.bytes;
		count = node->alike.count;
		share = node->alike.share;
	} else if (node->nchildren && node->children[0].alike.n == node->nchildren &&
		   node->children[0].alike.bytes == node->bytes && n < sizeof(name)) {
		/* ... or a run holding everything: "h.0-11 (12 alike, ...)" */
		node = &node->children[0];
		n += (size_t)snprintf(name + n, sizeof(name) - n, "%s%s", sep, node->alike.label);
	}
	snprintf(cnt, sizeof(cnt), "%" PRIu64, count);
	gp_table_row(t, name, sz(bytes), pct(share), cnt);
	if (depth + 1 >= MAX_DEPTH_SHOWN)
		return;
	/* a run's children are its first's, each of the run having the like */
	prefix = node->alike.n ? "each: " : "";
	for (size_t i = 0, rows = 0; i < node->nchildren; rows++) {
		const struct gp_an_node *c = &node->children[i];
		double c_share = c->alike.n ? c->alike.share : c->share;

		if (rows >= (size_t)o->top || c_share < 0.005) {
			uint64_t rest = 0;

			for (size_t k = i; k < node->nchildren; k++)
				rest += node->children[k].bytes;
			snprintf(name, sizeof(name), "%*s%s(%zu more)", (depth + 1) * 2, "", prefix,
				 node->nchildren - i);
			gp_table_row(t, name, sz(rest), "", "");
			break;
		}
		layer_rows(o, t, c, depth + 1, sep, prefix);
		i += c->alike.n ? c->alike.n : 1;
	}
}

static void layers(struct out *o, const struct gp_an_node *v, size_t n, const char *indent,
		   int torch)
{
	struct gp_table t;

	if (!n)
		return;
	gp_table_init(&t, 4, "lrrr");
	gp_table_row(&t, torch ? "by layer (module path)" : "by NVTX range", "bytes", "share",
		     "allocations");
	for (size_t i = 0, rows = 0; i < n; rows++) {
		if (rows >= (size_t)o->top) {
			char more[64];

			snprintf(more, sizeof(more), "(%zu more)", n - i);
			gp_table_row(&t, more, "", "", "");
			break;
		}
		layer_rows(o, &t, &v[i], 0, torch ? "." : " > ", "");
		i += v[i].alike.n ? v[i].alike.n : 1;
	}
	t_print(o, &t, indent, 2);
}

/* phases: the names are phases, shown as gp_an_phase_label() says */
static void groups(struct out *o, const struct gp_an_groups *g, const char *title,
		   const char *indent, int phases)
{
	struct gp_table t;
	char cnt[32];

	if (!g->n)
		return;
	gp_table_init(&t, 4, "lrrr");
	gp_table_row(&t, title, "bytes", "share", "allocations");
	for (size_t i = 0; i < g->n; i++) {
		const struct gp_an_group *e = &g->v[i];

		if (i >= (size_t)o->top) {
			snprintf(cnt, sizeof(cnt), "(%zu more)", g->n - i);
			gp_table_row(&t, cnt, "", "", "");
			break;
		}
		snprintf(cnt, sizeof(cnt), "%" PRIu64, e->count);
		gp_table_row(&t, phases ? gp_an_phase_label(e->name) : e->name, sz(e->bytes), pct(e->share),
			     cnt);
	}
	t_print(o, &t, indent, 2);
}

/* by source line: the program's own line, and where it was called from */
static void lines(struct out *o, const struct gp_an_lines *l, const char *indent)
{
	struct gp_table t;
	char cnt[32];

	if (!l->present || !l->n)
		return;
	gp_table_init(&t, 4, "lrrr");
	gp_table_row(&t, "by source line", "bytes", "share", "allocations");
	for (size_t i = 0; i < l->n; i++) {
		const struct gp_an_line *e = &l->v[i];
		char name[600];

		if (i >= (size_t)o->top) {
			snprintf(cnt, sizeof(cnt), "(%zu more)", l->n - i);
			gp_table_row(&t, cnt, "", "", "");
			break;
		}
		snprintf(cnt, sizeof(cnt), "%" PRIu64, e->count);
		gp_table_row(&t, e->name, sz(e->bytes), pct(e->share), cnt);
		/* the callers, as far as they are the program's own */
		for (size_t k = 1; k < e->stack.n && k < 3; k++) {
			snprintf(name, sizeof(name), "  called from %s", e->stack.frames[k]);
			gp_table_row(&t, name, "", "", "");
		}
	}
	t_print(o, &t, indent, 2);
}

static void top_allocs(struct out *o, const struct gp_an_set *x, const char *indent, int torch)
{
	struct gp_table t;

	if (!x->ntop)
		return;
	fprintf(o->f, "\n%s%slargest allocations%s\n", indent, C(o, BOLD), C(o, OFF));
	int lined = 0;

	for (size_t i = 0; i < x->ntop; i++)
		lined |= x->top[i].line != NULL;
	gp_table_init(&t, torch ? 7 : 4, torch ? "rrrllll" : "rrll");
	if (torch)
		gp_table_row(&t, "bytes", "made at", "step", "phase", "category", "layer",
			     lined ? "source line" : "API");
	else
		gp_table_row(&t, "bytes", "made at", "NVTX range", "API");
	for (size_t i = 0; i < x->ntop; i++) {
		const struct gp_an_alloc *e = &x->top[i];
		char tm[32], st[40], catbuf[300];
		const char *cat = e->category, *what = e->what, *l = e->layer;
		const char *api = e->api ? e->api : "-";

		snprintf(tm, sizeof(tm), "%.3f s", e->t);
		if (!torch) {
			gp_table_row(&t, sz(e->bytes), tm, l ? l : "-", api);
			continue;
		}
		if (e->step >= 0)
			/* "3", "before 1", "after 20" under the heading "step" */
			snprintf(st, sizeof(st), "%s%" PRId64, e->step_when == GP_AN_STEP_BEFORE ? "before "
				 : e->step_when == GP_AN_STEP_AFTER ? "after " : "", e->step);
		else
			snprintf(st, sizeof(st), "-");
		snprintf(catbuf, sizeof(catbuf), "%s%s%s%s", cat ? cat : "", what ? " (" : "",
			 what ? what : "", what ? ")" : "");
		gp_table_row(&t, sz(e->bytes), tm, st, e->phase ? gp_an_phase_label(e->phase) : "", catbuf,
			     l ? l : "-", lined ? (e->line ? e->line : "-") : api);
	}
	t_print(o, &t, indent, 0);
}

/* the groupings of a set (peak, OOM) */
static void describe(struct out *o, const struct gp_an_set *x, const char *indent, int torch)
{
	cats(o, x, indent);
	layers(o, x->layers, x->nlayers, indent, torch);
	lines(o, &x->by_line, indent);
	groups(o, &x->by_phase, "by phase (when made)", indent, 1);
	groups(o, &x->by_op, "by op", indent, 0);
	groups(o, &x->by_api, "by API", indent, 0);
	top_allocs(o, x, indent, torch);
}

/* "1.204 ms before" / "0.310 ms after" of a time against moment t */
static const char *rel_ms(double x, double t)
{
	static char buf[4][48];
	static int k;
	double ms = (x - t) * 1e3;

	k = (k + 1) % 4;
	if (fabs(ms) < 0.0005)
		snprintf(buf[k], sizeof(buf[k]), "then");
	else
		snprintf(buf[k], sizeof(buf[k]), "%.3f ms %s", fabs(ms), ms < 0 ? "before" : "after");
	return buf[k];
}

static void collective(struct out *o, const struct gp_an_collective *c, double t, int during)
{
	fprintf(o->f, "%s", T(c->op ? c->op : "?"));
	fprintf(o->f, " (stream %" PRId64, c->stream);
	if (!isnan(c->launch_t))
		fprintf(o->f, ", launched %s", rel_ms(c->launch_t, t));
	if (during && c->start_t > t)
		fprintf(o->f, ", queued: starts %s", rel_ms(c->start_t, t));
	else if (during)
		fprintf(o->f, ", running since %s", rel_ms(c->start_t, t));
	fprintf(o->f, ", %s %s)", c->end_t > t ? "ends" : "ended", rel_ms(c->end_t, t));
}

/* The collective calls outstanding at moment t (the peak, a failure), or
 * the last before it and the next after it. */
static void collectives(struct out *o, const struct gp_an_collectives *c, double t,
			const char *indent, const char *moment)
{
	if (!c->present)
		return;
	fprintf(o->f, "%scollectives at %s: ", indent, moment);
	if (c->nduring) {
		for (size_t i = 0; i < c->nduring; i++) {
			fprintf(o->f, "%s", i ? "; " : "");
			collective(o, &c->during[i], t, 1);
		}
		if (c->more)
			fprintf(o->f, "; and %" PRIu64 " more", c->more);
		fputc('\n', o->f);
		return;
	}
	fprintf(o->f, "none outstanding");
	if (c->has_before) {
		fprintf(o->f, "; the last: ");
		collective(o, &c->before, t, 0);
	}
	if (c->has_after) {
		fprintf(o->f, "; the next: ");
		collective(o, &c->after, t, 0);
	}
	fputc('\n', o->f);
}

static void peak(struct out *o, const struct gp_an_device *d, int torch)
{
	const struct gp_an_peak *p = &d->peak;

	if (!d->has_peak) {
		fprintf(o->f, "  no device memory was allocated\n");
		return;
	}
	fprintf(o->f, "\n  %sPeak: %s %s at %s%s", C(o, BOLD), sz(p->bytes), p->what,
		when(p->t, p->step, p->step_when, p->phase), C(o, OFF));
	if (p->layer)
		fprintf(o->f, " (allocating in %s)", T(p->layer));
	fputc('\n', o->f);
	/* the tables below share out what was live (CATEGORIES.md, "live"):
	 * the framework's and what else the process allocated */
	fprintf(o->f, "  live then: %s in %" PRIu64 " allocations", sz(p->set.live_bytes),
		p->set.live_allocations);
	if (p->other && torch)
		fprintf(o->f, " (%s of PyTorch's, %s outside PyTorch)",
			sz(p->set.live_bytes > p->other ? p->set.live_bytes - p->other : 0), sz(p->other));
	fprintf(o->f, "; device total %s", sz(p->device_total));
	if (d->capacity.known)
		fprintf(o->f, ", %s of the device's %s",
			pct((double)p->device_total / (double)d->capacity.v), sz(d->capacity.v));
	fputc('\n', o->f);
	collectives(o, &p->collectives, p->t, "  ", "the peak");
	describe(o, &p->set, "    ", torch);
}

/* Growth that is not a leak: each step's peak, rising. */
static void growth(struct out *o, const struct gp_an_device *d)
{
	const struct gp_an_growth *g = &d->growth;
	const struct gp_an_step_point *ser = d->steps.series;
	size_t n = d->steps.nseries, shown = 0;

	if (!g->present)
		return;
	fprintf(o->f, "  %sGrowth, not a leak:%s each step's peak is larger than the last: ", C(o, YEL),
		C(o, OFF));
	for (size_t i = 0; i < n; i++) {
		if (ser[i].step < g->since_step)
			continue;
		if (shown == 3 && ser[n - 1].step - ser[i].step > 2) {
			fprintf(o->f, ", ...");
			if (i + 3 < n)
				i = n - 3; /* the last three */
		}
		fprintf(o->f, "%s%s (step %" PRId64 ")", shown ? ", " : "", sz(ser[i].peak), ser[i].step);
		shown++;
	}
	fprintf(o->f, "\n  x%.2f a step (+%s from step %" PRId64 " to %" PRId64 "), while live memory "
		"between steps went from %s to %s: what each step holds grows (a growing batch or "
		"sequence?)", g->factor_per_step, sz(g->last_increase), ser[n - 2].step, g->last_step,
		sz(g->live_first), sz(g->live_last));
	if (g->next_peak.known) {
		fprintf(o->f, "; at that rate the next step peaks near %s", sz(g->next_peak.v));
		if (d->capacity.known && g->next_peak.v > d->capacity.v)
			fprintf(o->f, ", more than the device's %s", sz(d->capacity.v));
	}
	fputs("\n", o->f);
}

static void leak(struct out *o, const struct gp_an_device *d, int torch)
{
	const struct gp_an_leak *lk = &d->leak;
	const struct gp_an_step_point *ser = d->steps.series;
	size_t n = d->steps.nseries;

	if (lk->verdict == GP_AN_LEAK_NO_STEPS)
		return;
	fprintf(o->f, "\n  %sSteps:%s %" PRIu64 " step marks; live at the boundaries:", C(o, BOLD),
		C(o, OFF), d->steps.count);
	for (size_t i = 0; i < n; i++) {
		if (n > 8 && i == 4) {
			fprintf(o->f, " ...");
			i = n - 4;
		}
		fprintf(o->f, " %s (step %" PRId64 ")", sz(ser[i].live), ser[i].step);
		if (i + 1 < n)
			fputc(',', o->f);
	}
	fputc('\n', o->f);
	growth(o, d);
	if (lk->verdict == GP_AN_LEAK_TOO_FEW) {
		fprintf(o->f, "  Leak: %stoo few steps after the warm-up (%d) to judge\n",
			d->growth.present ? "between steps, " : "", lk->warmup_steps);
		return;
	}
	if (lk->verdict == GP_AN_LEAK_NONE) {
		fprintf(o->f, "  Leak: none: from step %" PRId64 " to %" PRId64 " live memory went from "
			"%s to %s%s%s\n", lk->since_step, lk->last_step, sz(lk->live_first), sz(lk->live_last),
			lk->why ? "; " : "", lk->why ? lk->why : "");
		return;
	}
	fprintf(o->f, "  %sLeak: +%s per step since step %" PRId64 "%s (grew at %u of %" PRIu64
		" steps, fit R² %.3f)\n", C(o, RED), sz((uint64_t)num(lk->rate_per_step)),
		lk->since_step, C(o, OFF), lk->grew,
		(uint64_t)lk->grew + lk->shrank + lk->flat, num(lk->r2));
	if (isfinite(lk->steps_until_full)) {
		int per_s = isfinite(lk->rate_per_second);

		fprintf(o->f, "  at this rate the device is full in about %.0f more steps%s%s%s\n",
			lk->steps_until_full, per_s ? " (" : "",
			per_s ? sz((uint64_t)lk->rate_per_second) : "", per_s ? "/s)" : "");
	}
	if (lk->has_survivors) {
		const struct gp_an_survivors *sv = &lk->survivors;

		fprintf(o->f, "  still live at step %" PRId64 ": %s made in steps %" PRId64 "-%" PRId64
			" (%s per step, %" PRIu64 " allocations)\n", lk->last_step,
			sz(sv->bytes), sv->from_step, sv->to_step,
			sz((uint64_t)num(sv->per_step)), sv->allocations);
		layers(o, sv->layers, sv->nlayers, "    ", torch);
		lines(o, &sv->by_line, "    ");
		groups(o, &sv->by_phase, "by phase (when made)", "    ", 1);
		groups(o, &sv->by_op, "by op", "    ", 0);
	}
}

/* The largest holders of a failure's live set, in one line: the two
 * largest categories, the largest layer down its largest branch, the
 * largest source line. */
static void holders(struct out *o, const struct gp_an_set *s)
{
	const struct gp_an_node *n = s->nlayers ? &s->layers[0] : NULL;
	char path[512] = "";
	size_t len = 0;
	int parts = 0;

	fprintf(o->f, "    largest holders:");
	for (size_t i = 0; s->has_categories && i < s->ncategories && i < 2; i++, parts++)
		fprintf(o->f, "%s %s %s (%s)", parts ? "," : "", s->categories[i].category,
			sz(s->categories[i].bytes), pct(s->categories[i].share));
	/* down the largest child while it holds most of its parent */
	for (int depth = 0; n && depth < MAX_DEPTH_SHOWN; depth++) {
		int k = snprintf(path + len, sizeof(path) - len, "%s%s", len ? "." : "", n->name);

		len = k < 0 || (size_t)k >= sizeof(path) - len ? sizeof(path) - 1 : len + (size_t)k;
		if (!n->nchildren || n->children[0].bytes * 2 < n->bytes)
			break;
		n = &n->children[0];
	}
	if (n && s->layers[0].name[0] != '(') { /* not "(no module)" */
		fprintf(o->f, "%s %s %s", parts ? ";" : "", T(path), sz(n->bytes));
		parts++;
	}
	if (s->by_line.present && s->by_line.n && s->by_line.v[0].line >= 0) {
		fprintf(o->f, "%s %s %s", parts ? ";" : "", T(s->by_line.v[0].name), sz(s->by_line.v[0].bytes));
		parts++;
	}
	fprintf(o->f, "%s\n", parts ? "" : " -");
}

static const char *outcome_tag(const struct gp_an_oom *e)
{
	return e->fatal ? "fatal" : "got past by the program";
}

/* PyTorch's segments at a moment in a line; request: a failed one's
 * bytes, 0 none */
static void segments_line(struct out *o, const struct gp_an_segment *v, size_t n, const char *indent,
			  uint64_t request)
{
	uint64_t bytes = 0, used = 0, largest = 0;

	for (size_t i = 0; i < n; i++) {
		bytes += v[i].bytes;
		used += v[i].used;
		if (v[i].largest_free > largest)
			largest = v[i].largest_free;
	}
	fprintf(o->f, "%sPyTorch's segments then: %zu, %s reserved, %s of it in blocks; the largest free stretch in "
		"one: %s", indent, n, sz(bytes), sz(used), sz(largest));
	if (request)
		fprintf(o->f, " (the request: %s%s)", sz(request), request > largest ? ", larger" : ", which fits there");
	fputc('\n', o->f);
}

/* A failure the program did not get past: what was asked, what the device
 * and PyTorch had, the largest holders and the advice first; then what was
 * live, in full. */
static void oom_detail(struct out *o, const struct gp_an_oom *e, size_t no, int torch)
{
	const char *layer = e->layer, *op = e->op;

	if (e->raised) {
		/* PyTorch's own words first: the line the user's traceback holds */
		char req[48];

		an_fmt_torch_bytes(req, sizeof(req), e->request);
		fprintf(o->f, "  %s#%zu, %s, at %s%s%s%s%s: PyTorch raised OutOfMemoryError: Tried to "
			"allocate %s%s\n", C(o, BOLD), no, outcome_tag(e), when(e->t, e->step, e->step_when, e->phase),
			layer ? ", in " : "", layer ? T(layer) : "", op ? ", op " : "", op ? T(op) : "",
			req, C(o, OFF));
		fprintf(o->f, "    PyTorch had %s allocated and %s reserved (%s of it not "
			"allocated) for a block of %s%s%s; ", sz(e->pytorch.allocated),
			sz(e->pytorch.reserved),
			sz(e->pytorch.reserved > e->pytorch.allocated
				   ? e->pytorch.reserved - e->pytorch.allocated : 0),
			sz(e->pytorch.block), e->total.known ? ", on a device of " : "",
			e->total.known ? sz(e->total.v) : "");
		fprintf(o->f, "%s free\n", sz(e->pytorch.free));
	} else {
		fprintf(o->f, "  %s#%zu, %s, at %s%s%s%s%s: %s of %s failed%s\n", C(o, BOLD), no,
			outcome_tag(e), when(e->t, e->step, e->step_when, e->phase), layer ? ", in " : "", layer ? T(layer) : "",
			op ? ", op " : "", op ? T(op) : "", e->api ? T(e->api) : "allocation",
			sz(e->request), C(o, OFF));
	}
	if (e->raised)
		fprintf(o->f, "   ");
	else if (e->free.known)
		fprintf(o->f, "    the device had %s free of %s;", sz(e->free.v), szo(e->total));
	else
		fprintf(o->f, "   ");
	fprintf(o->f, " this process held %s", sz(e->device_total));
	if (torch)
		fprintf(o->f, " (PyTorch %s, other %s)", sz(e->allocated), sz(e->other));
	if (e->outside_trace.known)
		fprintf(o->f, "; %s in use outside this trace", sz(e->outside_trace.v));
	fputc('\n', o->f);
	collectives(o, &e->collectives, e->t, "    ", "that moment");
	if (e->retries || e->released_after || e->recovered)
		fprintf(o->f, "    then: %u retr%s of the same request%s%s%s; %s\n", e->retries,
			e->retries == 1 ? "y" : "ies", e->released_after ? ", after releasing " : "",
			e->released_after ? sz(e->released_after) : "",
			e->released_after ? " of cached memory" : "",
			e->recovered ? "it then succeeded" : "it did not succeed");
	if (e->detailed)
		holders(o, &e->set);
	if (e->has_segments)
		segments_line(o, e->segments, e->nsegments, "    ", e->request);
	for (size_t k = 0; k < e->nadvice; k++)
		fprintf(o->f, "    %sadvice:%s %s\n", C(o, YEL), C(o, OFF), T(e->advice[k].text));
	if (torch && !e->nadvice)
		fprintf(o->f, "    advice: none that this trace supports\n");
	if (e->detailed) {
		fprintf(o->f, "\n    live at that moment: %s in %" PRIu64 " allocations\n",
			sz(e->set.live_bytes), e->set.live_allocations);
		describe(o, &e->set, "    ", torch);
	}
}

/* The failures got past inside a library (caught there, or retried by
 * the allocator): one line, with what they asked for and cost, and their
 * advice once. */
static void ooms_got_past(struct out *o, const struct gp_an_device *d)
{
	const uint64_t *n = d->oom_outcomes;
	uint64_t released = d->ooms_left_out.released;
	unsigned kinds = 0;

	for (size_t i = 0; i < d->nooms; i++)
		if (d->ooms[i].outcome == GP_AN_OOM_RETRIED)
			released += d->ooms[i].released_after;
	fprintf(o->f, "\n  %sgot past inside a library:%s %" PRIu64 " failed allocation%s (",
		C(o, BOLD), C(o, OFF), d->ooms_got_past.count, d->ooms_got_past.count == 1 ? "" : "s");
	if (n[GP_AN_OOM_CAUGHT])
		fprintf(o->f, "%" PRIu64 " caught there, the work went on%s", n[GP_AN_OOM_CAUGHT],
			n[GP_AN_OOM_RETRIED] ? "; " : "");
	if (n[GP_AN_OOM_RETRIED])
		fprintf(o->f, "%" PRIu64 " retried by the allocator after releasing %s of cached memory",
			n[GP_AN_OOM_RETRIED], sz(released));
	{
		/* the time from each failure until the work went on, in three
		 * digits as the page writes it */
		double s = d->ooms_got_past.seconds;
		const char *unit = s >= 1 ? "s" : s >= 1e-3 ? "ms" : "µs";
		double v = s >= 1 ? s : s >= 1e-3 ? s * 1e3 : s * 1e6;

		fprintf(o->f, "), %s asked for, ", sz(d->ooms_got_past.bytes));
		fprintf(o->f, v >= 1000 ? "%.0f %s" : "%.3g %s", v, unit);
		fprintf(o->f, " spent getting past them\n");
	}
	/* each kind of advice once, from the latest that has it */
	for (size_t i = d->nooms; i > 0; i--) {
		const struct gp_an_oom *e = &d->ooms[i - 1];

		for (size_t k = 0; e->recovered && k < e->nadvice; k++) {
			unsigned bit = 1u << (e->advice[k].kind % 32);

			if (kinds & bit)
				continue;
			kinds |= bit;
			fprintf(o->f, "    %sadvice:%s %s\n", C(o, YEL), C(o, OFF), T(e->advice[k].text));
		}
	}
}

static void ooms(struct out *o, const struct gp_an_device *d, int torch)
{
	const uint64_t *n = d->oom_outcomes;
	uint64_t count = d->oom_count, carded = n[GP_AN_OOM_FATAL] + n[GP_AN_OOM_LATER_STEPS];
	size_t no = 0;

	if (!count)
		return;
	/* one set of counts, the one the JSON and the page give */
	fprintf(o->f, "\n  %sOut of memory: %" PRIu64 " failed allocation%s:", C(o, RED), count,
		count > 1 ? "s" : "");
	for (int k = 0, first = 1; k < GP_AN_OOM_N; k++) {
		if (!n[k])
			continue;
		fprintf(o->f, "%s %" PRIu64 " %s", first ? "" : ",", n[k], gp_an_oom_outcome_words[k]);
		first = 0;
	}
	fprintf(o->f, "%s\n", C(o, OFF));
	for (size_t i = 0; i < d->nooms; i++)
		if (d->ooms[i].outcome == GP_AN_OOM_FATAL || d->ooms[i].outcome == GP_AN_OOM_LATER_STEPS)
			oom_detail(o, &d->ooms[i], ++no, torch);
	if (carded > no)
		fprintf(o->f, "\n  %" PRIu64 " more of them not shown\n", carded - no);
	if (d->ooms_got_past.count)
		ooms_got_past(o, d);
}

/* Advice about the run as a whole (not about a failure). */
static void run_advice(struct out *o, const struct gp_an_device *d)
{
	if (!d->nadvice)
		return;
	fputc('\n', o->f);
	for (size_t k = 0; k < d->nadvice; k++)
		fprintf(o->f, "  %sadvice:%s %s\n", C(o, YEL), C(o, OFF), T(d->advice[k].text));
}

static void holder_list(struct out *o, const char *title, const struct gp_an_holder *h, size_t n)
{
	if (!n)
		return;
	fprintf(o->f, "    %s:", title);
	for (size_t i = 0; i < n; i++)
		fprintf(o->f, "%s %s %s (%s)", i ? "," : "", T(h[i].name), sz(h[i].bytes), pct(h[i].share));
	fputc('\n', o->f);
}

/* The flight recorder's outline: the whole run, before the window's detail */
static void outline(struct out *o, const struct gp_an_device *d)
{
	const struct gp_an_outline *ol = &d->outline;

	if (!ol->present)
		return;
	fprintf(o->f, "\n  %sWhole run (the flight recorder's outline):%s ", C(o, BOLD), C(o, OFF));
	if (ol->steps)
		fprintf(o->f, "steps %" PRId64 "-%" PRId64 ", ", ol->first_step, ol->last_step);
	fprintf(o->f, "%.3f s to %.3f s", ol->begin_t, ol->end_t);
	if (isfinite(ol->window_t))
		fprintf(o->f, "; the full events below begin at %.3f s", ol->window_t);
	if (ol->dump)
		fprintf(o->f, " (written at: %s)", T(ol->dump));
	fprintf(o->f, "\n  the run's peak: %s allocated at %.3f s, ", sz(ol->allocated_peak), ol->peak_t);
	if (ol->peak_step)
		fprintf(o->f, "step %" PRId64, ol->peak_step);
	else
		fprintf(o->f, "before the first step mark");
	fprintf(o->f, "; reserved at most %s, device allocations at most %s\n", sz(ol->reserved_peak),
		sz(ol->device_peak));
	holder_list(o, "by category", ol->by_category, ol->ncategory);
	holder_list(o, "by layer", ol->by_layer, ol->nlayer);
	if (ol->ooms)
		fprintf(o->f, "  failed allocations: %" PRIu64 " (the largest request %s), the first in step %" PRId64
			"\n", ol->ooms, sz(ol->oom_bytes), ol->first_oom_step);
	if (ol->dropped_segments)
		fprintf(o->f, "  before the window the ring let go %" PRIu64 " seconds of events (%s); the "
			"steps and leak below are the outline's, of the whole run\n", ol->dropped_segments,
			sz(ol->dropped_bytes));
}

/* the largest allocations --at lists (the JSON has more: the report's bands) */
#define AT_LARGEST 8

/* --at: what was live then, as the report's breakdown at that moment */
static void at(struct out *o, const struct gp_an_device *d, int torch)
{
	const struct gp_an_breakdown *b = &d->at;

	if (!d->has_at)
		return;
	fprintf(o->f, "\n  %sAt %.9f s: %s live%s", C(o, BOLD), b->t, sz(b->bytes), C(o, OFF));
	if (b->step >= 0) {
		char st[48];

		fprintf(o->f, ", %s", gp_an_step_text(st, sizeof(st), b->step, b->step_when));
	}
	if (b->phase && strcmp(b->phase, "none"))
		fprintf(o->f, ", %s", b->phase);
	if (b->after_end)
		fprintf(o->f, "; the trace of this device ended before it: what was live at its end");
	fprintf(o->f, "\n  device memory alive then: %s in %" PRIu64 " allocations\n", sz(b->set.live_bytes),
		b->set.live_allocations);
	if (torch)
		cats(o, &b->set, "    ");
	holder_list(o, "by layer", b->by_layer, b->nlayer);
	if (b->has_lines)
		holder_list(o, "by source line", b->by_line, b->nline);
	if (b->has_segments)
		segments_line(o, b->segments, b->nsegments, "    ", 0);
	if (b->nlargest) {
		fprintf(o->f, "    largest:");
		for (size_t i = 0; i < b->nlargest && i < AT_LARGEST; i++) {
			const struct gp_an_alloc *e = &d->bands[b->largest[i]];

			fprintf(o->f, "%s %s made at %.3f s%s%s", i ? "," : "", sz(e->bytes), e->t,
				e->layer ? " in " : "", e->layer ? T(e->layer) : "");
		}
		fputc('\n', o->f);
	}
}

static void device(struct out *o, const struct gp_an_device *d)
{
	int torch = d->mode != GP_AN_MODE_CUDA;

	fprintf(o->f, "\n%sGPU %d of process %" PRId64 ": %s", C(o, BOLD), d->device, d->pid,
		d->name ? T(d->name) : "(unnamed device)");
	if (d->capacity.known)
		fprintf(o->f, ", %s", sz(d->capacity.v));
	fprintf(o->f, "%s\n", C(o, OFF));
	summary(o, d);
	outline(o, d);
	peak(o, d, torch);
	at(o, d, torch);
	leak(o, d, torch);
	run_advice(o, d);
	ooms(o, d, torch);
}

/* "+1.2 GiB" / "-3 MiB" */
static const char *delta(int64_t v)
{
	static char buf[8][40];
	static int k;

	k = (k + 1) % 8;
	snprintf(buf[k], sizeof(buf[k]), "%s%s", v < 0 ? "-" : "+",
		 sz(v < 0 ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v));
	return buf[k];
}

static void rank_diffs(struct out *o, const char *title, const struct gp_an_rank_diff *v, size_t n,
		       int64_t first, int64_t typical)
{
	struct gp_table t;
	char h1[32], h2[32], cell[512];

	if (!n)
		return;
	snprintf(h1, sizeof(h1), "rank %" PRId64, first);
	snprintf(h2, sizeof(h2), "rank %" PRId64, typical);
	gp_table_init(&t, 4, "lrrr");
	gp_table_row(&t, title, h1, h2, "difference");
	for (size_t i = 0; i < n; i++)
		gp_table_row(&t, gp_table_cell(cell, sizeof(cell), GP_TABLE_TEXT, v[i].name, 0, -80),
			     sz(v[i].first), sz(v[i].typical), delta(v[i].delta));
	t_print(o, &t, "    ", 2);
}

static const char *rank_name(const struct gp_an_rank *x)
{
	static char buf[4][48];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "rank %" PRId64, x->rank);
	return buf[k];
}

/* A rank's collectives at its peak in a cell: "AllGather +1", "(after
 * AllReduce)", "" where it ran none. */
static const char *coll_cell(char *buf, size_t cap, const struct gp_an_collectives *c)
{
	uint64_t others = c->nduring ? c->nduring - 1 + c->more : 0;
	char raw[96];

	if (!c->present)
		return "";
	if (c->nduring && others)
		snprintf(raw, sizeof(raw), "%.40s +%" PRIu64, c->during[0].op ? c->during[0].op : "?",
			 others);
	else if (c->nduring)
		snprintf(raw, sizeof(raw), "%.40s", c->during[0].op ? c->during[0].op : "?");
	else if (c->has_before)
		snprintf(raw, sizeof(raw), "(after %.40s)", c->before.op ? c->before.op : "?");
	else
		snprintf(raw, sizeof(raw), "(none yet)");
	/* the op comes from the trace: escaped as every cell is */
	return gp_table_cell(buf, cap, GP_TABLE_TEXT, raw, 0, 0);
}

/* The ranks side by side: who holds most, who runs out first, and why. */
static void ranks(struct out *o, const struct gp_an_result *r)
{
	const struct gp_an_ranks *k = &r->ranks;
	const struct gp_an_rank *first, *typ;
	struct gp_table t;
	char c[3][64], cell[300], st[48];

	if (!k->present)
		return;
	fprintf(o->f, "\n%sRanks: %zu traced", C(o, BOLD), k->n);
	if (k->world_size > 0)
		fprintf(o->f, " of world size %" PRId64, k->world_size);
	fprintf(o->f, "%s\n", C(o, OFF));
	if (k->nmissing) {
		fprintf(o->f, "  %sno trace from rank%s", C(o, YEL), k->nmissing > 1 ? "s" : "");
		for (size_t i = 0; i < k->nmissing && i < 16; i++)
			fprintf(o->f, "%s %" PRId64, i ? "," : "", k->missing[i]);
		fprintf(o->f, "%s%s\n", k->nmissing > 16 ? ", ..." : "", C(o, OFF));
	}
	gp_table_init(&t, 10, "rlrrrrrrrl");
	gp_table_row(&t, "rank", "host", "GPU", "peak", "allocated", "reserved", "device",
		     "outside", "headroom", "collective");
	for (size_t i = 0; i < k->n; i++) {
		const struct gp_an_rank *x = &k->v[i];
		const struct gp_an_device *d = &r->devices[x->device];

		snprintf(c[0], sizeof(c[0]), "%" PRId64 "%s", x->rank,
			 i == k->first ? " *" : "");
		snprintf(c[1], sizeof(c[1]), "%d", d->device);
		gp_table_row(&t, c[0], gp_table_cell(cell, sizeof(cell), GP_TABLE_TEXT, x->hostname, 0, 24),
			     c[1], sz(x->peak), szo(x->allocated), szo(x->reserved), sz(x->device_peak),
			     sz(x->other_peak), szo(x->headroom),
			     d->has_peak ? coll_cell(c[2], sizeof(c[2]), &d->peak.collectives) : "");
	}
	t_print(o, &t, "  ", 1);
	fprintf(o->f, "  peak is %s memory; device: all the process held on its GPU; outside: "
		"not the framework's (NCCL, cuBLAS...); headroom: the GPU's memory less device; "
		"collective: outstanding at the peak (or the last before it)\n",
		k->what ? k->what : "allocated");
	fprintf(o->f, "  spread: %s (%s of the largest), rank %" PRId64 " %s to rank %" PRId64 " %s\n",
		sz(k->spread), pct(k->spread_share), k->v[k->min].rank, sz(k->v[k->min].peak),
		k->v[k->max].rank, sz(k->v[k->max].peak));
	first = &k->v[k->first];
	typ = &k->v[k->typical];
	fprintf(o->f, "  %sruns out first: %s (*)", C(o, RED), rank_name(first));
	if (k->first_by == GP_AN_FIRST_OOM) {
		fprintf(o->f, ", it ran out of memory at %.3f s", first->first_oom_t);
		if (first->first_oom_step >= 0)
			fprintf(o->f, ", %s", gp_an_step_text(st, sizeof(st), first->first_oom_step,
							   first->first_oom_step_when));
	} else if (k->first_by == GP_AN_FIRST_HEADROOM)
		fprintf(o->f, ", the least room left: %s of %s", sz(first->headroom.v),
			sz(first->capacity.v));
	else
		fprintf(o->f, ", the largest peak");
	fprintf(o->f, "%s\n", C(o, OFF));
	for (size_t i = 0; i < k->n; i++) {
		const struct gp_an_rank *x = &k->v[i];
		char sig[40];

		if (!x->stopped_after_first)
			continue;
		fprintf(o->f, "  %s was ended by %s at %.3f s, %.3f s after %s ran out: "
			"stopped with the job, not out of memory itself\n", rank_name(x),
			gp_an_signal_text(x->end_signal, sig, sizeof(sig)), x->end_t,
			x->end_t - first->first_oom_t, rank_name(first));
	}
	if (k->first == k->typical)
		return;
	fprintf(o->f, "  at its peak it holds %s %s than %s at its own (%s)",
		sz(first->peak > typ->peak ? first->peak - typ->peak : typ->peak - first->peak),
		first->peak >= typ->peak ? "more" : "less", rank_name(typ),
		k->typical == k->median ? "the median rank" : "the smallest");
	if (k->other_delta)
		fprintf(o->f, "; outside the framework %s", delta(k->other_delta));
	fputc('\n', o->f);
	rank_diffs(o, "category", k->categories, k->ncategories, first->rank, typ->rank);
	rank_diffs(o, "layer (its own bytes)", k->layers, k->nlayers, first->rank, typ->rank);
	rank_diffs(o, "line", k->lines, k->nlines, first->rank, typ->rank);
}

static void gpus(const struct out *o, const struct gp_an_result *r)
{
	for (size_t i = 0; i < r->ngpus; i++) {
		const struct gp_an_gpu *g = &r->gpus[i];

		fprintf(o->f, "\n%sGPU %s (%s): shared by %zu processes%s\n", C(o, BOLD),
			g->uuid ? T(g->uuid) : "", g->name ? T(g->name) : "?", g->nby_process, C(o, OFF));
		fprintf(o->f, "  peak together: %s at %.3f s:", sz(g->peak), num(g->peak_t));
		for (size_t k = 0; k < g->nby_process; k++)
			fprintf(o->f, "%s process %" PRId64 " %s", k ? "," : "", g->by_process[k].pid,
				sz(g->by_process[k].bytes));
		fputc('\n', o->f);
	}
}

int gp_an_render_text(const struct gp_an_result *r, FILE *f, int color, int top)
{
	struct out o = { f, color, top, 0 };
	size_t lead;

	traces(&o, r);
	ranks(&o, r);
	if (!r->ndevices)
		fprintf(f, "\nno GPU memory activity in %s\n",
			r->ntraces > 1 ? "these traces" : "this trace");
	/* the rank that ran out first before the others' detail */
	lead = r->ranks.present && r->ranks.first_by == GP_AN_FIRST_OOM ? r->ranks.v[r->ranks.first].device
									  : SIZE_MAX;
	if (lead != SIZE_MAX)
		device(&o, &r->devices[lead]);
	for (size_t i = 0; i < r->ndevices; i++)
		if (i != lead)
			device(&o, &r->devices[i]);
	gpus(&o, r);
	if (o.oom)
		return -ENOMEM;
	return ferror(f) ? -EIO : 0;
}
