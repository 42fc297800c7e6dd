/* Who was allocating: per thread, the open NVTX ranges, and from them the
 * layer (module path), the op and the phase; per process, the step (its
 * marks are read in marks.c). The names follow TRACE_FORMAT.md ("PyTorch
 * programs"). A thread with nothing open is forgotten, so this holds only
 * what is open. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "exporters/torch_marks.h"
#include "step_when.h"
#include "state.h"

const char *const an_phase_names[PH_N] = {
	"none", "forward", "backward", "optimizer.step", "zero_grad",
};

#define MAX_PATH_LAYERS 100000
#define LAYER_SEP '\x1f' /* between NVTX range names in cuda mode */

void an_thread_free(struct an_analysis *a, struct an_thread *t)
{
	for (uint32_t i = 0; i < t->depth; i++) {
		an_str_unref(&a->st, t->stack[i].name);
		an_str_unref(&a->st, t->stack[i].op);
	}
	an_str_unref(&a->st, t->bwd_name);
	an_str_unref(&a->st, t->layer);
	free(t->stack);
	free(t);
}

struct an_thread *an_thread_get(struct an_proc *p, int64_t tid)
{
	return gp_u64map_get(&p->threads, (uint64_t)tid);
}

static struct an_thread *thread_make(struct an_proc *p, int64_t tid)
{
	struct an_thread *t = gp_u64map_get(&p->threads, (uint64_t)tid);

	if (t)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = tid;
	if (gp_u64map_put(&p->threads, (uint64_t)tid, t)) {
		free(t);
		return NULL;
	}
	return t;
}

/* Forgets a thread with nothing open. */
static void thread_maybe_drop(struct an_analysis *a, struct an_proc *p, struct an_thread *t)
{
	if (t->depth || t->lost || t->bwd_name)
		return;
	gp_u64map_del(&p->threads, (uint64_t)t->tid);
	an_thread_free(a, t);
}

uint8_t an_current_phase(const struct an_proc *p, const struct an_thread *t)
{
	if (p->nphases)
		return p->phases[p->nphases - 1].phase;
	if (t && t->nfwd)
		return PH_FORWARD;
	return PH_NONE;
}

/* A moment that no thread made (PyTorch's allocator history, a pool's
 * size): in the forward while any thread runs one. */
uint8_t an_process_phase(const struct an_proc *p)
{
	if (p->nphases)
		return p->phases[p->nphases - 1].phase;
	return p->fwd_open ? PH_FORWARD : PH_NONE;
}

uint32_t an_current_phase_inst(const struct an_proc *p)
{
	return p->nphases ? p->phases[p->nphases - 1].inst : 0;
}

/* Step N+1 runs after the mark step:N; step 1 from the first module
 * forward or training phase: before it, 0 (the program's setup: "before step 1"). Reports
 * show steps only for a process that marked steps at all. */
uint32_t an_current_step(const struct an_proc *p)
{
	if (!p->last_step && !p->seen_fwd && !p->seen_phase)
		return 0;
	return p->last_step >= UINT32_MAX ? UINT32_MAX : (uint32_t)p->last_step + 1;
}

/* The raw step after the last mark is a step only where one began there
 * (a backward, or a failed allocation: the step a program ran out in);
 * else it is the program's tail, after the last step. */
void an_step_label(const struct an_proc *p, uint32_t raw, int64_t *step, uint8_t *when)
{
	*when = GP_AN_STEP_IN;
	*step = raw;
	if (!p->has_steps) {
		*step = -1;
	} else if (!raw) {
		*step = 1;
		*when = GP_AN_STEP_BEFORE;
	} else if ((int64_t)raw > p->last_step && !p->step_began) {
		*step = p->last_step;
		*when = GP_AN_STEP_AFTER;
	}
}

int an_thread_has_inst(const struct an_thread *t, uint32_t inst)
{
	if (!t || !inst)
		return 0;
	if (t->bwd_name && t->bwd_inst == inst)
		return 1;
	/* instances grow up the stack */
	for (uint32_t i = t->depth; i > 0; i--) {
		if (t->stack[i - 1].inst == inst)
			return 1;
		if (t->stack[i - 1].inst < inst)
			break;
	}
	return 0;
}

int an_phase_open(const struct an_proc *p, uint32_t inst)
{
	for (size_t i = 0; i < p->nphases; i++)
		if (p->phases[i].inst == inst)
			return 1;
	return 0;
}

/* The layer of the innermost fwd: frame, from path_layer. */
static struct an_str *fwd_layer(struct an_proc *p, const struct an_thread *t)
{
	for (uint32_t i = t->depth; i > 0; i--)
		if (t->stack[i - 1].kind == FR_FWD)
			return gp_u64map_get(&p->path_layer, (uint64_t)(uintptr_t)t->stack[i - 1].name);
	return NULL;
}

/* cuda mode: the open ranges, outermost first, joined by LAYER_SEP. */
static struct an_str *stack_layer(struct an_analysis *a, const struct an_thread *t)
{
	char buf[AN_STR_MAX + 1];
	size_t n = 0;

	if (!t->depth)
		return NULL;
	for (uint32_t i = 0; i < t->depth && n < AN_STR_MAX; i++) {
		const struct an_str *s = t->stack[i].name;
		size_t k = s->len;

		if (i)
			buf[n++] = LAYER_SEP;
		if (k > AN_STR_MAX - n)
			k = AN_STR_MAX - n;
		memcpy(buf + n, s->s, k);
		n += k;
	}
	return an_str_intern_raw(&a->st, buf, n);
}

/* Recomputes what the thread's allocations are attributed to. */
static int thread_update(struct an_analysis *a, struct an_proc *p, struct an_thread *t)
{
	struct an_str *layer = NULL;

	t->op = NULL;
	t->range_inst = 0;
	for (uint32_t i = t->depth; i > 0; i--) {
		if (t->stack[i - 1].op) {
			t->op = t->stack[i - 1].op;
			break;
		}
	}
	if (t->depth)
		t->range_inst = t->stack[t->depth - 1].inst;
	if (t->bwd_name && t->bwd_inst > t->range_inst)
		t->range_inst = t->bwd_inst;
	if (p->mode == MODE_CUDA) {
		layer = stack_layer(a, t);
		if (t->depth && !layer)
			return -ENOMEM;
	} else if (t->nfwd) {
		layer = an_str_ref(fwd_layer(p, t));
	} else if (t->bwd_name) {
		char buf[AN_STR_MAX + 8];
		struct an_str *fwd, *full;

		/* the forward range of the same module knows its root */
		memcpy(buf, GP_TORCH_FWD_PREFIX, GP_TORCH_RANGE_PREFIX_LEN);
		memcpy(buf + GP_TORCH_RANGE_PREFIX_LEN, t->bwd_name->s + GP_TORCH_RANGE_PREFIX_LEN,
		       t->bwd_name->len - GP_TORCH_RANGE_PREFIX_LEN);
		fwd = an_str_intern_raw(&a->st, buf, t->bwd_name->len);
		if (!fwd)
			return -ENOMEM;
		full = gp_u64map_get(&p->path_layer, (uint64_t)(uintptr_t)fwd);
		an_str_unref(&a->st, fwd);
		layer = full ? an_str_ref(full)
			     : an_str_intern_raw(&a->st, t->bwd_name->s + GP_TORCH_RANGE_PREFIX_LEN,
						     t->bwd_name->len - GP_TORCH_RANGE_PREFIX_LEN);
		if (!layer)
			return -ENOMEM;
	}
	an_str_unref(&a->st, t->layer);
	t->layer = layer;
	return 0;
}

/* The full layer of a fwd: range just pushed: root.path, root being the
 * outermost module of the thread's forward when it is a named root. */
static int learn_path(struct an_analysis *a, struct an_proc *p, struct an_thread *t,
		      struct an_frame *f)
{
	const struct an_str *root = NULL;
	struct an_str *full;
	char buf[2 * AN_STR_MAX + 2];
	size_t n;

	if (gp_u64map_get(&p->path_layer, (uint64_t)(uintptr_t)f->name))
		return 0;
	if (p->path_layer.count >= MAX_PATH_LAYERS)
		return 0;
	for (uint32_t i = 0; i < t->depth; i++) {
		if (t->stack[i].kind == FR_FWD) {
			root = t->stack[i].name;
			break;
		}
	}
	/* names past the prefix (GP_TORCH_FWD_PREFIX) */
	enum { P = GP_TORCH_RANGE_PREFIX_LEN };
	if (root && root != f->name && root->len > P + 1 && root->s[P] == '<') {
		n = (size_t)(root->len - P);
		memcpy(buf, root->s + P, n);
		buf[n++] = '.';
		memcpy(buf + n, f->name->s + P, f->name->len - P);
		n += f->name->len - P;
	} else {
		n = f->name->len - P;
		memcpy(buf, f->name->s + P, n);
	}
	full = an_str_intern_raw(&a->st, buf, n);
	if (!full)
		return -ENOMEM;
	if (gp_u64map_put(&p->path_layer, (uint64_t)(uintptr_t)f->name, full)) {
		an_str_unref(&a->st, full);
		return -ENOMEM;
	}
	an_str_ref(f->name);
	return 0;
}

static uint8_t phase_of(const struct an_str *name)
{
	const char *s = name->s + 6;

	if (!strcmp(s, "backward"))
		return PH_BACKWARD;
	if (!strcmp(s, "optimizer.step"))
		return PH_OPTIMIZER;
	if (!strcmp(s, "zero_grad"))
		return PH_ZERO_GRAD;
	return PH_NONE;
}

static int on_push(struct an_analysis *a, struct an_proc *p, const struct an_ev *ev, int64_t ts)
{
	struct an_thread *t = thread_make(p, ev->tid);
	struct an_frame *f;

	if (!t)
		return -ENOMEM;
	if (t->depth >= AN_MAX_STACK) {
		t->lost++;
		return 0;
	}
	if (t->depth == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 8;
		struct an_frame *s = realloc(t->stack, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		t->stack = s;
		t->cap = cap;
	}
	f = &t->stack[t->depth];
	memset(f, 0, sizeof(*f));
	f->name = an_str_ref(ev->name);
	f->inst = p->next_inst++;
	t->depth++;
	if (p->mode != MODE_CUDA &&
	    an_str_starts(f->name, GP_TORCH_FWD_PREFIX, GP_TORCH_RANGE_PREFIX_LEN) &&
	    f->name->len > GP_TORCH_RANGE_PREFIX_LEN) {
		f->kind = FR_FWD;
		t->nfwd++;
		if (!p->fwd_open++)
			p->fwd_begin_seq = a->seq;
		p->fwd_count++;
		if (!p->seen_fwd && !p->seen_phase) {
			p->step1_known = 1;
			p->step1_ts = ts;
		}
		if (!p->seen_fwd) {
			p->seen_fwd = 1;
			p->first_fwd_ts = ts;
		}
		if (learn_path(a, p, t, f))
			return -ENOMEM;
	} else if (an_str_starts(f->name, "phase:", 6)) {
		f->kind = FR_PHASE;
		f->phase = phase_of(f->name);
		if (f->phase == PH_BACKWARD)
			p->bwd_begin_seq = a->seq;
		if (f->phase != PH_NONE) {
			if (!p->seen_fwd && !p->seen_phase) {
				p->step1_known = 1;
				p->step1_ts = ts;
			}
			p->seen_phase = 1;
			/* zero_grad may follow the optimizer's step, after its mark */
			p->step_began |= f->phase == PH_BACKWARD;
			if (p->nphases < sizeof(p->phases) / sizeof(p->phases[0])) {
				p->phases[p->nphases].inst = f->inst;
				p->phases[p->nphases].phase = f->phase;
				p->nphases++;
			} else {
				p->lost_phases++;
			}
		}
	}
	if (an_str_starts(f->name, "aten::", 6)) {
		const char *comma = memchr(f->name->s, ',', f->name->len);
		size_t n = comma ? (size_t)(comma - f->name->s) : f->name->len;

		f->op = an_str_intern_raw(&a->st, f->name->s, n);
		if (!f->op)
			return -ENOMEM;
	} else if (an_coll_is_call(f->name)) {
		an_coll_call_push(a, p, ev->tid, ts, f->name);
	}
	return thread_update(a, p, t);
}

static int on_pop(struct an_analysis *a, struct an_proc *p, const struct an_ev *ev, int64_t ts)
{
	struct an_thread *t = an_thread_get(p, ev->tid);
	struct an_frame *f;
	int err;

	if (!t)
		return 0; /* a pop with nothing open: the push came before the trace */
	if (t->lost) {
		t->lost--;
		return 0;
	}
	if (!t->depth)
		return 0;
	f = &t->stack[--t->depth];
	if (f->kind == FR_FWD) {
		t->nfwd--;
		if (!--p->fwd_open)
			p->fwd_end_seq = a->seq;
	}
	if (f->kind == FR_PHASE) {
		for (size_t i = p->nphases; i > 0; i--) {
			if (p->phases[i - 1].inst == f->inst) {
				memmove(&p->phases[i - 1], &p->phases[i],
					(p->nphases - i) * sizeof(p->phases[0]));
				p->nphases--;
				break;
			}
		}
	}
	if (an_coll_is_call(f->name))
		an_coll_call_pop(p, ev->tid, f->name, ts);
	an_str_unref(&a->st, f->name);
	an_str_unref(&a->st, f->op);
	err = thread_update(a, p, t);
	thread_maybe_drop(a, p, t);
	return err;
}

static int on_start(struct an_analysis *a, struct an_proc *p, const struct an_ev *ev)
{
	struct an_thread *t;
	struct an_brange *b;

	/* only the hooks' backward ranges matter; others are not attributed */
	if (p->mode == MODE_CUDA ||
	    !an_str_starts(ev->name, GP_TORCH_BWD_PREFIX, GP_TORCH_RANGE_PREFIX_LEN) ||
	    ev->name->len <= GP_TORCH_RANGE_PREFIX_LEN)
		return 0;
	t = thread_make(p, ev->tid);
	b = calloc(1, sizeof(*b));
	if (!t || !b) {
		free(b);
		return -ENOMEM;
	}
	b->tid = ev->tid;
	b->name = an_str_ref(ev->name);
	{
		struct an_brange *old = gp_u64map_get(&p->branges, ev->range.id);

		if (old) {
			gp_u64map_del(&p->branges, ev->range.id);
			an_str_unref(&a->st, old->name);
			free(old);
		}
	}
	if (gp_u64map_put(&p->branges, ev->range.id, b)) {
		an_str_unref(&a->st, b->name);
		free(b);
		return -ENOMEM;
	}
	p->bwd_begin_seq = a->seq;
	/* one open per thread: a new one replaces it */
	an_str_unref(&a->st, t->bwd_name);
	t->bwd_name = an_str_ref(ev->name);
	t->bwd_id = ev->range.id;
	t->bwd_inst = p->next_inst++;
	return thread_update(a, p, t);
}

static int on_end(struct an_analysis *a, struct an_proc *p, const struct an_ev *ev)
{
	struct an_brange *b = gp_u64map_del(&p->branges, ev->range.id);
	struct an_thread *t;
	int err = 0;

	if (!b)
		return 0;
	t = an_thread_get(p, b->tid);
	if (t && t->bwd_name && t->bwd_id == ev->range.id) {
		an_str_unref(&a->st, t->bwd_name);
		t->bwd_name = NULL;
		err = thread_update(a, p, t);
		thread_maybe_drop(a, p, t);
	}
	an_str_unref(&a->st, b->name);
	free(b);
	return err;
}

int an_attrib_event(struct an_analysis *a, struct an_proc *p, const struct an_ev *ev, int64_t ts)
{
	switch (ev->type) {
	case AE_PUSH:
		return on_push(a, p, ev, ts);
	case AE_POP:
		return on_pop(a, p, ev, ts);
	case AE_START:
		return on_start(a, p, ev);
	case AE_END:
		return on_end(a, p, ev);
	default:
		return 0;
	}
}
