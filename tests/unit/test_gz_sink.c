/* gz_sink: sync-flushed data is decodable while the sink is still open,
 * close yields exactly one valid gzip member, write errors are returned and
 * sticky, EINTR and short writes lose nothing. Decoding uses plain zlib. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/time.h>
#include <unistd.h>

#include "check.h"
#include "fd_write.h"
#include "gz_sink.h"
#include "testutil.h"

static char dir[PATH_MAX];

/* Text-like and random chunks of assorted sizes, appended to `all`. */
static void gen(struct tu_bytes *chunk, uint64_t *seed, size_t n)
{
	chunk->n = 0;
	if (tu_rand(seed) % 2) {
		for (size_t i = 0; i < n; i++)
			tu_bytes_add(chunk, (const char[]){ (char)tu_rand(seed) }, 1);
	} else {
		while (chunk->n < n) {
			char line[64];
			int k = snprintf(line, sizeof(line), "{\"ev\":%llu},\n",
					 (unsigned long long)(tu_rand(seed) % 100000));
			size_t take = (size_t)k < n - chunk->n ? (size_t)k : n - chunk->n;

			tu_bytes_add(chunk, line, take);
		}
	}
}

static int fd_is_closed(int fd)
{
	return fcntl(fd, F_GETFD) == -1 && errno == EBADF;
}

/* Checks that the file holds a gzip stream decoding to exactly want. With
 * complete: the member ends (trailer verified by zlib) and nothing follows. */
static void check_file(const char *path, const struct tu_bytes *want, int complete, int line)
{
	struct tu_bytes file = tu_read_file(path, NULL), out = { 0 };
	size_t used = 0;
	int zr = tu_gunzip(file.p, file.n, &out, &used);

	if (complete) {
		if (zr != Z_STREAM_END || used != file.n)
			CHECK_FAILED_("%s:%d (from line %d): not one complete member: zr %d, used %zu of %zu\n",
				      __FILE__, __LINE__, line, zr, used, file.n);
	} else if (zr != Z_BUF_ERROR && zr != Z_OK) {
		CHECK_FAILED_("%s:%d (from line %d): open stream does not decode: zr %d\n",
			      __FILE__, __LINE__, line, zr);
	}
	if (out.n != want->n || memcmp(out.p, want->p, want->n) != 0)
		CHECK_FAILED_("%s:%d (from line %d): decoded %zu bytes, want %zu (or content differs)\n",
			      __FILE__, __LINE__, line, out.n, want->n);
	if (file.n >= 3)
		CHECK(file.p[0] == 0x1f && file.p[1] == 0x8b && file.p[2] == 8);
	check_count += 2;
	tu_bytes_free(&file);
	tu_bytes_free(&out);
}

static void test_roundtrip(int level)
{
	char path[PATH_MAX];
	struct tu_bytes all = { 0 }, chunk = { 0 };
	struct gp_gz_sink *s;
	uint64_t seed = 12345 + (uint64_t)level;
	struct stat st;
	int fd;

	tu_path(path, dir, "roundtrip.gz");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(fd >= 0);
	CHECK_EQ_INT(gp_gz_open_fd(&s, fd, level), 0);
	tu_bytes_add(&all, "", 0);

	for (int phase = 0; phase < 4; phase++) {
		/* sizes around and beyond the 256 KiB output buffer */
		size_t total = phase == 0 ? 10 : (size_t)phase * 400000;
		size_t done = 0;

		while (done < total) {
			size_t n = 1 + tu_rand(&seed) % (phase == 3 ? 300000 : 5000);

			if (n > total - done)
				n = total - done;
			gen(&chunk, &seed, n);
			CHECK_EQ_INT(gp_gz_write(s, chunk.p, chunk.n), 0);
			tu_bytes_add(&all, chunk.p, chunk.n);
			done += n;
		}
		CHECK_EQ_INT(gp_gz_flush(s), 0);
		/* read back while the sink is still open: no trailer yet */
		check_file(path, &all, 0, __LINE__);
		CHECK_EQ_U64(gp_gz_bytes_in(s), all.n);
		CHECK(stat(path, &st) == 0);
		CHECK_EQ_U64(gp_gz_bytes_out(s), (uint64_t)st.st_size);
	}
	/* flushing with nothing new is harmless */
	CHECK_EQ_INT(gp_gz_flush(s), 0);
	CHECK_EQ_INT(gp_gz_flush(s), 0);
	check_file(path, &all, 0, __LINE__);
	CHECK_EQ_INT(gp_gz_write(s, "", 0), 0);

	CHECK_EQ_INT(gp_gz_close(s), 0);
	CHECK(fd_is_closed(fd));
	check_file(path, &all, 1, __LINE__);
	tu_bytes_free(&all);
	tu_bytes_free(&chunk);
}

static void test_empty_and_finish(void)
{
	char path[PATH_MAX];
	struct tu_bytes none = { 0 };
	struct gp_gz_sink *s;
	struct stat st;
	int fd;

	tu_bytes_add(&none, "", 0);
	tu_path(path, dir, "empty.gz");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK_EQ_INT(gp_gz_open_fd(&s, fd, 6), 0);
	CHECK_EQ_INT(gp_gz_close(s), 0);
	check_file(path, &none, 1, __LINE__);

	/* finish: final counts while the sink lives, then writes are refused */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK_EQ_INT(gp_gz_open_fd(&s, fd, 6), 0);
	CHECK_EQ_INT(gp_gz_write(s, "hello\n", 6), 0);
	CHECK_EQ_INT(gp_gz_finish(s), 0);
	CHECK(stat(path, &st) == 0);
	CHECK_EQ_U64(gp_gz_bytes_out(s), (uint64_t)st.st_size);
	CHECK_EQ_U64(gp_gz_bytes_in(s), 6);
	CHECK_EQ_INT(gp_gz_write(s, "x", 1), -EINVAL);
	CHECK_EQ_INT(gp_gz_flush(s), 0);
	CHECK_EQ_INT(gp_gz_close(s), 0);
	none.n = 0;
	tu_bytes_add(&none, "hello\n", 6);
	check_file(path, &none, 1, __LINE__);
	tu_bytes_free(&none);

	CHECK_EQ_INT(gp_gz_close(NULL), 0);
	gp_gz_abandon(NULL);
}

static void test_bad_args(void)
{
	struct gp_gz_sink *s = (struct gp_gz_sink *)&s;
	int fd;

	CHECK_EQ_INT(gp_gz_open_fd(&s, -1, 6), -EINVAL);
	CHECK(s == NULL);
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	CHECK_EQ_INT(gp_gz_open_fd(&s, fd, 0), -EINVAL);
	CHECK(fd_is_closed(fd)); /* ownership passed even on failure */
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	CHECK_EQ_INT(gp_gz_open_fd(&s, fd, 10), -EINVAL);
	CHECK(fd_is_closed(fd));
}

/* After the first error every call returns it, close included. */
static void check_sticky_error(int fd, int want, size_t first_write)
{
	struct gp_gz_sink *s;
	unsigned char *big = malloc(first_write);
	uint64_t seed = 99;
	int r;

	for (size_t i = 0; i < first_write; i++)
		big[i] = (unsigned char)tu_rand(&seed); /* incompressible */
	CHECK_EQ_INT(gp_gz_open_fd(&s, fd, 1), 0);
	r = gp_gz_write(s, big, first_write);
	if (r == 0)
		r = gp_gz_flush(s); /* small writes only fail once flushed */
	CHECK_EQ_INT(r, want);
	CHECK_EQ_INT(gp_gz_write(s, "x", 1), want);
	CHECK_EQ_INT(gp_gz_flush(s), want);
	CHECK_EQ_INT(gp_gz_write(s, "", 0), want);
	CHECK_EQ_INT(gp_gz_close(s), want);
	CHECK(fd_is_closed(fd));
	free(big);
}

static void test_write_errors(void)
{
	int p[2];

	check_sticky_error(open("/dev/full", O_WRONLY | O_CLOEXEC), -ENOSPC, 10);
	check_sticky_error(open("/dev/full", O_WRONLY | O_CLOEXEC), -ENOSPC, 1 << 20);

	signal(SIGPIPE, SIG_IGN); /* the error must come back as -EPIPE */
	CHECK(pipe(p) == 0);
	close(p[0]);
	check_sticky_error(p[1], -EPIPE, 10);
	CHECK(pipe(p) == 0);
	close(p[0]);
	check_sticky_error(p[1], -EPIPE, 1 << 20);
}

static void test_abandon(void)
{
	char path[PATH_MAX];
	struct tu_bytes want = { 0 }, file, out = { 0 };
	struct gp_gz_sink *s;
	int fd;

	tu_path(path, dir, "abandon.gz");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK_EQ_INT(gp_gz_open_fd(&s, fd, 6), 0);
	tu_bytes_add(&want, "flushed part\n", 13);
	CHECK_EQ_INT(gp_gz_write(s, want.p, want.n), 0);
	CHECK_EQ_INT(gp_gz_flush(s), 0);
	CHECK_EQ_INT(gp_gz_write(s, "never flushed", 13), 0);
	gp_gz_abandon(s);
	CHECK(fd_is_closed(fd));
	file = tu_read_file(path, NULL);
	CHECK(tu_gunzip(file.p, file.n, &out, NULL) != Z_STREAM_END);
	CHECK(out.n == want.n && memcmp(out.p, want.p, want.n) == 0);
	tu_bytes_free(&want);
	tu_bytes_free(&file);
	tu_bytes_free(&out);
}

/* gp_gz_move_to: what was written before the move and after it decode,
 * in the new file, as one member; the old descriptor is closed; a sink
 * whose descriptor cannot be read fails, sticky, and takes the new one. */
static void test_move_to(void)
{
	char old_path[PATH_MAX], new_path[PATH_MAX];
	struct tu_bytes want = { 0 }, chunk = { 0 };
	struct gp_gz_sink *s;
	uint64_t seed = 7;
	int fd, fd2;

	tu_path(old_path, dir, "move_old.gz");
	tu_path(new_path, dir, "move_new.gz");
	fd = open(old_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK_EQ_INT(gp_gz_open_fd(&s, fd, 1), 0);
	for (int i = 0; i < 40; i++) { /* past the output buffer: written out before the move */
		gen(&chunk, &seed, 30000);
		tu_bytes_add(&want, chunk.p, chunk.n);
		CHECK_EQ_INT(gp_gz_write(s, chunk.p, chunk.n), 0);
	}
	CHECK(unlink(old_path) == 0); /* as the flight recorder's outline file */
	fd2 = open(new_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK_EQ_INT(gp_gz_move_to(s, fd2), 0);
	CHECK(fd_is_closed(fd));
	tu_bytes_add(&want, "after the move\n", 15);
	CHECK_EQ_INT(gp_gz_write(s, "after the move\n", 15), 0);
	CHECK_EQ_INT(gp_gz_close(s), 0);
	CHECK(fd_is_closed(fd2));
	check_file(new_path, &want, 1, __LINE__);

	/* write-only: its bytes cannot be copied */
	fd = open(old_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK_EQ_INT(gp_gz_open_fd(&s, fd, 1), 0);
	CHECK_EQ_INT(gp_gz_write(s, "x", 1), 0);
	fd2 = open(new_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK_EQ_INT(gp_gz_move_to(s, fd2), -EBADF);
	CHECK(fd_is_closed(fd2));
	CHECK_EQ_INT(gp_gz_write(s, "y", 1), -EBADF);
	gp_gz_abandon(s);
	CHECK(fd_is_closed(fd));
	tu_bytes_free(&want);
	tu_bytes_free(&chunk);
}

/* gp_fd_copy: the first n bytes, over several of its chunks, appended
 * after what out holds; in's offset left alone; a file shorter than n
 * gives -EIO and out holds what there was. */
static void test_fd_copy(void)
{
	char in_path[PATH_MAX], out_path[PATH_MAX];
	struct tu_bytes src = { 0 }, want = { 0 }, got;
	uint64_t seed = 11;
	int in, out;

	tu_path(in_path, dir, "copy_in");
	tu_path(out_path, dir, "copy_out");
	gen(&src, &seed, 700000);
	in = open(in_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(write(in, src.p, src.n) == (ssize_t)src.n);
	out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(write(out, "head", 4) == 4);
	tu_bytes_add(&want, "head", 4);
	tu_bytes_add(&want, src.p, 600001);
	CHECK_EQ_INT(gp_fd_copy(in, 600001, out), 0);
	CHECK(lseek(in, 0, SEEK_CUR) == (off_t)src.n);
	got = tu_read_file(out_path, NULL);
	CHECK(got.n == want.n && memcmp(got.p, want.p, want.n) == 0);
	tu_bytes_free(&got);

	CHECK_EQ_INT(gp_fd_copy(in, src.n + 1, out), -EIO);
	got = tu_read_file(out_path, NULL);
	CHECK(got.n == want.n + src.n);
	tu_bytes_free(&got);
	CHECK_EQ_INT(gp_fd_copy(in, 0, out), 0);
	close(in);
	close(out);
	tu_bytes_free(&src);
	tu_bytes_free(&want);
}

/* A reader that drains a pipe slowly, so the writer blocks in write(2) and
 * the interval timer interrupts it: EINTR and short writes. */
struct reader {
	int fd;
	struct tu_bytes got;
};

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static void *reader_main(void *arg)
{
	struct reader *rd = arg;
	unsigned char buf[4096];
	sigset_t set;
	ssize_t n;

	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &set, NULL); /* signals go to the writer */
	while ((n = read(rd->fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		tu_bytes_add(&rd->got, buf, (size_t)n);
		if (rd->got.n % 8 == 0)
			usleep(50);
	}
	return NULL;
}

static void test_eintr_short_writes(void)
{
	struct sigaction sa;
	struct itimerval it = { { 0, 300 }, { 0, 300 } }, off = { { 0, 0 }, { 0, 0 } };
	struct reader rd = { 0 };
	struct tu_bytes all = { 0 }, out = { 0 };
	struct gp_gz_sink *s;
	uint64_t seed = 7, written;
	pthread_t th;
	int p[2];
	size_t used;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm; /* no SA_RESTART: write(2) sees EINTR */
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
	CHECK(pipe(p) == 0);
	rd.fd = p[0];
	CHECK(pthread_create(&th, NULL, reader_main, &rd) == 0);
	CHECK_EQ_INT(gp_gz_open_fd(&s, p[1], 1), 0);
	setitimer(ITIMER_REAL, &it, NULL);
	for (int i = 0; i < 64; i++) {
		unsigned char chunk[65536];

		for (size_t j = 0; j < sizeof(chunk); j++)
			chunk[j] = (unsigned char)tu_rand(&seed);
		CHECK_EQ_INT(gp_gz_write(s, chunk, sizeof(chunk)), 0);
		tu_bytes_add(&all, chunk, sizeof(chunk));
		if (i % 8 == 0)
			CHECK_EQ_INT(gp_gz_flush(s), 0);
	}
	CHECK_EQ_INT(gp_gz_finish(s), 0);
	written = gp_gz_bytes_out(s);
	CHECK_EQ_INT(gp_gz_close(s), 0);
	setitimer(ITIMER_REAL, &off, NULL);
	pthread_join(th, NULL);
	close(p[0]);
	CHECK(alarms > 0);
	CHECK_EQ_U64(rd.got.n, written);
	CHECK_EQ_INT(tu_gunzip(rd.got.p, rd.got.n, &out, &used), Z_STREAM_END);
	CHECK_EQ_U64(used, rd.got.n);
	CHECK(out.n == all.n && memcmp(out.p, all.p, all.n) == 0);
	fprintf(stderr, "eintr test: %d timer signals during %llu bytes of writes\n",
		(int)alarms, (unsigned long long)written);
	tu_bytes_free(&all);
	tu_bytes_free(&out);
	tu_bytes_free(&rd.got);
}

int main(void)
{
	tu_mkdtemp(dir, "gz");
	test_roundtrip(1);
	test_roundtrip(6);
	test_roundtrip(9);
	test_empty_and_finish();
	test_bad_args();
	test_write_errors();
	test_abandon();
	test_move_to();
	test_fd_copy();
	test_eintr_short_writes();
	tu_rmtree(dir);
	return CHECK_DONE();
}
