/* gpuprof report: the run's data gathered, then written as the page
 * (report.h). The data is one JSON object (schema GP_REPORT_SCHEMA):
 *
 *   schema, generator, inputs   what made it, from what
 *   run      the run's gpuprof.analyze/1 document; from traces, each
 *            device with its timeline (memory over time)
 *   base     the same for --base, or null
 *   compare  gpuprof.compare/1 of base and run, as compare decides it
 *            with its default tolerance, or null
 *
 * A summary is taken as it is (checked to be strict JSON of that schema);
 * the page copes with what it lacks (a summary has no timeline). */
#include "report.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze.h"
#include "compare/compare.h"
#include "exporters/out_file.h"
#include "result.h"

static void print_note(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "gpuprof report: %s\n", line);
}

/* One side's document: analyzed from its traces, or its summary read.
 * *doc is the caller's. */
static int load_side(const struct gp_report_settings *s, const char *const *paths, size_t n,
		     struct json_object **doc, char *err, size_t cap)
{
	struct gp_an_input *in = NULL;
	struct gp_an_result *res = NULL;
	int summaries = 0, rc;

	*doc = NULL;
	for (size_t i = 0; i < n; i++) {
		int k = gp_cmp_file_is_summary(paths[i], err, cap);

		if (k < 0)
			return GP_AN_BAD_INPUT;
		summaries += k;
	}
	if (summaries) {
		if (n > 1) {
			snprintf(err, cap, "a summary stands for its whole run: give it alone, "
					   "or the run's traces");
			return GP_AN_BAD_INPUT;
		}
		rc = gp_cmp_read_summary(paths[0], doc, err, cap);
		return rc == -ENOMEM ? GP_AN_FAIL : rc ? GP_AN_BAD_INPUT : GP_AN_OK;
	}
	if (!(in = calloc(n, sizeof(*in)))) {
		snprintf(err, cap, "out of memory");
		return GP_AN_FAIL;
	}
	for (size_t i = 0; i < n; i++)
		in[i].path = paths[i];
	struct gp_an_settings as = {
		.inputs = in, .n_inputs = n, .top = s->top, .device = -1, .pid = -1,
		.progress = s->progress, .timeline = 1,
	};
	rc = gp_an_analyze(&as, &res, err, cap, print_note, NULL);
	free(in);
	if (rc != GP_AN_OK)
		return rc;
	*doc = gp_an_json_doc(res);
	gp_an_result_free(res);
	if (!*doc) {
		snprintf(err, cap, "out of memory");
		return GP_AN_FAIL;
	}
	return GP_AN_OK;
}

/* compare's verdict on base and run, its JSON report handed over as a
 * document (*doc the caller's). compare says what is wrong with an input
 * on stderr itself. */
static int compare_sides(const struct gp_report_settings *s, struct json_object **doc, char *err,
			 size_t cap)
{
	int status;

	*doc = NULL;
	struct gp_cmp_settings cs = {
		.prog = "gpuprof report",
		.base = { s->base, s->nbase },
		.new_ = { s->run, s->nrun },
		.metric = GP_CMP_PEAK,
		.format = GP_CMP_JSON,
		.device = -1,
		.top = s->top,
		.progress = s->progress,
		.out = stdout, /* not written: the document comes to *doc */
		.json = doc,
	};
	gp_cmp_default_limit(&cs.limit);
	status = gp_cmp_compare(&cs);
	if (status != GP_CMP_OK && status != GP_CMP_OVER) {
		json_object_put(*doc);
		*doc = NULL;
		snprintf(err, cap, "comparing the runs failed (said above)");
		return GP_AN_BAD_INPUT;
	}
	if (!*doc) {
		snprintf(err, cap, "out of memory");
		return GP_AN_FAIL;
	}
	return GP_AN_OK;
}

static struct json_object *paths_json(const char *const *v, size_t n)
{
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; a && i < n; i++)
		json_object_array_add(a, json_object_new_string(v[i]));
	return a;
}

/* The page into the output's temporary file, renamed over the output when
 * whole (out_file.h): an old page stays until the new one is complete. */
static int write_page(struct gp_out_file *o, const char *data, char *err, size_t cap)
{
	int fd = gp_out_take_fd(o);
	FILE *f = fdopen(fd, "w");
	int rc;

	if (!f) {
		close(fd);
		snprintf(err, cap, "%s: %s", o->path, strerror(errno));
		return GP_AN_FAIL;
	}
	rc = gp_report_page(f, data, strlen(data));
	if (fclose(f) != 0 && !rc)
		rc = -EIO;
	if (rc) {
		snprintf(err, cap, "%s: %s", o->path,
			 rc == -EINVAL ? "an embedded asset could end its element (a build problem)"
				       : strerror(-rc));
		return GP_AN_FAIL;
	}
	return gp_out_commit(o, err, cap) ? GP_AN_FAIL : GP_AN_OK;
}

/* The page may not replace what it is made from, nor an existing file
 * unless --force: refused before any work. */
static int open_output(const struct gp_report_settings *s, struct gp_out_file *o, char *err,
		       size_t cap)
{
	int rc;

	if (gp_out_is_input(s->out, s->run, s->nrun, err, cap) ||
	    gp_out_is_input(s->out, s->base, s->nbase, err, cap))
		return GP_AN_BAD_INPUT;
	rc = gp_out_open(o, s->out, s->force, 0666, err, cap);
	if (rc == -EEXIST || rc == -EISDIR)
		return GP_AN_BAD_INPUT;
	return rc ? GP_AN_FAIL : GP_AN_OK;
}

int gp_report_write(const struct gp_report_settings *s, char *err, size_t errcap)
{
	struct json_object *data = NULL, *run = NULL, *base = NULL, *cmp = NULL;
	struct gp_out_file out = { .fd = -1 };
	int rc;

	err[0] = '\0';
	if ((rc = open_output(s, &out, err, errcap)))
		return rc;
	if ((rc = load_side(s, s->run, s->nrun, &run, err, errcap)))
		goto cleanup;
	if (s->nbase && ((rc = load_side(s, s->base, s->nbase, &base, err, errcap)) ||
			 (rc = compare_sides(s, &cmp, err, errcap))))
		goto cleanup;
	data = json_object_new_object();
	if (!data) {
		rc = GP_AN_FAIL;
		snprintf(err, errcap, "out of memory");
		goto cleanup;
	}
	json_object_object_add(data, "schema", json_object_new_string(GP_REPORT_SCHEMA));
	json_object_object_add(data, "generator", json_object_new_string("gpuprof " GPUPROF_VERSION));
	json_object_object_add(data, "inputs", paths_json(s->run, s->nrun));
	json_object_object_add(data, "base_inputs", s->nbase ? paths_json(s->base, s->nbase) : NULL);
	json_object_object_add(data, "run", run);
	json_object_object_add(data, "base", base);
	json_object_object_add(data, "compare", cmp);
	run = base = cmp = NULL; /* data holds them */
	const char *text = json_object_to_json_string_ext(data, JSON_C_TO_STRING_PLAIN |
								   JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!text) {
		rc = GP_AN_FAIL;
		snprintf(err, errcap, "out of memory");
		goto cleanup;
	}
	rc = write_page(&out, text, err, errcap);
cleanup:
	gp_out_abandon(&out);
	json_object_put(data);
	json_object_put(run);
	json_object_put(base);
	json_object_put(cmp);
	return rc;
}
