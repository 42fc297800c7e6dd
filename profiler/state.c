/* The recorder's state and its one way to speak (state.h). */
#include "state.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct gp_rec_globals gp_rec;
_Atomic unsigned gp_rec_live_parts;

void gp_rec_say(const char *fmt, ...)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "gpuprof: ");
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	size_t len = strlen(line);
	line[len++] = '\n';
	/* One write(2): no stdio buffering inside someone else's process. */
	ssize_t w = write(STDERR_FILENO, line, len);
	(void)w;
}
