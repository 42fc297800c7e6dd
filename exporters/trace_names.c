/* The child process's trace name, see trace_names.h. */
#include "trace_names.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The length of output without GP_TRACE_SUFFIX, or all of it when it does
 * not end with the suffix (or is nothing but the suffix). */
static size_t stem_len(const char *output, int *has_suffix)
{
	size_t len = strlen(output), sfx = strlen(GP_TRACE_SUFFIX);

	*has_suffix = len > sfx && strcmp(output + len - sfx, GP_TRACE_SUFFIX) == 0;
	return *has_suffix ? len - sfx : len;
}

int gp_child_trace_path(char *buf, size_t size, const char *output, pid_t pid)
{
	int has_suffix, n;
	size_t len = stem_len(output, &has_suffix);

	if (has_suffix)
		n = snprintf(buf, size, "%.*s.%ld%s", (int)len, output, (long)pid, GP_TRACE_SUFFIX);
	else
		n = snprintf(buf, size, "%s.%ld", output, (long)pid);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

pid_t gp_child_trace_pid(const char *out_name, const char *name)
{
	int has_suffix;
	size_t len = stem_len(out_name, &has_suffix);
	const char *tail = has_suffix ? GP_TRACE_SUFFIX : "", *p;
	long pid = 0;

	/* No leading zero: the pid is written with %ld. */
	if (strncmp(name, out_name, len) != 0 || name[len] != '.' || name[len + 1] == '0')
		return -1;
	for (p = name + len + 1; *p >= '0' && *p <= '9'; p++) {
		pid = pid * 10 + (*p - '0');
		if (pid > 0x7fffffffL)
			return -1;
	}
	if (p == name + len + 1 || pid == 0 || strcmp(p, tail) != 0)
		return -1;
	return (pid_t)pid;
}
