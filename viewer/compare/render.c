/* The reports people read: text for a terminal or a CI log, Markdown for a
 * PR comment or a GitHub job summary. Both start with the verdict (the line
 * a failed job's log is opened for), then one row per process/GPU, then
 * what changed at the peak where something did. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cmp.h"
#include "units.h"
#include "viewer/render/table.h"

#define CELL 1024
#define LAYER_CHARS (-80L) /* a layer's path: its end says most */
#define CMD_CHARS 60L

struct out {
	FILE *f;
	enum gp_table_fmt fmt;
	int top;
	int oom; /* a table lost rows: no report rather than a wrong one */
};

/* A change of size, signed ("+96.0 MiB"), and a percentage ("+19.0%") */
static void fmt_delta(char *buf, size_t cap, int64_t d)
{
	char b[24]; /* at most "16384 PiB"; with the sign it fits the callers' 32 */

	if (!d) {
		snprintf(buf, cap, "0 B");
		return;
	}
	an_fmt_bytes(b, sizeof(b), d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d);
	snprintf(buf, cap, "%c%s", d < 0 ? '-' : '+', b);
}

static void fmt_percent(char *buf, size_t cap, double p)
{
	double a = p < 0 ? -p : p;

	if (p == 0) {
		snprintf(buf, cap, "0%%");
		return;
	}
	snprintf(buf, cap, a >= 10 ? "%+.1f%%" : "%+.2f%%", p);
}

/* The limit in words: "more than 1% and more than 2 MiB". */
static void limit_words(char *buf, size_t cap, const struct gp_cmp_limit *l)
{
	char b[64];

	gp_cmp_fmt_limit(b, sizeof(b), l->bytes, l->decimal);
	if ((!l->has_percent || l->percent == 0) && (!l->has_bytes || l->bytes == 0))
		snprintf(buf, cap, "any increase");
	else if (l->has_percent && l->has_bytes)
		snprintf(buf, cap, "an increase of more than %g%% and more than %s", l->percent, b);
	else if (l->has_percent)
		snprintf(buf, cap, "an increase of more than %g%%", l->percent);
	else
		snprintf(buf, cap, "an increase of more than %s", b);
}

/* "504 MiB allocated at 0.042 s, step 2, backward, in <Net>.fc2" */
static void moment(char *buf, size_t cap, const struct out *o, const struct cmp_unit *u)
{
	char v[32], layer[CELL], step[32] = "", what_cell[64], phase[64];
	const char *what = u->dev->peak.what && strcmp(u->dev->peak.what, "device") == 0 ? "of device memory" :
			   gp_table_cell(what_cell, sizeof(what_cell), o->fmt, u->dev->peak.what, 0, 40);
	int has_phase = u->dev->peak.phase && strcmp(u->dev->peak.phase, "none") != 0;

	an_fmt_bytes(v, sizeof(v), u->dev->peak.bytes);
	if (u->dev->peak.step >= 0) {
		char st[32];

		snprintf(step, sizeof(step), ", %s",
			 gp_an_step_text(st, sizeof(st), u->dev->peak.step, u->dev->peak.step_when));
	}
	if (u->dev->peak.layer)
		gp_table_cell(layer, sizeof(layer), o->fmt, u->dev->peak.layer, 1, LAYER_CHARS);
	/* no phase ("none") is not said, as analyze's text does not */
	snprintf(buf, cap, "%s %s at %.3f s%s%s%s%s%s", v, what, u->dev->peak.t, step, has_phase ? ", " : "",
		 has_phase ? gp_table_cell(phase, sizeof(phase), o->fmt, u->dev->peak.phase, 0, 40) : "",
		 u->dev->peak.layer ? ", in " : "",
		 u->dev->peak.layer ? layer : "");
}

static void para(const struct out *o, const char *text)
{
	if (o->fmt == GP_TABLE_MD)
		fprintf(o->f, "%s\n\n", text);
	else
		fprintf(o->f, "  %s\n", text);
}

static void notes(const struct out *o, const struct cmp_notes *n, const char *indent)
{
	char cell[CELL];

	for (size_t i = 0; i < n->n; i++) {
		if (o->fmt == GP_TABLE_MD)
			fprintf(o->f, "> %s\n\n", gp_table_cell(cell, sizeof(cell), o->fmt, n->s[i], 0, 0));
		else
			fprintf(o->f, "%snote: %s\n", indent,
				gp_table_cell(cell, sizeof(cell), o->fmt, n->s[i], 0, 0));
	}
}

static void blank(const struct out *o)
{
	fputc('\n', o->f);
}

static void print_table(struct out *o, const struct gp_table *t, const char *indent)
{
	struct gp_table_style st = { indent, NULL, NULL };

	if (gp_table_print(t, o->fmt, o->f, &st))
		o->oom = 1;
	if (o->fmt == GP_TABLE_MD)
		blank(o);
}

/* ---- compare ---- */

static const char *verdict_words(const struct out *o, const struct cmp_pair *p, char *buf, size_t cap)
{
	char a[32];
	int md = o->fmt == GP_TABLE_MD;

	an_fmt_bytes(a, sizeof(a), p->allowed);
	switch (p->verdict) {
	case CMP_REGRESSION:
		snprintf(buf, cap, "%sover the limit (+%s allowed)", md ? "❌ " : "REGRESSION: ", a);
		break;
	case CMP_GREW:
		snprintf(buf, cap, "%swithin the limit (+%s allowed)", md ? "✅ " : "ok: ", a);
		break;
	case CMP_UNCHANGED:
		snprintf(buf, cap, "%sunchanged", md ? "✅ " : "ok: ");
		break;
	case CMP_SHRANK:
		snprintf(buf, cap, "%ssmaller", md ? "✅ " : "ok: ");
		break;
	case CMP_MISSING:
		snprintf(buf, cap, "%smissing in NEW", md ? "❌ " : "FAIL: ");
		break;
	default:
		snprintf(buf, cap, "only in NEW (not compared)");
		break;
	}
	return buf;
}

/* "cuda:1"; with the process when another pair is on the same device
 * index: "cuda:0 pid 5000->6000", "cuda:0 rank 3" */
static void pair_where(char *buf, size_t cap, const struct out *o, const struct cmp_pair *all, size_t n,
		       const struct cmp_pair *p)
{
	const struct cmp_unit *u = p->b ? p->b : p->n;
	size_t same = 0;

	for (size_t i = 0; i < n; i++)
		same += (all[i].b ? all[i].b : all[i].n)->dev->device == u->dev->device;
	if (same <= 1)
		snprintf(buf, cap, "cuda:%d", u->dev->device);
	else if (u->tr->rank >= 0)
		snprintf(buf, cap, "cuda:%d rank %lld", u->dev->device, (long long)u->tr->rank);
	else if (p->b && p->n)
		snprintf(buf, cap, "cuda:%d pid %lld%s%lld", u->dev->device, (long long)p->b->dev->pid,
			 o->fmt == GP_TABLE_MD ? "→" : "->", (long long)p->n->dev->pid);
	else
		snprintf(buf, cap, "cuda:%d pid %lld", u->dev->device, (long long)u->dev->pid);
}

static void headline(const struct out *o, const struct cmp_pair *p, size_t n, int over, const char *what,
		     int allow_oom)
{
	size_t reg = 0, miss = 0, grew = 0, shrank = 0, both = 0, oom = 0;
	char msg[256];

	for (size_t i = 0; i < n; i++) {
		oom += p[i].n && p[i].n->oom_fatal;
		reg += p[i].verdict == CMP_REGRESSION;
		miss += p[i].verdict == CMP_MISSING;
		grew += p[i].verdict == CMP_GREW;
		shrank += p[i].verdict == CMP_SHRANK;
		both += p[i].b && p[i].n;
	}
	if (reg && miss)
		snprintf(msg, sizeof(msg),
			 "%s grew beyond the limit on %zu of %zu GPUs, and %zu %s missing in NEW", what, reg,
			 both, miss, miss == 1 ? "is" : "are");
	else if (reg)
		snprintf(msg, sizeof(msg), "%s grew beyond the limit on %zu of %zu GPU%s", what, reg, both,
			 both == 1 ? "" : "s");
	else if (miss)
		snprintf(msg, sizeof(msg), "%zu GPU%s of BASE %s missing in NEW", miss, miss == 1 ? "" : "s",
			 miss == 1 ? "is" : "are");
	else if (grew)
		snprintf(msg, sizeof(msg), "%s grew within the limit", what);
	else if (shrank)
		snprintf(msg, sizeof(msg), "%s shrank: consider making NEW the baseline", what);
	else
		snprintf(msg, sizeof(msg), "%s unchanged", what);
	if (oom && !allow_oom)
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), "; NEW ran out of memory on %zu GPU%s",
			 oom, oom == 1 ? "" : "s");
	if (o->fmt == GP_TABLE_MD)
		fprintf(o->f, "<!-- gpuprof-compare -->\n### %s GPU memory: %s\n\n", over ? "❌" : "✅", msg);
	else
		fprintf(o->f, "%s: %s\n", over ? "REGRESSION" : "ok", msg);
}

/* A line for each process of NEW whose program did not get past an
 * out-of-memory error, under the headline */
static void oom_lines(const struct out *o, const struct cmp_pair *p, size_t n, int allow_oom)
{
	char line[1024];
	int any = 0;

	for (size_t i = 0; i < n; i++) {
		if (!p[i].n || !p[i].n->oom_fatal)
			continue;
		cmp_oom_line(line, sizeof(line), p[i].n, o->fmt == GP_TABLE_MD, allow_oom);
		if (o->fmt == GP_TABLE_MD)
			fprintf(o->f, "%s %s\n\n", allow_oom ? "⚠️" : "❌", line);
		else
			fprintf(o->f, "%s\n", line);
		any = 1;
	}
	if (any && o->fmt == GP_TABLE_TEXT)
		blank(o);
}

static void inputs_list(const struct out *o, const struct cmp_side *s, char *buf, size_t cap)
{
	char cell[CELL];
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < s->ninputs && n < cap; i++) {
		if (i == 3) {
			n += (size_t)snprintf(buf + n, cap - n, " and %zu more", s->ninputs - 3);
			break;
		}
		n += (size_t)snprintf(
			buf + n, cap - n, "%s%s", i ? ", " : "",
			gp_table_cell(cell, sizeof(cell), o->fmt, s->inputs[i], o->fmt == GP_TABLE_MD, 0));
	}
}

/* The command, when one process on each side ran the same one. */
static const char *one_command(const struct cmp_side *b, const struct cmp_side *n)
{
	if (b->nprocs != 1 || n->nprocs != 1 || !b->n || !n->n || !b->u[0].tr->cmdline || !n->u[0].tr->cmdline ||
	    strcmp(b->u[0].tr->cmdline, n->u[0].tr->cmdline) != 0)
		return NULL;
	return b->u[0].tr->cmdline;
}

static void summary_table(struct out *o, const struct cmp_pair *p, size_t n)
{
	struct gp_table t;

	gp_table_init(&t, 6, "lrrrrl");
	gp_table_row(&t, "GPU", "BASE", "NEW", "change", "%", "verdict");
	for (size_t i = 0; i < n; i++) {
		char where[96], b[32] = "-", nw[32] = "-", d[32] = "-", pc[32] = "-", v[128];

		pair_where(where, sizeof(where), o, p, n, &p[i]);
		if (p[i].b)
			an_fmt_bytes(b, sizeof(b), p[i].vb);
		if (p[i].n)
			an_fmt_bytes(nw, sizeof(nw), p[i].vn);
		if (p[i].b && p[i].n) {
			fmt_delta(d, sizeof(d), p[i].delta);
			if (p[i].has_percent)
				fmt_percent(pc, sizeof(pc), p[i].percent);
		}
		gp_table_row(&t, where, b, nw, d, pc, verdict_words(o, &p[i], v, sizeof(v)));
	}
	print_table(o, &t, "  ");
	gp_table_free(&t);
}

static void change_table(struct out *o, const char *title, const struct cmp_change *c, size_t n,
			 int code)
{
	struct gp_table t;
	int64_t rest = 0;
	size_t shown = n < (size_t)o->top ? n : (size_t)o->top;

	if (!n)
		return;
	gp_table_init(&t, 4, "lrrr");
	gp_table_row(&t, title, "BASE", "NEW", "change");
	for (size_t i = 0; i < n; i++) {
		char name[CELL], b[32] = "-", nw[32] = "-", d[32];

		if (i >= shown) {
			rest += c[i].delta;
			continue;
		}
		if (c[i].base)
			an_fmt_bytes(b, sizeof(b), c[i].base);
		if (c[i].new_)
			an_fmt_bytes(nw, sizeof(nw), c[i].new_);
		fmt_delta(d, sizeof(d), c[i].delta);
		gp_table_row(&t,
			     gp_table_cell(name, sizeof(name), o->fmt, c[i].name, code, code ? LAYER_CHARS : 0),
			     b, nw, d);
	}
	if (shown < n) {
		char more[64], d[32];

		snprintf(more, sizeof(more), o->fmt == GP_TABLE_MD ? "*%zu more*" : "(%zu more)", n - shown);
		fmt_delta(d, sizeof(d), rest);
		gp_table_row(&t, more, "", "", d);
	}
	print_table(o, &t, "    ");
	gp_table_free(&t);
}

/* "<Net>.fc1, activations, forward" */
static void alloc_name(char *buf, size_t cap, const struct out *o, const struct gp_an_alloc *a,
		       const char *mode)
{
	/* as analyze names the rest in its layer tree */
	const char *none = strcmp(mode, "cuda") == 0 ? "(no NVTX range)" : "(no module)";
	char layer[CELL], rest[512] = "", cell[CELL];
	size_t n = 0;
	const char *parts[4];
	size_t np = 0;
	char other[256];

	gp_table_cell(layer, sizeof(layer), o->fmt, a->layer ? a->layer : none, 1, LAYER_CHARS);
	if (a->category && strcmp(a->category, "other") == 0 && (a->what || a->api)) {
		snprintf(other, sizeof(other), "other: %s", a->what ? a->what : a->api);
		parts[np++] = other;
	} else if (a->category) {
		parts[np++] = a->category;
	} else if (a->api) {
		parts[np++] = a->api;
	}
	if (a->phase)
		parts[np++] = gp_an_phase_label(a->phase);
	if (a->op)
		parts[np++] = a->op;
	for (size_t i = 0; i < np && n < sizeof(rest); i++)
		n += (size_t)snprintf(rest + n, sizeof(rest) - n, ", %s",
				      gp_table_cell(cell, sizeof(cell), o->fmt, parts[i], 0, 60));
	snprintf(buf, cap, "%s%s", layer, rest);
}

/* "96.0 MiB", "2 × 64.0 MiB" (each of 2), "<= 48.0 MiB" (under the cut) */
static void alloc_value(char *buf, size_t cap, const struct out *o, int known, uint64_t v, uint64_t below,
			size_t count)
{
	char b[32], times[32] = "";

	if (known && !v) {
		snprintf(buf, cap, "-");
		return;
	}
	if (count > 1)
		snprintf(times, sizeof(times), "%zu %s ", count, o->fmt == GP_TABLE_MD ? "×" : "x");
	an_fmt_bytes(b, sizeof(b), known ? v : below);
	if (known)
		snprintf(buf, cap, "%s%s", times, b);
	else
		snprintf(buf, cap, "%s%s %s", times, o->fmt == GP_TABLE_MD ? "≤" : "<=", b);
}

static void alloc_table(struct out *o, const struct cmp_achange *c, size_t n, const char *mode)
{
	struct gp_table t;
	size_t shown = n < (size_t)o->top ? n : (size_t)o->top;

	if (!n)
		return;
	gp_table_init(&t, 4, "lrrr");
	gp_table_row(&t, "largest allocations", "BASE", "NEW", "change");
	for (size_t i = 0; i < shown; i++) {
		char name[2 * CELL], b[64], nw[64], d[48], dd[32];

		alloc_name(name, sizeof(name), o, c[i].a, mode);
		alloc_value(b, sizeof(b), o, c[i].base_known, c[i].base, c[i].base_below, c[i].count);
		alloc_value(nw, sizeof(nw), o, c[i].new_known, c[i].new_, c[i].new_below, c[i].count);
		fmt_delta(dd, sizeof(dd), c[i].delta);
		if (c[i].base_known && c[i].new_known)
			snprintf(d, sizeof(d), "%s", dd);
		else
			snprintf(d, sizeof(d), "%s %s",
				 c[i].delta > 0 ? (o->fmt == GP_TABLE_MD ? "≥" : ">=")
						: (o->fmt == GP_TABLE_MD ? "≤" : "<="),
				 dd);
		gp_table_row(&t, name, b, nw, d);
	}
	if (shown < n) {
		char more[64];

		snprintf(more, sizeof(more), o->fmt == GP_TABLE_MD ? "*%zu more*" : "(%zu more)", n - shown);
		gp_table_row(&t, more, "", "", "");
	}
	print_table(o, &t, "    ");
	gp_table_free(&t);
}

/* "BASE: 504 MiB allocated at ..., in <Net>.fc2; 512 MiB live then" */
static void peak_line(const struct out *o, const char *label, const struct cmp_unit *u)
{
	char m[2 * CELL], live[32];

	moment(m, sizeof(m), o, u);
	an_fmt_bytes(live, sizeof(live), u->dev->peak.set.live_bytes);
	if (o->fmt == GP_TABLE_MD)
		fprintf(o->f, "- %s: %s; %s live then\n", label, m, live);
	else
		fprintf(o->f, "  %-4s  %s; %s live then\n", label, m, live);
}

static void pair_details(struct out *o, const struct cmp_pair *all, size_t nall, const struct cmp_pair *p,
			 int procs)
{
	char where[96], cmd[CELL];
	const struct cmp_unit *u = p->b ? p->b : p->n;
	int changed = p->ncats || p->nlayers || p->nallocs;

	if (!p->notes.n && !(p->has_breakdown && changed))
		return;
	pair_where(where, sizeof(where), o, all, nall, p);
	if (!changed && p->verdict == CMP_UNCHANGED) {
		/* nothing to show but what the notes say */
		for (size_t i = 0; o->fmt == GP_TABLE_TEXT && i < p->notes.n; i++)
			fprintf(o->f, "%s%s: note: %s\n", i ? "" : "\n", where,
				gp_table_cell(cmd, sizeof(cmd), o->fmt, p->notes.s[i], 0, 0));
		for (size_t i = 0; o->fmt == GP_TABLE_MD && i < p->notes.n; i++)
			fprintf(o->f, "> %s: %s\n\n", where,
				gp_table_cell(cmd, sizeof(cmd), o->fmt, p->notes.s[i], 0, 0));
		return;
	}
	if (o->fmt == GP_TABLE_MD) {
		fprintf(o->f, "<details%s><summary>%s: what changed at the peak</summary>\n\n",
			p->verdict == CMP_REGRESSION ? " open" : "", where);
		if (procs && u->tr->cmdline)
			fprintf(o->f, "Command: %s\n\n",
				gp_table_cell(cmd, sizeof(cmd), o->fmt, u->tr->cmdline, 1, 0));
	} else {
		fprintf(o->f, "\n%s", where);
		if (procs && u->tr->cmdline)
			fprintf(o->f, " (%s)", gp_table_cell(cmd, sizeof(cmd), o->fmt, u->tr->cmdline, 0, CMD_CHARS));
		fputs(": what changed at the peak\n", o->f);
	}
	if (p->has_breakdown) {
		/* the moment analyze calls the peak, whatever --metric is */
		peak_line(o, "BASE", p->b);
		peak_line(o, "NEW", p->n);
		if (o->fmt == GP_TABLE_MD)
			blank(o);
	}
	notes(o, &p->notes, "  ");
	if (p->has_breakdown && !changed)
		para(o, "nothing changed among what was alive at the peak");
	if (o->fmt == GP_TABLE_TEXT && changed)
		blank(o);
	change_table(o, "category", p->cats, p->ncats, 0);
	if (o->fmt == GP_TABLE_TEXT && p->ncats && (p->nlayers || p->nallocs))
		blank(o);
	change_table(o, "layer (own bytes)", p->layers, p->nlayers, 1);
	if (o->fmt == GP_TABLE_TEXT && p->nlayers && p->nallocs)
		blank(o);
	alloc_table(o, p->allocs, p->nallocs, gp_an_mode_names[p->n->dev->mode]);
	if (o->fmt == GP_TABLE_MD)
		fputs("</details>\n\n", o->f);
}

int cmp_render_compare(const struct gp_cmp_settings *s, const struct cmp_side *base,
		       const struct cmp_side *new_, const struct cmp_pair *p, size_t n, int over)
{
	struct out o = { s->out, s->format == GP_CMP_MARKDOWN ? GP_TABLE_MD : GP_TABLE_TEXT, s->top, 0 };
	const char *what = n ? p[0].what : "peak";
	const char *cmd = one_command(base, new_);
	int procs = base->nprocs > 1 || new_->nprocs > 1;
	char lim[128], ib[2 * CELL], in[2 * CELL], cell[CELL];

	for (size_t i = 1; i < n; i++)
		if (strcmp(p[i].what, what) != 0)
			what = "peak memory";
	headline(&o, p, n, over, what, s->allow_oom);
	oom_lines(&o, p, n, s->allow_oom);
	limit_words(lim, sizeof(lim), &s->limit);
	inputs_list(&o, base, ib, sizeof(ib));
	inputs_list(&o, new_, in, sizeof(in));
	if (cmd)
		gp_table_cell(cell, sizeof(cell), o.fmt, cmd, o.fmt == GP_TABLE_MD, CMD_CHARS);
	if (o.fmt == GP_TABLE_MD) {
		summary_table(&o, p, n);
		fprintf(o.f, "BASE: %s; NEW: %s%s%s. Fails: %s (`--max-increase`).\n\n", ib, in,
			cmd ? "; command " : "", cmd ? cell : "", lim);
	} else {
		fprintf(o.f, "  BASE     %s\n  NEW      %s\n", ib, in);
		if (cmd)
			fprintf(o.f, "  command  %s\n", cell);
		fprintf(o.f, "  fails    %s (--max-increase)\n\n", lim);
		summary_table(&o, p, n);
	}
	for (size_t i = 0; i < n; i++)
		pair_details(&o, p, n, &p[i], procs);
	if (base->notes.n || new_->notes.n) {
		if (o.fmt == GP_TABLE_TEXT)
			blank(&o);
		notes(&o, &base->notes, "");
		notes(&o, &new_->notes, "");
	}
	if (o.oom)
		return -ENOMEM;
	if (fflush(o.f) || ferror(o.f))
		return -EIO;
	return 0;
}

/* ---- check ---- */

static void check_line(char *buf, size_t cap, const struct out *o, const struct cmp_check *c,
		       const struct cmp_side *side)
{
	char where[96], v[32], l[64], d[32];

	cmp_unit_where(where, sizeof(where), c->u, side);
	an_fmt_bytes(v, sizeof(v), c->value);
	gp_cmp_fmt_limit(l, sizeof(l), c->limit, c->limit_decimal);
	if (c->over) {
		an_fmt_bytes(d, sizeof(d), c->value - c->limit);
		snprintf(buf, cap, "%s%s on %s was %s, limit %s (%s over)",
			 o->fmt == GP_TABLE_MD ? "" : "FAIL: ", c->what, where, v, l, d);
	} else {
		snprintf(buf, cap, "%s%s on %s was %s, limit %s (%.1f%% of it)",
			 o->fmt == GP_TABLE_MD ? "" : "ok: ", c->what, where, v, l,
			 c->limit ? 100.0 * (double)c->value / (double)c->limit : 0.0);
	}
}

static void check_details(struct out *o, const struct cmp_check *c, const struct cmp_side *side, int several)
{
	const struct cmp_unit *u = c->u;
	const struct cmp_row **rows = NULL;
	char where[96], line[4 * CELL], m[2 * CELL], live[32];
	struct gp_table t;
	size_t shown;
	uint64_t rest = 0;

	if (!u->dev->has_peak)
		return;
	cmp_unit_where(where, sizeof(where), u, side);
	if (o->fmt == GP_TABLE_MD)
		fprintf(o->f, "#### %s: the largest layers at the peak\n\n", where);
	else if (several)
		fprintf(o->f, "\n%s:\n", where);
	moment(m, sizeof(m), o, u);
	an_fmt_bytes(live, sizeof(live), u->dev->peak.set.live_bytes);
	snprintf(line, sizeof(line), "peak: %s; live then: %s in %llu allocations", m, live,
		 (unsigned long long)u->dev->peak.set.live_allocations);
	para(o, line);
	if (u->has_cats && u->ncats && !cmp_rows_sorted(u->cats, u->ncats, &rows)) {
		size_t n = (size_t)snprintf(line, sizeof(line), "categories: ");

		for (size_t i = 0; i < u->ncats && n < sizeof(line); i++) {
			char b[32], cell[CELL];

			an_fmt_bytes(b, sizeof(b), rows[i]->bytes);
			n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%s %s", i ? ", " : "",
					      gp_table_cell(cell, sizeof(cell), o->fmt, rows[i]->name, 0, 60), b);
		}
		para(o, line);
		free(rows);
		rows = NULL;
	}
	if (!u->nlayers || cmp_rows_sorted(u->layers, u->nlayers, &rows))
		return;
	if (o->fmt == GP_TABLE_TEXT)
		blank(o);
	gp_table_init(&t, 3, "lrr");
	gp_table_row(&t, "layer (own bytes)", "bytes", "share");
	shown = u->nlayers < (size_t)o->top ? u->nlayers : (size_t)o->top;
	for (size_t i = 0; i < u->nlayers; i++) {
		char name[CELL], b[32], sh[32];

		if (i >= shown) {
			rest += rows[i]->bytes;
			continue;
		}
		an_fmt_bytes(b, sizeof(b), rows[i]->bytes);
		snprintf(sh, sizeof(sh), "%.1f%%", u->dev->peak.set.live_bytes ? 100.0 * (double)rows[i]->bytes /
								   (double)u->dev->peak.set.live_bytes : 0.0);
		gp_table_row(&t, gp_table_cell(name, sizeof(name), o->fmt, rows[i]->name, 1, LAYER_CHARS), b, sh);
	}
	if (shown < u->nlayers) {
		char more[64], b[32], sh[32];

		snprintf(more, sizeof(more), o->fmt == GP_TABLE_MD ? "*%zu more*" : "(%zu more)",
			 u->nlayers - shown);
		an_fmt_bytes(b, sizeof(b), rest);
		snprintf(sh, sizeof(sh), "%.1f%%",
			 u->dev->peak.set.live_bytes ? 100.0 * (double)rest / (double)u->dev->peak.set.live_bytes : 0.0);
		gp_table_row(&t, more, b, sh);
	}
	print_table(o, &t, "  ");
	gp_table_free(&t);
	free(rows);
}

int cmp_render_check(const struct gp_cmp_settings *s, const struct cmp_side *side,
		     const struct cmp_check *c, size_t n, int over)
{
	struct out o = { s->out, s->format == GP_CMP_MARKDOWN ? GP_TABLE_MD : GP_TABLE_TEXT, s->top, 0 };
	char line[1024];
	size_t nover = 0, noom = 0;

	for (size_t i = 0; i < n; i++) {
		nover += c[i].over;
		noom += c[i].oom;
	}
	if (o.fmt == GP_TABLE_MD) {
		struct gp_table t;

		if (n == 1) {
			check_line(line, sizeof(line), &o, &c[0], side);
		} else {
			snprintf(line, sizeof(line), "%zu of %zu GPUs over the limit", nover, n);
		}
		if (noom && !s->allow_oom)
			snprintf(line + strlen(line), sizeof(line) - strlen(line), "; %zu ran out of memory", noom);
		fprintf(o.f, "<!-- gpuprof-check -->\n### %s GPU memory: %s\n\n", over ? "❌" : "✅", line);
		for (size_t i = 0; i < n; i++) {
			if (!c[i].oom)
				continue;
			cmp_oom_line(line, sizeof(line), c[i].u, 1, s->allow_oom);
			fprintf(o.f, "%s %s\n\n", s->allow_oom ? "⚠️" : "❌", line);
		}
		gp_table_init(&t, 4, "lrrl");
		gp_table_row(&t, "GPU", "peak", "limit", "verdict");
		for (size_t i = 0; i < n; i++) {
			char where[96], v[32], l[64], d[32], verdict[64];

			cmp_unit_where(where, sizeof(where), c[i].u, side);
			an_fmt_bytes(v, sizeof(v), c[i].value);
			gp_cmp_fmt_limit(l, sizeof(l), c[i].limit, c[i].limit_decimal);
			if (c[i].over) {
				an_fmt_bytes(d, sizeof(d), c[i].value - c[i].limit);
				snprintf(verdict, sizeof(verdict), "❌ %s over", d);
			} else {
				snprintf(verdict, sizeof(verdict), "✅ within");
			}
			gp_table_row(&t, where, v, l, verdict);
		}
		print_table(&o, &t, "");
		gp_table_free(&t);
	} else {
		for (size_t i = 0; i < n; i++) {
			check_line(line, sizeof(line), &o, &c[i], side);
			fprintf(o.f, "%s\n", line);
			if (c[i].oom) {
				cmp_oom_line(line, sizeof(line), c[i].u, 0, s->allow_oom);
				fprintf(o.f, "%s\n", line);
			}
		}
	}
	for (size_t i = 0; i < n; i++)
		check_details(&o, &c[i], side, n > 1);
	if (side->notes.n) {
		if (o.fmt == GP_TABLE_TEXT)
			blank(&o);
		notes(&o, &side->notes, "");
	}
	if (o.oom)
		return -ENOMEM;
	if (fflush(o.f) || ferror(o.f))
		return -EIO;
	return 0;
}
