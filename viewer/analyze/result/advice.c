/* The advice for a failed allocation (advice.h): each rule looks at what
 * was alive then and at the process, and says what would help, in order:
 * a request no setting can fit ends the list; then a request that is a
 * large part of the device, activations (and, where PyTorch said what it
 * had, how much smaller a batch would have got this far), fragmentation,
 * memory held from earlier steps, memory outside PyTorch, memory outside
 * the trace. */
#include "advice.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

void an_adv_add(struct an_adv_list *a, enum gp_an_advice_kind kind, uint64_t bytes, uint64_t of,
		const char *text)
{
	struct gp_an_advice *e = &a->v[a->n++];

	e->kind = kind;
	e->bytes = bytes;
	e->of = of;
	e->text = gp_an_strndup(a->r, text, strlen(text));
	if (!e->text)
		a->oom = 1;
}

int an_adv_finish(struct an_adv_list *a, struct gp_an_advice **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (a->oom)
		return -ENOMEM;
	if (a->n) {
		*out = gp_an_alloc(a->r, a->n * sizeof(**out));
		if (!*out)
			return -ENOMEM;
		memcpy(*out, a->v, a->n * sizeof(**out));
		*n = a->n;
	}
	return 0;
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0.0;
}

/* The largest layers among members of category cat, "a, b and c". */
static int top_layers(const struct an_set *s, int cat, char *out, size_t cap)
{
	struct an_grpset g = { 0 };
	int oom;

	out[0] = '\0';
	for (size_t i = 0; i < s->n; i++)
		if (s->m[i].cat == cat && s->m[i].r->layer)
			an_grp_add(&g, (uint64_t)(uintptr_t)s->m[i].r->layer, s->m[i].r->layer->s,
				   s->m[i].r->bytes);
	an_grp_sort(&g);
	for (size_t i = 0; i < g.n && i < 3; i++) {
		char sz[32];
		size_t len = strlen(out);

		an_fmt_bytes(sz, sizeof(sz), g.list[i]->bytes);
		snprintf(out + len, cap - len, "%s%s (%s)", i ? ", " : "", g.list[i]->name, sz);
	}
	oom = g.oom;
	an_grp_free(&g);
	return oom ? -ENOMEM : 0;
}

int an_advise(struct gp_an_result *r, const struct an_pd *pd, const struct an_oom *o,
	      const struct an_set *s, uint64_t capacity, const struct an_leak *lk,
	      struct gp_an_advice **out, size_t *nout)
{
	const struct an_proc *p = pd->proc;
	struct an_adv_list a = { .r = r };
	char text[2048], x[32], y[32], z[32];
	uint64_t device = o->has_meminfo ? o->total : capacity;
	uint64_t held = o->total_live + o->static_live;
	struct an_oom_moment at;

	an_oom_moment(o, &at);
	*out = NULL;
	*nout = 0;
	if (device && o->request > device) {
		an_fmt_bytes(x, sizeof(x), o->request);
		an_fmt_bytes(y, sizeof(y), device);
		snprintf(text, sizeof(text),
			 "the request alone (%s) is larger than the whole device (%s): no setting "
			 "makes it fit; make that tensor smaller (batch, sequence length) or split it "
			 "across devices", x, y);
		an_adv_add(&a, GP_AN_ADVICE_REQUEST_TOO_LARGE, o->request, device, text);
		goto done;
	}
	if (device && o->request * 5 >= device) {
		an_fmt_bytes(x, sizeof(x), o->request);
		an_fmt_bytes(y, sizeof(y), device);
		snprintf(text, sizeof(text),
			 "the request alone (%s) is %.0f%% of the device (%s): one tensor that large "
			 "leaves little room for the rest; shrink it (batch, sequence length, or "
			 "compute it in chunks)", x, 100.0 * share(o->request, device), y);
		an_adv_add(&a, GP_AN_ADVICE_LARGE_REQUEST, o->request, device, text);
	}
	if (s->torch && o->fw_live && s->cat_bytes[CAT_ACTIVATIONS] * 10 >= o->fw_live * 4) {
		char layers[600], fit[512] = "";
		uint64_t act = s->cat_bytes[CAT_ACTIVATIONS];

		an_fmt_bytes(x, sizeof(x), act);
		if (top_layers(s, CAT_ACTIVATIONS, layers, sizeof(layers)))
			a.oom = 1;
		/* Where PyTorch said what it had (native mode's hook): the
		 * activations and this request grow with the batch, the rest does
		 * not; what could have held them is the activations' own memory,
		 * what PyTorch had reserved but not allocated, and the free
		 * memory. A batch larger than that share gets no further than
		 * this request (an upper bound: what the forward needs after it
		 * is not known). */
		if (o->torch && act + o->request) {
			uint64_t unused = o->torch_reserved > o->torch_allocated
						  ? o->torch_reserved - o->torch_allocated : 0;
			double f = (double)(act + unused + o->torch_free) / (double)(act + o->request);

			if (f < 1.0) {
				char c[32], fr[32];

				an_fmt_bytes(y, sizeof(y), act + o->request);
				an_fmt_bytes(z, sizeof(z), act + unused + o->torch_free);
				an_fmt_bytes(c, sizeof(c), unused);
				an_fmt_bytes(fr, sizeof(fr), o->torch_free);
				snprintf(fit, sizeof(fit),
					 ". They grow with the batch, so at most %.2f times this batch "
					 "gets this far: the activations and this request need %s, and "
					 "only %s could hold them (the activations' own %s, %s cached by "
					 "PyTorch but not allocated, %s free)", f, y, z, x, c, fr);
			}
		}
		snprintf(text, sizeof(text),
			 "activations hold %.0f%% (%s) of PyTorch's memory: a smaller batch, "
			 "activation checkpointing (torch.utils.checkpoint) of the largest layers%s%s, "
			 "or mixed precision (torch.autocast with bfloat16/float16) would shrink them%s",
			 100.0 * share(act, o->fw_live), x, layers[0] ? ": " : "", layers, fit);
		an_adv_add(&a, GP_AN_ADVICE_ACTIVATIONS, act, o->fw_live, text);
	}
	if (o->torch && o->torch_reserved > o->torch_allocated &&
	    o->torch_reserved - o->torch_allocated >= o->request) {
		/* what PyTorch held in partly used segments once it had released
		 * its cache: it could not give up or use those holes */
		an_fmt_bytes(x, sizeof(x), o->torch_reserved - o->torch_allocated);
		snprintf(text, sizeof(text),
			 "PyTorch had %s reserved but not allocated when it gave up, more than the "
			 "request, yet in pieces it could not use: fragmentation; %s", x,
			 p->expandable_segments ? "expandable_segments is already on"
						: "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True lets "
						  "segments grow instead of leaving holes");
		an_adv_add(&a, GP_AN_ADVICE_FRAGMENTATION, o->torch_reserved - o->torch_allocated, 0, text);
	} else if (p->mode == MODE_NATIVE && o->released) {
		an_fmt_bytes(x, sizeof(x), o->released);
		if (p->expandable_segments)
			snprintf(text, sizeof(text),
				 "PyTorch held %s in cached segments it could not use for this request "
				 "(it released them after the failure): fragmentation, although "
				 "expandable_segments is already on", x);
		else
			snprintf(text, sizeof(text),
				 "PyTorch held %s in cached segments it could not use for this request "
				 "(it released them after the failure%s): fragmentation; "
				 "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True lets segments grow "
				 "instead of leaving holes", x,
				 o->recovered ? " and the retry succeeded, at the cost of a slow cache flush"
					      : "");
		an_adv_add(&a, GP_AN_ADVICE_FRAGMENTATION, o->released, 0, text);
	} else if (pd->frag_known && o->reserved_known && p->mode == MODE_TENSOR &&
		   o->reserved > o->fw_live && o->reserved - o->fw_live >= o->request) {
		an_fmt_bytes(x, sizeof(x), o->reserved - o->fw_live);
		snprintf(text, sizeof(text),
			 "the allocator's pool held %s unused, more than the request, yet could not "
			 "serve it: fragmentation (traced in tensor mode, with cudaMallocAsync; trace "
			 "with --mode native to see PyTorch's own allocator)", x);
		an_adv_add(&a, GP_AN_ADVICE_FRAGMENTATION, o->reserved - o->fw_live, 0, text);
	}
	if (s->torch) {
		uint64_t earlier = 0;

		for (size_t i = 0; i < s->n; i++) {
			const struct an_rec *rec = s->m[i].r;
			int c = s->m[i].cat;

			if (p->has_steps && rec->step < o->step &&
			    (c == CAT_ACTIVATIONS || c == CAT_INPUTS || c == CAT_TEMPORARIES ||
			     (c == CAT_OTHER && !(rec->flags & R_OTHER))))
				earlier += rec->bytes;
		}
		if ((lk && lk->verdict == LEAK_FOUND) || (o->fw_live && earlier * 10 >= o->fw_live)) {
			uint64_t growth = 0;

			an_fmt_bytes(x, sizeof(x), earlier);
			if (lk && lk->verdict == LEAK_FOUND) {
				growth = (uint64_t)lk->slope;
				an_fmt_bytes(y, sizeof(y), growth);
				snprintf(text, sizeof(text),
					 "memory grew by %s per step since step %u (see Leaks); %s made in "
					 "earlier steps was still held at the failure: tensors kept across "
					 "steps (a loss or outputs stored with their graph: keep .item() or "
					 ".detach())", y, lk->since_step, x);
			} else {
				snprintf(text, sizeof(text),
					 "%s made in earlier steps (not parameters, gradients or optimizer "
					 "state) was still held at the failure: tensors kept across steps "
					 "(a loss or outputs stored with their graph: keep .item() or "
					 ".detach())", x);
			}
			an_adv_add(&a, GP_AN_ADVICE_HELD_FROM_EARLIER_STEPS, earlier, growth, text);
		}
	}
	if (s->torch && o->other_live && (o->other_live * 10 >= held || o->other_live >= o->request)) {
		char by[400] = "";
		struct an_grpset g = { 0 };

		for (size_t i = 0; i < s->n; i++)
			if (s->m[i].r->flags & R_OTHER)
				an_grp_add(&g, (uint64_t)(uintptr_t)s->m[i].label,
					   s->m[i].label ? s->m[i].label->s : "?", s->m[i].r->bytes);
		an_grp_sort(&g);
		for (size_t i = 0; i < g.n && i < 3; i++) {
			size_t len = strlen(by);

			an_fmt_bytes(z, sizeof(z), g.list[i]->bytes);
			snprintf(by + len, sizeof(by) - len, "%s%s %s", i ? ", " : "", g.list[i]->name, z);
		}
		if (g.oom)
			a.oom = 1;
		an_grp_free(&g);
		an_fmt_bytes(x, sizeof(x), o->other_live);
		snprintf(text, sizeof(text),
			 "%s is device memory allocated outside PyTorch (%s): libraries' workspaces "
			 "and buffers; it is not PyTorch's to free", x, by);
		an_adv_add(&a, GP_AN_ADVICE_OUTSIDE_PYTORCH, o->other_live, 0, text);
	}
	if (at.has_outside) {
		uint64_t elsewhere = at.outside;

		if (elsewhere >= o->request || elsewhere * 10 >= o->total) {
			an_fmt_bytes(x, sizeof(x), elsewhere);
			snprintf(text, sizeof(text),
				 "%s of the device was in use but not by this trace's allocations: the "
				 "CUDA context, or other processes on the same GPU (nvidia-smi lists them)",
				 x);
			an_adv_add(&a, GP_AN_ADVICE_OUTSIDE_TRACE, elsewhere, 0, text);
		}
	}
done:
	return an_adv_finish(&a, out, nout);
}
