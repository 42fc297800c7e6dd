/* One trace file as a stream of events in time order: reads its lines
 * (exporters/trace_reader.h), checks and decodes each (trace_scan.h), keeps what describes the
 * trace (gpuprof.meta, devices, gpuprof.end) and the API calls (corr.c), and
 * sends memory, OOM and NVTX events through the reorder window (reorder.c).
 * Anything malformed stops it with one line in err. */
#ifndef GPUPROF_AN_SOURCE_H
#define GPUPROF_AN_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "analyze.h"
#include "corr.h"
#include "decode.h"
#include "event.h"
#include "exporters/trace_reader.h"
#include "exporters/trace_scan.h"
#include "exporters/u64_map.h"
#include "history.h"
#include "outline.h"
#include "reorder.h"
#include "stacks.h"
#include "strtab.h"

enum an_mode { MODE_CUDA, MODE_TENSOR, MODE_NATIVE };

struct an_devinfo {
	int seen;
	struct an_str *name, *uuid;
	uint64_t total_memory;
};

/* What an_source_api() says of a held event: of the corr asked (key),
 * the call (ent; ent.corr 0: none; ent.api a reference). */
struct an_held_api {
	uint64_t key;
	struct an_corr_ent ent;
};

struct an_held {
	struct an_ev ev;
	struct an_held_api api;
};

struct an_source {
	const char *path;
	struct gp_tr *in;          /* owned */
	struct gp_tr_members line;
	char what[AN_WHAT_MAX];   /* ev_what()'s */
	char *scratch;
	size_t scratch_cap;
	struct an_strtab *st;
	struct an_reorder ro;
	struct an_corr corr;

	int started, closed, eof, have_meta;
	uint64_t events;       /* event lines read (those the reader passed over
				* added at the end: gp_tr_state()'s skipped) */

	/* gpuprof.meta */
	int64_t pid;
	int64_t ts_base_ns;
	uint64_t start_unix_ns;
	int64_t rank;            /* torch.distributed's RANK; -1: not known */
	int64_t world_size, local_rank, local_world_size; /* the same; -1: not known */
	uint64_t job_start_unix_ns; /* the launcher's start; 0: not known */
	int mode;
	int statics;             /* module globals recorded: STATICS_* */
	int memory_by_context;   /* meta memory_device "context": module globals on their own device */
	struct an_str *cmdline, *hostname, *version;
	struct an_devinfo dev[AN_MAX_DEVICES];

	/* gpuprof.end and gpuprof.dropped */
	int have_end, end_clean, end_recovered, end_counts;
	int end_signal; /* gpuprof.end's signal: what the program died of; 0: none said */
	/* The libraries that made allocation calls (alloc events' caller),
	 * each once, as the library it is ("cuBLAS") or its file; an alloc
	 * event's f is its index + 1. References. */
	struct an_str *libraries[AN_MAX_LIBRARIES];
	unsigned nlibraries;
	/* what gpuprof recover passed over (its fields in gpuprof.end) */
	uint64_t recover_lines_skipped, recover_bytes_skipped, recover_gzip_gaps, recover_damage_after;
	uint64_t dropped_cupti, dropped_host, late_records, dropped_marks;

	/* how the trace ends */
	int cut_short;           /* no gpuprof.end / no closing ']' */
	uint64_t cut_line_bytes; /* a partial last line that was dropped */
	int64_t last_ts;         /* newest ts read */
	int64_t end_ts;          /* gpuprof.end's ts; INT64_MIN: none */
	/* names seen lately (API calls repeat): a hit skips the hashing */
	struct an_str *recent[16];
	uint64_t unattributed_api; /* memory events whose API call was not found */

	/* PyTorch's caching allocator as gpuprof's hook saw it (torch.* events) */
	struct an_stacks stacks;  /* torch.stack: the Python stacks by id */
	struct an_outline outline; /* gpuprof.outline: the flight recorder's */
	int has_window;            /* a gpuprof.window: the full events begin at window_ts */
	int64_t window_ts;
	struct an_str *dump_reason; /* gpuprof.dump's reason, or NULL */
	/* gpuprof.cap: the default trace reached its size cap at cap_ts; the
	 * run before it is in full in cap_start (a file beside this one) */
	int has_cap;
	int64_t cap_ts;
	uint64_t cap_bytes;
	struct an_str *cap_start;
	struct an_str *torch_api; /* the name its blocks give as their API */
	uint64_t torch_guessed;   /* blocks whose size the hook could not read */

	/* PyTorch's allocator history: collected in pass 1; in pass 2 given
	 * before reading (hist_given) and its marks skipped */
	struct an_history hist;
	int hist_given;
	uint64_t hist_marks;

	/* Native mode read in one pass (analyze.c): the torch.segment_alloc
	 * events read and not yet handed out, a count by address, so that a
	 * CUDA allocation at one of them leaving the window is marked as that
	 * segment's cudaMalloc (EVF_SEG_CUDA); hook_seen: an event of
	 * PyTorch's allocator hook has been read */
	struct gp_u64map seg_ahead;
	int hook_seen;

	/* Events that left the window before the analysis asked for them
	 * (an_source_look_ahead()), oldest first, each with what
	 * an_source_api() would have said of it then: the API table moves on
	 * as the source reads. api_now: that of the held event handed out
	 * last (key 0: none, or no held event's). held_err: the failure that ended the look
	 * ahead, to be said after them (held_msg: its line). held_dev: a
	 * gpuprof.device was read while events were held, which the analysis
	 * reads when it takes them: not as it would have been (analyze.c
	 * reads again). */
	struct an_held *held;
	size_t held_head, held_n, held_cap;
	struct an_held_api api_now;
	int held_err, held_dev;
	char *held_msg;
};

/* How many events an_source_look_ahead() holds at most. */
#define AN_LOOK_AHEAD_MAX (1u << 17) /* about 10 MiB */

/* gpuprof.meta's "statics": whether module globals (device_static) were
 * recorded (also in traces that do not say) or not. */
enum { STATICS_RUN, STATICS_NONE };

/* Opens the input and reads its first event (gpuprof.meta). Returns 0, or
 * GP_AN_BAD_INPUT / GP_AN_FAIL with err set. */
int an_source_open(struct an_source *s, const struct gp_an_input *inp, struct an_strtab *st,
		   char *err, size_t errcap);
/* The next event in time order: 1 (*ev filled, holding a name reference
 * the caller releases), 0 at the end, or GP_AN_BAD_INPUT / GP_AN_FAIL
 * negated, with err set. */
int an_source_next(struct an_source *s, struct an_ev *ev, char *err, size_t errcap);
void an_source_close(struct an_source *s);
/* Reads on until an event of PyTorch's allocator hook has been read
 * (hook_seen) or max events have left the window, holding those for
 * an_source_next() to hand out as it would have. A failure is held too,
 * said after them. */
void an_source_look_ahead(struct an_source *s, size_t max);
/* What the API call of corr says, or NULL. */
static inline const struct an_corr_ent *an_source_api(const struct an_source *s, uint64_t corr)
{
	if (s->api_now.key && corr == s->api_now.key) /* a held event's */
		return s->api_now.ent.corr ? &s->api_now.ent : NULL;
	return an_corr_get(&s->corr, corr);
}

#endif
