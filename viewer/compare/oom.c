/* The line of a process whose program did not get past an out-of-memory
 * error: check and compare fail such a run whatever its peak (--allow-oom
 * lets it pass, and the line says so). */
#include <stdio.h>
#include <string.h>

#include "cmp.h"
#include "units.h"
#include "viewer/render/table.h"

#define LAYER_CHARS (-60)

void cmp_oom_line(char *buf, size_t cap, const struct cmp_unit *u, int md, int allowed)
{
	const struct gp_an_oom *o = u->oom_lead;
	enum gp_table_fmt fmt = md ? GP_TABLE_MD : GP_TABLE_TEXT;
	char who[96], at[48] = "", what[512] = "", more[96] = "", req[32], layer[256], phase[64];

	if (u->tr->rank >= 0)
		snprintf(who, sizeof(who), "rank %lld (process %lld, cuda:%d)", (long long)u->tr->rank,
			 (long long)u->dev->pid, u->dev->device);
	else
		snprintf(who, sizeof(who), "process %lld (cuda:%d)", (long long)u->dev->pid, u->dev->device);
	if (o) {
		/* "none": no phase was open, not a phase's name */
		const char *ph = o->phase && strcmp(o->phase, "none") != 0 ? o->phase : NULL;

		if (o->step >= 0)
			snprintf(at, sizeof(at), " at step %lld", (long long)o->step);
		an_fmt_bytes(req, sizeof(req), o->request);
		gp_table_cell(layer, sizeof(layer), fmt, o->layer, md, LAYER_CHARS);
		gp_table_cell(phase, sizeof(phase), fmt, ph, 0, 32);
		snprintf(what, sizeof(what), ": %s requested%s%s%s%s%s", req, ph ? " in " : "", ph ? phase : "",
			 o->layer ? " (" : "", o->layer ? layer : "", o->layer ? ")" : "");
		if (o->raised)
			snprintf(what + strlen(what), sizeof(what) - strlen(what),
				 ", PyTorch raised OutOfMemoryError");
	}
	if (u->oom_fatal > 1)
		snprintf(more, sizeof(more), "; %llu failed allocations it did not get past",
			 (unsigned long long)u->oom_fatal);
	snprintf(buf, cap, "%s%s ran out of memory%s%s%s%s", allowed ? "allowed by --allow-oom: " : md ? "" : "FAIL: ",
		 who, at, what, more,
		 u->oom_fatal_guessed ? " (an older summary: every failure not recovered from counts)" : "");
}
