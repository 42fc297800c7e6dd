/* The result's arena and the names of its enumerations (result.h). */
#include "result.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const gp_an_mode_names[GP_AN_MODE_N] = { "cuda", "tensor", "native" };
const char *const gp_an_step_when_names[GP_AN_STEP_WHEN_N] = { "in", "before", "after" };
const char *const gp_an_tl_names[GP_AN_TL_N] = { "allocated", "reserved", "other", "device" };
const char *const gp_an_leak_verdicts[GP_AN_LEAK_N] = { "no steps", "too few steps", "none", "leak" };
const char *const gp_an_advice_kinds[GP_AN_ADVICE_N] = {
	"request_too_large", "large_request", "activations", "fragmentation", "held_from_earlier_steps",
	"outside_pytorch", "outside_trace", "no_grad", "growth", "expandable_segments",
};
const char *const gp_an_oom_outcomes[GP_AN_OOM_N] = { "fatal", "later_steps", "caught", "retried" };
const char *const gp_an_oom_outcome_words[GP_AN_OOM_N] = {
	"fatal (the program did not get past it)",
	"got past by the program (it completed later steps)",
	"caught inside a library, which went on",
	"retried by the allocator, which got the memory",
};

const char *gp_an_step_text(char *buf, size_t cap, int64_t step, int when)
{
	static const char *const word[GP_AN_STEP_WHEN_N] = { "step", "before step", "after step" };

	if (!cap)
		return buf;
	if (step < 0 || when < 0 || when >= GP_AN_STEP_WHEN_N)
		buf[0] = 0;
	else
		snprintf(buf, cap, "%s %lld", word[when], (long long)step);
	return buf;
}

/* Blocks of at least ARENA_BLOCK bytes, each handed out front to back; a
 * larger request gets a block of its own. Nothing is freed before the end. */
#define ARENA_BLOCK (64u << 10)
#define ARENA_ALIGN 16u

struct block {
	struct block *next;
	size_t used, cap;
	_Alignas(16) unsigned char mem[];
};

struct gp_an_arena {
	struct block *head;
};

struct gp_an_result *gp_an_result_new(void)
{
	struct gp_an_result *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->arena = calloc(1, sizeof(*r->arena));
	if (!r->arena) {
		free(r);
		return NULL;
	}
	r->device = -1;
	r->process = -1;
	return r;
}

void gp_an_result_free(struct gp_an_result *r)
{
	struct block *b, *next;

	if (!r)
		return;
	for (b = r->arena ? r->arena->head : NULL; b; b = next) {
		next = b->next;
		free(b);
	}
	free(r->arena);
	free(r);
}

void *gp_an_alloc(struct gp_an_result *r, size_t size)
{
	struct gp_an_arena *a = r->arena;
	struct block *b = a->head;
	size_t need = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	void *p;

	if (!size)
		need = ARENA_ALIGN;
	if (need < size)
		return NULL;
	if (!b || b->cap - b->used < need) {
		size_t cap = need > ARENA_BLOCK ? need : ARENA_BLOCK;

		b = calloc(1, sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->cap = cap;
		if (a->head && need > ARENA_BLOCK) {
			/* a large one behind the current block, which keeps its room */
			b->next = a->head->next;
			a->head->next = b;
			b->used = need;
			return b->mem;
		}
		b->next = a->head;
		a->head = b;
	}
	p = b->mem + b->used;
	b->used += need;
	return p;
}

const char *gp_an_strndup(struct gp_an_result *r, const char *s, size_t len)
{
	char *p = gp_an_alloc(r, len + 1);

	if (p)
		memcpy(p, s, len);
	return p;
}

double gp_an_round(double v, int decimals)
{
	char buf[64]; /* as the schema has always written them */

	if (!isfinite(v))
		return NAN;
	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	return strtod(buf, NULL);
}

/* The names of the signals the recorder finishes a trace for, by their
 * Linux numbers (the trace's, whatever machine reads it). */
static const char *signal_name(int sig)
{
	switch (sig) {
	case 1: return "SIGHUP";
	case 2: return "SIGINT";
	case 3: return "SIGQUIT";
	case 6: return "SIGABRT";
	case 7: return "SIGBUS";
	case 8: return "SIGFPE";
	case 11: return "SIGSEGV";
	case 15: return "SIGTERM";
	default: return NULL;
	}
}

const char *gp_an_signal_text(int sig, char *buf, size_t cap)
{
	const char *name = signal_name(sig);

	snprintf(buf, cap, "signal %d%s%s%s", sig, name ? " (" : "", name ? name : "", name ? ")" : "");
	return buf;
}

const char *gp_an_phase_label(const char *phase)
{
	return phase && !strcmp(phase, "none") ? "(no phase)" : phase;
}

const char *gp_an_kind_meaning(const char *kind)
{
	if (!kind)
		return NULL;
#define GP_FORMAT(version, meaning)
#define GP_CAT(id, name, meaning)
#define GP_KIND(id, name, meaning) if (!strcmp(kind, name)) return meaning;
#define GP_EVENT(id, name, ph, scope, cat, meaning)
#define GP_TOP(id, key, read, type, unit, meaning)
#define GP_FIELD(id, key, read)
#define GP_ARG(event, field, type, unit, when, meaning)
#include "exporters/trace_format.def"
#include "exporters/trace_format_undef.h"
	return NULL;
}
