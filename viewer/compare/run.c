/* gp_cmp_compare() and gp_cmp_check(): read the sides, match, judge,
 * report. The exit status is decided here and only here: 1 needs a verdict,
 * so anything that prevents one (bad input, no memory, a report that could
 * not be written) is 2, and a CI job never reads a broken run as a
 * regression or, worse, as a pass. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmp.h"
#include "viewer/render/term.h"

/* err is empty only when writing the report failed */
static int fail(const struct gp_cmp_settings *s, int rc, const char *err)
{
	int e = errno;

	if (err[0])
		fprintf(stderr, "%s: %s\n", s->prog, gp_term_str(err)); /* it may quote the input */
	else if (rc == -ENOMEM)
		fprintf(stderr, "%s: out of memory\n", s->prog);
	else
		fprintf(stderr, "%s: writing the report: %s\n", s->prog, strerror(e ? e : EIO));
	return GP_CMP_BAD;
}

int gp_cmp_compare(const struct gp_cmp_settings *s)
{
	struct cmp_side base = { .label = "BASE" }, new_ = { .label = "NEW" };
	struct cmp_pair *p = NULL;
	size_t n = 0;
	char err[CMP_ERR] = "";
	int rc, over = 0, status;

	if ((rc = cmp_side_load(&base, &s->base, s->device, s->progress, s->prog, err, sizeof(err))) ||
	    (rc = cmp_side_load(&new_, &s->new_, s->device, s->progress, s->prog, err, sizeof(err)))) {
		status = fail(s, rc, err);
		goto cleanup;
	}
	if (!base.n) {
		snprintf(err, sizeof(err), "BASE: no GPU memory activity%s: nothing to compare NEW with",
			 s->device >= 0 ? " on that device" : "");
		status = fail(s, -EINVAL, err);
		goto cleanup;
	}
	if ((rc = cmp_match(&base, &new_, &p, &n))) {
		status = fail(s, rc, "out of memory");
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++) {
		if ((rc = cmp_diff(&p[i], s, err, sizeof(err)))) {
			status = fail(s, rc, err);
			goto cleanup;
		}
		over |= p[i].verdict == CMP_REGRESSION || p[i].verdict == CMP_MISSING;
		/* NEW's program died of an out-of-memory error: its peak is
		 * that of a run that did not finish */
		over |= p[i].n && p[i].n->oom_fatal && !s->allow_oom;
	}
	err[0] = '\0';
	errno = 0;
	rc = s->format == GP_CMP_JSON ? cmp_json_compare(s, &base, &new_, p, n, over) :
					cmp_render_compare(s, &base, &new_, p, n, over);
	status = rc ? fail(s, rc, err) : over ? GP_CMP_OVER : GP_CMP_OK;
cleanup:
	cmp_pairs_free(p, n);
	cmp_side_free(&base);
	cmp_side_free(&new_);
	return status;
}

int gp_cmp_check(const struct gp_cmp_settings *s)
{
	struct cmp_side side = { .label = "TRACE" };
	struct cmp_check *c = NULL;
	char err[CMP_ERR] = "";
	int rc, over = 0, status;

	if ((rc = cmp_side_load(&side, &s->base, s->device, s->progress, s->prog, err, sizeof(err)))) {
		status = fail(s, rc, err);
		goto cleanup;
	}
	if (!side.n) {
		if (s->device >= 0)
			snprintf(err, sizeof(err), "no memory activity on cuda:%d in %s%s", s->device,
				 side.ninputs ? side.inputs[0] : "TRACE", side.ninputs > 1 ? "..." : "");
		else
			snprintf(err, sizeof(err), "no GPU memory activity in %s%s",
				 side.ninputs ? side.inputs[0] : "TRACE", side.ninputs > 1 ? "..." : "");
		status = fail(s, -EINVAL, err);
		goto cleanup;
	}
	c = calloc(side.n, sizeof(*c));
	if (!c) {
		status = fail(s, -ENOMEM, "out of memory");
		goto cleanup;
	}
	for (size_t i = 0; i < side.n; i++) {
		const struct cmp_unit *u = &side.u[i];

		c[i].u = u;
		if ((rc = cmp_metric_value(u, s->metric, "TRACE", &c[i].value, &c[i].what, err,
					   sizeof(err)))) {
			status = fail(s, rc, err);
			goto cleanup;
		}
		if (s->limit.has_percent) {
			if (!u->dev->capacity.known || !u->dev->capacity.v) {
				snprintf(err, sizeof(err),
					 "%s: the memory of GPU %d of process %lld is not known: "
					 "give --max-peak as a size",
					 u->input, u->dev->device, (long long)u->dev->pid);
				status = fail(s, -EINVAL, err);
				goto cleanup;
			}
			c[i].limit = (uint64_t)((double)u->dev->capacity.v * s->limit.percent / 100.0);
		} else {
			c[i].limit = s->limit.bytes;
			c[i].limit_decimal = s->limit.decimal;
		}
		c[i].over = c[i].value > c[i].limit;
		c[i].oom = u->oom_fatal != 0;
		over |= c[i].over || (c[i].oom && !s->allow_oom);
	}
	err[0] = '\0';
	errno = 0;
	rc = s->format == GP_CMP_JSON ? cmp_json_check(s, &side, c, side.n, over) :
					cmp_render_check(s, &side, c, side.n, over);
	status = rc ? fail(s, rc, err) : over ? GP_CMP_OVER : GP_CMP_OK;
cleanup:
	free(c);
	cmp_side_free(&side);
	return status;
}
