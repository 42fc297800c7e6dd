/* The result of an analysis, typed, in memory: what `gpuprof analyze`
 * prints as text (render_text.c) or as JSON (render_json.c, schema
 * gpuprof.analyze/1 in SCHEMA.md), and what compare and check work on.
 * Members mirror the schema's, one for one: result_schema.def lists the
 * JSON members and the struct members they come from; SCHEMA.md says what
 * each means.
 *
 * Ownership: gp_an_result_new() makes a result and its arena; everything
 * the result points to (strings, arrays, trees) is in that arena, or is a
 * static name (phases, categories, kinds, modes); gp_an_result_free()
 * frees it all in one call. Nothing in it points into the analysis, which
 * is gone by the time anyone reads it. Strings are UTF-8, NUL-terminated;
 * a NULL string is JSON's null.
 *
 * Who fills it: gp_an_analyze() (analyze.h) from traces, every member; or
 * compare's reader of summaries (viewer/compare/summary.c) from a
 * gpuprof.analyze/1 document, only the members compare uses
 * (result_schema.def's READ column): a result from a summary is never
 * rendered.
 *
 * Numbers that JSON may give as null: sizes are struct gp_an_opt (known: 0
 * for null); steps and other signed values use -1; fractions and times that
 * may be null are NaN. Times are seconds from time_origin_ns and, like
 * shares and rates, already rounded to the decimals the schema keeps
 * (gp_an_round), so text and JSON say the same number. */
#ifndef GPUPROF_AN_RESULT_H
#define GPUPROF_AN_RESULT_H

#include <stddef.h>
#include <stdint.h>

#include "step_when.h" /* the model decides where a moment falls among the steps */

enum gp_an_mode { GP_AN_MODE_CUDA, GP_AN_MODE_TENSOR, GP_AN_MODE_NATIVE, GP_AN_MODE_N };
extern const char *const gp_an_mode_names[GP_AN_MODE_N]; /* cuda, tensor, native */

extern const char *const gp_an_step_when_names[GP_AN_STEP_WHEN_N]; /* in, before, after */

/* "step 3", "before step 1", "after step 20" into buf; "" for step -1
 * (no steps marked). Returns buf. */
const char *gp_an_step_text(char *buf, size_t cap, int64_t step, int when);

/* A size that may not be known. */
struct gp_an_opt {
	int known;
	uint64_t v;
};

/* Bytes under one name: a category's `by`, by_phase, by_op, by_api. */
struct gp_an_group {
	const char *name;
	uint64_t bytes;
	double share; /* of the set's bytes */
	uint64_t count;
};

/* A grouping that may be null (absent from the set). */
struct gp_an_groups {
	int present;
	struct gp_an_group *v;
	size_t n;
};

struct gp_an_category {
	const char *category;  /* an_cat_names: parameters, ... other */
	uint64_t bytes;
	double share;
	uint64_t count;
	struct gp_an_groups by; /* `other` only: by what it is */
};

/* A node of the layer tree; children largest first, ties by name (2
 * before 11), a run of alike siblings by its total (layers.h). */
struct gp_an_node {
	const char *name;
	uint64_t bytes;
	double share;
	uint64_t count;
	/* the category holding most of its bytes (its children's included)
	 * and those bytes; NULL where the set has no categories (cuda mode) */
	const char *category;
	int64_t category_bytes; /* -1: no categories */
	struct gp_an_node *children;
	size_t nchildren;
	/* on the first of a run of alike siblings, which it and the next n - 1
	 * are: their totals, the least and most of one, and the row's label,
	 * "0-11 (12 alike, each 102 MiB)"; n 0 elsewhere */
	struct {
		size_t n;
		uint64_t bytes, count, min, max;
		double share;
		const char *label;
	} alike;
};

/* One allocation of a set's top. */
struct gp_an_alloc {
	uint64_t bytes, addr;
	struct gp_an_opt requested; /* the bytes asked for, where the trace says */
	double t;
	int64_t step;          /* -1: null */
	uint8_t step_when;      /* enum gp_an_step_when */
	const char *phase, *layer, *category, *what, *api, *op, *kind;
	const char *library;   /* the library that made the call, where the trace says it */
	const char *line;      /* its source line, "file.py:42 in forward"; NULL: none */
	double freed_t;        /* NaN: never freed */
};

/* A Python stack as reports name its frames: the program's own, innermost
 * first ("file.py:42 in forward"); library frames left out. */
struct gp_an_frames {
	const char **frames;
	size_t n;
};

/* Bytes made at one source line: the innermost frame of the program's own
 * code in their Python stacks; file, line and function NULL/0 for what has
 * none (made without Python frames; without --stacks, blocks a module names,
 * whose stacks were not read). */
struct gp_an_line {
	const char *name;      /* "file.py:42 in forward" (the file's base name) */
	const char *file, *function;
	int64_t line;          /* -1: null */
	uint64_t bytes;
	double share;
	uint64_t count;
	struct gp_an_frames stack; /* its stack (the largest allocation's) */
	uint64_t library_frames; /* frames of libraries inside the line, folded */
};

/* A grouping by source line; not present when the trace has no stacks. */
struct gp_an_lines {
	int present;
	struct gp_an_line *v;
	size_t n;
};

/* Allocations alive at one moment, grouped. */
struct gp_an_set {
	uint64_t live_bytes, live_allocations;
	int has_categories;    /* null in cuda mode */
	struct gp_an_category *categories;
	size_t ncategories;
	struct gp_an_node *layers; /* the roots of the layer tree */
	size_t nlayers;
	struct gp_an_groups by_phase, by_op, by_api;
	struct gp_an_lines by_line;
	/* of the framework's bytes (the peak's number), those that have a
	 * module (layer), a source line, one or both */
	struct {
		uint64_t bytes, layer, line, either;
	} attributed;
	struct gp_an_alloc *top;
	size_t ntop;
};

/* Reserved and allocated at one moment, and when. */
struct gp_an_moment {
	uint64_t gap, reserved, allocated;
	double t;
	int64_t step;          /* -1: null */
	uint8_t step_when;      /* enum gp_an_step_when */
	const char *phase;     /* NULL in cuda mode */
};

struct gp_an_amount {
	int known;
	struct gp_an_opt end, peak;
	double peak_t;         /* NaN: null */
	const char *source;
};

struct gp_an_kind_use {
	const char *kind;      /* an_kind_names */
	uint64_t end, peak, allocations;
};

struct gp_an_split {
	int known;
	const char *why;                  /* when not known */
	int expandable;                   /* PyTorch's expandable_segments was on */
	uint64_t segments, bytes;
	int has_worst;                    /* the one with the most cached then */
	struct {
		double t;
		int64_t step;             /* -1: null */
		uint8_t step_when;  /* enum gp_an_step_when */
		const char *phase;
		uint64_t cached, block, segment, reserved, allocated;
	} worst;
};

struct gp_an_summary {
	struct gp_an_amount allocated, reserved;
	uint64_t total_end, total_peak;   /* device_total */
	double total_peak_t;              /* NaN: null */
	int has_other;                    /* other is null in cuda mode */
	uint64_t other_end, other_peak, other_allocations;
	uint64_t allocations, frees, live_allocations_end, max_live_allocations;
	struct gp_an_kind_use *kinds;
	size_t nkinds;
	struct {
		int known;
		const char *source, *why;
		int has_worst, has_at_peak;
		struct gp_an_moment worst, at_peak;
		struct gp_an_opt end;
	} frag;
	/* the cache's fragmentation (native mode with the allocator hook):
	 * segments PyTorch reserved while the pool they went to held, free, at
	 * least the bytes of the block they were made for (CATEGORIES.md);
	 * JSON: summary.cache.fragmentation */
	struct gp_an_split split;
};

/* A collective call (NCCL's kernel) around a moment (collective.h). */
struct gp_an_collective {
	const char *op;        /* "AllGather": what the call's (else the kernel's) name says */
	const char *kernel;    /* the kernel's name without its arguments */
	const char *call;      /* NCCL's range of the call that launched it; NULL: none */
	double launch_t;       /* its launch call's end; NaN: the call is not in the trace */
	double start_t, end_t; /* its kernel on the GPU */
	int64_t stream;        /* CUPTI's stream id */
	int64_t tid;           /* the launching thread; -1: not known */
};

/* The collectives outstanding at a moment (launched before it, ended after
 * it), the last that ended before it and the first launched after it;
 * not present where the device ran no collective. */
struct gp_an_collectives {
	int present;
	uint64_t seen;         /* collectives on this device in the whole trace */
	struct gp_an_collective *during; /* by launch */
	size_t nduring;
	uint64_t more;         /* outstanding ones left out (8 are kept) */
	int has_before, has_after;
	struct gp_an_collective before, after;
};

struct gp_an_peak {
	const char *what;      /* allocated, reserved, device */
	uint64_t bytes;
	double t;
	int64_t step;          /* -1: null */
	uint8_t step_when;      /* enum gp_an_step_when */
	const char *phase, *layer;
	uint64_t other, device_total, device_static;
	struct gp_an_opt reserved;
	struct gp_an_collectives collectives;
	struct gp_an_set set;
};

struct gp_an_step_point {
	int64_t step;
	double t;
	uint64_t live;
	uint64_t peak;          /* the most live since the point before: the step's peak */
	struct gp_an_opt reserved;
	uint64_t total;
};

enum gp_an_leak_verdict {
	GP_AN_LEAK_NO_STEPS, GP_AN_LEAK_TOO_FEW, GP_AN_LEAK_NONE, GP_AN_LEAK_FOUND, GP_AN_LEAK_N
};
extern const char *const gp_an_leak_verdicts[GP_AN_LEAK_N];

/* What a leak leaves alive: allocations of its steps still live at the
 * last boundary. */
struct gp_an_survivors {
	int64_t from_step, to_step;
	uint64_t bytes, allocations;
	double per_step;
	struct gp_an_node *layers;
	size_t nlayers;
	struct gp_an_groups by_phase, by_op;
	struct gp_an_lines by_line;
};

/* Which members are there depends on the verdict (SCHEMA.md): why with no
 * steps; points with steps; the rest past the warm-up; survivors for a leak. */
struct gp_an_leak {
	enum gp_an_leak_verdict verdict;
	int warmup_steps;
	const char *why;
	uint64_t points;
	int64_t since_step, last_step;
	double rate_per_step, rate_per_second, r2, steps_until_full; /* NaN: null */
	uint32_t grew, shrank, flat;
	uint64_t live_first, live_last;
	int has_survivors;
	struct gp_an_survivors survivors;
};

/* Growth that is not a leak (leak.h, an_growth_fit): each step's peak above
 * the one before, up to the last step. present 0: none. */
struct gp_an_growth {
	int present;
	int64_t since_step, last_step;
	uint64_t first_peak, last_peak, last_increase;
	uint64_t live_first, live_last; /* live between steps, then */
	double factor_per_step, bytes_per_step; /* rounded: 4 and 1 decimals */
	struct gp_an_opt next_peak;     /* at that rate, the next step's */
};

/* A holder at the outline's peak: a category or a layer and its bytes */
struct gp_an_holder {
	const char *name;
	uint64_t bytes;
	double share; /* of the peak */
};

/* The flight recorder's outline of the whole run (TRACE_FORMAT.md, "Flight
 * recorder"); present 0: the trace has none. */
struct gp_an_outline {
	int present;
	uint64_t records, steps;
	int64_t first_step, last_step;  /* -1: no step */
	double begin_t, end_t;
	uint64_t allocated_peak;
	int64_t peak_step;               /* the step the stretch covers, 0: before the first mark */
	double peak_t;
	uint64_t reserved_peak, device_peak;
	uint64_t ooms, oom_bytes;
	int64_t first_oom_step;          /* -1: none */
	double first_oom_t;              /* NaN: none */
	uint64_t dropped_segments, dropped_bytes;
	double window_t;                 /* where the full events begin; NaN: from the start */
	const char *dump;                /* why the trace was written (gpuprof.dump's reason), or NULL */
	struct gp_an_holder *by_category, *by_layer;
	size_t ncategory, nlayer;
};

/* Advice about a failed allocation, computed by the analysis (advice.c);
 * renderers print text. bytes is the amount it is about: the request
 * (REQUEST_TOO_LARGE, LARGE_REQUEST: a fifth of the device or more, with
 * of = the device's memory), the activations (of
 * = PyTorch's memory then), the unused cache (FRAGMENTATION), what earlier
 * steps left (HELD_FROM_EARLIER_STEPS, of = the leak's growth per step or
 * 0), memory outside PyTorch (OUTSIDE_PYTORCH) or outside the trace
 * (OUTSIDE_TRACE). */
enum gp_an_advice_kind {
	GP_AN_ADVICE_REQUEST_TOO_LARGE,
	GP_AN_ADVICE_LARGE_REQUEST,
	GP_AN_ADVICE_ACTIVATIONS,
	GP_AN_ADVICE_FRAGMENTATION,
	GP_AN_ADVICE_HELD_FROM_EARLIER_STEPS,
	GP_AN_ADVICE_OUTSIDE_PYTORCH,
	GP_AN_ADVICE_OUTSIDE_TRACE,
	/* about the whole run (gp_an_device.advice, advice_run.c): activations
	 * kept for a backward that never came (bytes: those live at the peak,
	 * of = the peak); growth that is not a leak (bytes: the mean increase
	 * per step, of = the last step's peak); expandable segments (bytes:
	 * what they would save at most, of = the reserved peak) */
	GP_AN_ADVICE_NO_GRAD,
	GP_AN_ADVICE_GROWTH,
	GP_AN_ADVICE_EXPANDABLE_SEGMENTS,
	GP_AN_ADVICE_N
};
extern const char *const gp_an_advice_kinds[GP_AN_ADVICE_N]; /* the schema's names */

struct gp_an_advice {
	enum gp_an_advice_kind kind;
	uint64_t bytes, of;
	const char *text;
};

/* What became of a failed allocation (CATEGORIES.md, "Failed
 * allocations"): the program did not get past it (fatal); it caught the
 * error and completed steps after it; a library caught it and went on
 * with what it was doing (cuDNN's workspace trials); the allocator freed
 * its cache and its retry got the memory (recovered). */
enum gp_an_oom_outcome {
	GP_AN_OOM_FATAL, GP_AN_OOM_LATER_STEPS, GP_AN_OOM_CAUGHT, GP_AN_OOM_RETRIED, GP_AN_OOM_N
};
extern const char *const gp_an_oom_outcomes[GP_AN_OOM_N]; /* the schema's names */
/* what the reports say of each: "fatal", "got past by the program"... */
extern const char *const gp_an_oom_outcome_words[GP_AN_OOM_N];

struct gp_an_oom {
	enum gp_an_oom_outcome outcome;
	int fatal;             /* outcome == GP_AN_OOM_FATAL */
	double past_after;     /* seconds until the program got past it (caught,
				* retried); NaN: not known, or not got past */
	double t;
	int64_t step;          /* -1: null */
	uint8_t step_when;      /* enum gp_an_step_when */
	const char *phase, *layer, *op, *api;
	int64_t tid;
	uint64_t request;
	struct gp_an_opt free, total;
	int64_t result;
	/* PyTorch's segments then, where known (their blocks' categories
	 * index set.categories) */
	struct gp_an_segment *segments;
	size_t nsegments;
	int has_segments;
	uint64_t allocated, other, device_total, device_static;
	struct gp_an_opt reserved, outside_trace;
	uint32_t retries;
	uint64_t released_after;
	int recovered;
	/* PyTorch's own word on it (native mode's allocator hook): it raised
	 * OutOfMemoryError; request is what its message names */
	int raised;
	struct {
		uint64_t block, allocated, reserved, free;
	} pytorch;
	struct gp_an_collectives collectives;
	int detailed;          /* set is filled */
	struct gp_an_set set;
	struct gp_an_advice *advice;
	size_t nadvice;
};

/* Memory over time in buckets of equal width (the analysis settings'
 * timeline): the least and the most of each amount while each bucket
 * lasted, so that no peak is lost; AN_TL_BUCKETS (4096) at most. */
enum gp_an_tl_series { GP_AN_TL_ALLOCATED, GP_AN_TL_RESERVED, GP_AN_TL_OTHER, GP_AN_TL_DEVICE, GP_AN_TL_N };
extern const char *const gp_an_tl_names[GP_AN_TL_N]; /* allocated, reserved, other, device */

struct gp_an_timeline {
	int present;
	double t0, dt;         /* bucket 0's start, and the width, in seconds */
	size_t n;
	/* per series: NULL when never known; else n values each, those before
	 * first[] not known (JSON null) */
	uint64_t *min[GP_AN_TL_N], *max[GP_AN_TL_N];
	size_t first[GP_AN_TL_N];
	/* the phase that took most of each bucket: an index into phases */
	uint8_t *phase;
	const char *const *phases;
	size_t nphases;
};

/* One of PyTorch's segments at a moment, and how its blocks fill it. */
struct gp_an_segment {
	uint64_t addr, bytes;
	uint64_t used;          /* its blocks alive then */
	uint64_t largest_free;  /* its largest stretch without a block */
	uint64_t nblocks;
	/* 3 a block, by address: offset in the segment, bytes, the index of
	 * its category in the breakdown's categories (-1: none); NULL where
	 * the blocks were left out (the budget, BREAKDOWN_BLOCKS) or there
	 * are none: has_blocks says which */
	int64_t *blocks;
	int has_blocks;
};

/* What was live at one moment: one of the run's moments (each the most
 * of its stretch of time, gpuprof report), or the time --at asks for. */
struct gp_an_breakdown {
	double t;              /* the moment, to the nanosecond */
	double from, to;       /* the stretch it is the most of: its first and
				* last event (--at: t, t) */
	/* the device's memory events before the stretch, and in it (--at:
	 * those up to t, and 0) */
	uint64_t first_event, events;
	uint64_t bytes;        /* the framework's live bytes, as the peak counts them */
	int64_t step;          /* -1: null */
	uint8_t step_when;     /* enum gp_an_step_when */
	const char *phase;     /* NULL in cuda mode */
	int after_end;         /* --at: the device's trace ended before it */
	struct gp_an_set set;  /* live_bytes, live_allocations and categories only */
	/* the largest BREAKDOWN_ROWS groups by innermost layer and by source
	 * line, and "(the rest)"; has_lines 0: the trace has no stacks */
	struct gp_an_holder *by_layer, *by_line;
	size_t nlayer, nline;
	int has_lines;
	/* the largest allocations alive then: indices into the device's bands */
	uint64_t *largest;
	size_t nlargest;	/* PyTorch's segments then (native mode with the hook), and their sum */
	int has_segments;
	struct gp_an_opt reserved;
	struct gp_an_segment *segments;
	size_t nsegments;
};

/* One process on one GPU. */
struct gp_an_device {
	int64_t pid;
	size_t trace;          /* index into gp_an_result.traces */
	int device;
	const char *name, *uuid;
	struct gp_an_opt capacity;
	enum gp_an_mode mode;
	struct gp_an_summary summary;
	int has_peak;
	struct gp_an_peak peak;
	struct {
		uint64_t count;
		uint32_t stride;
		struct gp_an_step_point *series;
		size_t nseries;
		double begin_t;   /* step 1 began (first forward or phase); NaN: never */
		int unfinished;   /* a step began after the last mark: count + 1 */
	} steps;
	struct gp_an_leak leak;
	struct gp_an_growth growth;
	struct gp_an_outline outline;
	/* advice about the run, not about a failure (advice_run.c) */
	struct gp_an_advice *advice;
	size_t nadvice;
	struct gp_an_timeline timeline;
	/* with the timeline: what was live at moments of the run; with --at,
	 * at that time; the allocations they name (bands) */
	struct gp_an_breakdown *moments;
	size_t nmoments;
	int has_at;
	struct gp_an_breakdown at;
	struct gp_an_alloc *bands;
	size_t nbands;
	/* each band's Python stack (n 0: none); NULL: the trace has none */
	struct gp_an_frames *band_stacks;
	/* failed allocations: the one that ended the program (or the newest the
	 * program did not get past) first, then the others not recovered
	 * from, then those recovered from, each in time order; at most
	 * AN_MAX_OOMS, the rest counted in ooms_left_out */
	struct gp_an_oom *ooms;
	size_t nooms;
	uint64_t oom_count;
	struct {
		uint64_t count, recovered, raised, released, retries;
	} ooms_left_out;
	/* every failed allocation by outcome, listed or not: they add up to
	 * oom_count */
	uint64_t oom_outcomes[GP_AN_OOM_N];
	int has_oom_outcomes;  /* 0: a summary written before they were */
	/* those got past inside a library (caught, retried): how many, the
	 * bytes they asked for, the seconds until each was got past */
	struct {
		uint64_t count, bytes;
		double seconds;
	} ooms_got_past;
};

struct gp_an_trace {
	const char *path;
	int64_t pid;
	const char *cmdline, *hostname;
	enum gp_an_mode mode;
	int has_torch;
	const char *torch_version, *torch_alloc_conf, *torch_backend;
	int64_t start_unix_ns; /* -1: null (a summary's) */
	int64_t rank;          /* -1: null */
	int64_t world_size, local_rank, local_world_size; /* -1: null */
	int64_t job_start_unix_ns; /* -1: null */
	int complete, cut_short, recovered;
	int clean_exit;        /* -1: null */
	int end_signal;        /* the signal the program died of, as the recorder saw it; 0: none */
	double end_t;          /* when it ended: gpuprof.end's time, else the last event's; NaN: none */
	uint64_t events, late_events, window_overflows, max_events_held;
	int watermarks;
	uint64_t dropped_cupti, dropped_host, dropped_marked;
	uint64_t late_memory_records, unmatched_frees, reused_addresses, unattributed_allocations;
	uint32_t profiler_windows;
	int has_torch_history;
	uint64_t history_points, history_marks;
	int history_complete;
	/* native mode: gpuprof's hook on PyTorch's caching allocator */
	int has_hook;
	struct {
		int attached, stacks;
		const char *why;     /* why not attached; NULL: attached or not said */
		uint64_t allocated_before, reserved_before, sizes_guessed;
	} hook;
	const char **notes;
	size_t nnotes;
};

/* A physical GPU shared by several of the processes. */
struct gp_an_gpu_share {
	int64_t pid;
	int device;
	uint64_t bytes;
};

struct gp_an_gpu {
	const char *uuid, *name;
	struct gp_an_opt capacity;
	uint64_t peak;
	double peak_t;         /* NaN: null */
	struct gp_an_gpu_share *by_process;
	size_t nby_process;
};

/* The ranks of a distributed job side by side (ranks.c): present when the
 * traces of two or more ranks were analyzed together. */
struct gp_an_rank {
	int64_t rank, local_rank;  /* local_rank -1: null */
	size_t device;             /* index into gp_an_result.devices */
	const char *hostname;      /* NULL: not said */
	uint64_t peak;             /* the device's peak (peak.what), 0 without one */
	struct gp_an_opt allocated, reserved; /* their peaks, where known */
	uint64_t device_peak;      /* summary.total_peak: all this process held */
	uint64_t other_peak;       /* outside the framework: NCCL, cuBLAS... */
	struct gp_an_opt capacity, headroom; /* headroom: capacity - device_peak */
	uint64_t oom_count;
	double first_oom_t;        /* when it ran out (ranks.c, first_oom); NaN: never */
	int64_t first_oom_step;    /* its step; -1: none, or no steps marked */
	uint8_t first_oom_step_when; /* enum gp_an_step_when */
	int end_signal;            /* the signal that ended it (gp_an_trace); 0: none */
	double end_t;              /* its trace's last event; NaN: none */
	/* ended by a signal after the rank that runs out first ran out (the
	 * launcher stopping the job), not for want of memory itself */
	int stopped_after_first;
};

/* Bytes under one name on the rank that runs out first and on the rank it
 * is compared with, at each one's peak. */
struct gp_an_rank_diff {
	const char *name;
	uint64_t first, typical;
	int64_t delta;             /* first - typical */
};

enum gp_an_first_out { GP_AN_FIRST_OOM, GP_AN_FIRST_HEADROOM, GP_AN_FIRST_PEAK, GP_AN_FIRST_N };
extern const char *const gp_an_first_out_names[GP_AN_FIRST_N]; /* oom, headroom, peak */

struct gp_an_ranks {
	int present;
	int64_t world_size;        /* -1: not said */
	const char *what;          /* what the peaks are: allocated, reserved, device */
	struct gp_an_rank *v;      /* by rank, then pid and device */
	size_t n;
	int64_t *missing;          /* ranks of world_size that left no trace: the */
	size_t nmissing;           /* lowest GP_AN_MISSING_LISTED of them */
	uint64_t missing_count;    /* all of them */
	size_t min, max, median;   /* indices into v, by peak (median: the lower one) */
	uint64_t spread;           /* max's peak - min's */
	double spread_share;       /* of max's peak */
	size_t first;              /* the rank that runs out first (index into v) */
	enum gp_an_first_out first_by;
	size_t typical;            /* what it is compared with: the median, or the
				    * smallest when the first is the median */
	int64_t other_delta;       /* outside the framework, first - typical */
	struct gp_an_rank_diff *categories, *layers, *lines; /* largest changes first */
	size_t ncategories, nlayers, nlines;
};

struct gp_an_arena;

struct gp_an_result {
	const char *version;   /* gpuprof_version */
	int top;
	int device;            /* options.device; -1: null */
	int64_t process;       /* options.process; -1: null */
	int64_t time_origin_ns;
	struct gp_an_trace *traces;
	size_t ntraces;
	struct gp_an_device *devices;
	size_t ndevices;
	struct gp_an_gpu *gpus;
	size_t ngpus;
	struct gp_an_ranks ranks;
	struct gp_an_arena *arena; /* owns all of the above */
};

/* A new, empty result with its arena; NULL when out of memory. */
struct gp_an_result *gp_an_result_new(void);
void gp_an_result_free(struct gp_an_result *r);

/* Memory of r's arena, zeroed, freed with r; NULL when out of memory. */
void *gp_an_alloc(struct gp_an_result *r, size_t size);
/* A copy of s[0..len) in r's arena, NUL-terminated. */
const char *gp_an_strndup(struct gp_an_result *r, const char *s, size_t len);

/* "signal 15 (SIGTERM)" into buf: a signal's number, and its name where
 * it is one the recorder finishes a trace for (by its Linux number, whatever
 * machine reads the trace). Returns buf. */
const char *gp_an_signal_text(int sig, char *buf, size_t cap);

/* A phase (the schema's name) as reports show it: "none", made outside
 * forward, backward, the optimizer's step and zero_grad, is "(no phase)";
 * any other is itself. The page says the same (viewer/report/assets/js/
 * format.js, PHASE_LABELS). NULL stays NULL. */
const char *gp_an_phase_label(const char *phase);

/* What a memory kind is ("device_static": "a module's device globals"), as
 * exporters/trace_format.def defines it; NULL for a name it does not know. */
const char *gp_an_kind_meaning(const char *kind);

/* ranks.c: r->ranks from r's devices and traces; -ENOMEM. */
int gp_an_ranks_fill(struct gp_an_result *r);

/* v rounded to the given decimals as printf writes it (the schema's
 * precision: times 6, shares 4, rates 1); NaN when v is not finite. */
double gp_an_round(double v, int decimals);

#endif
