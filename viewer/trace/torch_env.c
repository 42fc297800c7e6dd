/* The mode and the environment of a traced PyTorch program (torch_env.h). */
#include "torch_env.h"

#include "launch.h"
#include "exporters/env_vars.h"
#include "viewer/cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int gp_mode_parse(const char *s, enum gp_mode *out)
{
	static const struct { const char *name; enum gp_mode mode; } modes[] = {
		{ "tensor", GP_MODE_TENSOR }, { "native", GP_MODE_NATIVE }, { "cuda", GP_MODE_CUDA },
	};
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (strcmp(s, modes[i].name) == 0) {
			*out = modes[i].mode;
			return 0;
		}
	}
	return -EINVAL;
}

const char *gp_mode_name(enum gp_mode m)
{
	switch (m) {
	case GP_MODE_TENSOR: return "tensor";
	case GP_MODE_NATIVE: return "native";
	case GP_MODE_CUDA: return "cuda";
	default: return "auto";
	}
}

bool gp_runs_python(const char *argv0)
{
	if (gp_trace_is_python_script(argv0))
		return true;
	const char *base = strrchr(argv0, '/');
	base = base ? base + 1 : argv0;
	if (strncmp(base, "python", 6) == 0)
		return true;
	char *path;
	if (gp_trace_find_program(argv0, &path) != 0)
		return false;
	bool py = false;
	FILE *f = fopen(path, "re");
	if (f) {
		char line[256];
		if (fgets(line, sizeof(line), f) && line[0] == '#' && line[1] == '!')
			py = strstr(line, "python") != NULL;
		fclose(f);
	}
	free(path);
	return py;
}

/* Options the cudaMallocAsync backend does not use (it has its own pool). */
static const char *const caching_only[] = {
	"expandable_segments", "max_split_size_mb", "roundup_power2_divisions",
	"garbage_collection_threshold", "max_non_split_rounding_mb",
	"release_lock_on_cudamalloc",
};

static int appendf(char *buf, size_t cap, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int appendf(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *len, cap - *len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= cap - *len)
		return -ENAMETOOLONG;
	*len += (size_t)n;
	return 0;
}

int gp_tensor_alloc_conf(const char *user, char *out, size_t cap, char *warn, size_t wcap)
{
	size_t len = 0, wlen = 0;
	int err = appendf(out, cap, &len, "backend:cudaMallocAsync");
	if (err)
		return err;
	warn[0] = '\0';
	if (!user)
		return 0;
	const char *p = user;
	while (*p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		const char *colon = memchr(p, ':', n);
		size_t klen = colon ? (size_t)(colon - p) : n;
		/* trim spaces around the key */
		const char *k = p;
		while (klen && (*k == ' ')) {
			k++;
			klen--;
		}
		while (klen && k[klen - 1] == ' ')
			klen--;
		if (klen == 0) {
			/* empty item: dropped */
		} else if (klen == 7 && strncmp(k, "backend", 7) == 0) {
			const char *v = colon ? colon + 1 : "";
			int vlen = (int)(n - (size_t)(v - p));
			if (strncmp(v, "cudaMallocAsync", (size_t)vlen) != 0 || vlen != 15)
				appendf(warn, wcap, &wlen, "your backend:%.*s is replaced by "
					"backend:cudaMallocAsync (use --mode native to keep it). ",
					vlen, v);
		} else {
			bool ignored = false;
			for (size_t i = 0; i < sizeof(caching_only) / sizeof(caching_only[0]); i++)
				if (klen == strlen(caching_only[i]) &&
				    strncmp(k, caching_only[i], klen) == 0)
					ignored = true;
			if (ignored)
				appendf(warn, wcap, &wlen, "%.*s has no effect with backend:"
					"cudaMallocAsync (use --mode native to trace your allocator "
					"as configured). ", (int)klen, k);
			err = appendf(out, cap, &len, ",%.*s", (int)n, p);
			if (err)
				return err;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	if (wlen && warn[wlen - 1] == ' ')
		warn[wlen - 1] = '\0';
	return 0;
}

static int prepend_path(const char *var, const char *dir)
{
	const char *old = getenv(var);
	char *v;
	if (old && *old) {
		if (asprintf(&v, "%s:%s", dir, old) < 0)
			return -ENOMEM;
	} else if (!(v = strdup(dir))) {
		return -ENOMEM;
	}
	int r = setenv(var, v, 1) == 0 ? 0 : -errno;
	free(v);
	return r;
}

int gp_torch_env_export(enum gp_mode mode, bool ops, bool history, bool stacks,
			const char *python_dir)
{
	if (setenv(GP_ENV_MODE, gp_mode_name(mode), 1) != 0)
		return -errno;
	if (mode == GP_MODE_CUDA)
		return 0;
	int err = prepend_path("PYTHONPATH", python_dir);
	if (err)
		return err;
	if (ops && setenv(GP_ENV_OPS, "1", 1) != 0)
		return -errno;
	if (history && setenv(GP_ENV_TORCH_HISTORY, "1", 1) != 0)
		return -errno;
	if (stacks && setenv(GP_ENV_STACKS, "1", 1) != 0)
		return -errno;
	if (mode != GP_MODE_TENSOR)
		return 0;
	/* PyTorch reads PYTORCH_ALLOC_CONF (new name) before PYTORCH_CUDA_ALLOC_CONF:
	 * change the one the user set. */
	const char *var = getenv("PYTORCH_ALLOC_CONF") ? "PYTORCH_ALLOC_CONF"
						       : "PYTORCH_CUDA_ALLOC_CONF";
	char conf[4096], warn[2048];
	err = gp_tensor_alloc_conf(getenv(var), conf, sizeof(conf), warn, sizeof(warn));
	if (err)
		return err;
	if (warn[0])
		gp_msg("tensor mode: %s", warn);
	if (setenv(var, conf, 1) != 0)
		return -errno;
	return 0;
}

/* Python programs are traced in native mode unless told otherwise: PyTorch's
 * own allocator, every tensor of it through the hooks' allocator hook, the
 * hooks next to the recorder naming layers and phases. */
int gp_trace_setup_mode(const struct gp_trace_settings *s, const struct gp_trace_run *r)
{
	enum gp_mode mode = s->mode;
	char *dir = NULL, *slash;
	struct stat st;
	int err;

	if (mode == GP_MODE_AUTO)
		mode = gp_runs_python(s->program[0]) ? GP_MODE_NATIVE : GP_MODE_CUDA;
	if (s->ops && mode == GP_MODE_CUDA)
		gp_msg("--ops needs a PyTorch program (--mode tensor or native); ignored");
	if (s->history && mode != GP_MODE_NATIVE)
		gp_msg("--torch-history needs --mode native (tensor mode records every tensor "
		       "already); ignored");
	if (s->stacks && mode != GP_MODE_NATIVE)
		gp_msg("--stacks needs --mode native (PyTorch's own allocator); ignored");
	if (mode != GP_MODE_CUDA) {
		dir = malloc(strlen(r->recorder) + sizeof("/python"));
		if (!dir)
			return -ENOMEM;
		strcpy(dir, r->recorder);
		slash = strrchr(dir, '/');
		strcpy(slash ? slash : dir, "/python");
		if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
			gp_msg("the PyTorch hooks are missing (%s): layers and steps will not be "
			       "named", dir);
	}
	err = gp_torch_env_export(mode, s->ops, s->history && mode == GP_MODE_NATIVE,
				  s->stacks && mode == GP_MODE_NATIVE, dir);
	if (err)
		gp_msg("cannot set the environment: %s", strerror(-err));
	else if (mode == GP_MODE_TENSOR)
		gp_msg("tensor mode: every tensor is recorded (PyTorch allocator backend "
		       "cudaMallocAsync)");
	else if (mode == GP_MODE_NATIVE)
		gp_msg("native mode: every tensor of PyTorch's own allocator is recorded, "
		       "with its segments%s", s->stacks ? " and the Python line that made it" : "");
	free(dir);
	return err;
}
