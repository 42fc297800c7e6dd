/* PROGRAM as it will run: found on PATH the way execvp() finds it, checked
 * before anything is started so that a typo gets a clear message and no
 * half-started run; a PROGRAM.py is run by a Python interpreter. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exporters/env_vars.h"
#include "launch.h"
#include "viewer/cli.h"

bool gp_trace_is_python_script(const char *program)
{
	size_t n = strlen(program);

	return n > 3 && strcmp(program + n - 3, ".py") == 0;
}

static int check_executable(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EACCES; /* what execve() says of a directory */
	return access(path, X_OK) == 0 ? 0 : -errno;
}

static int found(const char *path, char **out)
{
	*out = strdup(path);
	return *out ? 0 : -ENOMEM;
}

/* The child still reports an exec failure (run.c); this covers the usual
 * cases. */
int gp_trace_find_program(const char *name, char **path)
{
	const char *dirs = getenv("PATH"), *p, *end;
	char buf[4096];
	int err = -ENOENT, e;

	*path = NULL;
	if (!*name)
		return -ENOENT;
	if (strchr(name, '/')) {
		e = check_executable(name);
		return e ? e : found(name, path);
	}
	if (!dirs)
		dirs = "/bin:/usr/bin"; /* glibc's execvp() default */
	for (p = dirs;; p = end + 1) {
		int n;

		end = strchrnul(p, ':');
		/* an empty entry means the current directory */
		n = end == p ? snprintf(buf, sizeof(buf), "%s", name)
			     : snprintf(buf, sizeof(buf), "%.*s/%s", (int)(end - p), p, name);
		if (n > 0 && (size_t)n < sizeof(buf)) {
			e = check_executable(buf);
			if (e == 0)
				return found(buf, path);
			/* like execvp(): "permission denied" wins over "not found" */
			if (e == -EACCES)
				err = e;
		}
		if (!*end)
			break;
	}
	return err;
}

static int check_program(const char *name)
{
	char *path;
	int err = gp_trace_find_program(name, &path);

	free(path);
	return err;
}

int gp_trace_resolve_program(const struct gp_trace_settings *s, struct gp_trace_run *r)
{
	const char *program = s->program[0], *python;
	size_t n;
	int err;

	if (!gp_trace_is_python_script(program)) {
		err = check_program(program);
		if (err)
			gp_msg("cannot run '%s': %s", program, strerror(-err));
		r->exec_argv = s->program;
		return err;
	}
	python = s->python ? s->python : getenv(GP_ENV_PYTHON);
	if (!python || !*python)
		python = "python3";
	if (access(program, R_OK) != 0) {
		err = -errno;
		gp_msg("cannot run '%s': %s", program, strerror(-err));
		return err;
	}
	err = check_program(python);
	if (err) {
		gp_msg("cannot run '%s': %s", python, strerror(-err));
		gp_msg("choose the Python interpreter with --python or %s", GP_ENV_PYTHON);
		return err;
	}
	for (n = 0; s->program[n]; n++)
		;
	r->py_argv = calloc(n + 2, sizeof(*r->py_argv));
	if (!r->py_argv) {
		gp_msg("%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	r->py_argv[0] = (char *)python;
	memcpy(r->py_argv + 1, s->program, (n + 1) * sizeof(*r->py_argv));
	r->exec_argv = r->py_argv;
	return 0;
}
