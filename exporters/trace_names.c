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

int gp_dump_trace_path(char *buf, size_t size, const char *output, unsigned n)
{
	int has_suffix, k;
	size_t len = stem_len(output, &has_suffix);

	k = snprintf(buf, size, "%.*s.dump%u%s", (int)len, output, n, has_suffix ? GP_TRACE_SUFFIX : "");
	return k < 0 || (size_t)k >= size ? -ENAMETOOLONG : 0;
}

int gp_is_dump_trace_name(const char *name)
{
	size_t n = strlen(name), suf = sizeof(GP_TRACE_SUFFIX) - 1, end = n, digits = 0;

	if (n > suf && !strcmp(name + n - suf, GP_TRACE_SUFFIX))
		end = n - suf;
	while (digits < end && name[end - 1 - digits] >= '0' && name[end - 1 - digits] <= '9')
		digits++;
	return digits > 0 && end - digits >= 5 && !strncmp(name + end - digits - 5, ".dump", 5);
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

void gp_run_host_name(char *buf, size_t size, const char *host)
{
	size_t i, n = 0;

	if (!size)
		return;
	for (i = 0; host && host[i] && n < GP_RUN_HOST_MAX && n + 1 < size; i++) {
		char c = host[i];
		int plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';

		buf[n++] = plain ? c : '_';
	}
	if (!n && size > 4) /* a host with no name still makes a name */
		n = (size_t)snprintf(buf, size, "host");
	buf[n] = '\0';
}

int gp_run_trace_path(char *buf, size_t size, const char *dir, long long rank, const char *host,
		      pid_t pid)
{
	char h[GP_RUN_HOST_MAX + 1];
	int n;

	if (rank >= 0) {
		n = snprintf(buf, size, "%s/rank%lld.%ld%s", dir, rank, (long)pid, GP_TRACE_SUFFIX);
	} else {
		gp_run_host_name(h, sizeof(h), host);
		n = snprintf(buf, size, "%s/proc.%s.%ld%s", dir, h, (long)pid, GP_TRACE_SUFFIX);
	}
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int gp_run_manifest_name(char *buf, size_t size, const char *host, pid_t pid)
{
	char h[GP_RUN_HOST_MAX + 1];
	int n;

	gp_run_host_name(h, sizeof(h), host);
	n = snprintf(buf, size, GP_RUN_MANIFEST_PREFIX "%s.%ld" GP_RUN_MANIFEST_SUFFIX, h, (long)pid);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}
