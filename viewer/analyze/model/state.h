/* What an analysis knows while it reads: per process, the threads with their
 * open NVTX ranges, the phase and the step (attrib.c); per process and
 * device, the live allocations, the numbers memory_summary() shows, the
 * moments worth reporting (memory.c). Memory is bounded by what is alive:
 * live allocations, open ranges, and the allocations kept for a moment
 * reported later (a snapshot, see struct an_snap). */
#ifndef GPUPROF_AN_STATE_H
#define GPUPROF_AN_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "collective.h"
#include "event.h"
#include "exporters/u64_map.h"
#include "mapped.h"
#include "moments.h"
#include "source.h"
#include "step_series.h"
#include "strtab.h"
#include "timeline.h"

/* What the program was doing, from the PyTorch hooks' ranges. */
enum an_phase {
	PH_NONE,      /* no phase range, no module forward on that thread */
	PH_FORWARD,   /* inside a fwd: range, no phase range open */
	PH_BACKWARD,
	PH_OPTIMIZER, /* phase:optimizer.step */
	PH_ZERO_GRAD,
	PH_N
};
extern const char *const an_phase_names[PH_N];

/* Categories of allocations, decided after the trace is read (classify.c,
 * CATEGORIES.md). */
enum an_cat {
	CAT_PARAMETERS, CAT_GRADIENTS, CAT_OPTIMIZER, CAT_ACTIVATIONS, CAT_TEMPORARIES,
	CAT_INPUTS, CAT_OTHER, CAT_N
};
extern const char *const an_cat_names[CAT_N];

enum an_frame_kind { FR_OTHER, FR_FWD, FR_PHASE };

struct an_frame {
	struct an_str *name; /* reference */
	struct an_str *op;   /* reference: the op of an aten:: range, else NULL */
	uint32_t inst;       /* unique per process, grows with time */
	uint8_t kind;        /* enum an_frame_kind */
	uint8_t phase;       /* FR_PHASE: enum an_phase */
};

#define AN_MAX_STACK 256

struct an_thread {
	int64_t tid;
	struct an_frame *stack;
	uint32_t depth, cap;
	uint32_t lost;       /* pushes past AN_MAX_STACK, popped first */
	uint32_t nfwd;       /* fwd: frames on the stack */
	uint64_t bwd_id;     /* the open bwd: range started on this thread */
	struct an_str *bwd_name; /* reference, NULL when none */
	uint32_t bwd_inst;
	/* cached from the above; recomputed when it changes */
	struct an_str *layer; /* reference */
	struct an_str *op;    /* borrowed from a frame */
	uint32_t range_inst;  /* innermost frame (or open bwd: range) */
};

struct an_open_phase {
	uint32_t inst;
	uint8_t phase;
};

/* One allocation, live or kept for a snapshot. */
struct an_rec {
	uint64_t addr, bytes;
	uint64_t requested;  /* the bytes asked for (a PyTorch block's), else bytes */
	uint64_t seq;        /* processing order, global */
	int64_t ts, free_ts; /* absolute ns (ts_base_ns + ts) */
	int64_t tid;         /* thread of its API call; 0 when unknown */
	uint32_t ref;
	uint32_t stack;      /* a PyTorch block's Python stack (src->stacks), 0 none */
	uint32_t step, free_step;
	uint32_t phase_inst, range_inst, fwd_count, free_fwd_count;
	uint16_t flags;      /* R_* */
	uint8_t kind, phase, free_phase;
	struct an_str *layer, *op, *api; /* references */
	/* the library that made the call (its alloc event's caller), and
	 * "api (library)" that groups by both; references, NULL when unknown */
	struct an_str *library, *api_library;
};

enum {
	R_ASYNC = 1 << 0,
	R_OTHER = 1 << 1,           /* not the framework's (torch modes) */
	R_FREED = 1 << 2,
	R_NO_API = 1 << 3,          /* its API call was not in the trace */
	R_BEFORE_FWD = 1 << 4,      /* made before the first forward began */
	R_FREED_IN_RANGE = 1 << 5,  /* freed while its innermost range was still open */
	R_FREED_IN_PHASE = 1 << 6,  /* freed while its phase range was still open */
	R_DEVICE = 1 << 7,          /* device memory (kinds device and array) */
	R_RELEASED_ON_OOM = 1 << 8, /* freed while a failed allocation was retried */
	R_TORCH = 1 << 9,           /* a block of PyTorch's caching allocator (its hook) */
	R_NAMED = 1 << 10,          /* its layer is the module of a parameter or state it holds */
	R_PARAM = 1 << 11,          /* a parameter gathered whole (gpuprof:torch.param) */
	/* made in a forward and freed after that forward had ended, before
	 * another began, with no backward begun in between: kept for a
	 * backward that never came */
	R_KEPT_NO_BACKWARD = 1 << 12,
	R_SUMMARISED = 1 << 13,     /* counted, not kept: past AN_MAX_LIVE_RECORDS */
};

/* The allocations alive at one moment (cut = the last seq processed then):
 * those still live, plus those freed since, which are kept here (a
 * reference each) instead of being forgotten. */
struct an_snap {
	int taken;
	uint64_t cut;
	struct an_rec **stash;
	size_t n, cap;
};

#define AN_MAX_OOMS 8

struct an_oom {
	int64_t ts, tid;
	uint32_t step;
	uint8_t phase;
	struct an_str *layer, *op, *api; /* references */
	uint64_t request, free, total;
	int has_meminfo;
	int64_t result;
	uint64_t fw_live, other_live, total_live, static_live, reserved;
	int reserved_known;
	uint32_t retries;     /* the same request failed again right after */
	uint64_t released;    /* bytes freed between the failure and the next allocation */
	int recovered;        /* an allocation of the request followed */
	int open;             /* still watching what follows */
	/* Did the failing thread go on with what it was doing? range_inst:
	 * the innermost range open on it at the failure (0: none); watch:
	 * not decided yet; went_on: it allocated again, or failed again,
	 * inside that range (a library caught the error: cuDNN's workspace
	 * trials); past_ts: when it went on, or the allocation that
	 * recovered it came (0: neither) */
	uint32_t range_inst;
	int watch, went_on;
	int64_t past_ts;
	struct an_snap snap;
	struct an_seg *segs;  /* PyTorch's segments then (an_segments_now) */
	size_t nsegs;
	struct an_coll_moment coll; /* collectives outstanding then */
	/* PyTorch's own word on it (torch.oom): it raised OutOfMemoryError */
	int torch;
	uint64_t torch_block, torch_allocated, torch_reserved, torch_free;
};

struct an_proc;

/* Reserved and allocated at one moment of a device, and when it was. */
struct an_frag_moment {
	uint64_t res, alloc;
	int64_t ts;
	uint32_t step;
	uint8_t phase;
};

static inline uint64_t an_frag_gap(const struct an_frag_moment *m)
{
	return m->res > m->alloc ? m->res - m->alloc : 0;
}

/* Segments PyTorch reserved while the pool they went to held, free, at
 * least the bytes of the block they were made for: its cache was in pieces
 * too small (fragmentation; CATEGORIES.md). worst: the one with the most
 * cached then. */
struct an_split {
	uint64_t segments, bytes;
	struct {
		uint64_t cached, block, segment, res, alloc;
		int64_t ts;
		uint32_t step;
		uint8_t phase;
	} worst;
};

struct an_pd {
	struct an_proc *proc;
	uint32_t device;
	struct gp_u64map live; /* addr -> struct an_rec */
	uint64_t live_count, max_live_count;
	/* allocations made while the analysis held AN_MAX_LIVE_RECORDS records
	 * (an_max_live_records): no record, only their bytes, by kind and by
	 * whether they are the framework's, until their frees (which say
	 * their size) take them out again */
	uint64_t summed_live[K_N][2];
	uint64_t summed_count;         /* live now */

	uint64_t kind_live[K_N], kind_peak[K_N], kind_allocs[K_N];
	int64_t kind_peak_ts[K_N];
	uint64_t fw_live, other_live;         /* device memory: framework's and not */
	uint64_t fw_peak, other_peak, total_peak;
	int64_t fw_peak_ts, total_peak_ts;
	uint64_t fw_allocs, other_allocs, frees;

	/* stream-ordered pools: pool address -> size; their sum is reserved
	 * in tensor mode */
	struct gp_u64map pools;
	uint64_t pool_sum, pool_peak;
	int64_t pool_peak_ts;
	int has_pool;

	/* allocated/reserved as PyTorch reported them (gpuprof:torch.memory) */
	int has_torch_mem;
	uint64_t torch_allocated, torch_reserved, torch_allocated_peak;
	/* ... from its allocator's history (--torch-history): every change,
	 * not samples, so the peak's time (that of the mark or point that
	 * brought it) is reported */
	int torch_hist;
	int64_t torch_allocated_peak_ts;

	/* fragmentation: reserved - allocated, where both are known */
	int frag_known;
	struct an_frag_moment frag_worst; /* the largest gap (0: none yet) */
	/* when reserved first reached its peak: how much of the most the run
	 * ever held was not in use (the end's gap is often the whole cache,
	 * freed by the program and kept by the allocator) */
	struct an_frag_moment frag_peak;
	/* a segment just came (PyTorch's hook): its block is next */
	int segment_awaits_block;
	int frag_peak_before_block; /* frag_peak was noted then */

	/* native mode with the hook: PyTorch's two pools (an_torch_pool), what
	 * each reserved and handed out; a new segment's pool and its free
	 * bytes just before it, judged at the block it was made for */
	uint64_t tpool_reserved[2], tpool_allocated[2];
	int seg_new_pool;
	uint64_t seg_new_bytes, seg_new_cached;
	int seg_mapped;       /* pages of expandable segments were mapped */
	struct an_mapped mapped; /* those pages now, as address ranges */
	struct an_split split;

	/* the peak of fw_live */
	struct an_snap peak;
	int64_t peak_ts;
	uint32_t peak_step;
	uint8_t peak_phase;
	uint64_t peak_other, peak_reserved, peak_static;
	uint64_t peak_device;      /* an_pd_device_live() then */
	int peak_reserved_known;
	struct an_str *peak_layer; /* reference: what the allocating thread was in */
	struct an_coll_moment peak_coll; /* collectives outstanding at the peak */

	/* collective calls (NCCL's kernels) on this device */
	struct an_coll_dev coll;

	/* the last step boundary */
	struct an_snap step_snap;
	uint32_t step_snap_step;

	struct an_step_pt series[AN_MAX_SERIES];
	size_t nseries;
	uint32_t stride;      /* one point kept every `stride` step marks */
	uint64_t step_max;    /* fw_live's most since the last point kept */
	uint64_t marks_seen;

	/* the newest AN_MAX_OOMS incidents, in time order, each with what was
	 * live then; past that, one is left out to make room (the oldest one
	 * recovered from, else the oldest), counted in oom_out */
	struct an_oom ooms[AN_MAX_OOMS];
	size_t nooms;
	uint64_t oom_count;   /* incidents, listed or not */
	struct {
		uint64_t count, recovered, raised, released, retries;
		/* by outcome (memory.c, an_oom_fatal): went on inside a library;
		 * the requests and time of those and the recovered ones; stopped
		 * (neither), and of those the ones at the latest step seen */
		uint64_t went_on, past_bytes, past_ns;
		uint64_t stopped, stopped_at_step;
		uint32_t stopped_step;
	} oom_out;

	int gpu_idx;          /* into an_analysis.gpus, -1 if none */

	/* native mode with the allocator hook: the cudaMalloc'd segments (not
	 * entered as allocations) whose free is still to come; with
	 * an_proc.seg_guess each is SEG_CUDA_MARKED until its segment's own
	 * event claims it (SEG_CUDA_CLAIMED) */
	struct gp_u64map seg_cuda;
	int attached;         /* the hook watched this device (torch.attach) */
	uint64_t attach_allocated, attach_reserved; /* PyTorch's counts then */

	/* memory over time, where the settings ask for it (gpuprof report),
	 * and what was live at its moments (moments.h) */
	int has_tl;
	struct an_timeline tl;
	struct an_moments mo;
	struct an_snap mo_snap; /* the open stretch's most so far */

	/* --at: what was live then; at_after_end: the trace of this device
	 * ended before it (what was live at its end) */
	struct an_snap at;
	int64_t at_ts;
	uint64_t at_bytes;
	uint32_t at_step;
	uint8_t at_phase;
	int at_after_end;
	uint64_t at_events;   /* the device's memory events up to then */
	struct an_seg *at_segs;
	size_t at_nsegs;
};

struct an_proc {
	struct an_source *src;
	int mode;
	int idx;
	struct gp_u64map threads;   /* tid -> struct an_thread */
	struct gp_u64map branges;   /* NVTX start/end id -> struct an_brange */
	struct an_open_phase phases[64];
	size_t nphases, lost_phases;
	uint32_t next_inst;
	uint32_t fwd_count;
	uint32_t fwd_open;       /* fwd: frames open, on any thread */
	int64_t first_fwd_ts;    /* absolute; 0 until the first forward */
	/* the last allocation (an_analysis.seq) made before the newest
	 * beginning and end of a forward (the first fwd: range opened, the
	 * last closed), and before the newest beginning of a backward
	 * (phase:backward, or a module's bwd: range) */
	uint64_t fwd_begin_seq, fwd_end_seq, bwd_begin_seq;
	int seen_fwd;
	int64_t last_step;       /* N of the last step:N mark; 0 before */
	int has_steps;
	/* since the last step mark, a step began: a backward, or an allocation
	 * failed (an_step_label: without it, what follows the last mark is
	 * "after" it) */
	int step_began;
	int seen_phase;          /* a phase: range began (step 1 begins) */
	int step1_known;
	int64_t step1_ts;        /* absolute: step 1 began (first forward or phase) */
	int64_t last_step_ts;
	struct gp_u64map path_layer; /* fwd name (an_str *) -> full layer (an_str *) */
	struct an_pd *pd[AN_MAX_DEVICES];

	/* gpuprof:torch */
	struct an_str *torch_version, *alloc_conf, *backend;
	int expandable_segments;
	int history_asked;       /* --torch-history */
	/* torch.profiler windows (allocations missing) */
	uint32_t profiler_windows;
	/* native mode: segments PyTorch named at exit */
	struct gp_u64map named_segs;
	/* pass 2 of native mode: allocations known not to be PyTorch's */
	struct gp_u64map other_keys;
	/* native mode with gpuprof's allocator hook (torch.* events): the trace
	 * holds every block. blocks: known from pass 1, so set from the start
	 * of pass 2; seg_keys: the CUDA allocations (an_other_key) that are
	 * PyTorch's segments, which pass 2 leaves out (the segments' own
	 * events count them); saw_blocks, seg_found: what this pass found */
	int blocks, saw_blocks;
	struct gp_u64map seg_keys, seg_found;
	/* Read in one pass (analyze.c): the hook was seen by the time this
	 * process's first event left its source's look ahead, so blocks is set
	 * from the start, and its segments'
	 * cudaMallocs are those the source marked (EVF_SEG_CUDA) instead of
	 * seg_keys. guess_failed: the marks and what pass 1 would have found
	 * (on_segment's seg_found) disagree somewhere: read it in two passes */
	int seg_guess, guess_failed;
	int hook_stacks;         /* its blocks name their Python stacks */
	/* pass 2 of an older trace (no meta memory_device), whose module
	 * globals CUPTI placed on device 0 whatever device loaded them: the
	 * devices it holds nothing but globals on (a bit each), and the one
	 * device it used, where they go (statics_to; found in pass 1) */
	uint64_t statics_from;
	uint32_t statics_to;
	struct an_str *hook_state; /* gpuprof:torch's "tracker": "on", or why not */

	/* PyTorch was seen in this process (its hooks' marks or events); where
	 * it never was, a Python program traced in a PyTorch mode is analyzed
	 * as the CUDA program it is (no_torch, pass 2) */
	int torch_seen, no_torch;

	/* NCCL's collective calls lately (collective.h) */
	struct an_coll_calls coll_calls;

	uint64_t unattributed;   /* allocations whose API call is missing */
	uint64_t unmatched_frees;
	uint64_t reused_live;    /* allocation at an address still live */
	uint64_t summarised;     /* allocations counted without a record (memory.c) */
	uint64_t events;
};

struct an_brange {
	int64_t tid;
	struct an_str *name; /* reference */
};

/* One physical GPU (by UUID) and the processes that use it: as many as the
 * traces have (memory.c, gpu_join). */
struct an_gpu {
	struct an_str *uuid;   /* reference */
	struct an_pd **pds;    /* owned array of borrowed pds, in the order seen */
	uint64_t *peak_by_pd;  /* owned: each pd's bytes at the GPU's peak */
	size_t npds, cap;      /* cap: of both arrays */
	uint64_t live, peak;
	int64_t peak_ts;
};

struct an_analysis {
	struct an_strtab st;
	struct an_proc **procs;
	size_t nprocs;
	struct an_gpu *gpus; /* owned, ngpus of gpus_cap */
	size_t ngpus, gpus_cap;
	uint64_t seq;
	int64_t origin;      /* absolute ns that reports count from */
	int has_at;          /* --at: at_ns, absolute */
	int64_t at_ns;
	uint64_t live_records; /* allocation records alive, every process and device */
	int pass;            /* 1, or 2 when native mode needs a second pass */
	const struct gp_an_settings *settings;
	char *err;
	size_t errcap;
	int status;          /* first failure: GP_AN_* */
};

/* an_pd.seg_cuda's values with an_proc.seg_guess */
#define SEG_CUDA_MARKED ((void *)1)
#define SEG_CUDA_CLAIMED ((void *)2)

/* Native mode with gpuprof's allocator hook: every PyTorch block is in the
 * trace, as in tensor mode. */
static inline int an_native_blocks(const struct an_proc *p)
{
	return p->mode == MODE_NATIVE && p->blocks;
}
/* Native mode without it: PyTorch's segments, its allocated bytes sampled. */
static inline int an_native_segments(const struct an_proc *p)
{
	return p->mode == MODE_NATIVE && !p->blocks;
}
/* A trace that holds every tensor: tensor mode, or native with the hook. */
static inline int an_every_tensor(const struct an_proc *p)
{
	return p->mode == MODE_TENSOR || an_native_blocks(p);
}

/* The devices of p holding nothing but module globals (a bit each), and
 * in *used those it used otherwise (memory.c; after a pass). */
uint64_t an_statics_only_devices(const struct an_proc *p, uint64_t *used);

/* proc.c */
int an_proc_init(struct an_proc *p, struct an_source *src, int idx);
void an_proc_free(struct an_analysis *a, struct an_proc *p);

/* marks.c: an AE_MARK event (the hooks' marks); 0 or -ENOMEM. */
int an_mark_event(struct an_analysis *a, struct an_proc *p, const struct an_ev *ev, int64_t ts);

/* attrib.c */
struct an_thread *an_thread_get(struct an_proc *p, int64_t tid);
void an_thread_free(struct an_analysis *a, struct an_thread *t);
/* NVTX ranges (AE_PUSH, AE_POP, AE_START, AE_END); 0 or -ENOMEM. */
int an_attrib_event(struct an_analysis *a, struct an_proc *p, const struct an_ev *ev, int64_t ts);
uint8_t an_current_phase(const struct an_proc *p, const struct an_thread *t);
uint8_t an_process_phase(const struct an_proc *p);
uint32_t an_current_step(const struct an_proc *p);
/* A raw step of an_current_step() as reports give it (result.h, enum
 * gp_an_step_when): *step -1 where the process marked no step. Call it
 * once the process's trace is read (after its last mark). */
void an_step_label(const struct an_proc *p, uint32_t raw, int64_t *step, uint8_t *when);
/* memory.c: whether failure o of a process is fatal: neither recovered
 * nor got past inside a library, and no step completed after it (or the
 * process marks no steps). CATEGORIES.md, "Failed allocations". */
int an_oom_fatal(const struct an_proc *p, const struct an_oom *o);
/* The device at a failure, one set of numbers for every report: where
 * PyTorch raised OutOfMemoryError, as it was when PyTorch gave up (after
 * releasing its cache: its reserved and free memory then), else at the
 * failed call. outside: total - free - what this process held (its
 * device memory and device_static), the CUDA context and other
 * processes; known only with free and total. */
struct an_oom_moment {
	int has_free, has_reserved, has_outside;
	uint64_t free, total, reserved, device, outside;
};
void an_oom_moment(const struct an_oom *o, struct an_oom_moment *m);
/* memory.c: of the incidents left out of pd's list, how many are fatal */
uint64_t an_oom_out_fatal(const struct an_pd *pd);
int an_thread_has_inst(const struct an_thread *t, uint32_t inst);
int an_phase_open(const struct an_proc *p, uint32_t inst);
uint32_t an_current_phase_inst(const struct an_proc *p);

/* memory.c */
struct an_pd *an_pd_get(struct an_analysis *a, struct an_proc *p, uint32_t device);
void an_pd_free(struct an_analysis *a, struct an_pd *pd);
int an_memory_event(struct an_analysis *a, struct an_proc *p, const struct an_ev *ev, int64_t ts);
/* a step:N mark: a point of each device's series, a new step snapshot */
int an_memory_step(struct an_analysis *a, struct an_proc *p, int64_t ts);
/* The step series of the flight recorder's outline instead of the one the
 * trace's step marks made: the outline covers the whole run, the marks of
 * a flight recorder's trace only its last window. */
void an_memory_use_outline(struct an_pd *pd, const struct an_outline_dev *od);
/* A point of PyTorch's allocator history (history.h). 0 or -ENOMEM. */
int an_memory_torch_hist(struct an_analysis *a, struct an_proc *p, uint32_t device,
			 uint64_t allocated, uint64_t reserved, int64_t ts);
void an_memory_torch_mem(struct an_analysis *a, struct an_proc *p, uint32_t device,
			 uint64_t allocated, uint64_t reserved, int64_t ts);
/* The timeline (timeline.h): a point where the process' phase changed,
 * and one at the end of its trace, so that it runs to the end. */
void an_memory_phase(struct an_analysis *a, struct an_proc *p, int64_t ts);
void an_memory_timeline_end(struct an_pd *pd, int64_t ts);
/* snap.c: a record let go (freed with the last reference); snapshots */
void an_rec_unref(struct an_analysis *a, struct an_rec *r);
void an_snap_clear(struct an_analysis *a, struct an_snap *s);
/* A snapshot of now: every live record (seq <= cut) belongs to it. */
void an_snap_take(struct an_analysis *a, struct an_snap *s);
/* The stash let go. */
void an_snap_free(struct an_analysis *a, struct an_snap *s);
/* r, freed: kept in s (a reference) where s saw it alive (taken, r made
 * by then); 0 or -ENOMEM. */
int an_snap_keep(struct an_snap *s, struct an_rec *r);
/* The members of a snapshot (device memory only): a new array the caller
 * frees, of borrowed records; *n its length. NULL with *n = 0 if empty
 * or out of memory (*oom set). */
struct an_rec **an_snap_members(struct an_pd *pd, const struct an_snap *s, size_t *n, int *oom);
/* moments.c (moments.h): before a change of pd's live memory at ts (0 or
 * -ENOMEM), and after one made by an allocation; the end of the trace (0
 * or -ENOMEM); freeing. A record freed is kept by pd->mo_snap and pd->at
 * as by the other snapshots (an_snap_keep). */
int an_moments_before(struct an_analysis *a, struct an_pd *pd, int64_t ts);
void an_moments_after(struct an_analysis *a, struct an_pd *pd, int64_t ts, uint32_t step, uint8_t phase);
/* after each allocation or free of pd, at ts */
void an_moments_event(struct an_analysis *a, struct an_pd *pd, int64_t ts);
/* before a change of PyTorch's segments: the open moment's, as they were;
 * 0 or -ENOMEM */
int an_moments_segments(struct an_pd *pd);
int an_moments_end(struct an_analysis *a, struct an_pd *pd);
void an_moments_free(struct an_analysis *a, struct an_pd *pd);
/* PyTorch's segments now, by address, into *out (a new array, the
 * caller's; NULL and 0 where not known: not native mode with the hook);
 * with expandable segments, each run of pages mapped one after another;
 * 0 or -ENOMEM. */
int an_segments_now(const struct an_pd *pd, struct an_seg **out, size_t *n);
/* memory.c */
uint64_t an_other_key(uint64_t addr, int64_t ts);
/* Whether r is the framework's memory (the main number, see memory.c). */
int an_is_fw(const struct an_proc *p, const struct an_rec *r);
/* The most allocation records an analysis holds at once (AN_MAX_LIVE_RECORDS,
 * about 240 bytes each): past it, new allocations are summarised, their
 * bytes counted exactly in every total and peak, without the detail the
 * peak's breakdown needs; a note says how many. */
#define AN_MAX_LIVE_RECORDS (2u << 20)
uint64_t an_max_live_records(void);
/* The device memory this process held on pd's device: native mode with the
 * hook counts PyTorch's segments, not its blocks, since they hold them. */
uint64_t an_pd_device_live(const struct an_pd *pd);
/* A gpuprof:torch.tensor mark: the live tensor at addr of nbytes holds a
 * parameter (or optimizer state) of layer. 0 or -ENOMEM. */
int an_memory_name_tensor(struct an_analysis *a, struct an_proc *p, uint64_t addr, uint64_t nbytes,
			  const char *layer, size_t len, int param);

/* classify.c */
/* The category of r, and for CAT_OTHER a label (an API, a kind, or what
 * PyTorch was doing) into label. */
int an_classify(const struct an_proc *p, const struct an_rec *r, char *label, size_t cap);

#endif
