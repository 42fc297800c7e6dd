/* A gzip trace's first member inflated on worker threads (trace_reader.h).
 *
 * The writer flushes with Z_FULL_FLUSH (gz_sink.c): each flush ends with an
 * empty stored block, whose last four bytes are 00 00 FF FF at a byte
 * boundary, and the deflate stream after it refers to nothing before it.
 * So the compressed bytes are cut after such a pattern into chunks, each
 * inflated raw, with no dictionary, on a worker. A pattern that is no flush
 * point (it can occur inside compressed data) is found out when the chunk
 * before it does not end at a block boundary; a chunk that refers back past
 * its start (a Z_SYNC_FLUSH writer) fails to inflate alone. Either way the
 * reader goes on serially from that point, as trace_reader.c always did,
 * with the stream state or the 32 KiB window it needs: the bytes handed out
 * are exactly those one thread would have inflated, damage and all.
 *
 * Where the caller asks (gp_tr_set_scan), the worker also finds the lines
 * whole inside its chunk (the consumer then takes them without looking for
 * their ends), scans them (trace_scan.h) and keeps their members' values as
 * offsets; the consumer takes them in place of scanning (gp_tr_scanned).
 * Where the caller gives a decoder (gp_tr_set_decoder), the worker runs it
 * on each scanned line no analysis ignores and keeps its record instead of
 * the values (gp_tr_next): the consumer is left with what needs its state.
 *
 * With one thread (GPUPROF_THREADS=1) the consumer inflates each chunk
 * itself as it needs it, and scans each line as it uses it (a table of a
 * whole chunk's lines would be out of its cache by then): the same lines,
 * and the same inflate, as on workers.
 *
 * The chunks go to the reader's one consumer strictly in file order. A
 * reader has at most min(threads, CH_AHEAD) + 1 chunks in flight, and all
 * readers together about twice the workers (each reader at least one):
 * memory is those chunks' compressed bytes, their output (about ten times
 * the compressed size of the writer's flush interval, at most CH_OUT_MAX)
 * and what their lines scanned or decoded to (about as much again), plus
 * up to 4 spare output buffers and 4 spare line tables while any reader
 * reads in chunks. It depends on the threads and the writer's flushes, not
 * on the trace's length: analyze's peak on 65 M events flushed as the
 * recorder flushes (about 1.3 MB every 500 ms) was about 240 MiB at 16
 * threads (410 with 16 ahead), 150 MiB at 4, 49 MiB at 1 (bench/RESULTS.md). */
#include "trace_reader_int.h"
#include "trace_scan.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#ifdef GPUPROF_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

#define CH_READ (256u << 10)   /* compressed bytes read at a time */
#define CH_MIN (128u << 10)    /* a chunk is cut at the first flush point past this */
#define CH_MAX (4u << 20)      /* or here, when there is none (serial from there) */
#define CH_OUT_MAX (64u << 20) /* a chunk's output on a worker at most; then serial */
#define WIN (32u << 10)        /* deflate's window */
#define Q_MAX 65               /* per reader: threads + 1, threads <= 64 */
/* Chunks a reader has inflated, scanned and decoded ahead of its consumer,
 * at most. A worker takes three to four times as long over a chunk as the
 * consumer then takes over its events (about 0.9 against 0.22 us an event
 * on a 16-core Xeon), so the consumer waits unless about five are under
 * way, and chunks are uneven: on 16 threads a 65 M-event trace read in
 * 18.7 s with 4 ahead, in 14.0-14.5 s with 16, and 8 were as quick as 16
 * in the same runs (bench/RESULTS.md). Each costs memory: the recorder
 * flushes every 500 ms, about 13 MB of lines and 12 MB of records at
 * GPT-2's pace. Fewer threads, fewer ahead. A build may set it (bench/). */
#ifndef CH_AHEAD
#define CH_AHEAD 8
#endif

enum ch_end { CH_BOUNDARY = 1, CH_MIDBLOCK, CH_STREAM_END, CH_ERROR, CH_NOMEM };

/* The lines whole in a chunk's output: where each is (raw: as
 * gp_tr_line() hands it out, "\r" and all; off, len: trimmed) and what its
 * worker made of it: its members' values (p an offset into the line;
 * UINT32_MAX: none) or the decoder's record. */
enum { SCL_SCANNED = 1, SCL_IGNORED = 2, SCL_DECODED = 4, SCL_CR = 8 /* raw ends in "\r" */ };
struct sc_line {
	uint32_t raw_off, raw_len;
	uint32_t off, len;
	uint32_t rec;   /* SCL_DECODED: its record's index */
	uint32_t kept;  /* the first line from this one on that is not SCL_IGNORED */
	uint16_t nvals;
	uint8_t flags;  /* SCL_* */
};
struct sc_val {
	uint8_t slot;            /* a top member's TK_*, or 32 + an args field's AK_* */
	struct gp_json_val v;
};
struct scanned {
	struct sc_line *lines;
	size_t nlines, cap_lines;
	struct sc_val *vals;
	size_t nvals, cap_vals;
	unsigned char *recs;     /* the decoder's records, rec_size each */
	size_t nrecs, cap_recs;  /* cap_recs in bytes */
	uint64_t goff, len;      /* the chunk's output in the stream */
	size_t cur_line, cur_val; /* the consumer's cursors: the line last found, its values */
	size_t cut_line, cut_val; /* the next line gp_tr_chunks_line() hands out, its values */
};

struct chunk {
	struct chunk *next_job;  /* the pool's queue */
	int scan;                /* scan its lines too */
	gp_tr_decode_fn decode;  /* and decode them (NULL: no) */
	size_t rec_size;
	struct scanned *sc;      /* owned: what its worker scanned; NULL: none */
	unsigned char *in;       /* owned: its compressed bytes */
	size_t in_len;
	char *out;               /* owned: what they inflate to */
	size_t out_len, out_cap;
	size_t consumed;         /* of in, up to where it ended */
	z_stream zs;             /* kept (zs_live) where the stream goes on past the chunk */
	int zs_live;
	int end;                 /* enum ch_end, set by its worker */
	int done;                /* under pool.lock: the worker is through with it */
};

#define RQ_MAX (Q_MAX + 2)

struct gp_tr_chunks {
	struct scanned *rq[RQ_MAX]; /* scanned lines of chunks handed out, oldest first */
	size_t rq_head, rq_n;
	uint64_t out_total;      /* output handed out so far */
	unsigned char *cbuf;     /* read, not yet cut into a chunk */
	size_t clen, ccap, scanned;
	size_t min;              /* CH_MIN, or the reader's gp_tr_set_chunk_min() */
	struct chunk *q[Q_MAX];  /* submitted, in file order */
	size_t qhead, qn, qmax;
	struct chunk *cur;       /* whose output is being handed out */
	struct scanned *cur_sc;  /* its lines (the newest of rq), or NULL */
	size_t cur_off;
	unsigned char win[WIN];  /* the last bytes handed out, for a serial restart */
	size_t win_len;
	int here;                /* no workers: chunks done on the consumer's thread */
};

/* The workers, shared by all readers. The queue, the workers' count and
 * each chunk's end are under lock; inflight is the consumer's alone (one
 * thread reads traces). */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t work, done;
	struct chunk *head, *tail;
	unsigned workers;
	size_t inflight;
	int atfork;
	/* output buffers and line tables given back, for the next chunks:
	 * fresh memory costs a page fault a page. Kept while a reader is
	 * open in chunks (readers), freed with the last. */
	struct spare { char *p; size_t cap; } spare[4];
	unsigned nspare;
	struct scanned *spare_sc[4];
	unsigned nspare_sc;
	size_t readers;
} pool = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
	   NULL, NULL, 0, 0, 0, { { NULL, 0 } }, 0, { NULL }, 0, 0 };

/* A spare output buffer of at least want bytes, or a new one. Under lock. */
static char *take_spare(size_t want, size_t *cap)
{
	for (unsigned i = 0; i < pool.nspare; i++)
		if (pool.spare[i].cap >= want) {
			char *p = pool.spare[i].p;

			*cap = pool.spare[i].cap;
			pool.spare[i] = pool.spare[--pool.nspare];
			return p;
		}
	*cap = want;
	return NULL;
}

/* p back among the spares, or freed. Under lock. */
static void give_spare(char *p, size_t cap)
{
	if (!p)
		return;
	if (pool.nspare < sizeof(pool.spare) / sizeof(pool.spare[0])) {
		pool.spare[pool.nspare].p = p;
		pool.spare[pool.nspare++].cap = cap;
		return;
	}
	free(p);
}

/* c's output buffer doubled, up to CH_OUT_MAX: 0, 1 when it is that large
 * already, -1 out of memory. */
static int grow_out(struct chunk *c)
{
	size_t cap = c->out_cap * 2 > CH_OUT_MAX ? CH_OUT_MAX : c->out_cap * 2;
	char *o;

	if (cap == c->out_cap)
		return 1;
	if (!(o = realloc(c->out, cap)))
		return -1;
	c->out = o;
	c->out_cap = cap;
	return 0;
}

#ifdef GPUPROF_HAVE_ISAL
/* ISA-L's inflate (igzip) runs about four times as fast as zlib's on these
 * traces (bench/RESULTS.md). Only what the deflate stream itself says is
 * taken from it, which any decoder reads the same: a chunk that ends where
 * a block ends, the stream going on, or the stream's last block whole (then
 * where its bytes end: the trailer and what follows are the serial path's).
 * Anything else (a false marker, damage, a reference back past the chunk's
 * start, a last block cut short) is inflated again by zlib, whose state and
 * messages the serial path goes on from. 1: c holds its output
 * (CH_BOUNDARY or CH_STREAM_END); 0: it does not. */
static int inflate_chunk_isal(struct chunk *c)
{
	struct inflate_state *st = malloc(sizeof(*st));
	int end = 0;

	if (!st)
		return 0;
	isal_inflate_init(st);
	st->crc_flag = ISAL_DEFLATE; /* raw: no header, no check */
	st->next_in = c->in;
	st->avail_in = (uint32_t)c->in_len;
	st->next_out = (uint8_t *)c->out;
	st->avail_out = (uint32_t)c->out_cap;
	for (;;) {
		uint32_t in_was = st->avail_in, out_was = st->avail_out;
		int r = isal_inflate(st);

		if (r != ISAL_DECOMP_OK && r != ISAL_END_INPUT && r != ISAL_OUT_OVERFLOW)
			break; /* damage, or a reference past the start */
		if (st->block_state == ISAL_BLOCK_FINISH) {
			/* the last block, flushed whole (none of its bytes left
			 * in ISA-L's own buffer, where the count below misses) */
			if (st->tmp_in_size == 0)
				end = CH_STREAM_END;
			break;
		}
		if (st->avail_out == 0) {
			size_t used = c->out_cap; /* all of it */

			if (grow_out(c))
				break;
			st->next_out = (uint8_t *)c->out + used;
			st->avail_out = (uint32_t)(c->out_cap - used);
			continue;
		}
		if (st->avail_in == 0) {
			if (!st->bfinal && st->block_state == ISAL_BLOCK_NEW_HDR &&
			    st->read_in_length == 0 && st->tmp_in_size == 0 &&
			    st->tmp_out_valid == st->tmp_out_processed)
				end = CH_BOUNDARY;
			break;
		}
		if (st->avail_in == in_was && st->avail_out == out_was)
			break; /* no step forward: zlib says why */
	}
	if (end) {
		c->out_len = (size_t)((char *)st->next_out - c->out);
		c->consumed = c->in_len;
		/* ISA-L reads ahead a word at a time: the whole bytes it
		 * holds unread after the last block are the trailer's */
		if (end == CH_STREAM_END)
			c->consumed = (size_t)(st->next_in - c->in) - (size_t)st->read_in_length / 8;
		c->zs_live = 0;
		c->end = end;
	}
	free(st);
	return end != 0;
}
#endif

/* Inflates c's bytes alone and says how it ended. */
static void inflate_chunk(struct chunk *c)
{
	int end = 0;

	/* JSON lines deflate about tenfold; whole MiB, so that spares fit */
	c->out_cap = ((c->in_len * 12 >> 20) + 1) << 20;
	if (c->out_cap > CH_OUT_MAX)
		c->out_cap = CH_OUT_MAX;
	pthread_mutex_lock(&pool.lock);
	c->out = take_spare(c->out_cap, &c->out_cap);
	pthread_mutex_unlock(&pool.lock);
	if (!c->out)
		c->out = malloc(c->out_cap);
	if (!c->out) {
		c->end = CH_NOMEM;
		return;
	}
#ifdef GPUPROF_HAVE_ISAL
	if (inflate_chunk_isal(c))
		return;
#endif
	memset(&c->zs, 0, sizeof(c->zs));
	if (inflateInit2(&c->zs, -15) != Z_OK) {
		c->end = CH_NOMEM;
		return;
	}
	c->zs.next_in = c->in;
	c->zs.avail_in = (uInt)c->in_len;
	c->zs.next_out = (Bytef *)c->out;
	c->zs.avail_out = (uInt)c->out_cap;
	while (!end) {
		int zr;

		if (c->zs.avail_out == 0) {
			size_t used = c->out_cap;
			int g = grow_out(c);

			if (g) {
				/* too much for one chunk: serial from here */
				end = g > 0 ? CH_MIDBLOCK : CH_NOMEM;
				break;
			}
			c->zs.next_out = (Bytef *)c->out + used;
			c->zs.avail_out = (uInt)(c->out_cap - used);
		}
		zr = inflate(&c->zs, Z_NO_FLUSH);
		if (zr == Z_STREAM_END)
			end = CH_STREAM_END;
		else if (zr == Z_MEM_ERROR)
			end = CH_NOMEM;
		else if (zr != Z_OK && zr != Z_BUF_ERROR)
			end = CH_ERROR;
		else if (c->zs.avail_in == 0 && c->zs.avail_out > 0)
			/* all used: at a block boundary (data_type 128, no bits
			 * left, not the last block) the next chunk starts a block */
			end = (c->zs.data_type & 0x1ff) == 128 ? CH_BOUNDARY : CH_MIDBLOCK;
		else if (zr == Z_BUF_ERROR && c->zs.avail_out > 0)
			end = CH_ERROR;
	}
	c->out_len = (size_t)((char *)c->zs.next_out - c->out);
	c->consumed = c->in_len - c->zs.avail_in;
	c->zs_live = end == CH_MIDBLOCK;
	if (!c->zs_live)
		inflateEnd(&c->zs);
	c->end = end;
}

static void scanned_destroy(struct scanned *sc)
{
	if (!sc)
		return;
	free(sc->lines);
	free(sc->vals);
	free(sc->recs);
	free(sc);
}

/* sc back among the spares (its tables kept, emptied), or freed. */
static void scanned_free(struct scanned *sc)
{
	if (!sc)
		return;
	pthread_mutex_lock(&pool.lock);
	if (pool.nspare_sc < sizeof(pool.spare_sc) / sizeof(pool.spare_sc[0])) {
		pool.spare_sc[pool.nspare_sc++] = sc;
		sc = NULL;
	}
	pthread_mutex_unlock(&pool.lock);
	scanned_destroy(sc);
}

/* An empty struct scanned, a spare one where there is. */
static struct scanned *scanned_new(void)
{
	struct scanned *sc = NULL;

	pthread_mutex_lock(&pool.lock);
	if (pool.nspare_sc)
		sc = pool.spare_sc[--pool.nspare_sc];
	pthread_mutex_unlock(&pool.lock);
	if (!sc)
		return calloc(1, sizeof(*sc));
	sc->nlines = sc->nvals = sc->nrecs = 0;
	sc->goff = sc->len = 0;
	sc->cur_line = sc->cur_val = sc->cut_line = sc->cut_val = 0;
	return sc;
}

static int sc_grow(void **v, size_t *cap, size_t need, size_t size)
{
	void *p;
	size_t c = *cap ? *cap : 1024;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	if (!(p = realloc(*v, c * size)))
		return -1;
	*v = p;
	*cap = c;
	return 0;
}

static int sc_add_val(struct scanned *sc, unsigned slot, const struct gp_json_val *v, const char *line)
{
	struct sc_val *e;

	if (sc_grow((void **)&sc->vals, &sc->cap_vals, sc->nvals + 1, sizeof(*sc->vals)))
		return -1;
	e = &sc->vals[sc->nvals++];
	e->slot = (uint8_t)slot;
	e->v = *v;
	e->v.p = (const char *)(uintptr_t)(v->p ? (uint32_t)(v->p - line) : UINT32_MAX);
	return 0;
}

/* The lines whole inside c's output (after its first newline, up to its
 * last), trimmed and scanned as the consumer would: what scans cleanly is
 * kept (decoded, with c->decode); anything else (the brackets, a bad line)
 * the consumer does itself. */
static struct scanned *scan_chunk(const struct chunk *c)
{
	struct scanned *sc = scanned_new();
	struct gp_tr_members *l = calloc(1, sizeof(*l));
	const char *out = c->out, *end = c->out + c->out_len, *p;

	if (!sc || !l)
		goto fail;
	l->skip_ignored = 1;
	p = memchr(out, '\n', c->out_len);
	for (p = p ? p + 1 : end; p < end;) {
		const char *e = memchr(p, '\n', (size_t)(end - p)), *lp = p, *why;
		size_t n;
		struct sc_line *sl;
		uint32_t top;
		uint64_t args;

		if (!e)
			break;
		n = (size_t)(e - p);
		p = e + 1;
		if (n > GP_TR_MAX_LINE)
			break; /* the consumer says so, from its buffer */
		if (sc_grow((void **)&sc->lines, &sc->cap_lines, sc->nlines + 1, sizeof(*sc->lines)))
			goto fail;
		sl = &sc->lines[sc->nlines++];
		sl->raw_off = (uint32_t)(lp - out);
		sl->raw_len = (uint32_t)n;
		sl->flags = 0;
		sl->nvals = 0;
		if (n && lp[n - 1] == '\r') {
			sl->flags = SCL_CR;
			n--;
		}
		gp_tr_line_trim(&lp, &n);
		sl->off = (uint32_t)(lp - out);
		sl->len = (uint32_t)n;
		if (!n || (n == 1 && (lp[0] == '[' || lp[0] == ']')) || gp_tr_scan_line(lp, n, l, &why))
			continue;
		sl->flags |= SCL_SCANNED;
		if (l->ignored) {
			sl->flags |= SCL_IGNORED;
			continue;
		}
		if (c->decode) {
			if (sc_grow((void **)&sc->recs, &sc->cap_recs, (sc->nrecs + 1) * c->rec_size, 1))
				goto fail;
			if (c->decode(l, lp, n, sc->recs + sc->nrecs * c->rec_size)) {
				sl->flags |= SCL_DECODED;
				sl->rec = (uint32_t)sc->nrecs++;
				continue;
			}
		}
		for (top = l->top_set; top; top &= top - 1, sl->nvals++)
			if (sc_add_val(sc, (unsigned)__builtin_ctz(top), &l->top[__builtin_ctz(top)], lp))
				goto fail;
		for (int w = 0; w < 2; w++)
			for (args = l->args_set[w]; args; args &= args - 1, sl->nvals++)
				if (sc_add_val(sc, 32u + 64u * (unsigned)w + (unsigned)__builtin_ctzll(args),
					       &l->args[64 * w + __builtin_ctzll(args)], lp))
					goto fail;
	}
	/* where each run of ignored lines ends, for the consumer to pass over
	 * it at once */
	for (size_t i = sc->nlines, next = sc->nlines; i-- > 0;) {
		if (!(sc->lines[i].flags & SCL_IGNORED))
			next = i;
		sc->lines[i].kept = (uint32_t)next;
	}
	free(l);
	return sc;
fail:
	free(l);
	scanned_free(sc);
	return NULL; /* the consumer cuts and scans them all */
}

/* A worker's part: inflate, then cut and scan the lines. */
static void do_chunk(struct chunk *c)
{
	inflate_chunk(c);
	if (c->scan && c->end != CH_ERROR && c->end != CH_NOMEM)
		c->sc = scan_chunk(c);
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&pool.lock);
	for (;;) {
		struct chunk *c;

		while (!pool.head)
			pthread_cond_wait(&pool.work, &pool.lock);
		c = pool.head;
		pool.head = c->next_job;
		if (!pool.head)
			pool.tail = NULL;
		pthread_mutex_unlock(&pool.lock);
		do_chunk(c); /* c->end written unlocked: read only after done */
		pthread_mutex_lock(&pool.lock);
		c->next_job = NULL;
		c->done = 1;
		pthread_cond_broadcast(&pool.done);
	}
	return NULL;
}

/* A child of fork() has none of its parent's workers. */
static void after_fork_child(void)
{
	pthread_mutex_init(&pool.lock, NULL);
	pthread_cond_init(&pool.work, NULL);
	pthread_cond_init(&pool.done, NULL);
	pool.head = pool.tail = NULL;
	pool.workers = 0;
	pool.inflight = 0;
}

/* At least n workers (fewer where threads cannot be made): how many. */
static unsigned start_workers(unsigned n)
{
	unsigned have;

	pthread_mutex_lock(&pool.lock);
	if (!pool.atfork && pthread_atfork(NULL, NULL, after_fork_child) == 0)
		pool.atfork = 1;
	while (pool.workers < n) {
		pthread_t t;
		pthread_attr_t at;
		int r;

		if (pthread_attr_init(&at))
			break;
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		r = pthread_create(&t, &at, worker, NULL);
		pthread_attr_destroy(&at);
		if (r)
			break;
		pool.workers++;
	}
	have = pool.workers;
	pthread_mutex_unlock(&pool.lock);
	return have;
}

static void chunk_free(struct chunk *c)
{
	if (!c)
		return;
	if (c->zs_live)
		inflateEnd(&c->zs);
	free(c->in);
	scanned_free(c->sc);
	pool.inflight--;
	pthread_mutex_lock(&pool.lock);
	give_spare(c->out, c->out_cap);
	pthread_mutex_unlock(&pool.lock);
	free(c);
}

static void wait_done(struct chunk *c)
{
	pthread_mutex_lock(&pool.lock);
	while (!c->done)
		pthread_cond_wait(&pool.done, &pool.lock);
	pthread_mutex_unlock(&pool.lock);
}

int gp_tr_chunks_start(struct gp_tr *in, const unsigned char *p, size_t n)
{
	struct gp_tr_chunks *ch;
	/* one worker would only take turns with the consumer */
	unsigned workers = in->threads > 1 ? start_workers(in->threads) : 0;

	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return -ENOMEM;
	ch->ccap = n + CH_READ;
	ch->cbuf = malloc(ch->ccap);
	if (!ch->cbuf) {
		free(ch);
		return -ENOMEM;
	}
	memcpy(ch->cbuf, p, n);
	ch->clen = n;
	ch->min = in->chunk_min >= 4 ? in->chunk_min : CH_MIN;
	ch->here = workers < 2;
	if (ch->here) {
		ch->qmax = 1; /* each done when it is needed */
	} else {
		ch->qmax = (in->threads < workers ? in->threads : workers);
		if (ch->qmax > CH_AHEAD)
			ch->qmax = CH_AHEAD;
		ch->qmax++;
	}
	in->chunks = ch; /* handed over */
	pthread_mutex_lock(&pool.lock);
	pool.readers++;
	pthread_mutex_unlock(&pool.lock);
	return 0;
}

void gp_tr_chunks_free(struct gp_tr *in)
{
	struct gp_tr_chunks *ch = in->chunks;

	if (!ch)
		return;
	for (size_t i = 0; i < ch->qn; i++) {
		struct chunk *c = ch->q[(ch->qhead + i) % Q_MAX];

		wait_done(c);
		chunk_free(c);
	}
	chunk_free(ch->cur);
	while (ch->rq_n--)
		scanned_free(ch->rq[(ch->rq_head + ch->rq_n) % RQ_MAX]);
	free(ch->cbuf);
	free(ch);
	in->chunks = NULL;
	pthread_mutex_lock(&pool.lock);
	/* no reader in chunks: the spares go */
	if (!--pool.readers) {
		while (pool.nspare)
			free(pool.spare[--pool.nspare].p);
		while (pool.nspare_sc)
			scanned_destroy(pool.spare_sc[--pool.nspare_sc]);
	}
	pthread_mutex_unlock(&pool.lock);
}

/* The end of the next chunk in cbuf: just past the first 00 00 FF FF
 * ending at ch->min or later; 0: none yet. */
static size_t find_cut(struct gp_tr_chunks *ch)
{
	size_t from = ch->scanned > ch->min - 4 ? ch->scanned : ch->min - 4;
	const unsigned char *p = ch->cbuf + from + 3, *end = ch->cbuf + ch->clen;

	if (ch->clen < from + 4)
		return 0;
	/* 0xff is rare in deflate's output and memchr quicker than memmem:
	 * each 0xff is looked at as the pattern's last byte */
	while ((p = memchr(p, 0xff, (size_t)(end - p)))) {
		if (p[-1] == 0xff && p[-2] == 0 && p[-3] == 0)
			return (size_t)(p + 1 - ch->cbuf);
		p++;
	}
	ch->scanned = ch->clen - 3;
	return 0;
}

/* Cuts the next chunk off cbuf, reading more as needed: *out NULL when
 * the compressed bytes have all been cut. 0, -EIO or -ENOMEM. */
static int cut(struct gp_tr *in, struct chunk **out)
{
	struct gp_tr_chunks *ch = in->chunks;
	struct chunk *c;
	size_t e;

	*out = NULL;
	for (;;) {
		ssize_t r;

		if ((e = find_cut(ch)))
			break;
		if (ch->clen >= CH_MAX || in->raw_eof) {
			e = ch->clen;
			break;
		}
		if (ch->ccap - ch->clen < CH_READ) {
			unsigned char *b = realloc(ch->cbuf, ch->clen + CH_READ);

			if (!b)
				return -ENOMEM;
			ch->cbuf = b;
			ch->ccap = ch->clen + CH_READ;
		}
		r = gp_tr_raw_read(in, ch->cbuf + ch->clen, CH_READ);
		if (r < 0)
			return -EIO;
		if (r == 0)
			in->raw_eof = 1;
		ch->clen += (size_t)r;
	}
	if (e == 0)
		return 0;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	/* the chunk takes cbuf; what follows the cut moves to a new one */
	{
		size_t rest = ch->clen - e, cap = rest + CH_READ;
		unsigned char *b = malloc(cap), *mine;

		if (!b) {
			free(c);
			return -ENOMEM;
		}
		memcpy(b, ch->cbuf + e, rest);
		mine = realloc(ch->cbuf, e);
		c->in = mine ? mine : ch->cbuf;
		c->in_len = e;
		ch->cbuf = b;
		ch->ccap = cap;
		ch->clen = rest;
		ch->scanned = 0;
	}
	c->scan = in->scan && !ch->here; /* one thread: scanned as used */
	c->decode = in->scan ? in->decode : NULL;
	c->rec_size = in->rec_size;
	pool.inflight++;
	*out = c;
	return 0;
}

/* Chunks to the workers while this reader and all together have room. */
static int submit(struct gp_tr *in)
{
	struct gp_tr_chunks *ch = in->chunks;

	while (ch->qn < ch->qmax && (ch->qn == 0 || pool.inflight < 2 * (size_t)pool.workers)) {
		struct chunk *c;
		int r = cut(in, &c);

		if (r)
			return r;
		if (!c)
			break;
		ch->q[(ch->qhead + ch->qn++) % Q_MAX] = c;
		if (ch->here) {
			do_chunk(c);
			c->done = 1;
			continue;
		}
		pthread_mutex_lock(&pool.lock);
		if (pool.tail)
			pool.tail->next_job = c;
		else
			pool.head = c;
		pool.tail = c;
		pthread_cond_signal(&pool.work);
		pthread_mutex_unlock(&pool.lock);
	}
	return 0;
}

/* The last WIN bytes handed out, c's output being the newest. */
static void keep_window(struct gp_tr_chunks *ch, const struct chunk *c)
{
	if (c->out_len >= WIN) {
		memcpy(ch->win, c->out + c->out_len - WIN, WIN);
		ch->win_len = WIN;
		return;
	}
	if (ch->win_len + c->out_len > WIN) {
		size_t keep = WIN - c->out_len;

		memmove(ch->win, ch->win + ch->win_len - keep, keep);
		ch->win_len = keep;
	}
	memcpy(ch->win + ch->win_len, c->out, c->out_len);
	ch->win_len += c->out_len;
}

/* From here on the reader inflates serially (trace_reader.c): in->zs set
 * to where the stream stands after c (or before it, where c failed), the
 * compressed bytes not yet inflated put back in in->zbuf. c (NULL: the
 * bytes all used, at a block boundary) is freed with every other chunk. */
static int to_serial(struct gp_tr *in, struct chunk *c, int end)
{
	struct gp_tr_chunks *ch = in->chunks;
	size_t from = !c ? 0 : end == CH_ERROR ? 0 : c->consumed;
	size_t total = (c ? c->in_len - from : 0) + ch->clen, at = 0, cap;
	unsigned char *b;
	int zr;

	for (size_t i = 0; i < ch->qn; i++) {
		struct chunk *q = ch->q[(ch->qhead + i) % Q_MAX];

		wait_done(q);
		total += q->in_len;
	}
	cap = total > CH_READ ? total : CH_READ;
	b = malloc(cap);
	if (!b) {
		chunk_free(c);
		return -ENOMEM;
	}
	if (c) {
		memcpy(b, c->in + from, c->in_len - from);
		at = c->in_len - from;
	}
	for (size_t i = 0; i < ch->qn; i++) {
		struct chunk *q = ch->q[(ch->qhead + i) % Q_MAX];

		memcpy(b + at, q->in, q->in_len);
		at += q->in_len;
	}
	memcpy(b + at, ch->cbuf, ch->clen);
	memset(&in->zs, 0, sizeof(in->zs));
	if (end == CH_MIDBLOCK) {
		zr = inflateCopy(&in->zs, &c->zs);
	} else {
		zr = inflateInit2(&in->zs, -15);
		/* what a block that fails alone may refer back to */
		if (zr == Z_OK && end == CH_ERROR && ch->win_len)
			zr = inflateSetDictionary(&in->zs, ch->win, (uInt)ch->win_len);
	}
	chunk_free(c);
	gp_tr_chunks_free(in);
	free(in->zbuf);
	in->zbuf = b; /* handed over */
	in->zbuf_cap = cap;
	if (zr != Z_OK)
		return -ENOMEM;
	in->z_ready = 1;
	in->zs.next_in = b;
	in->zs.avail_in = (uInt)total;
	if (end == CH_STREAM_END)
		return gp_tr_member_end(in);
	return 0;
}

ssize_t gp_tr_chunks_fill(struct gp_tr *in, size_t room)
{
	struct gp_tr_chunks *ch = in->chunks;

	for (;;) {
		struct chunk *c = ch->cur;
		int r;

		if (c && ch->cur_off < c->out_len) {
			size_t k = c->out_len - ch->cur_off < room ? c->out_len - ch->cur_off : room;
			const char *nl = memchr(c->out + ch->cur_off, '\n', k);

			/* up to the line's end: the lines after it are handed
			 * out in place (gp_tr_chunks_line) */
			if (nl)
				k = (size_t)(nl - (c->out + ch->cur_off)) + 1;
			memcpy(in->buf + in->end, c->out + ch->cur_off, k);
			in->end += k;
			ch->cur_off += k;
			return (ssize_t)k;
		}
		if (c) {
			ch->cur = NULL;
			ch->cur_sc = NULL;
			if (c->end != CH_BOUNDARY)
				return to_serial(in, c, c->end);
			keep_window(ch, c);
			chunk_free(c);
		}
		if ((r = submit(in)))
			return r;
		if (!ch->qn)
			return to_serial(in, NULL, CH_BOUNDARY);
		c = ch->q[ch->qhead];
		ch->qhead = (ch->qhead + 1) % Q_MAX;
		ch->qn--;
		wait_done(c);
		if (c->end == CH_NOMEM) {
			chunk_free(c);
			return -ENOMEM;
		}
		if (c->end == CH_ERROR)
			return to_serial(in, c, CH_ERROR);
		ch->cur = c;
		ch->cur_off = 0;
		in->st.chunks++;
		if (c->sc) {
			if (ch->rq_n == RQ_MAX) { /* the oldest, long read: cannot happen */
				if (ch->rq[ch->rq_head] == ch->cur_sc)
					ch->cur_sc = NULL;
				scanned_free(ch->rq[ch->rq_head]);
				ch->rq_head = (ch->rq_head + 1) % RQ_MAX;
				ch->rq_n--;
			}
			c->sc->goff = ch->out_total;
			c->sc->len = c->out_len;
			ch->rq[(ch->rq_head + ch->rq_n++) % RQ_MAX] = c->sc;
			ch->cur_sc = c->sc;
			c->sc = NULL; /* handed over */
		}
		ch->out_total += c->out_len;
	}
}

int gp_tr_chunks_line(struct gp_tr *in, const char **line, size_t *len, int *done,
		      const void **rec)
{
	struct gp_tr_chunks *ch = in->chunks;
	const struct chunk *c = ch->cur;
	struct scanned *sc = ch->cur_sc;
	const char *p, *nl;
	size_t n;

	if (!c || ch->cur_off >= c->out_len)
		return 0;
	p = c->out + ch->cur_off;
	while (sc && sc->cut_line < sc->nlines && sc->lines[sc->cut_line].raw_off < ch->cur_off)
		sc->cut_val += sc->lines[sc->cut_line++].nvals; /* handed out through the buffer */
	if (sc && in->skip_ignored && sc->cut_line < sc->nlines &&
	    sc->lines[sc->cut_line].raw_off == ch->cur_off &&
	    sc->lines[sc->cut_line].kept != sc->cut_line) {
		/* a run of ignored lines (no values), passed over */
		size_t k = sc->lines[sc->cut_line].kept, to;

		if (k < sc->nlines)
			to = sc->lines[k].raw_off;
		else
			to = sc->lines[k - 1].raw_off + sc->lines[k - 1].raw_len + 1;
		in->st.skipped += k - sc->cut_line;
		in->st.line_no += k - sc->cut_line;
		in->buf_off += to - ch->cur_off;
		ch->cur_off = to;
		sc->cut_line = k;
		p = c->out + ch->cur_off;
		if (ch->cur_off >= c->out_len)
			return 0;
	}
	if (sc && sc->cut_line < sc->nlines && sc->lines[sc->cut_line].raw_off == ch->cur_off) {
		/* its worker found where it ends: the line itself is not
		 * touched here (it is in another core's cache) */
		const struct sc_line *sl = &sc->lines[sc->cut_line];
		uint64_t at = ch->out_total - c->out_len; /* the chunk's output in the stream */

		n = sl->raw_len;
		ch->cur_off += n + 1;
		in->buf_off += n + 1;
		*line = p;
		*len = sl->flags & SCL_CR ? n - 1 : n;
		if (sl->flags & SCL_SCANNED) {
			/* trimmed, where gp_tr_scanned() finds it at once */
			*line = c->out + sl->off;
			*len = sl->len;
			sc->cur_line = sc->cut_line;
			sc->cur_val = sc->cut_val;
			*done = sl->flags & SCL_IGNORED ? GP_TR_IGNORED
				: sl->flags & SCL_DECODED ? GP_TR_DECODED : GP_TR_SCANNED;
			if (sl->flags & SCL_DECODED)
				*rec = sc->recs + (size_t)sl->rec * c->rec_size;
		}
		in->direct_line = *line;
		in->direct_off = at + (uint64_t)(*line - c->out);
		sc->cut_val += sl->nvals;
		sc->cut_line++;
		return 1;
	} else {
		nl = memchr(p, '\n', c->out_len - ch->cur_off);
		/* a line cut by the chunk's end, or too long (its error said
		 * where the buffer says it), goes through the buffer */
		if (!nl || (size_t)(nl - p) > GP_TR_MAX_LINE)
			return 0;
		n = (size_t)(nl - p);
	}
	in->direct_line = p;
	in->direct_off = ch->out_total - c->out_len + ch->cur_off;
	ch->cur_off += n + 1;
	in->buf_off += n + 1; /* the buffer is empty: it starts past the line */
	if (n > 0 && p[n - 1] == '\r')
		n--;
	*line = p;
	*len = n;
	return 1;
}

/* The line at g (n bytes: as the consumer trimmed it) among the lines its
 * worker scanned, or NULL. Lines are asked for in order, each perhaps more
 * than once: what ends before this one is done with. */
static const struct sc_line *find_line(struct gp_tr_chunks *ch, uint64_t g, size_t n,
				       struct scanned **out)
{
	struct scanned *sc;
	const struct sc_line *sl;
	uint64_t rel;

	while (ch->rq_n && ch->rq[ch->rq_head]->goff + ch->rq[ch->rq_head]->len <= g) {
		if (ch->rq[ch->rq_head] == ch->cur_sc)
			ch->cur_sc = NULL;
		scanned_free(ch->rq[ch->rq_head]);
		ch->rq_head = (ch->rq_head + 1) % RQ_MAX;
		ch->rq_n--;
	}
	if (!ch->rq_n || g < ch->rq[ch->rq_head]->goff)
		return NULL;
	sc = ch->rq[ch->rq_head];
	rel = g - sc->goff;
	while (sc->cur_line < sc->nlines && sc->lines[sc->cur_line].off < rel) {
		sc->cur_val += sc->lines[sc->cur_line].nvals;
		sc->cur_line++;
	}
	if (sc->cur_line == sc->nlines)
		return NULL;
	sl = &sc->lines[sc->cur_line];
	if (!(sl->flags & SCL_SCANNED) || sl->off != rel || sl->len != n)
		return NULL;
	*out = sc;
	return sl;
}

int gp_tr_chunks_scanned(struct gp_tr *in, uint64_t g, const char *p, size_t n, struct gp_tr_members *out)
{
	struct scanned *sc;
	const struct sc_line *sl;

	if (!in->chunks->rq_n)
		return 0; /* nothing scanned on workers (one thread: none ever) */
	sl = find_line(in->chunks, g, n, &sc);

	if (!sl || (sl->flags & SCL_DECODED))
		return 0; /* a decoded line's values were not kept */
	gp_tr_members_clear(out);
	out->ignored = !!(sl->flags & SCL_IGNORED);
	for (unsigned i = 0; i < sl->nvals; i++) {
		const struct sc_val *e = &sc->vals[sc->cur_val + i];
		uintptr_t off = (uintptr_t)e->v.p;
		struct gp_json_val v = e->v;

		v.p = off == UINT32_MAX ? NULL : p + off;
		if (e->slot < 32) {
			out->top[e->slot] = v;
			out->top_set |= 1u << e->slot;
		} else {
			out->args[e->slot - 32] = v;
			out->args_set[(e->slot - 32) >> 6] |= 1ull << ((e->slot - 32) & 63);
		}
	}
	return 1;
}
