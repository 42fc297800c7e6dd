/* Prints each byte count given on the command line as the text report
 * does (viewer/analyze/result/units.h), one per line: test_report.py formatting
 * holds the page's bytes() to it. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "units.h"

int main(int argc, char **argv)
{
	char buf[64];

	for (int i = 1; i < argc; i++) {
		char *end;
		uint64_t v = strtoull(argv[i], &end, 10);

		if (*end)
			return 2;
		an_fmt_bytes(buf, sizeof(buf), v);
		puts(buf);
	}
	return 0;
}
