/* trace_recover: a trace cut at (nearly) every compressed offset recovers to
 * one valid gzip member holding a JSON array with exactly the events that
 * were whole before the cut plus a gpuprof.end marker; complete traces are
 * copied; damaged data still gives valid JSON; non-traces give -EINVAL and no
 * file; existing outputs and symlinks are refused; in-place recovery leaves
 * no temporary file. Expectations come from decoding the cut file with plain
 * zlib, independently of the code under test. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "gz_sink.h"
#include "testutil.h"
#include "trace_recover.h"
#include "trace_writer.h"

#define META_PID 4242

static char dir[PATH_MAX];
static char in_path[PATH_MAX], out_path[PATH_MAX];

struct flush_point {
	uint64_t bytes_out; /* file size once the flush returned */
	uint64_t events;    /* events in the file by then */
};

struct trace {
	struct tu_bytes gz;    /* the complete compressed file */
	struct tu_bytes text;  /* its content */
	uint64_t events;       /* including meta and the final event */
	struct flush_point fp[512];
	size_t nfp;
};

/* Writes a trace the way the profiler does: gpuprof.meta first (its
 * gz_flush saying how the sink flushes), a flush every flush_every events,
 * gpuprof.end last. big_line: one event of that
 * many bytes of args, to span many inflate chunks. */
static void make_trace(struct trace *tr, int n, int flush_every, size_t big_line)
{
	char path[PATH_MAX];
	struct gp_trace_writer *tw = NULL;
	struct gp_tw_stats st;
	uint64_t seed = (uint64_t)n * 31 + 17;
	char *blob = big_line ? malloc(big_line) : NULL;
	int fd;

	memset(tr, 0, sizeof(*tr));
	for (size_t i = 0; i < big_line; i++)
		blob[i] = (char)('a' + tu_rand(&seed) % 26);
	tu_path(path, dir, "source.json.gz");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK_EQ_INT(gp_tw_open_fd(&tw, fd, 6), 0);
	gp_tw_begin(tw, 'i', "gpuprof.meta", "gpuprof", META_PID, 0, 0);
	gp_tw_field_str(tw, "s", "g");
	gp_tw_arg_u64(tw, "format", 1);
	gp_tw_arg_i64(tw, "pid", META_PID);
	gp_tw_arg_str(tw, "cmdline", "python3 \"train.py\" \\ \n\x01\xff");
	gp_tw_arg_str(tw, "gz_flush", GP_GZ_FLUSH_KIND);
	CHECK_EQ_INT(gp_tw_end(tw), 0);
	for (int i = 1; i < n - 1; i++) {
		uint64_t r = tu_rand(&seed);

		gp_tw_begin(tw, 'X', r % 5 ? "cudaMalloc" : "k<\"}\n{\\>\xC3", "kernel",
			    META_PID, (int64_t)(r % 9), (int64_t)i * 1000 + 123);
		gp_tw_dur(tw, (int64_t)(r % 100000));
		gp_tw_arg_u64(tw, "i", (uint64_t)i);
		gp_tw_arg_hex(tw, "addr", r);
		if (r % 17 == 0)
			gp_tw_arg_str(tw, "text", "},\n{\"name\":\"gpuprof.end\"}\n]\n");
		if (i == n / 2 && blob)
			gp_tw_arg_str_n(tw, "blob", blob, big_line);
		CHECK_EQ_INT(gp_tw_end(tw), 0);
		if (i % flush_every == 0 && tr->nfp < 512) {
			CHECK_EQ_INT(gp_tw_flush(tw), 0);
			gp_tw_get_stats(tw, &st);
			tr->fp[tr->nfp].bytes_out = st.bytes_out;
			tr->fp[tr->nfp].events = st.events;
			tr->nfp++;
		}
	}
	gp_tw_begin(tw, 'i', "gpuprof.end", "gpuprof", META_PID, 0, (int64_t)n * 1000);
	gp_tw_field_str(tw, "s", "g");
	gp_tw_arg_bool(tw, "clean", 1);
	gp_tw_arg_bool(tw, "recovered", 0);
	CHECK_EQ_INT(gp_tw_close(tw, &st), 0);
	tr->events = st.events;
	CHECK_EQ_U64(tr->events, (uint64_t)n);
	tr->gz = tu_read_file(path, NULL);
	CHECK_EQ_INT(tu_gunzip(tr->gz.p, tr->gz.n, &tr->text, NULL), Z_STREAM_END);
	free(blob);
}

/* Position just after the k-th newline of s, or 0. */
static size_t after_line(const struct tu_bytes *s, size_t k)
{
	for (size_t i = 0; i < s->n && k; i++)
		if (s->p[i] == '\n' && --k == 0)
			return i + 1;
	return 0;
}

static uint64_t events_flushed_before(const struct trace *tr, size_t cut)
{
	uint64_t ev = 0;

	for (size_t i = 0; i < tr->nfp; i++)
		if (tr->fp[i].bytes_out <= cut)
			ev = tr->fp[i].events;
	return ev;
}

/* Output must be exactly one complete gzip member; returns its content. */
static struct tu_bytes read_output(const char *path)
{
	int ok;
	struct tu_bytes f = tu_read_file(path, &ok), o = { 0 };
	size_t used = 0;

	CHECK(ok);
	CHECK_EQ_INT(tu_gunzip(f.p, f.n, &o, &used), Z_STREAM_END);
	CHECK_EQ_U64(used, f.n);
	tu_bytes_free(&f);
	return o;
}

/* The recovered marker: last element, as specified. */
static void check_end_marker(struct json_object *arr, uint64_t kept, uint64_t dropped, int line)
{
	size_t n = arr ? tu_len(arr) : 0;
	struct json_object *e = n ? tu_idx(arr, n - 1) : NULL;
	struct json_object *prev = n > 1 ? tu_idx(arr, n - 2) : NULL;
	struct json_object *args = tu_get(e, "args");

	if (!e || n != kept + 1 ||
	    strcmp(tu_str(e, "name"), "gpuprof.end") != 0 ||
	    strcmp(tu_str(e, "ph"), "i") != 0 ||
	    strcmp(tu_str(e, "s"), "g") != 0 ||
	    json_object_get_int64(tu_get(e, "pid")) != META_PID ||
	    !json_object_is_type(tu_get(e, "tid"), json_type_int) ||
	    json_object_get_double(tu_get(e, "ts")) != json_object_get_double(tu_get(prev, "ts")) ||
	    !json_object_is_type(tu_get(args, "recovered"), json_type_boolean) ||
	    !json_object_get_boolean(tu_get(args, "recovered")) ||
	    !json_object_is_type(tu_get(args, "clean"), json_type_boolean) ||
	    json_object_get_boolean(tu_get(args, "clean")) ||
	    json_object_get_uint64(tu_get(args, "events_kept")) != kept ||
	    json_object_get_uint64(tu_get(args, "bytes_dropped")) != dropped)
		CHECK_FAILED_("%s:%d (from line %d): bad end marker (n %zu, kept %llu, dropped %llu): %s\n",
			      __FILE__, __LINE__, line, n, (unsigned long long)kept,
			      (unsigned long long)dropped,
			      e ? json_object_to_json_string(e) : "(none)");
	check_count++;
}

/* Recovers the first `cut` compressed bytes of tr and checks the result
 * against an independent decoding of the same bytes. */
static void check_cut(const struct trace *tr, size_t cut)
{
	struct gp_recover_result res;
	struct tu_bytes prefix = { 0 }, out, want = { 0 };
	size_t lines, keep_end;
	uint64_t kept;
	int complete, rc, truncated;

	tu_write_file(in_path, tr->gz.p, cut);
	unlink(out_path);
	truncated = tu_gunzip(tr->gz.p, cut, &prefix, NULL) != Z_STREAM_END;
	lines = tu_count_lines(prefix.p, prefix.n);
	rc = gp_trace_recover(in_path, out_path, 0, &res);

	if (lines < 2) {
		/* the header and meta line are not whole: not provably a trace */
		if (rc != -EINVAL || tu_exists(out_path))
			CHECK_FAILED_("%s:%d: cut %zu: rc %d, want -EINVAL and no file\n",
				      __FILE__, __LINE__, cut, rc);
		check_count++;
		CHECK(cut < (tr->nfp ? tr->fp[0].bytes_out : tr->gz.n));
		goto out;
	}
	if (rc != 0) {
		CHECK_FAILED_("%s:%d: cut %zu of %zu: rc %d\n", __FILE__, __LINE__, cut, tr->gz.n, rc);
		goto out;
	}
	/* "]" cut before its newline still closes the array */
	complete = prefix.n + 1 >= tr->text.n;
	kept = complete ? tr->events : lines - 1;
	if (res.events_kept != kept || res.already_complete != complete ||
	    res.gzip_truncated != truncated)
		CHECK_FAILED_("%s:%d: cut %zu: kept %llu (want %llu), complete %d (%d), truncated %d (%d)\n",
			      __FILE__, __LINE__, cut, (unsigned long long)res.events_kept,
			      (unsigned long long)kept, res.already_complete, complete,
			      res.gzip_truncated, truncated);
	check_count++;
	CHECK(res.events_kept >= events_flushed_before(tr, cut));

	out = read_output(out_path);
	if (complete || kept == tr->events) {
		/* the program's own end came: kept as it was, "]" added */
		CHECK(res.bytes_dropped == prefix.n - after_line(&prefix, tr->events + 1) || complete);
		CHECK(out.n == tr->text.n && memcmp(out.p, tr->text.p, out.n) == 0);
	} else {
		struct json_object *arr;

		keep_end = after_line(&prefix, kept + 1);
		CHECK_EQ_U64(res.bytes_dropped, prefix.n - keep_end);
		/* kept lines verbatim */
		tu_bytes_add(&want, prefix.p, keep_end);
		if (out.n < want.n || memcmp(out.p, want.p, want.n) != 0)
			CHECK_FAILED_("%s:%d: cut %zu: kept lines not copied verbatim\n",
				      __FILE__, __LINE__, cut);
		check_count++;
		CHECK(out.n > 3 && memcmp(out.p + out.n - 3, "\n]\n", 3) == 0);
		arr = tu_parse((const char *)out.p, out.n);
		CHECK(arr && json_object_is_type(arr, json_type_array));
		check_end_marker(arr, kept, prefix.n - keep_end, __LINE__);
		json_object_put(arr);
	}
	tu_bytes_free(&out);
out:
	tu_bytes_free(&prefix);
	tu_bytes_free(&want);
}

static void test_truncation(void)
{
	struct trace tr;
	uint64_t seed = 5;

	/* small: every offset */
	make_trace(&tr, 60, 5, 0);
	fprintf(stderr, "small trace: %zu bytes, %zu flushes\n", tr.gz.n, tr.nfp);
	for (size_t cut = 0; cut <= tr.gz.n; cut++)
		check_cut(&tr, cut);
	tu_bytes_free(&tr.gz);
	tu_bytes_free(&tr.text);

	/* large, with a line far longer than an inflate chunk: samples, the
	 * bytes around each flush point, and the whole tail (trailer) */
	make_trace(&tr, 8000, 400, 400000);
	fprintf(stderr, "large trace: %zu bytes, %zu flushes\n", tr.gz.n, tr.nfp);
	for (int i = 0; i < 40; i++)
		check_cut(&tr, (size_t)(tu_rand(&seed) % tr.gz.n));
	for (size_t i = 0; i < tr.nfp; i++)
		for (size_t d = 0; d < 3; d++)
			check_cut(&tr, (size_t)tr.fp[i].bytes_out + d - 1);
	for (size_t cut = tr.gz.n - 24; cut <= tr.gz.n; cut++)
		check_cut(&tr, cut);
	tu_bytes_free(&tr.gz);
	tu_bytes_free(&tr.text);
}

static int lines_in_order(const struct tu_bytes *got, const struct tu_bytes *want);

/* Bit damage inside the deflate data: whatever survives is valid JSON, and
 * every event kept is one of the original's, unaltered (damage that still
 * decodes takes its whole flush chunk with it; damage nothing locates
 * leaves nothing to trust: -EBADMSG, no output). */
static void test_corruption(void)
{
	struct trace tr;
	uint64_t seed = 77;
	int recovered = 0;

	make_trace(&tr, 1500, 50, 0);
	for (int i = 0; i < 200; i++) {
		struct gp_recover_result res;
		size_t pos = 10 + (size_t)(tu_rand(&seed) % (tr.gz.n - 10));
		unsigned char saved = tr.gz.p[pos];
		int rc;

		tr.gz.p[pos] ^= (unsigned char)(1u << (tu_rand(&seed) % 8));
		tu_write_file(in_path, tr.gz.p, tr.gz.n);
		tr.gz.p[pos] = saved;
		unlink(out_path);
		rc = gp_trace_recover(in_path, out_path, 0, &res);
		CHECK(rc == 0 || rc == -EINVAL || rc == -EBADMSG);
		if (rc == 0) {
			struct tu_bytes out = read_output(out_path);
			struct json_object *arr = tu_parse((const char *)out.p, out.n);
			size_t n = arr ? tu_len(arr) : 0;
			struct json_object *last = n ? tu_idx(arr, n - 1) : NULL;

			CHECK(arr && json_object_is_type(arr, json_type_array));
			CHECK(last && strcmp(tu_str(last, "name"), "gpuprof.end") == 0);
			for (size_t j = 0; j < n; j++)
				CHECK(json_object_is_type(tu_idx(arr, j),
							  json_type_object));
			if (!lines_in_order(&out, &tr.text))
				fprintf(stderr, "flip at %zu: an altered event was kept\n", pos);
			CHECK(lines_in_order(&out, &tr.text));
			json_object_put(arr);
			tu_bytes_free(&out);
			recovered++;
		} else {
			CHECK(!tu_exists(out_path));
		}
	}
	CHECK(recovered > 100);
	tu_bytes_free(&tr.gz);
	tu_bytes_free(&tr.text);
}

static void write_gz(const char *path, const void *p, size_t n)
{
	struct gp_gz_sink *s;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	CHECK_EQ_INT(gp_gz_open_fd(&s, fd, 1), 0);
	CHECK_EQ_INT(gp_gz_write(s, p, n), 0);
	CHECK_EQ_INT(gp_gz_close(s), 0);
}

#define META "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"gpuprof.meta\",\"cat\":\"gpuprof\"," \
	     "\"pid\":4242,\"tid\":0,\"ts\":0.000,\"args\":{\"pid\":4242}}"

/* A string literal as pointer and length, embedded NULs and all. */
#define LIT(s) s, sizeof(s) - 1

static void expect_invalid(const void *p, size_t n, int gz, const char *what)
{
	struct gp_recover_result res;
	int rc;

	if (gz)
		write_gz(in_path, p, n);
	else
		tu_write_file(in_path, p, n);
	unlink(out_path);
	rc = gp_trace_recover(in_path, out_path, 0, &res);
	if (rc != -EINVAL || tu_exists(out_path))
		CHECK_FAILED_("%s:%d: %s: rc %d, want -EINVAL and no output\n",
			      __FILE__, __LINE__, what, rc);
	check_count++;
}

static void test_not_traces(void)
{
	static const char zlib_trace[] = "[\n" META ",\n";
	unsigned char rnd[4096], zbuf[512];
	uLongf zn = sizeof(zbuf);
	uint64_t seed = 3;

	for (int i = 0; i < 20; i++) {
		size_t n = 1 + tu_rand(&seed) % sizeof(rnd);

		for (size_t j = 0; j < n; j++)
			rnd[j] = (unsigned char)tu_rand(&seed);
		if (i == 0) {
			rnd[0] = 0x1f; /* gzip magic, garbage after */
			rnd[1] = 0x8b;
		}
		expect_invalid(rnd, n, 0, "random bytes");
	}
	expect_invalid(LIT("hello"), 1, "gzip of hello");
	expect_invalid(LIT("hello\n"), 1, "gzip of hello line");
	expect_invalid(LIT("{\"a\":1}\n"), 0, "plain JSON object");
	expect_invalid(LIT("[\n" META ",\n"), 0, "uncompressed trace");
	expect_invalid(LIT(""), 0, "empty file");
	expect_invalid(LIT(""), 1, "gzip of nothing");
	expect_invalid(LIT("["), 1, "only [");
	expect_invalid(LIT("[\n"), 1, "only [ line");
	expect_invalid(LIT("[\n" META), 1, "meta line without newline");
	expect_invalid(LIT("[ \n" META ",\n"), 1, "bad header line");
	expect_invalid(LIT("[\n{\"name\":\"other\"},\n" META ",\n"), 1,
		       "meta not first");
	expect_invalid(LIT("[\n{\"name\":\"x\",\"args\":{\"name\":\"gpuprof.meta\"}},\n"), 1,
		       "meta name only nested");
	expect_invalid(LIT("[\n{\"name\":\"gpuprof.meta\",},\n"), 1, "meta not valid JSON");
	expect_invalid(LIT("[\n{\"name\":\"gpuprof.meta\"} ,\n"), 1, "meta line malformed");
	/* a valid trace in a zlib (not gzip) wrapper */
	CHECK(compress2(zbuf, &zn, (const Bytef *)zlib_trace, sizeof(zlib_trace) - 1, 6) == Z_OK);
	expect_invalid(zbuf, zn, 0, "zlib wrapper");

	CHECK_EQ_INT(gp_trace_recover("/nonexistent/trace.json.gz", out_path, 0, NULL), -ENOENT);
	CHECK(!tu_exists(out_path));
}

/* Recovers crafted content; returns the output's content (empty on error). */
static struct tu_bytes recover_text(const char *text, size_t n, struct gp_recover_result *res,
				    int want_rc)
{
	struct tu_bytes out = { 0 };
	int rc;

	write_gz(in_path, text, n);
	unlink(out_path);
	rc = gp_trace_recover(in_path, out_path, 0, res);
	CHECK_EQ_INT(rc, want_rc);
	if (rc == 0)
		out = read_output(out_path);
	return out;
}

static void test_crafted(void)
{
	struct gp_recover_result res;
	struct tu_bytes out, big = { 0 };
	struct json_object *arr;
	static const char bad_line[] = "[\n" META ",\n{bad},\n{\"ph\":\"X\",\"ts\":5},\n";
	static const char meta_final[] = "[\n" META "\n]\n";
	static const char trailing[] = "[\n" META ",\n{\"name\":\"gpuprof.end\",\"ts\":7}\n]\nxx";
	static const char odd_meta[] = "[\n{\"name\":\"gpuprof.meta\",\"pid\":\"x\",\"ts\":1e3},\n"
				       "{\"ts\":\"not a number\"},\n";
	static const char nested_ts[] = "[\n" META ",\n{\"args\":{\"ts\":99},\"ts\":-12.5,\"x\":[{\"ts\":1}]},\n";

	/* a damaged line is passed over, the valid lines after it kept */
	out = recover_text(bad_line, sizeof(bad_line) - 1, &res, 0);
	CHECK_EQ_U64(res.events_kept, 2);
	CHECK_EQ_U64(res.bytes_dropped, 0);
	CHECK_EQ_U64(res.lines_skipped, 1);
	CHECK_EQ_U64(res.bytes_skipped, sizeof("{bad},\n") - 1);
	CHECK_EQ_U64(res.damage_after, 1);
	CHECK(!res.already_complete && !res.gzip_truncated && gp_recover_damaged(&res));
	arr = tu_parse((const char *)out.p, out.n);
	check_end_marker(arr, 2, 0, __LINE__);
	{
		struct json_object *args = tu_get(tu_idx(arr, 2), "args");

		CHECK(strcmp(tu_str(tu_idx(arr, 1), "ph"), "X") == 0);
		CHECK_EQ_U64(json_object_get_uint64(tu_get(args, "lines_skipped")), 1);
		CHECK_EQ_U64(json_object_get_uint64(tu_get(args, "bytes_skipped")), 7);
		CHECK_EQ_U64(json_object_get_uint64(tu_get(args, "damage_after")), 1);
		CHECK_EQ_U64(json_object_get_uint64(tu_get(args, "gzip_gaps")), 0);
	}
	json_object_put(arr);
	tu_bytes_free(&out);

	/* closed, but the final event is not gpuprof.end: not complete */
	out = recover_text(meta_final, sizeof(meta_final) - 1, &res, 0);
	CHECK_EQ_U64(res.events_kept, 1);
	CHECK_EQ_U64(res.bytes_dropped, 0);
	CHECK(!res.already_complete && !gp_recover_damaged(&res));
	arr = tu_parse((const char *)out.p, out.n);
	check_end_marker(arr, 1, 0, __LINE__);
	json_object_put(arr);
	tu_bytes_free(&out);

	/* junk after the closing bracket: the program's own end stays, and says
	 * what was passed over */
	out = recover_text(trailing, sizeof(trailing) - 1, &res, 0);
	CHECK(!res.already_complete);
	CHECK_EQ_U64(res.events_kept, 2);
	CHECK_EQ_U64(res.bytes_dropped, 0);
	CHECK_EQ_U64(res.lines_skipped, 1);
	CHECK_EQ_U64(res.bytes_skipped, 2);
	arr = tu_parse((const char *)out.p, out.n);
	CHECK(arr && tu_len(arr) == 2);
	CHECK(arr && strcmp(tu_str(tu_idx(arr, 1), "name"), "gpuprof.end") == 0 &&
	      json_object_get_uint64(tu_get(tu_get(tu_idx(arr, 1), "args"), "lines_skipped")) == 1 &&
	      json_object_get_int64(tu_get(tu_idx(arr, 1), "ts")) == 7);
	json_object_put(arr);
	tu_bytes_free(&out);

	/* unusable pid and ts: 0 in the marker */
	out = recover_text(odd_meta, sizeof(odd_meta) - 1, &res, 0);
	CHECK_EQ_U64(res.events_kept, 2);
	CHECK(strstr((char *)out.p, "\"pid\":0,\"tid\":0,\"ts\":0,") != NULL);
	arr = tu_parse((const char *)out.p, out.n);
	CHECK(arr && tu_len(arr) == 3);
	json_object_put(arr);
	tu_bytes_free(&out);

	/* the top-level ts is used, not one nested in args */
	out = recover_text(nested_ts, sizeof(nested_ts) - 1, &res, 0);
	CHECK(strstr((char *)out.p, "\"pid\":4242,\"tid\":0,\"ts\":-12.5,") != NULL);
	tu_bytes_free(&out);

	/* nesting beyond the validator's limit counts as damage */
	for (int depth = 60; depth <= 100; depth += 40) {
		char text[512];
		size_t n = 0;

		n += (size_t)snprintf(text, sizeof(text), "[\n%s,\n{\"a\":", META);
		for (int i = 0; i < depth; i++)
			text[n++] = '[';
		for (int i = 0; i < depth; i++)
			text[n++] = ']';
		memcpy(text + n, "},\n", 3);
		n += 3;
		out = recover_text(text, n, &res, 0);
		CHECK_EQ_U64(res.events_kept, depth < 64 ? 2 : 1);
		tu_bytes_free(&out);
	}

	/* a line beyond GP_TW_MAX_LINE is damage; memory stays bounded */
	tu_bytes_add(&big, LIT("[\n" META ",\n{\"a\":\""));
	{
		char *fill = malloc(1 << 20);

		memset(fill, 'a', 1 << 20);
		for (size_t i = 0; i < GP_TW_MAX_LINE / (1 << 20) + 1; i++)
			tu_bytes_add(&big, fill, 1 << 20);
		free(fill);
	}
	tu_bytes_add(&big, "\"},\n", 4);
	out = recover_text((const char *)big.p, big.n, &res, 0);
	CHECK_EQ_U64(res.events_kept, 1);
	CHECK_EQ_U64(res.bytes_dropped, 0);
	CHECK_EQ_U64(res.lines_skipped, 1);
	CHECK_EQ_U64(res.bytes_skipped, big.n - (sizeof("[\n" META ",\n") - 1));
	tu_bytes_free(&out);
	tu_bytes_free(&big);

	/* a second gzip member after a complete one is ignored */
	{
		static const char full[] = "[\n" META ",\n{\"name\":\"gpuprof.end\",\"ts\":1}\n]\n";
		struct tu_bytes two;
		char p2[PATH_MAX];
		int fd;

		tu_path(p2, dir, "second.gz");
		write_gz(p2, "junk", 4);
		write_gz(in_path, full, sizeof(full) - 1);
		two = tu_read_file(p2, NULL);
		fd = open(in_path, O_WRONLY | O_APPEND | O_CLOEXEC);
		CHECK(fd >= 0 && write(fd, two.p, two.n) == (ssize_t)two.n);
		close(fd);
		unlink(out_path);
		CHECK_EQ_INT(gp_trace_recover(in_path, out_path, 0, &res), 0);
		CHECK(res.already_complete && !res.gzip_truncated);
		out = read_output(out_path);
		CHECK(out.n == sizeof(full) - 1 && memcmp(out.p, full, out.n) == 0);
		tu_bytes_free(&out);
		tu_bytes_free(&two);
	}
}

static void test_complete_and_paths(void)
{
	struct trace tr;
	struct gp_recover_result res;
	struct tu_bytes out, before, after;
	char link_path[PATH_MAX], target[PATH_MAX];

	make_trace(&tr, 500, 50, 0);
	tu_write_file(in_path, tr.gz.p, tr.gz.n);
	unlink(out_path);
	CHECK_EQ_INT(gp_trace_recover(in_path, out_path, 0, &res), 0);
	CHECK_EQ_INT(res.already_complete, 1);
	CHECK_EQ_INT(res.gzip_truncated, 0);
	CHECK_EQ_U64(res.events_kept, 500);
	CHECK_EQ_U64(res.bytes_dropped, 0);
	out = read_output(out_path);
	CHECK(out.n == tr.text.n && memcmp(out.p, tr.text.p, out.n) == 0);
	tu_bytes_free(&out);
	/* copied as it is, byte for byte: not compressed again */
	out = tu_read_file(out_path, NULL);
	CHECK(out.n == tr.gz.n && memcmp(out.p, tr.gz.p, out.n) == 0);
	tu_bytes_free(&out);

	/* a bad CRC in the trailer, no damage found to account for it: the
	 * data or the check was altered, and which events nothing tells */
	tr.gz.p[tr.gz.n - 6] ^= 0x40;
	tu_write_file(in_path, tr.gz.p, tr.gz.n);
	tr.gz.p[tr.gz.n - 6] ^= 0x40;
	unlink(out_path);
	CHECK_EQ_INT(gp_trace_recover(in_path, out_path, 0, &res), -EBADMSG);
	CHECK(!tu_exists(out_path));
	unlink(out_path);
	tu_write_file(in_path, tr.gz.p, tr.gz.n);

	/* existing output: refused, untouched */
	tu_write_file(out_path, "precious", 8);
	CHECK_EQ_INT(gp_trace_recover(in_path, out_path, 0, &res), -EEXIST);
	before = tu_read_file(out_path, NULL);
	CHECK(before.n == 8 && memcmp(before.p, "precious", 8) == 0);
	tu_bytes_free(&before);

	/* output is a symlink: never followed, dangling or not */
	tu_path(link_path, dir, "link.json.gz");
	tu_path(target, dir, "link-target");
	CHECK(symlink(target, link_path) == 0);
	CHECK(gp_trace_recover(in_path, link_path, 0, &res) < 0);
	CHECK(!tu_exists(target));
	tu_write_file(target, "precious", 8);
	CHECK(gp_trace_recover(in_path, link_path, 0, &res) < 0);
	before = tu_read_file(target, NULL);
	CHECK(before.n == 8 && memcmp(before.p, "precious", 8) == 0);
	tu_bytes_free(&before);
	unlink(link_path);
	unlink(target);
	unlink(out_path);

	/* in-place on a complete trace: nothing to do, file untouched */
	tu_write_file(in_path, tr.gz.p, tr.gz.n);
	CHECK_EQ_INT(gp_trace_recover_in_place(in_path, &res), 0);
	CHECK(res.already_complete);
	after = tu_read_file(in_path, NULL);
	CHECK(after.n == tr.gz.n && memcmp(after.p, tr.gz.p, after.n) == 0);
	tu_bytes_free(&after);
	tu_bytes_free(&tr.gz);
	tu_bytes_free(&tr.text);
}

/* A write error after the output was created (file size limit: EFBIG)
 * removes the partial output. */
static void test_write_failure(void)
{
	struct trace tr;
	struct gp_recover_result res;
	struct rlimit old, small;

	make_trace(&tr, 4000, 100, 0);
	tu_write_file(in_path, tr.gz.p, tr.gz.n / 2);
	unlink(out_path);
	signal(SIGXFSZ, SIG_IGN);
	CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
	small = old;
	small.rlim_cur = 4096;
	CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
	CHECK_EQ_INT(gp_trace_recover(in_path, out_path, 0, &res), -EFBIG);
	CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
	CHECK(!tu_exists(out_path));
	CHECK_EQ_U64(res.events_kept, 0);
	tu_bytes_free(&tr.gz);
	tu_bytes_free(&tr.text);
}

static size_t dir_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	size_t n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

static void test_in_place(void)
{
	struct trace tr;
	struct gp_recover_result res;
	char sub[PATH_MAX], path[PATH_MAX], cwd[PATH_MAX], link_path[PATH_MAX];
	struct tu_bytes out, before;
	struct json_object *arr;
	size_t cut;

	make_trace(&tr, 400, 40, 0);
	cut = (size_t)tr.fp[5].bytes_out + 3;
	tu_path(sub, dir, "inplace");
	CHECK(mkdir(sub, 0755) == 0);
	tu_path(path, sub, "x.json.gz");
	tu_write_file(path, tr.gz.p, cut);
	CHECK_EQ_INT(gp_trace_recover_in_place(path, &res), 0);
	CHECK(!res.already_complete && res.gzip_truncated);
	CHECK(res.events_kept >= tr.fp[5].events);
	CHECK_EQ_U64(dir_entries(sub), 1); /* no temporary left */
	out = read_output(path);
	arr = tu_parse((const char *)out.p, out.n);
	CHECK(arr && tu_len(arr) == res.events_kept + 1);
	json_object_put(arr);
	tu_bytes_free(&out);

	/* a bare file name (no directory part), relative to the cwd */
	CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	CHECK(chdir(sub) == 0);
	tu_write_file("y.json.gz", tr.gz.p, cut);
	CHECK_EQ_INT(gp_trace_recover_in_place("y.json.gz", &res), 0);
	CHECK(!res.already_complete);
	CHECK(chdir(cwd) == 0);
	CHECK_EQ_U64(dir_entries(sub), 2);

	/* complete: left exactly as it was, no temporary left either */
	tu_write_file(path, tr.gz.p, tr.gz.n);
	CHECK_EQ_INT(gp_trace_recover_in_place(path, &res), 0);
	CHECK(res.already_complete && !res.gzip_truncated);
	before = tu_read_file(path, NULL);
	CHECK(before.n == tr.gz.n && memcmp(before.p, tr.gz.p, before.n) == 0);
	tu_bytes_free(&before);
	CHECK_EQ_U64(dir_entries(sub), 2);

	/* not a trace: -EINVAL, file untouched, nothing left over */
	tu_write_file(path, "not a trace", 11);
	CHECK_EQ_INT(gp_trace_recover_in_place(path, &res), -EINVAL);
	before = tu_read_file(path, NULL);
	CHECK(before.n == 11);
	tu_bytes_free(&before);
	CHECK_EQ_U64(dir_entries(sub), 2);

	/* a symlink is not repaired in place (rename would replace the link) */
	tu_write_file(path, tr.gz.p, cut);
	tu_path(link_path, sub, "l.json.gz");
	CHECK(symlink("x.json.gz", link_path) == 0);
	CHECK_EQ_INT(gp_trace_recover_in_place(link_path, &res), -EINVAL);
	CHECK_EQ_U64(dir_entries(sub), 3);
	CHECK_EQ_INT(gp_trace_recover_in_place("/nonexistent/x.json.gz", &res), -ENOENT);
	tu_bytes_free(&tr.gz);
	tu_bytes_free(&tr.text);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define TIMED(call)                                                     \
	do {                                                            \
		double t0_ = now_s();                                   \
		call;                                                   \
		fprintf(stderr, "%s: %.1f s\n", #call, now_s() - t0_);  \
	} while (0)

/* Whether every line of got (but its last two: the end and "]") is a line
 * of want, in order. */
static int lines_in_order(const struct tu_bytes *got, const struct tu_bytes *want)
{
	size_t gi = 0, wi = 0, nlines = tu_count_lines(got->p, got->n), k = 0;

	while (gi < got->n && k + 2 < nlines) {
		const unsigned char *ge = memchr(got->p + gi, '\n', got->n - gi);
		size_t gl = (size_t)(ge - (got->p + gi));
		int found = 0;

		while (wi < want->n) {
			const unsigned char *we = memchr(want->p + wi, '\n', want->n - wi);
			size_t wl = we ? (size_t)(we - (want->p + wi)) : want->n - wi;

			found = wl == gl && memcmp(want->p + wi, got->p + gi, gl) == 0;
			wi += wl + 1;
			if (found)
				break;
		}
		if (!found)
			return 0;
		gi += gl + 1;
		k++;
	}
	return 1;
}

/* Damaged compressed data in the middle: the events before it and those
 * after the next flush point are kept, verbatim; the program's own end stays
 * and says what was passed over. */
static void test_gzip_gap(void)
{
	struct trace tr;
	struct gp_recover_result res;
	struct tu_bytes out;
	struct json_object *arr, *end, *args;
	size_t k = 10, pos;

	make_trace(&tr, 2000, 50, 0);
	CHECK(tr.nfp > k + 2);
	/* the block after a flush point begins with an invalid block type
	 * (BFINAL 1, BTYPE 11): inflate fails there for sure */
	pos = (size_t)tr.fp[k].bytes_out;
	tr.gz.p[pos] = 0xff;
	tu_write_file(in_path, tr.gz.p, tr.gz.n);
	unlink(out_path);
	CHECK_EQ_INT(gp_trace_recover(in_path, out_path, 0, &res), 0);
	CHECK(res.gzip_gaps >= 1 && res.gzip_bytes_skipped >= 1);
	CHECK(!res.gzip_lost_tail && gp_recover_damaged(&res) && !res.already_complete);
	CHECK(res.damage_after >= tr.fp[k].events);
	CHECK(res.events_kept >= tr.fp[k].events + (tr.events - tr.fp[k + 1].events));
	CHECK(res.events_kept < tr.events);
	out = read_output(out_path);
	CHECK(lines_in_order(&out, &tr.text));
	arr = tu_parse((const char *)out.p, out.n);
	CHECK(arr && tu_len(arr) == res.events_kept);
	end = arr ? tu_idx(arr, tu_len(arr) - 1) : NULL;
	args = tu_get(end, "args");
	CHECK(end && strcmp(tu_str(end, "name"), "gpuprof.end") == 0);
	CHECK(json_object_get_boolean(tu_get(args, "clean")) && !json_object_get_boolean(tu_get(args, "recovered")));
	CHECK_EQ_U64(json_object_get_uint64(tu_get(args, "gzip_gaps")), res.gzip_gaps);
	CHECK_EQ_U64(json_object_get_uint64(tu_get(args, "damage_after")), res.damage_after);
	json_object_put(arr);
	tu_bytes_free(&out);
	tu_bytes_free(&tr.gz);
	tu_bytes_free(&tr.text);

	/* garbage inside a block: inflate may fail, or decode wrong lines,
	 * which are passed over; either way what follows the next flush point
	 * is kept, verbatim */
	make_trace(&tr, 2000, 50, 0);
	pos = (size_t)(tr.fp[k].bytes_out + tr.fp[k + 1].bytes_out) / 2;
	memset(tr.gz.p + pos, 0xff, 48);
	tu_write_file(in_path, tr.gz.p, tr.gz.n);
	unlink(out_path);
	CHECK_EQ_INT(gp_trace_recover(in_path, out_path, 0, &res), 0);
	CHECK(gp_recover_damaged(&res) && !res.gzip_lost_tail);
	CHECK(res.events_kept >= tr.fp[k].events + (tr.events - tr.fp[k + 1].events));
	out = read_output(out_path);
	CHECK(lines_in_order(&out, &tr.text));
	tu_bytes_free(&out);

	/* a trace that does not say its flushes restart the compression: the
	 * rest after the damage is lost, and said so */
	{
		static const char meta_key[] = "\"gz_flush\":\"full\"";
		unsigned char *m = memmem(tr.text.p, tr.text.n, meta_key, sizeof(meta_key) - 1);
		struct tu_bytes text = { 0 };
		char p2[PATH_MAX];
		struct gp_gz_sink *gz;
		int fd;

		CHECK(m != NULL);
		if (m) {
			memcpy(m + 12, "sync", 4); /* "gz_flush":"sync" */
			tu_path(p2, dir, "old.json.gz");
			fd = open(p2, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			CHECK_EQ_INT(gp_gz_open_fd(&gz, fd, 6), 0);
			/* the same flush points as the trace's own */
			off_t at_k = 0;

			for (size_t i = 0, at = 0; i <= tr.nfp; i++) {
				size_t upto = i < tr.nfp ? after_line(&tr.text, (size_t)tr.fp[i].events + 1) : tr.text.n;

				CHECK_EQ_INT(gp_gz_write(gz, tr.text.p + at, upto - at), 0);
				CHECK_EQ_INT(gp_gz_flush(gz), 0);
				if (i == k)
					at_k = lseek(fd, 0, SEEK_CUR); /* the sink writes at once */
				at = upto;
			}
			CHECK_EQ_INT(gp_gz_close(gz), 0);
			text = tu_read_file(p2, NULL);
			CHECK(at_k > 0 && (size_t)at_k < text.n);
			text.p[at_k] = 0xff; /* an invalid block after flush point k */
			tu_write_file(in_path, text.p, text.n);
			unlink(out_path);
			CHECK_EQ_INT(gp_trace_recover(in_path, out_path, 0, &res), 0);
			CHECK(res.gzip_lost_tail && res.gzip_gaps == 0 && gp_recover_damaged(&res));
			CHECK(res.events_kept <= tr.fp[k].events + 1);
			tu_bytes_free(&text);
			memcpy(m + 12, "full", 4);
		}
	}
	tu_bytes_free(&tr.gz);
	tu_bytes_free(&tr.text);
}

/* In place, a damaged trace's original is kept beside the repair; a trace
 * only cut short is not. An output that cannot be written is said to be the
 * output's fault. */
static void test_keep_original(void)
{
	static const char bad_line[] = "[\n" META ",\n{bad},\n{\"ph\":\"X\",\"ts\":5},\n";
	struct gp_recover_result res;
	struct tu_bytes before, orig;
	char sub[PATH_MAX], path[PATH_MAX], want[PATH_MAX + 8];

	tu_path(sub, dir, "keep");
	CHECK(mkdir(sub, 0755) == 0);
	tu_path(path, sub, "t.json.gz");
	write_gz(path, bad_line, sizeof(bad_line) - 1);
	before = tu_read_file(path, NULL);
	CHECK_EQ_INT(gp_trace_recover_in_place(path, &res), 0);
	snprintf(want, sizeof(want), "%s.orig", path);
	CHECK(strcmp(res.original, want) == 0);
	orig = tu_read_file(want, NULL);
	CHECK(orig.n == before.n && memcmp(orig.p, before.p, orig.n) == 0);
	CHECK_EQ_U64(dir_entries(sub), 2);
	tu_bytes_free(&orig);
	/* again: the first copy stays, the second gets the next name */
	write_gz(path, bad_line, sizeof(bad_line) - 1);
	CHECK_EQ_INT(gp_trace_recover_in_place(path, &res), 0);
	snprintf(want, sizeof(want), "%s.orig.1", path);
	CHECK(strcmp(res.original, want) == 0);
	CHECK_EQ_U64(dir_entries(sub), 3);
	tu_bytes_free(&before);

	/* missing output directory: the output's fault, not the input's */
	write_gz(in_path, bad_line, sizeof(bad_line) - 1);
	CHECK_EQ_INT(gp_trace_recover(in_path, "/nonexistent-dir/x.json.gz", 0, &res), -ENOENT);
	CHECK(res.output_failed);
	CHECK_EQ_INT(gp_trace_recover("/nonexistent-dir/in.json.gz", out_path, 0, &res), -ENOENT);
	CHECK(!res.output_failed);
}

int main(void)
{
	tu_mkdtemp(dir, "recover");
	tu_path(in_path, dir, "in.json.gz");
	tu_path(out_path, dir, "out.json.gz");
	TIMED(test_not_traces());
	TIMED(test_crafted());
	TIMED(test_complete_and_paths());
	TIMED(test_in_place());
	TIMED(test_keep_original());
	TIMED(test_gzip_gap());
	TIMED(test_write_failure());
	TIMED(test_corruption());
	TIMED(test_truncation());
	tu_rmtree(dir);
	return CHECK_DONE();
}
