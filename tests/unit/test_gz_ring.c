/* gz_ring: a dump is one gzip member that zlib inflates with its CRC-32
 * and length checked, and that the trace reader reads line by line on one
 * thread and on several; it holds the head, exactly the kept segments and
 * the tail, and of the segments' openings only the first's. The cap on compressed bytes and the time window drop the
 * oldest segments whole, at least one kept, and count what they drop.
 * Then a day of flushes at the recorder's pace (one every 500 ms, 172,800)
 * under a one-minute window: what is kept stays bounded, and dumps made
 * along the way are whole. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "gz_ring.h"
#include "testutil.h"
#include "trace_reader.h"

static char dir[PATH_MAX];
static uint64_t dump_from; /* the first segment a dump holds (its number) */

static const char head[] = "[\n{\"ph\":\"i\",\"name\":\"gpuprof.meta\",\"args\":{\"format\":1}},\n";
static const char tail[] = "{\"ph\":\"i\",\"name\":\"gpuprof.end\"}\n]\n";

/* Segment k's lines: k's own number in each, so that a dropped or
 * repeated segment shows. */
static void segment_text(struct tu_bytes *b, uint64_t k, int lines)
{
	char line[160];

	for (int i = 0; i < lines; i++) {
		int n = snprintf(line, sizeof(line),
				 "{\"ph\":\"i\",\"name\":\"alloc\",\"ts\":%llu.%03d,\"args\":"
				 "{\"addr\":\"0x%llx\",\"bytes\":%d}},\n",
				 (unsigned long long)k, i, (unsigned long long)(0x7f0000000000ull + k), i * 512);

		tu_bytes_add(b, line, (size_t)n);
	}
}

/* The ring's dump into a file, read back whole. */
static struct tu_bytes dump(struct gp_gz_ring *r, int *rc)
{
	char path[PATH_MAX];
	struct tu_bytes out = { 0 };
	int fd, ok;

	tu_path(path, dir, "dump.json.gz");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	*rc = gp_gz_ring_dump(r, fd, dump_from, head, sizeof(head) - 1, tail, sizeof(tail) - 1);
	close(fd);
	out = tu_read_file(path, &ok);
	CHECK(ok);
	return out;
}

/* gzip's own reading of gz (zlib checks its CRC-32 and length): 0 and
 * the bytes, or -1. */
static int gunzip(const struct tu_bytes *gz, struct tu_bytes *out)
{
	size_t used = 0;

	memset(out, 0, sizeof(*out));
	if (tu_gunzip(gz->p, gz->n, out, &used) != Z_STREAM_END || used != gz->n)
		return -1;
	return 0;
}

/* What the trace reader gives for gz on threads threads: its lines, each
 * ended by '\n'. */
static struct tu_bytes read_lines(const struct tu_bytes *gz, unsigned threads)
{
	struct tu_bytes text = { 0 };
	struct gp_tr *in;
	const char *p;
	size_t n;

	CHECK_EQ_INT(gp_tr_open_mem(&in, gz->p, gz->n), 0);
	gp_tr_set_threads(in, threads);
	gp_tr_set_chunk_min(in, 4); /* every flush point a chunk */
	while (gp_tr_line(in, &p, &n) == 1) {
		tu_bytes_add(&text, p, n);
		tu_bytes_add(&text, "\n", 1);
	}
	CHECK(gp_tr_state(in)->last_unterminated == 0);
	gp_tr_close(in);
	return text;
}

static int same_bytes(const struct tu_bytes *a, const struct tu_bytes *b)
{
	return a->n == b->n && (a->n == 0 || memcmp(a->p, b->p, a->n) == 0);
}

/* gz holds exactly want (both freed here), read by zlib and by the trace
 * reader on one thread and on four. */
static void check_gz_holds(struct tu_bytes *gz, struct tu_bytes *want)
{
	struct tu_bytes got, one, four;

	CHECK_EQ_INT(gunzip(gz, &got), 0);
	CHECK(same_bytes(&got, want));
	one = read_lines(gz, 1);
	four = read_lines(gz, 4);
	CHECK(same_bytes(&one, want) && same_bytes(&four, want));
	tu_bytes_free(want);
	tu_bytes_free(gz);
	tu_bytes_free(&got);
	tu_bytes_free(&one);
	tu_bytes_free(&four);
}

/* The ring's dump holds exactly want (freed here). */
static void check_dump_holds(struct gp_gz_ring *r, struct tu_bytes *want)
{
	struct tu_bytes gz;
	int rc;

	gz = dump(r, &rc);
	CHECK_EQ_INT(rc, 0);
	check_gz_holds(&gz, want);
}

/* The dump holds head + segments first..last + tail. */
static void check_dump(struct gp_gz_ring *r, uint64_t first, uint64_t last, int lines)
{
	struct tu_bytes want = { 0 };

	tu_bytes_add(&want, head, sizeof(head) - 1);
	for (uint64_t k = first; k <= last && first <= last; k++)
		segment_text(&want, k, lines);
	tu_bytes_add(&want, tail, sizeof(tail) - 1);
	check_dump_holds(r, &want);
}

static void write_segment(struct gp_gz_ring *r, uint64_t k, int lines, int64_t stamp)
{
	struct tu_bytes b = { 0 };

	segment_text(&b, k, lines);
	/* in two pieces, the second one line long */
	CHECK_EQ_INT(gp_gz_ring_write(r, b.p, b.n / 2), 0);
	CHECK_EQ_INT(gp_gz_ring_write(r, b.p + b.n / 2, b.n - b.n / 2), 0);
	CHECK_EQ_INT(gp_gz_ring_seal(r, stamp), 0);
	tu_bytes_free(&b);
}

static void test_keep_and_drop(void)
{
	struct gp_gz_ring *r;
	struct gp_gz_ring_stats st;

	CHECK_EQ_INT(gp_gz_ring_new(&r, 0, 1), -EINVAL);
	CHECK_EQ_INT(gp_gz_ring_new(&r, 1 << 20, 0), -EINVAL);
	/* nothing kept: head and tail alone */
	CHECK_EQ_INT(gp_gz_ring_new(&r, 1 << 20, 1), 0);
	CHECK_EQ_INT(gp_gz_ring_seal(r, 5), 0); /* nothing written: nothing kept */
	gp_gz_ring_stats(r, &st);
	CHECK(st.segments == 0 && st.first_stamp == INT64_MIN);
	check_dump(r, 1, 0, 0);
	/* everything kept */
	for (uint64_t k = 1; k <= 20; k++)
		write_segment(r, k, 50, (int64_t)k * 500);
	gp_gz_ring_stats(r, &st);
	CHECK(st.segments == 20 && st.dropped_segments == 0 && st.first_stamp == 500 &&
	      st.last_stamp == 10000);
	check_dump(r, 1, 20, 50);
	/* written and not sealed: not in the dump */
	CHECK_EQ_INT(gp_gz_ring_write(r, "{\"x\":1},\n", 9), 0);
	gp_gz_ring_stats(r, &st);
	CHECK(st.pending_in == 9);
	check_dump(r, 1, 20, 50);
	gp_gz_ring_free(r);

	/* a window: stamps before it go, whole */
	CHECK_EQ_INT(gp_gz_ring_new(&r, 1 << 20, 6), 0);
	for (uint64_t k = 1; k <= 20; k++)
		write_segment(r, k, 50, (int64_t)k * 500);
	gp_gz_ring_drop_before(r, 7 * 500);
	gp_gz_ring_stats(r, &st);
	CHECK(st.segments == 14 && st.dropped_segments == 6 && st.first_stamp == 3500);
	check_dump(r, 7, 20, 50);
	gp_gz_ring_drop_before(r, INT64_MAX);
	gp_gz_ring_stats(r, &st);
	CHECK(st.segments == 0 && st.bytes == 0 && st.in_bytes == 0);
	check_dump(r, 1, 0, 0);
	gp_gz_ring_free(r);

	/* the cap: the oldest go while more is kept, at least one stays */
	CHECK_EQ_INT(gp_gz_ring_new(&r, 4096, 1), 0);
	for (uint64_t k = 1; k <= 30; k++) {
		write_segment(r, k, 40, (int64_t)k);
		gp_gz_ring_stats(r, &st);
		CHECK(st.bytes <= 4096 || st.segments == 1);
	}
	gp_gz_ring_stats(r, &st);
	CHECK(st.segments >= 1 && st.segments < 30 && st.last_stamp == 30);
	check_dump(r, 31 - st.segments, 30, 40);
	{
		struct tu_bytes all = { 0 };

		for (uint64_t k = 1; k <= 30; k++)
			segment_text(&all, k, 40);
		CHECK(st.in_bytes + st.dropped_in_bytes == all.n);
		CHECK(st.segments + st.dropped_segments == 30);
		tu_bytes_free(&all);
	}
	gp_gz_ring_free(r);

	/* a cap below one segment keeps the newest one */
	CHECK_EQ_INT(gp_gz_ring_new(&r, 1, 1), 0);
	for (uint64_t k = 1; k <= 3; k++)
		write_segment(r, k, 100, (int64_t)k);
	gp_gz_ring_stats(r, &st);
	CHECK(st.segments == 1 && st.first_stamp == 3 && st.dropped_segments == 2);
	check_dump(r, 3, 3, 100);
	/* a dump that cannot be written says so */
	CHECK_EQ_INT(gp_gz_ring_dump(r, -1, 0, head, sizeof(head) - 1, tail, sizeof(tail) - 1),
		     -EBADF);
	gp_gz_ring_free(r);
	gp_gz_ring_free(NULL);
}

/* A day at the recorder's pace: a flush every 500 ms, a one-minute window
 * (120 segments), and a cap above it. Kept bytes never pass the window's
 * worth; a dump every six hours holds exactly the last minute. */
/* Segment k opened by opening k (a replay of the state at its start): a
 * dump holds the first kept segment's opening and no other. */
static void opening_text(struct tu_bytes *b, uint64_t k)
{
	char line[120];
	int n = snprintf(line, sizeof(line),
			 "{\"ph\":\"i\",\"name\":\"gpuprof.window\",\"ts\":%llu.000},\n",
			 (unsigned long long)k);

	for (uint64_t i = 0; i < k % 7 + 1; i++)
		tu_bytes_add(b, line, (size_t)n);
}

static void test_openings(void)
{
	struct gp_gz_ring *r;
	struct tu_bytes want = { 0 }, b = { 0 };

	CHECK_EQ_INT(gp_gz_ring_new(&r, 1 << 20, 6), 0);
	/* nothing written: no opening to mark */
	CHECK_EQ_INT(gp_gz_ring_end_opening(r), -EINVAL);
	gp_gz_ring_free(r);
	CHECK_EQ_INT(gp_gz_ring_new(&r, 1 << 20, 6), 0);
	for (uint64_t k = 1; k <= 12; k++) {
		b.n = 0;
		opening_text(&b, k);
		CHECK_EQ_INT(gp_gz_ring_write(r, b.p, b.n), 0);
		CHECK_EQ_INT(gp_gz_ring_end_opening(r), 0);
		if (k == 12) /* the last segment is its opening alone */
			CHECK_EQ_INT(gp_gz_ring_seal(r, (int64_t)k), 0);
		else
			write_segment(r, k, 30 + (int)k, (int64_t)k);
	}
	gp_gz_ring_drop_before(r, 5);
	tu_bytes_add(&want, head, sizeof(head) - 1);
	opening_text(&want, 5);
	for (uint64_t k = 5; k < 12; k++)
		segment_text(&want, k, 30 + (int)k);
	tu_bytes_add(&want, tail, sizeof(tail) - 1);
	check_dump_holds(r, &want);
	/* from segment 8 on (numbered from 0: the ninth written) */
	CHECK(gp_gz_ring_next_seq(r) == 12);
	dump_from = 8;
	tu_bytes_add(&want, head, sizeof(head) - 1);
	opening_text(&want, 9);
	for (uint64_t k = 9; k < 12; k++)
		segment_text(&want, k, 30 + (int)k);
	tu_bytes_add(&want, tail, sizeof(tail) - 1);
	check_dump_holds(r, &want);
	dump_from = 0;
	gp_gz_ring_free(r);
	tu_bytes_free(&b);
}

/* A member begun by a sink (head and lines, flushed now and then), handed
 * over, and ended by the ring's segments and a tail: one member. The
 * ring's first line, discarded, is in neither. */
static void test_after_a_sink(void)
{
	char path[PATH_MAX];
	struct gp_gz_ring *r;
	struct gp_gz_sink *s;
	struct gp_gz_member so_far;
	struct tu_bytes want = { 0 }, b = { 0 }, gz;
	int fd, ok;

	CHECK_EQ_INT(gp_gz_ring_new(&r, 1 << 20, 1), 0);
	/* the first line, forgotten: the sink's head carries it */
	CHECK_EQ_INT(gp_gz_ring_write(r, head, sizeof(head) - 1), 0);
	CHECK_EQ_INT(gp_gz_ring_discard(r), 0);
	for (uint64_t k = 1; k <= 6; k++) {
		b.n = 0;
		opening_text(&b, k);
		CHECK_EQ_INT(gp_gz_ring_write(r, b.p, b.n), 0);
		CHECK_EQ_INT(gp_gz_ring_end_opening(r), 0);
		write_segment(r, k, 40, (int64_t)k);
	}
	gp_gz_ring_drop_before(r, 3);
	tu_path(path, dir, "after.json.gz");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK_EQ_INT(gp_gz_open_fd(&s, fd, 6), 0);
	CHECK_EQ_INT(gp_gz_write(s, head, sizeof(head) - 1), 0);
	tu_bytes_add(&want, head, sizeof(head) - 1);
	for (uint64_t k = 100; k < 103; k++) {
		b.n = 0;
		segment_text(&b, k, 25);
		CHECK_EQ_INT(gp_gz_write(s, b.p, b.n), 0);
		CHECK_EQ_INT(gp_gz_flush(s), 0);
		tu_bytes_add(&want, b.p, b.n);
	}
	CHECK_EQ_INT(gp_gz_hand_over(s, &fd, &so_far), 0);
	CHECK(fd >= 0 && so_far.in_len == want.n);
	CHECK_EQ_INT(gp_gz_ring_dump_after(r, fd, 0, &so_far, tail, sizeof(tail) - 1), 0);
	close(fd);
	opening_text(&want, 3);
	for (uint64_t k = 3; k <= 6; k++)
		segment_text(&want, k, 40);
	tu_bytes_add(&want, tail, sizeof(tail) - 1);
	gz = tu_read_file(path, &ok);
	CHECK(ok);
	check_gz_holds(&gz, &want);
	gp_gz_ring_free(r);
	tu_bytes_free(&b);
}

static void test_a_day(void)
{
	const uint64_t flushes = 24 * 3600 * 2, window = 120;
	struct gp_gz_ring *r;
	struct gp_gz_ring_stats st;
	uint64_t most = 0;

	CHECK_EQ_INT(gp_gz_ring_new(&r, 64 << 20, 1), 0);
	for (uint64_t k = 1; k <= flushes; k++) {
		char line[96];
		int n = snprintf(line, sizeof(line),
				 "{\"ph\":\"i\",\"name\":\"alloc\",\"ts\":%llu.000,\"args\":{\"bytes\":%llu}},\n",
				 (unsigned long long)k * 500000, (unsigned long long)(k % 4096) * 512);

		CHECK_EQ_INT(gp_gz_ring_write(r, line, (size_t)n), 0);
		CHECK_EQ_INT(gp_gz_ring_seal(r, (int64_t)k * 500), 0);
		gp_gz_ring_drop_before(r, (int64_t)(k - window + 1) * 500);
		gp_gz_ring_stats(r, &st);
		if (st.bytes > most)
			most = st.bytes;
		if (k % (6 * 3600 * 2) == 0) {
			struct tu_bytes gz, got;
			int rc;

			CHECK(st.segments == window);
			gz = dump(r, &rc);
			CHECK_EQ_INT(rc, 0);
			CHECK_EQ_INT(gunzip(&gz, &got), 0);
			CHECK(got.n == sizeof(head) - 1 + st.in_bytes + sizeof(tail) - 1);
			tu_bytes_free(&gz);
			tu_bytes_free(&got);
		}
	}
	gp_gz_ring_stats(r, &st);
	CHECK(st.segments == window && st.dropped_segments == flushes - window);
	/* a segment of one line is about a hundred bytes compressed */
	CHECK(most <= window * 128);
	printf("a day of flushes: %llu kept (%llu bytes compressed, at most %llu), %llu dropped\n",
	       (unsigned long long)st.segments, (unsigned long long)st.bytes,
	       (unsigned long long)most, (unsigned long long)st.dropped_segments);
	gp_gz_ring_free(r);
}

int main(void)
{
	tu_mkdtemp(dir, "gz_ring");
	test_keep_and_drop();
	test_openings();
	test_after_a_sink();
	test_a_day();
	return CHECK_DONE();
}
