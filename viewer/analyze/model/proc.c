/* A process's analysis state (struct an_proc, state.h): made empty, and
 * let go with all that the analysis hung on it. Above attrib.c and
 * memory.c, whose parts it frees, so that neither calls the other for it. */
#include <stdlib.h>
#include <string.h>

#include "state.h"

int an_proc_init(struct an_proc *p, struct an_source *src, int idx)
{
	memset(p, 0, sizeof(*p));
	p->src = src;
	p->mode = src->mode;
	p->idx = idx;
	p->next_inst = 1;
	return 0;
}

void an_proc_free(struct an_analysis *a, struct an_proc *p)
{
	for (size_t i = 0; i < p->threads.cap; i++)
		if (p->threads.slots[i].val)
			an_thread_free(a, p->threads.slots[i].val);
	gp_u64map_free(&p->threads);
	for (size_t i = 0; i < p->branges.cap; i++) {
		struct an_brange *b = p->branges.slots[i].val;

		if (b) {
			an_str_unref(&a->st, b->name);
			free(b);
		}
	}
	gp_u64map_free(&p->branges);
	an_coll_calls_free(a, &p->coll_calls);
	for (size_t i = 0; i < p->path_layer.cap; i++) {
		if (p->path_layer.slots[i].val) {
			an_str_unref(&a->st, (struct an_str *)(uintptr_t)p->path_layer.slots[i].key);
			an_str_unref(&a->st, p->path_layer.slots[i].val);
		}
	}
	gp_u64map_free(&p->path_layer);
	for (int d = 0; d < AN_MAX_DEVICES; d++)
		if (p->pd[d])
			an_pd_free(a, p->pd[d]);
	gp_u64map_free(&p->named_segs);
	gp_u64map_free(&p->seg_keys);
	gp_u64map_free(&p->seg_found);
	an_str_unref(&a->st, p->hook_state);
	gp_u64map_free(&p->other_keys);
	an_str_unref(&a->st, p->torch_version);
	an_str_unref(&a->st, p->alloc_conf);
	an_str_unref(&a->st, p->backend);
}
