/* trace_reader: the lines a reader gives, and how it says the stream ended,
 * are the same on one thread and on several (a gzip trace's flushed chunks
 * inflated on workers): over a long trace written by gz_sink with its
 * flushes (lines across chunk boundaries, one longer than a chunk), memory
 * and file input, a damaged chunk, the stream cut anywhere, a stream
 * flushed with Z_SYNC_FLUSH (chunks that refer back), flush patterns that
 * are no flush point (stored data holding 00 00 FF FF), several members
 * and trailing bytes; and the traces given on the command line (the
 * project's samples and test data). The lines scanned on the workers hold
 * what the scanner finds in them on the calling thread. gpuprof.meta read
 * into its struct. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "gz_sink.h"
#include "testutil.h"
#include "trace_meta.h"
#include "trace_reader.h"
#include "trace_scan.h"

static char dir[PATH_MAX];

/* Everything a reader says: its lines (each ended by '\n', then a byte
 * for "unterminated"), then its end. */
struct seen {
	struct tu_bytes text;
	int rc;
	struct gp_tr_state end;
};

/* Chunks cut at every flush point: small traces too go through workers. */
static size_t chunk_min;

static void read_all(struct gp_tr *r, unsigned threads, struct seen *s)
{
	const char *p;
	size_t n;
	int rc;

	gp_tr_set_threads(r, threads);
	gp_tr_set_chunk_min(r, chunk_min);
	memset(s, 0, sizeof(*s));
	while ((rc = gp_tr_line(r, &p, &n)) == 1) {
		tu_bytes_add(&s->text, p, n);
		if (gp_tr_state(r)->last_unterminated)
			tu_bytes_add(&s->text, "|u\n", 3);
		else
			tu_bytes_add(&s->text, "\n", 1);
	}
	s->rc = rc;
	s->end = *gp_tr_state(r);
}

static void read_mem(const void *p, size_t n, unsigned threads, struct seen *s)
{
	struct gp_tr *r;

	if (gp_tr_open_mem(&r, p, n))
		tu_die("gp_tr_open_mem");
	read_all(r, threads, s);
	gp_tr_close(r);
}

static void read_path(const char *path, unsigned threads, struct seen *s)
{
	struct gp_tr *r;

	if (gp_tr_open_file(&r, path))
		tu_die("gp_tr_open_file");
	read_all(r, threads, s);
	gp_tr_close(r);
}

/* The same lines and the same end, but for the chunk count and the bytes
 * read ahead (bytes_in, progress only). */
static int same(const struct seen *a, const struct seen *b)
{
	return a->rc == b->rc && a->text.n == b->text.n &&
	       (!a->text.n || !memcmp(a->text.p, b->text.p, a->text.n)) && a->end.line_no == b->end.line_no &&
	       a->end.done == b->end.done && a->end.gzip_cut == b->end.gzip_cut &&
	       a->end.gzip_damaged == b->end.gzip_damaged &&
	       a->end.last_unterminated == b->end.last_unterminated &&
	       a->end.io_errno == b->end.io_errno;
}

static void seen_free(struct seen *s)
{
	tu_bytes_free(&s->text);
}

static int same_val(const struct gp_json_val *a, const struct gp_json_val *b)
{
	if (a->type != b->type)
		return 0;
	if (a->type == GP_JSON_OBJ && !a->n && !b->n)
		return 1; /* args: its members are what counts */
	return a->n == b->n && a->esc == b->esc && a->num == b->num && a->p == b->p;
}

/* Every line a worker scanned (gp_tr_scanned) holds what gp_tr_scan_line
 * finds in it: how many were. */
static uint64_t check_scanned(const void *gz, size_t len, unsigned threads)
{
	struct gp_tr *r;
	struct gp_tr_members *mine = calloc(1, sizeof(*mine)), *ref = calloc(1, sizeof(*ref));
	const char *p, *why;
	size_t n;
	uint64_t hits = 0;

	if (!mine || !ref || gp_tr_open_mem(&r, gz, len))
		tu_die("check_scanned");
	gp_tr_set_threads(r, threads);
	gp_tr_set_chunk_min(r, chunk_min);
	gp_tr_set_scan(r, 1);
	mine->skip_ignored = ref->skip_ignored = 1;
	while (gp_tr_line(r, &p, &n) == 1) {
		int ok;

		gp_tr_line_trim(&p, &n);
		if (gp_tr_scanned(r, p, n, mine) != 1)
			continue;
		hits++;
		ok = gp_tr_scan_line(p, n, ref, &why) == 0 && mine->ignored == ref->ignored &&
		     (ref->ignored || (mine->top_set == ref->top_set && mine->args_set[0] == ref->args_set[0] && mine->args_set[1] == ref->args_set[1]));
		for (int i = 0; ok && !ref->ignored && i < TK_N; i++)
			ok = same_val(&mine->top[i], &ref->top[i]);
		for (int i = 0; ok && !ref->ignored && i < AK_N; i++)
			ok = same_val(&mine->args[i], &ref->args[i]);
		CHECK(ok);
		if (!ok)
			break;
	}
	gp_tr_close(r);
	free(mine);
	free(ref);
	return hits;
}

/* p[0..n) read as one plain stream (threads 0) and in chunks on 1, 2 and 4
 * threads: the same; *chunks how many chunks the 4-thread reader took from
 * its workers. */
static void check_same_mem(const void *p, size_t n, const char *what, uint64_t *chunks)
{
	struct seen one, many;

	read_mem(p, n, 0, &one);
	CHECK_EQ_U64(one.end.chunks, 0);
	for (unsigned t = 1; t <= 4; t *= 2) {
		read_mem(p, n, t, &many);
		if (!same(&one, &many))
			fprintf(stderr, "%s: %u threads differ (lines %llu vs %llu, cut %d/%d, damaged %d/%d)\n",
				what, t, (unsigned long long)one.end.line_no,
				(unsigned long long)many.end.line_no, one.end.gzip_cut,
				many.end.gzip_cut, one.end.gzip_damaged, many.end.gzip_damaged);
		CHECK(same(&one, &many));
		if (chunks)
			*chunks = many.end.chunks;
		seen_free(&many);
	}
	seen_free(&one);
}

/* A trace-like file written by gz_sink as the recorder writes it: lines of
 * assorted, poorly compressible content, a flush every few hundred lines
 * (some in the middle of a line), and one line of 3 MiB flushed in pieces. */
static struct tu_bytes write_trace(const char *path, struct tu_bytes *plain)
{
	struct gp_gz_sink *s;
	uint64_t seed = 42;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int ok;

	if (fd < 0 || gp_gz_open_fd(&s, fd, 6))
		tu_die("gz_sink");
	memset(plain, 0, sizeof(*plain));
	tu_bytes_add(plain, "[\n", 2);
	for (int i = 0; i < 120000; i++) {
		char line[160];
		int k = snprintf(line, sizeof(line),
				 "{\"ph\":\"i\",\"name\":\"alloc\",\"ts\":%d.%03u,\"args\":{\"addr\":\"0x%llx\"}},\n",
				 i, (unsigned)(tu_rand(&seed) % 1000),
				 (unsigned long long)tu_rand(&seed));

		if (i % 100 == 7) /* args fields past the 64th of the format */
			k = snprintf(line, sizeof(line),
				     "{\"ph\":\"i\",\"name\":\"gpuprof.outline\",\"ts\":%d.000,\"args\":{\"step\":%d,"
				     "\"dropped_bytes\":%d,\"by_layer\":{\"x\":1}}},\n",
				     i, i, i);

		if (i == 60000) { /* one long line, across many flushes */
			tu_bytes_add(plain, "{\"long\":\"", 9);
			for (int j = 0; j < 3 * 1024; j++) {
				char part[1024];

				for (size_t b = 0; b < sizeof(part); b++)
					part[b] = (char)('a' + tu_rand(&seed) % 26);
				tu_bytes_add(plain, part, sizeof(part));
			}
			tu_bytes_add(plain, "\"},\r\n", 5);
		}
		if (i % 700 == 350) /* a flush inside a line */
			k = k / 2;
		tu_bytes_add(plain, line, (size_t)k);
		if (i % 700 == 350)
			tu_bytes_add(plain, line + k, strlen(line + k));
	}
	tu_bytes_add(plain, "]", 1); /* no final newline */
	/* the same bytes through the sink, flushed every 20 KiB or so */
	for (size_t at = 0; at < plain->n;) {
		size_t k = 20000 + tu_rand(&seed) % 5000;

		if (k > plain->n - at)
			k = plain->n - at;
		if (gp_gz_write(s, plain->p + at, k) || gp_gz_flush(s))
			tu_die("gz write");
		at += k;
	}
	if (gp_gz_close(s))
		tu_die("gz close");
	return tu_read_file(path, &ok);
}

/* deflate with the given flush every `every` bytes; level 0 stores. */
static struct tu_bytes gzip_with(const struct tu_bytes *plain, int level, int flush, size_t every)
{
	struct tu_bytes out = { 0 };
	z_stream zs = { 0 };
	unsigned char buf[65536];

	if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		tu_die("deflateInit2");
	for (size_t at = 0;;) {
		size_t k = plain->n - at < every ? plain->n - at : every;
		int last = at + k == plain->n;

		zs.next_in = (Bytef *)plain->p + at;
		zs.avail_in = (uInt)k;
		do {
			zs.next_out = buf;
			zs.avail_out = sizeof(buf);
			deflate(&zs, last ? Z_FINISH : flush);
			tu_bytes_add(&out, buf, sizeof(buf) - zs.avail_out);
		} while (zs.avail_out == 0);
		at += k;
		if (last)
			break;
	}
	deflateEnd(&zs);
	return out;
}

static void test_long_trace(void)
{
	char path[PATH_MAX];
	struct tu_bytes plain, gz;
	struct seen one, many;
	uint64_t chunks = 0;

	tu_path(path, dir, "t.json.gz");
	gz = write_trace(path, &plain);
	check_same_mem(gz.p, gz.n, "whole", &chunks);
	CHECK(chunks > 4); /* it did go through the workers */
	CHECK(check_scanned(gz.p, gz.n, 4) > 100000); /* and the lines were scanned there */
	/* one thread scans each line as it uses it (no table to keep) */
	CHECK_EQ_U64(check_scanned(gz.p, gz.n, 1), 0);
	CHECK_EQ_U64(check_scanned(gz.p, gz.n, 0), 0);
	/* the lines are the plain text's */
	read_mem(gz.p, gz.n, 4, &many);
	CHECK(!many.end.gzip_cut && !many.end.gzip_damaged && many.rc == 0);
	CHECK_EQ_U64(many.end.line_no, tu_count_lines(plain.p, plain.n) + 1);
	seen_free(&many);
	/* a file reads as memory does, however few descriptors may be open */
	read_path(path, 0, &one);
	read_path(path, 3, &many);
	CHECK(same(&one, &many));
	CHECK(many.end.chunks > 4);
	seen_free(&one);
	seen_free(&many);

	/* damage: a byte changed here and there, one at a time */
	{
		uint64_t seed = 7;

		for (int i = 0; i < 12; i++) {
			size_t at = 20 + tu_rand(&seed) % (gz.n - 30);
			unsigned char keep = (unsigned char)gz.p[at];

			gz.p[at] = (char)(keep ^ (1u << (tu_rand(&seed) % 8)));
			check_same_mem(gz.p, gz.n, "damaged", NULL);
			gz.p[at] = (char)keep;
		}
		/* a flush point's own bytes */
		for (size_t at = gz.n / 2; at + 4 < gz.n; at++)
			if (!memcmp(gz.p + at, "\0\0\xff\xff", 4)) {
				gz.p[at + 2] = 0;
				check_same_mem(gz.p, gz.n, "damaged flush", NULL);
				gz.p[at + 2] = (char)0xff;
				break;
			}
	}
	/* cut short anywhere: inside a chunk, just after a flush point, in
	 * the trailer */
	{
		uint64_t seed = 9;
		size_t cuts[16];
		int n = 0;

		for (size_t at = gz.n / 3; at + 4 < gz.n && n < 2; at++)
			if (!memcmp(gz.p + at, "\0\0\xff\xff", 4)) {
				cuts[n++] = at + 4;
				cuts[n++] = at + 2;
			}
		cuts[n++] = gz.n - 1;
		cuts[n++] = gz.n - 8;
		cuts[n++] = gz.n - 9;
		while (n < 16)
			cuts[n++] = 10 + tu_rand(&seed) % (gz.n - 10);
		for (int i = 0; i < n; i++)
			check_same_mem(gz.p, cuts[i], "cut", NULL);
	}
	/* several members, then bytes that are no gzip */
	{
		struct tu_bytes two = { 0 };

		tu_bytes_add(&two, gz.p, gz.n);
		tu_bytes_add(&two, gz.p, gz.n);
		tu_bytes_add(&two, "junk", 4);
		check_same_mem(two.p, two.n, "members", NULL);
		tu_bytes_free(&two);
	}
	tu_bytes_free(&gz);

	/* Z_SYNC_FLUSH: chunks refer back past their start */
	gz = gzip_with(&plain, 6, Z_SYNC_FLUSH, 30000);
	check_same_mem(gz.p, gz.n, "sync flush", NULL);
	tu_bytes_free(&gz);
	/* stored blocks holding 00 00 FF FF that are no flush point */
	{
		struct tu_bytes odd = { 0 };

		for (int i = 0; i < 40000; i++)
			tu_bytes_add(&odd, i % 3 ? "line \0\0\xff\xff x\n" : "{\"a\":1}\n",
				     i % 3 ? 13 : 8);
		gz = gzip_with(&odd, 0, Z_FULL_FLUSH, 100000);
		check_same_mem(gz.p, gz.n, "false flush points", NULL);
		tu_bytes_free(&gz);
		gz = gzip_with(&odd, 1, Z_FULL_FLUSH, 50000);
		check_same_mem(gz.p, gz.n, "false flush points, level 1", NULL);
		tu_bytes_free(&gz);
		tu_bytes_free(&odd);
	}
	tu_bytes_free(&plain);
}

/* A short trace, a plain one and an empty one. */
static void test_small(void)
{
	static const char plain[] = "[\n{\"a\":1},\n]\n";
	struct tu_bytes p = { 0 }, gz;

	check_same_mem(plain, sizeof(plain) - 1, "plain", NULL);
	check_same_mem("", 0, "empty", NULL);
	tu_bytes_add(&p, plain, sizeof(plain) - 1);
	gz = gzip_with(&p, 6, Z_FULL_FLUSH, 4);
	check_same_mem(gz.p, gz.n, "small gzip", NULL);
	check_same_mem(gz.p, 12, "gzip header only", NULL);
	tu_bytes_free(&gz);
	tu_bytes_free(&p);
}

static void put(const char *path, const char *text)
{
	tu_write_file(path, text, strlen(text));
}

/* path holding text: gp_tr_read_meta() says rc, with want in its message. */
static void meta_says(const char *path, const char *text, int rc, const char *want)
{
	struct gp_tr_meta m;
	char err[512] = "";

	put(path, text);
	CHECK_EQ_INT(gp_tr_read_meta(path, &m, err, sizeof(err)), rc);
	CHECK(strstr(err, want) != NULL);
	if (!strstr(err, want))
		fprintf(stderr, "  wanted \"%s\" in \"%s\"\n", want, err);
}

/* gpuprof.meta into its struct: numbers, the root pid given as a string,
 * escaped strings, what is absent -1; what is no trace's first event. */
static void test_meta(void)
{
	static const char trace[] =
		"[\n{\"ph\":\"i\",\"name\":\"gpuprof.meta\",\"cat\":\"gpuprof\",\"pid\":7,\"tid\":0,"
		"\"ts\":0.0,\"args\":{\"format\":1,\"pid\":7,\"ppid\":3,\"hostname\":\"h\\u00e9\","
		"\"ts_base_ns\":1000,\"mode\":\"native\",\"root_pid\":\"5\",\"rank\":1,"
		"\"world_size\":2}},\n]\n";
	struct tu_bytes gz, plain = { 0 };
	struct gp_tr_meta m;
	char path[PATH_MAX], err[512];

	tu_path(path, dir, "meta.json.gz");
	tu_bytes_add(&plain, trace, sizeof(trace) - 1);
	gz = gzip_with(&plain, 6, Z_FULL_FLUSH, 1000);
	tu_write_file(path, gz.p, gz.n);
	CHECK_EQ_INT(gp_tr_read_meta(path, &m, err, sizeof(err)), 0);
	CHECK(m.pid == 7 && m.ppid == 3 && m.root_pid == 5 && m.ts_base_ns == 1000);
	CHECK(m.rank == 1 && m.world_size == 2 && m.local_rank == -1 && m.start_unix_ns == -1);
	CHECK_STR(m.host, "h\xc3\xa9");
	CHECK_STR(m.mode, "native");
	tu_bytes_free(&gz);
	/* a merged trace, no pid, not a trace, nothing */
	meta_says(path, "[\n{\"name\":\"gpuprof.merge\"},\n]\n", -EINVAL, "merge");
	meta_says(path, "[\n{\"name\":\"gpuprof.meta\",\"args\":{}}\n", -EBADMSG,
		  ":2: gpuprof.meta event without \"format\"");
	/* the checks analyze makes (gp_tr_meta_decode), with its messages */
	meta_says(path,
		  "[\n{\"name\":\"gpuprof.meta\",\"args\":{\"format\":1,\"pid\":7,"
		  "\"ts_base_ns\":1,\"rank\":\"1\"}}\n",
		  -EBADMSG, "gpuprof.meta event: \"rank\" is not a non-negative integer");
	meta_says(path, "[{\"name\":\"gpuprof.meta\",\"args\":{\"format\":2}}\n", -EBADMSG,
		  ":1: trace format 2 (this gpuprof reads format 1)");
	meta_says(path,
		  "[\n{\"name\":\"gpuprof.meta\",\"args\":{\"format\":1,\"pid\":7,"
		  "\"ts_base_ns\":1,\"statics\":\"some\"}}\n",
		  -EBADMSG, "gpuprof.meta: \"statics\" is not run or none");
	put(path, "[\n{\"name\":\"gpuprof.meta\",\"args\":{\"format\":1,\"pid\":7,"
		  "\"ts_base_ns\":1,\"statics\":\"none\",\"start_unix_ns\":18446744073709551615}}\n");
	CHECK_EQ_INT(gp_tr_read_meta(path, &m, err, sizeof(err)), 0);
	CHECK(m.statics_none == 1 && m.has_start_unix_ns && (uint64_t)m.start_unix_ns == UINT64_MAX);
	CHECK(m.cmdline_val.type == GP_JSON_NONE && m.rank == -1 && !m.has_job_start_unix_ns);
	meta_says(path, "{\"a\":1}\n", -EINVAL, "does not begin with gpuprof.meta");
	meta_says(path, "", -EINVAL, "empty");
	tu_bytes_free(&plain);
}

int main(int argc, char **argv)
{
	/* --threads: the worker threads' part alone (ThreadSanitizer's run,
	 * many times slower): every flush point a chunk, on several threads */
	int threads_only = argc > 1 && strcmp(argv[1], "--threads") == 0;

	tu_mkdtemp(dir, "trace_reader");
	if (!threads_only) {
		test_meta();
		test_small();
		test_long_trace();
	}
	/* every flush point a chunk */
	chunk_min = 4;
	test_small();
	test_long_trace();
	/* real traces: the same on one thread and on several */
	for (int i = 1 + threads_only; i < argc; i++) {
		int ok;
		struct tu_bytes t = tu_read_file(argv[i], &ok);
		struct seen one, many;

		CHECK(ok);
		check_same_mem(t.p, t.n, argv[i], NULL);
		CHECK(check_scanned(t.p, t.n, 4) > 0 || t.n < 10000);
		read_path(argv[i], 1, &one);
		read_path(argv[i], 4, &many);
		CHECK(same(&one, &many));
		CHECK(many.end.chunks > 1 || t.n < 10000); /* one flush in a small one */
		CHECK(one.rc == 0 && one.end.line_no > 2);
		seen_free(&one);
		seen_free(&many);
		tu_bytes_free(&t);
	}
	tu_rmtree(dir);
	return CHECK_DONE();
}
