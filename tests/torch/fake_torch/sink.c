/* The recorder's entry points as test_alloc_hook.py needs them: each
 * event and stack appended as a line to the file GPUPROF_TEST_SINK names
 * (one write each, so a process's last events survive its exit, where the
 * hook's exit handler runs after Python is gone), and whether the program is
 * inside a module's forward as the test says (every thread alike). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "torch_alloc.h"

static int fd = -1;
static int refuse;
static int in_module;

static void out(const char *line, size_t n)
{
	if (fd < 0) {
		const char *p = getenv("GPUPROF_TEST_SINK");
		fd = p ? open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600) : -1;
	}
	if (fd >= 0 && write(fd, line, n) != (ssize_t)n)
		fd = -1;
}

int sink_event(const struct gp_ta_event *e)
{
	char line[512];
	int n;

	if (refuse)
		return -28;
	n = snprintf(line, sizeof(line),
		     "event type=%u flags=%u ts=%llu addr=%llu bytes=%llu requested=%llu stream=%llu "
		     "allocated=%llu reserved=%llu free=%llu stack=%u tid=%u device=%d version=%u\n",
		     e->type, e->flags, (unsigned long long)e->ts, (unsigned long long)e->addr,
		     (unsigned long long)e->bytes, (unsigned long long)e->requested,
		     (unsigned long long)e->stream, (unsigned long long)e->allocated,
		     (unsigned long long)e->reserved, (unsigned long long)e->free, e->stack, e->tid,
		     e->device, e->version);
	out(line, (size_t)n);
	return 0;
}

int sink_stack(uint32_t id, const char *frames, size_t len)
{
	char head[64];
	int n = snprintf(head, sizeof(head), "stack id=%u len=%zu ", id, len);
	char *line = malloc((size_t)n + len * 4 + 2);
	size_t k = (size_t)n;

	if (!line)
		return -12;
	memcpy(line, head, (size_t)n);
	for (size_t i = 0; i < len; i++) /* the separators as | and ; */
		line[k++] = frames[i] == GP_TA_US ? '|' : frames[i] == GP_TA_RS ? ';' : frames[i];
	line[k++] = '\n';
	out(line, k);
	free(line);
	return 0;
}

void *sink_event_fn(void)
{
	return (void *)sink_event;
}

void *sink_stack_fn(void)
{
	return (void *)sink_stack;
}

void sink_refuse(int on)
{
	refuse = on;
}

int sink_in_module(void)
{
	return in_module;
}

void *sink_in_module_fn(void)
{
	return (void *)sink_in_module;
}

void sink_set_in_module(int on)
{
	in_module = on;
}
