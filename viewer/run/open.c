/* Opening a run directory (run.h): its manifests, its traces, checked. */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exporters/in_file.h"
#include "exporters/trace_names.h"
#include "manifest.h"
#include "run.h"

int gp_run_is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n > t && strcmp(s + n - t, tail) == 0;
}

/* Directory filters for gp_run_list(); ctx unused. */
static int is_manifest(const char *name, const void *ctx)
{
	(void)ctx;
	return strncmp(name, GP_RUN_MANIFEST_PREFIX, strlen(GP_RUN_MANIFEST_PREFIX)) == 0 &&
	       ends_with(name, GP_RUN_MANIFEST_SUFFIX);
}

int gp_run_is_trace_name(const char *name, const void *ctx)
{
	(void)ctx;
	return ends_with(name, GP_TRACE_SUFFIX) &&
	       (strncmp(name, "rank", 4) == 0 || strncmp(name, "proc.", 5) == 0) && !gp_is_dump_trace_name(name);
}

static int is_trace_file(const char *name, const void *ctx)
{
	(void)ctx;
	return ends_with(name, GP_TRACE_SUFFIX);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int gp_run_list(const char *dir, int (*keep)(const char *name, const void *ctx), const void *ctx,
		char ***out, size_t *nout, char *err, size_t cap)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = NULL;
	size_t n = 0, c = 0;
	int rc = 0;

	*out = NULL;
	*nout = 0;
	if (!d) {
		rc = -errno;
		snprintf(err, cap, "%s: %s", dir, strerror(-rc));
		return rc;
	}
	while ((errno = 0, e = readdir(d))) {
		if (e->d_name[0] == '.' || !keep(e->d_name, ctx))
			continue;
		if (n == c) {
			char **p = realloc(v, (c = c ? c * 2 : 16) * sizeof(*p));

			if (!p)
				goto nomem;
			v = p;
		}
		if (!(v[n] = strdup(e->d_name)))
			goto nomem;
		n++;
	}
	if (errno) {
		rc = -errno;
		snprintf(err, cap, "%s: %s", dir, strerror(-rc));
		goto fail;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), name_cmp);
	*out = v;
	*nout = n;
	return 0;
nomem:
	rc = -ENOMEM;
	snprintf(err, cap, "out of memory");
fail:
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	closedir(d);
	return rc;
}

static int list(const char *dir, int (*keep)(const char *, const void *), char ***out, size_t *nout,
		char *err, size_t cap)
{
	return gp_run_list(dir, keep, NULL, out, nout, err, cap);
}

static void free_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static char *join(const char *dir, const char *name)
{
	char *p;

	return asprintf(&p, "%s%s%s", dir, ends_with(dir, "/") ? "" : "/", name) < 0 ? NULL : p;
}

/* The manifest dir/name, read whole and parsed. */
static int read_manifest(const char *dir, const char *name, struct mf *m, char *err, size_t cap)
{
	char *path = join(dir, name), *buf = NULL;
	size_t len = 0;
	struct stat st;
	FILE *f = NULL;
	int fd, rc;

	if (!path)
		return -ENOMEM;
	/* a regular file only: a FIFO would block the reader */
	fd = gp_in_open(path);
	if (fd < 0 || !(f = fdopen(fd, "rb")) || fstat(fileno(f), &st) != 0) {
		rc = fd < 0 ? fd : -errno;
		if (fd >= 0 && !f)
			close(fd);
		snprintf(err, cap, "%s: %s", path, gp_in_strerror(rc));
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > GP_RUN_MANIFEST_MAX) {
		rc = -EINVAL;
		snprintf(err, cap, "%s: not a gpuprof manifest (%s)", path,
			 S_ISREG(st.st_mode) ? "too large" : "not a regular file");
		goto cleanup;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		rc = -ENOMEM;
		goto cleanup;
	}
	len = fread(buf, 1, (size_t)st.st_size, f);
	if (ferror(f)) {
		rc = -EIO;
		snprintf(err, cap, "%s: read error", path);
		goto cleanup;
	}
	buf[len] = '\0';
	rc = mf_parse(path, buf, len, m, err, cap);
	if (!rc && !(m->launch.manifest = strdup(name))) {
		mf_free(m);
		rc = -ENOMEM;
	}
cleanup:
	if (f)
		fclose(f);
	free(buf);
	free(path);
	return rc;
}

static int note(struct gp_run *run, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int note(struct gp_run *run, const char *fmt, ...)
{
	char **grown = realloc(run->notes, (run->nnotes + 1) * sizeof(*grown));
	va_list ap;
	int n;

	if (!grown)
		return -ENOMEM;
	run->notes = grown;
	va_start(ap, fmt);
	n = vasprintf(&run->notes[run->nnotes], fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	run->nnotes++;
	return 0;
}

static struct gp_run_trace *find_trace(struct gp_run *run, const char *file)
{
	for (size_t i = 0; i < run->ntraces; i++)
		if (strcmp(run->traces[i].file, file) == 0)
			return &run->traces[i];
	return NULL;
}

/* Adds dir/file with its meta: 0; 1 when it is no readable trace (err
 * says why); -errno. */
static int add_trace(struct gp_run *run, const char *file, int listed, int complete, char *err,
		     size_t cap)
{
	struct gp_run_trace *t, *grown;
	struct stat st;
	char *path;
	int rc;

	if (run->ntraces >= GP_RUN_MAX_TRACES) {
		snprintf(err, cap, "%s: more than %d traces", run->dir, GP_RUN_MAX_TRACES);
		return -EINVAL;
	}
	path = join(run->dir, file);
	if (!path)
		return -ENOMEM;
	/* a FIFO, socket or device here is refused, not passed over: reading
	 * it would block or never end, and it is no trace a process wrote */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		snprintf(err, cap, "%s: %s", path, gp_in_strerror(-EINVAL));
		free(path);
		return -EINVAL;
	}
	grown = realloc(run->traces, (run->ntraces + 1) * sizeof(*grown));
	if (!grown) {
		free(path);
		return -ENOMEM;
	}
	run->traces = grown;
	t = &grown[run->ntraces];
	memset(t, 0, sizeof(*t));
	t->path = path;
	t->listed = listed;
	t->complete = complete;
	rc = gp_tr_read_meta(path, &t->meta, err, cap);
	if (rc == 0 && !(t->file = strdup(file)))
		rc = -ENOMEM;
	if (rc) {
		free(t->path);
		return rc == -EINVAL || rc == -ENOENT ? 1 : rc;
	}
	if (stat(path, &st) == 0)
		t->bytes = (uint64_t)st.st_size;
	run->ntraces++;
	return 0;
}

int gp_run_meta_order(const struct gp_tr_meta *a, const struct gp_tr_meta *b)
{
	int c;

	if ((a->rank < 0) != (b->rank < 0))
		return a->rank < 0 ? 1 : -1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if ((c = strcmp(a->host, b->host)))
		return c;
	return (a->pid > b->pid) - (a->pid < b->pid);
}

static int by_rank(const void *a, const void *b)
{
	return gp_run_meta_order(&((const struct gp_run_trace *)a)->meta,
				 &((const struct gp_run_trace *)b)->meta);
}

/* The ranks of world_size that left no trace, in a note. The traces are
 * in rank order (by_rank): the cost is the traces', never world_size's,
 * which is only what they claim. */
static int note_missing_ranks(struct gp_run *run)
{
	char list[256] = "";
	size_t len = 0, shown = 0, distinct = 0;
	uint64_t missing;
	int64_t w = run->world_size;

	if (w <= 0)
		return 0;
	for (size_t i = 0; i < run->ntraces; i++) {
		int64_t r = run->traces[i].meta.rank;

		distinct += r >= 0 && r < w && (i == 0 || r != run->traces[i - 1].meta.rank);
	}
	missing = (uint64_t)w - distinct;
	if (!missing)
		return 0;
	/* the first few: each step names one or passes a rank that is there */
	for (int64_t r = 0, i = 0; r < w && shown < 8; r++) {
		while ((size_t)i < run->ntraces && run->traces[i].meta.rank >= 0 &&
		       run->traces[i].meta.rank < r)
			i++;
		if ((size_t)i < run->ntraces && run->traces[i].meta.rank == r)
			continue;
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%lld", shown ? ", " : "",
					(long long)r);
		shown++;
	}
	return note(run, "%llu of the %lld ranks left no trace here (rank%s %s%s): they made no "
		    "CUDA call, or ran where no launcher wrote into this directory",
		    (unsigned long long)missing, (long long)w, missing > 1 ? "s" : "", list,
		    missing > shown ? ", ..." : "");
}

static int from_manifests(struct gp_run *run, char **names, size_t n, char *err, size_t cap)
{
	int rc = 0;

	run->launches = calloc(n, sizeof(*run->launches));
	if (!run->launches)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct mf m;

		rc = read_manifest(run->dir, names[i], &m, err, cap);
		if (rc)
			return rc;
		if (run->job && strcmp(run->job, m.launch.job) != 0) {
			snprintf(err, cap, "%s holds the manifests of two runs (%s: job %s; %s: job "
				 "%s): give each run a directory of its own", run->dir,
				 run->launches[0].manifest, run->job, names[i], m.launch.job);
			mf_free(&m);
			return -EINVAL;
		}
		if (!run->job && !(run->job = strdup(m.launch.job))) {
			mf_free(&m);
			return -ENOMEM;
		}
		for (size_t k = 0; k < m.n && rc >= 0; k++) {
			struct gp_run_trace *t;

			if (find_trace(run, m.t[k].file)) {
				snprintf(err, cap, "%s/%s: lists %s, which another manifest lists too",
					 run->dir, names[i], m.t[k].file);
				rc = -EINVAL;
				break;
			}
			rc = add_trace(run, m.t[k].file, 1, m.t[k].complete, err, cap);
			if (rc == 1) {
				rc = note(run, "%s, listed by %s, cannot be read: %s", m.t[k].file,
					  names[i], err);
				continue;
			}
			if (rc)
				break;
			t = &run->traces[run->ntraces - 1];
			if (t->meta.pid != m.t[k].pid || t->meta.rank != m.t[k].rank) {
				snprintf(err, cap, "%s: is not the trace %s lists (pid %lld rank %lld, "
					 "not pid %lld rank %lld)", t->path, names[i],
					 (long long)t->meta.pid, (long long)t->meta.rank,
					 (long long)m.t[k].pid, (long long)m.t[k].rank);
				rc = -EINVAL;
			}
		}
		/* the launch moves into run: its strings with it */
		run->launches[run->nlaunches++] = m.launch;
		memset(&m.launch, 0, sizeof(m.launch));
		mf_free(&m);
		if (rc)
			return rc;
	}
	return 0;
}

int gp_run_open(const char *dir, struct gp_run **out, char *err, size_t cap)
{
	struct gp_run *run = calloc(1, sizeof(*run));
	char **manifests = NULL, **traces = NULL;
	size_t nm = 0, nt = 0, unlisted = 0;
	int rc = -ENOMEM;

	*out = NULL;
	err[0] = '\0';
	if (!run || !(run->dir = strdup(dir)))
		goto cleanup;
	run->world_size = -1;
	rc = list(dir, is_manifest, &manifests, &nm, err, cap);
	if (!rc)
		rc = list(dir, gp_run_is_trace_name, &traces, &nt, err, cap);
	if (rc)
		goto cleanup;
	if (nm) {
		rc = from_manifests(run, manifests, nm, err, cap);
		if (rc)
			goto cleanup;
		const char *first_unlisted = NULL;

		for (size_t i = 0; i < nt; i++)
			if (!find_trace(run, traces[i]) && !unlisted++)
				first_unlisted = traces[i];
		if (unlisted && (rc = note(run, "%zu trace%s in %s no manifest lists (%s%s): left out; "
					   "a launcher that is still running, or another run's",
					   unlisted, unlisted > 1 ? "s" : "", dir, first_unlisted,
					   unlisted > 1 ? ", ..." : "")))
			goto cleanup;
	} else {
		if (!nt) {
			/* not a run directory: every trace in it */
			free_names(traces, nt);
			rc = list(dir, is_trace_file, &traces, &nt, err, cap);
			if (rc)
				goto cleanup;
		}
		for (size_t i = 0; i < nt; i++) {
			rc = add_trace(run, traces[i], 0, -1, err, cap);
			if (rc == 1)
				rc = note(run, "%s/%s is no gpuprof trace: left out", dir, traces[i]);
			if (rc)
				goto cleanup;
		}
		if (run->ntraces && (rc = note(run, "%s has no manifest (its launcher did not finish, or "
					       "the traces were put there by hand): reading every "
					       "trace in it", dir)))
			goto cleanup;
	}
	if (!run->ntraces) {
		snprintf(err, cap, "%s: no gpuprof traces in it%s", dir,
			 nm ? " (its manifests list none that can be read)" : "");
		rc = -ENOENT;
		goto cleanup;
	}
	qsort(run->traces, run->ntraces, sizeof(*run->traces), by_rank);
	for (size_t i = 0; i < run->ntraces; i++)
		if (run->traces[i].meta.world_size > run->world_size)
			run->world_size = run->traces[i].meta.world_size;
	rc = note_missing_ranks(run);
cleanup:
	if (rc == -ENOMEM)
		snprintf(err, cap, "out of memory");
	free_names(manifests, nm);
	free_names(traces, nt);
	if (rc) {
		gp_run_free(run);
		return rc;
	}
	*out = run;
	return 0;
}

void gp_run_free(struct gp_run *run)
{
	if (!run)
		return;
	for (size_t i = 0; i < run->nlaunches; i++) {
		struct mf m = { .launch = run->launches[i] };

		mf_free(&m);
	}
	free(run->launches);
	for (size_t i = 0; i < run->ntraces; i++) {
		free(run->traces[i].path);
		free(run->traces[i].file);
	}
	free(run->traces);
	for (size_t i = 0; i < run->nnotes; i++)
		free(run->notes[i]);
	free(run->notes);
	free(run->job);
	free(run->dir);
	free(run);
}

int gp_run_dir_jobs(const char *dir, const char *job, int *other, int *traces, char *err,
		    size_t cap)
{
	char **names = NULL;
	size_t n = 0;
	int rc;

	*other = *traces = 0;
	rc = list(dir, is_manifest, &names, &n, err, cap);
	for (size_t i = 0; !rc && i < n; i++) {
		struct mf m;

		/* one that does not read is not this job's */
		if (read_manifest(dir, names[i], &m, err, cap)) {
			*other = 1;
			continue;
		}
		*other |= strcmp(m.launch.job, job) != 0;
		mf_free(&m);
	}
	free_names(names, n);
	if (rc)
		return rc;
	rc = list(dir, gp_run_is_trace_name, &names, &n, err, cap);
	*traces = (int)(n > 1000000 ? 1000000 : n);
	free_names(names, n);
	err[0] = '\0';
	return rc;
}

static int remove_in(const char *dir, const char *name, char *err, size_t cap)
{
	char *p = join(dir, name);
	int rc = 0;

	if (!p)
		return -ENOMEM;
	if (unlink(p) != 0 && errno != ENOENT) {
		rc = -errno;
		snprintf(err, cap, "cannot remove %s: %s", p, strerror(-rc));
	}
	free(p);
	return rc;
}

int gp_run_clear(const char *dir, const char *keep_job, int unlisted, char *err, size_t cap)
{
	char **names = NULL;
	size_t n = 0;
	int rc;

	rc = list(dir, is_manifest, &names, &n, err, cap);
	for (size_t i = 0; !rc && i < n; i++) {
		struct mf m;
		int keep = 0;

		if (read_manifest(dir, names[i], &m, err, cap) == 0) {
			keep = strcmp(m.launch.job, keep_job) == 0;
			for (size_t k = 0; !rc && !keep && k < m.n; k++)
				rc = remove_in(dir, m.t[k].file, err, cap);
			mf_free(&m);
		}
		if (!rc && !keep)
			rc = remove_in(dir, names[i], err, cap);
	}
	free_names(names, n);
	if (rc || !unlisted)
		return rc;
	rc = list(dir, gp_run_is_trace_name, &names, &n, err, cap);
	for (size_t i = 0; !rc && i < n; i++)
		rc = remove_in(dir, names[i], err, cap);
	free_names(names, n);
	return rc;
}

void gp_run_paths_free(char **v, size_t n)
{
	free_names(v, n);
}

int gp_run_expand(const char *const *args, size_t n, char ***out, size_t *nout,
		  void (*say)(void *ctx, const char *line), void *ctx, char *err, size_t cap)
{
	char **v = NULL;
	size_t len = 0, c = 0;
	int rc = 0;

	*out = NULL;
	*nout = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		struct gp_run *run = NULL;
		size_t add = 1;

		if (gp_run_is_dir(args[i])) {
			rc = gp_run_open(args[i], &run, err, cap);
			if (rc)
				break;
			add = run->ntraces;
			for (size_t k = 0; say && k < run->nnotes; k++)
				say(ctx, run->notes[k]);
		}
		if (len + add > c) {
			char **g = realloc(v, (c = (len + add) * 2) * sizeof(*g));

			if (!g) {
				rc = -ENOMEM;
				gp_run_free(run);
				break;
			}
			v = g;
		}
		for (size_t k = 0; k < add && !rc; k++) {
			v[len] = strdup(run ? run->traces[k].path : args[i]);
			if (!v[len])
				rc = -ENOMEM;
			else
				len++;
		}
		gp_run_free(run);
	}
	if (rc) {
		if (rc == -ENOMEM)
			snprintf(err, cap, "out of memory");
		free_names(v, len);
		return rc;
	}
	*out = v;
	*nout = len;
	return 0;
}
