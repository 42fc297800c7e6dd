/* Byte counts as people read them: binary units, three significant digits
 * (512 B, 7.25 KiB, 12.7 GiB), the way PyTorch's memory_summary() and the
 * rest of gpuprof print them. */
#ifndef GPUPROF_AN_UNITS_H
#define GPUPROF_AN_UNITS_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

static inline void an_fmt_bytes(char *buf, size_t cap, uint64_t v)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double d = (double)v;
	size_t u = 0;

	while (d >= 1024.0 && u + 1 < sizeof(units) / sizeof(units[0])) {
		d /= 1024.0;
		u++;
	}
	if (u == 0)
		snprintf(buf, cap, "%" PRIu64 " B", v);
	else if (d < 10)
		snprintf(buf, cap, "%.2f %s", d, units[u]);
	else if (d < 100)
		snprintf(buf, cap, "%.1f %s", d, units[u]);
	else
		snprintf(buf, cap, "%.0f %s", d, units[u]);
}

/* A size as PyTorch's caching allocator words it in its out-of-memory
 * message ("Tried to allocate 32.00 GiB": its format_size), so that the
 * report names the size the user's traceback names. */
static inline void an_fmt_torch_bytes(char *buf, size_t cap, uint64_t v)
{
	if (v <= 1024)
		snprintf(buf, cap, "%" PRIu64 " bytes", v);
	else if (v <= 1048576)
		snprintf(buf, cap, "%.2f KiB", (double)v / 1024.0);
	else if (v <= 1073741824ull)
		snprintf(buf, cap, "%.2f MiB", (double)v / 1048576.0);
	else
		snprintf(buf, cap, "%.2f GiB", (double)v / 1073741824.0);
}

#endif
