/* A number given on the command line, read strictly: shared by the commands
 * (viewer/cmd_*.c) and the option parsing of the compare library. */
#ifndef GPUPROF_PARSE_NUMBER_H
#define GPUPROF_PARSE_NUMBER_H

#include <errno.h>
#include <stdlib.h>

/* Decimal, no sign, no blanks, no trailing text, within [min, max].
 * 0, or -EINVAL (*out untouched). */
static inline int gp_parse_number(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

#endif
