/* gpuprof merge: one Perfetto / Chrome trace (gzip JSON array, the trace
 * format's rules: exporters/TRACE_FORMAT.md) from the traces of a
 * multi-process, multi-rank run, with a process group per rank.
 *
 * The merged file:
 *   - begins with a gpuprof.merge event (pid 0) whose args say what went
 *     in: every trace's file, rank, host, pid, the new pids it got, the
 *     offset added to its clock and how that offset was found;
 *   - then holds each trace's events, traces by rank (then those without a
 *     rank, by host and pid), each event copied byte for byte except its
 *     top-level pid, ts and id, spliced in place:
 *       pid  trace k's process becomes (k+1)*100, its GPU d (k+1)*100+1+d,
 *            so that pids repeated on other hosts never meet; each new pid
 *            gets process_labels and process_sort_index events, and its
 *            process_name is prefixed "rank R · " (no rank: "HOST · "),
 *            so Perfetto shows rank 0's CPU and GPU tracks together, then
 *            rank 1's...;
 *       ts   on one clock: + (ts_base_ns + offset - merged base) / 1000,
 *            in integer nanoseconds;
 *       id   flows and async ranges: id * ntraces + k, kept apart across
 *            traces (refused past 2^53, where a double loses them).
 *
 * Clocks: the traces of one host share its clock (CUPTI's timestamps are
 * CLOCK_REALTIME-based), so their offset is 0. Traces of several hosts are
 * aligned by those wall clocks (as good as NTP/PTP keeps them), or with
 * GP_MERGE_ALIGN_COLLECTIVES on the NCCL kernels that end together on every
 * rank (gp_merge_fit_collectives, align.c).
 *
 * Traces are untrusted and may be gigabytes: they are streamed line by
 * line, twice at most (the NCCL kernels first), in constant memory but for
 * those kernels' times. The output is written to a temporary file beside
 * it and renamed into place only when whole. */
#ifndef GPUPROF_MERGE_H
#define GPUPROF_MERGE_H

#include <stddef.h>
#include <stdint.h>

enum gp_merge_align {
	GP_MERGE_ALIGN_WALL,        /* hosts' wall clocks */
	GP_MERGE_ALIGN_COLLECTIVES, /* NCCL kernels' ends */
};

struct gp_merge_settings {
	const char *const *traces;  /* trace files (gp_run_expand's) */
	size_t ntraces;
	const char *output;         /* ending .json.gz: gzip; .json: plain */
	int force;                  /* replace an existing output */
	enum gp_merge_align align;
	/* lines worth showing on stderr: how clocks were aligned */
	void (*note)(void *ctx, const char *line);
	void *ctx;
};

struct gp_merge_result {
	size_t traces;
	uint64_t events;            /* the traces' events copied */
	uint64_t bytes;             /* the output's size */
	int64_t rank_min, rank_max; /* -1: no trace had a rank */
	size_t unranked;            /* traces without a rank */
};

/* 0; -EINVAL: bad input, err says "PATH: line N: what"; -EEXIST: output
 * exists (and no force); -ENOENT: a trace or the output's directory is
 * missing; another -errno: I/O; err says what. */
int gp_merge_run(const struct gp_merge_settings *s, struct gp_merge_result *res,
		 char *err, size_t cap);

/* ---- clock alignment on collectives (align.c) ---- */

/* A kernel of a trace, times in its host's clock (ns, from 0 to 2^62, so
 * that differences fit); name: an index into a name table both traces
 * share. */
struct gp_merge_kernel {
	uint32_t name;
	int64_t start_ns, end_ns;
};

struct gp_merge_fit {
	int64_t offset_ns;    /* add to other's clock to read ref's */
	int64_t residual_ns;  /* median absolute deviation of the matches */
	size_t matched;
	char why[256];        /* why no offset was found */
};

/* The offset between two hosts' clocks from one trace of each: kernels of
 * a name both have are matched in start order (the k-th with the k-th: a
 * collective ends on every rank at once), offset = median of ref's end -
 * other's. Names only one side has are passed over; a name with different
 * counts on the two sides, or fewer than 3 matches, gives -EINVAL and why.
 * Sorts both arrays in place; names[] names the indexes for why. 0,
 * -EINVAL or -ENOMEM. */
int gp_merge_fit_collectives(struct gp_merge_kernel *ref, size_t nref,
			     struct gp_merge_kernel *other, size_t nother,
			     const char *const *names, struct gp_merge_fit *fit);

#endif
