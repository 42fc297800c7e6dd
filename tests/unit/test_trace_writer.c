/* trace_writer: events of every field/arg type (hostile strings included)
 * come out as one JSON array that json-c parses, with exact field values,
 * exact timestamps, one event per line, "}," on every event line but the
 * last; flushes leave whole lines; misuse and I/O errors are reported while
 * the output stays valid JSON. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "testutil.h"
#include "gz_ring.h"
#include "gz_sink.h"
#include "trace_writer.h"

#define FFFD "\xEF\xBF\xBD"
#define N_BULK 5000

static char dir[PATH_MAX];

static struct gp_trace_writer *open_writer(const char *name, char *path)
{
	struct gp_trace_writer *tw = NULL;
	int fd;

	tu_path(path, dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(fd >= 0);
	CHECK_EQ_INT(gp_tw_open_fd(&tw, fd, 6), 0);
	return tw;
}

/* Decompresses the file; complete: the member must end (trailer checked). */
static struct tu_bytes inflate_file(const char *path, int complete)
{
	struct tu_bytes file = tu_read_file(path, NULL), out = { 0 };
	size_t used = 0;
	int zr = tu_gunzip(file.p, file.n, &out, &used);

	if (complete) {
		CHECK_EQ_INT(zr, Z_STREAM_END);
		CHECK_EQ_U64(used, file.n); /* one member, nothing after it */
	} else {
		CHECK(zr == Z_BUF_ERROR || zr == Z_OK);
	}
	tu_bytes_free(&file);
	return out;
}

/* Every line of a flushed-but-open stream is whole: "[" then "{...}," lines,
 * each a JSON object once the comma is dropped. Returns the event count. */
static size_t check_open_stream(const struct tu_bytes *t)
{
	const char *p = (const char *)t->p, *end = p + t->n;
	size_t events = 0;

	CHECK(t->n >= 2 && memcmp(p, "[\n", 2) == 0);
	CHECK(t->n > 0 && p[t->n - 1] == '\n');
	p += 2;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		struct json_object *o;

		CHECK(nl != NULL);
		CHECK(len >= 3 && p[0] == '{' && p[len - 2] == '}' && p[len - 1] == ',');
		o = len ? tu_parse(p, len - 1) : NULL;
		CHECK(o && json_object_is_type(o, json_type_object));
		json_object_put(o);
		events++;
		p += len + 1;
	}
	return events;
}

/* Checks the text of a closed trace: "[", event lines ending "},", the final
 * one ending "}", "]". Returns the parsed array. */
static struct json_object *check_closed_text(const struct tu_bytes *t, size_t want_events)
{
	const char *p = (const char *)t->p, *end = p + t->n;
	size_t lines = 0;
	struct json_object *arr;

	CHECK(t->n >= 2 && memcmp(p, "[\n", 2) == 0);
	CHECK(t->n >= 6 && memcmp(end - 4, "}\n]\n", 4) == 0);
	p += 2;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		CHECK(nl != NULL);
		if (lines < want_events - 1)
			CHECK(len >= 3 && p[0] == '{' && memcmp(p + len - 2, "},", 2) == 0);
		else if (lines == want_events - 1)
			CHECK(len >= 2 && p[0] == '{' && p[len - 1] == '}');
		else
			CHECK(len == 1 && p[0] == ']');
		lines++;
		p += len + 1;
	}
	CHECK_EQ_U64(lines, want_events + 1);
	arr = tu_parse((const char *)t->p, t->n);
	CHECK(arr && json_object_is_type(arr, json_type_array));
	if (arr)
		CHECK_EQ_U64(tu_len(arr), want_events);
	return arr;
}

static void check_string_member(struct json_object *o, const char *key,
				const char *want, size_t wn, int line)
{
	struct json_object *v = tu_get(o, key);

	if (!v || !json_object_is_type(v, json_type_string) ||
	    (size_t)json_object_get_string_len(v) != wn ||
	    memcmp(json_object_get_string(v), want, wn) != 0)
		CHECK_FAILED_("%s:%d (from line %d): member %s is not the expected string\n",
			      __FILE__, __LINE__, line, key);
	check_count++;
}

#define CHECK_STRM(o, key, lit) check_string_member(o, key, lit, sizeof(lit) - 1, __LINE__)

/* Keys of an object, in order, joined with ",". */
static void key_order(struct json_object *o, char *out, size_t n)
{
	out[0] = 0;
	if (!o || !json_object_is_type(o, json_type_object))
		return;
	json_object_object_foreach(o, k, v) {
		(void)v;
		if (out[0])
			strncat(out, ",", n - strlen(out) - 1);
		strncat(out, k, n - strlen(out) - 1);
	}
}

static void test_full(void)
{
	static const char hostile[] = "k<\"\\\n\x01\xff>";
	static const char hostile_dec[] = "k<\"\\\n\x01" FFFD ">";
	static const char arg_bytes[] = "nul\0mid\xC0\x80 \xE2\x82\xAC";
	static const char arg_dec[] = "nul\0mid" FFFD FFFD " \xE2\x82\xAC";
	char path[PATH_MAX], keys[256];
	struct gp_trace_writer *tw = open_writer("full.json.gz", path);
	struct gp_tw_stats st, st2;
	struct tu_bytes t;
	struct json_object *arr, *e, *args;
	size_t n_events = 0;
	struct stat sb;

	/* the meta event, as the profiler writes it */
	gp_tw_begin(tw, 'i', "gpuprof.meta", "gpuprof", 4242, 0, 0);
	gp_tw_field_str(tw, "s", "g");
	gp_tw_args_begin(tw);
	gp_tw_arg_u64(tw, "format", 1);
	gp_tw_arg_str(tw, "cmdline", hostile);
	CHECK_EQ_INT(gp_tw_end(tw), 0);
	n_events++;

	/* every field and arg type */
	gp_tw_begin(tw, 'X', hostile, "cat\"egory", 1000000000 + 424200, 7, 1234567);
	gp_tw_dur(tw, 2500);
	gp_tw_field_u64(tw, "id", UINT64_MAX);
	gp_tw_field_hex(tw, "addr", 0x7f00deadbeefull);
	gp_tw_field_str(tw, "bp", "e");
	gp_tw_arg_str(tw, "str", hostile); /* opens args by itself */
	gp_tw_arg_str_n(tw, "str_n", arg_bytes, sizeof(arg_bytes) - 1);
	gp_tw_arg_u64(tw, "u64", UINT64_MAX);
	gp_tw_arg_i64(tw, "i64", INT64_MIN);
	gp_tw_arg_hex(tw, "hex", 0xffffffffffffffffull);
	gp_tw_arg_bool(tw, "yes", 1);
	gp_tw_arg_bool(tw, "no", 0);
	gp_tw_arg_double(tw, "dbl", 0.25);
	gp_tw_arg_double(tw, "nan", NAN);
	gp_tw_arg_double(tw, "inf", -INFINITY);
	gp_tw_arg_raw(tw, "grid", "[1,2,3]", 7);
	gp_tw_arg_raw(tw, "empty_raw", "", 0);
	gp_tw_arg_str(tw, hostile, "key is hostile");
	CHECK_EQ_INT(gp_tw_end(tw), 0);
	n_events++;

	gp_tw_begin_n(tw, 'B', "ab\0cd", 5, NULL, -1, -2, -1500);
	CHECK_EQ_INT(gp_tw_end(tw), 0);
	n_events++;

	gp_tw_begin(tw, 'C', NULL, "c", 1, 2, INT64_MAX);
	gp_tw_args_begin(tw); /* empty args object */
	CHECK_EQ_INT(gp_tw_end(tw), 0);
	n_events++;

	/* cancelled: not written, not counted */
	gp_tw_begin(tw, 'i', "cancelled", "x", 1, 1, 1);
	gp_tw_arg_u64(tw, "a", 1);
	gp_tw_cancel(tw);

	CHECK_EQ_INT(gp_tw_flush(tw), 0);
	t = inflate_file(path, 0);
	CHECK_EQ_U64(check_open_stream(&t), n_events);
	CHECK(strstr((char *)t.p, "cancelled") == NULL);
	tu_bytes_free(&t);

	for (int i = 0; i < N_BULK; i++) {
		gp_tw_begin(tw, 'X', "bulk", "kernel", 4242, i % 7, (int64_t)i * 1000 + 1);
		gp_tw_dur(tw, i);
		gp_tw_arg_u64(tw, "i", (uint64_t)i);
		CHECK_EQ_INT(gp_tw_end(tw), 0);
		n_events++;
		if (i % 1000 == 999) {
			CHECK_EQ_INT(gp_tw_flush(tw), 0);
			t = inflate_file(path, 0);
			CHECK_EQ_U64(check_open_stream(&t), n_events);
			tu_bytes_free(&t);
		}
	}
	gp_tw_get_stats(tw, &st);
	CHECK_EQ_U64(st.events, n_events);
	CHECK_EQ_U64(st.flushes, 1 + N_BULK / 1000);
	CHECK_EQ_INT(gp_tw_error(tw), 0);

	gp_tw_begin(tw, 'i', "gpuprof.end", "gpuprof", 4242, 0, 9999999);
	gp_tw_field_str(tw, "s", "g");
	gp_tw_arg_bool(tw, "clean", 1);
	gp_tw_arg_bool(tw, "recovered", 0);
	n_events++;
	CHECK_EQ_INT(gp_tw_close(tw, &st2), 0);
	CHECK_EQ_U64(st2.events, n_events);
	CHECK_EQ_U64(st2.flushes, st.flushes);

	t = inflate_file(path, 1);
	CHECK_EQ_U64(st2.bytes_in, t.n);
	CHECK(stat(path, &sb) == 0);
	CHECK_EQ_U64(st2.bytes_out, (uint64_t)sb.st_size);
	/* exact text of timestamps: no float formatting anywhere */
	CHECK(strstr((char *)t.p, ",\"ts\":1234.567,\"dur\":2.500,") != NULL);
	CHECK(strstr((char *)t.p, ",\"ts\":-1.500}") != NULL);
	CHECK(strstr((char *)t.p, ",\"ts\":9223372036854775.807,") != NULL);
	CHECK(strstr((char *)t.p, "\"addr\":\"0x7f00deadbeef\"") != NULL);
	CHECK(strstr((char *)t.p, "\"nan\":null") != NULL);

	arr = check_closed_text(&t, n_events);
	e = arr ? tu_idx(arr, 0) : NULL;
	CHECK_STRM(e, "name", "gpuprof.meta");
	CHECK_STRM(e, "ph", "i");
	CHECK_STRM(e, "s", "g");
	CHECK_EQ_INT(json_object_get_int64(tu_get(e, "pid")), 4242);
	CHECK_STRM(tu_get(e, "args"), "cmdline", hostile_dec);
	key_order(e, keys, sizeof(keys));
	CHECK_STR(keys, "ph,name,cat,pid,tid,ts,s,args");

	e = arr ? tu_idx(arr, 1) : NULL;
	key_order(e, keys, sizeof(keys));
	CHECK_STR(keys, "ph,name,cat,pid,tid,ts,dur,id,addr,bp,args");
	CHECK_STRM(e, "ph", "X");
	CHECK_STRM(e, "name", hostile_dec);
	CHECK_STRM(e, "cat", "cat\"egory");
	CHECK_EQ_INT(json_object_get_int64(tu_get(e, "pid")), 1000424200);
	CHECK_EQ_INT(json_object_get_int64(tu_get(e, "tid")), 7);
	CHECK(json_object_get_double(tu_get(e, "ts")) == 1234.567);
	CHECK(json_object_get_double(tu_get(e, "dur")) == 2.5);
	CHECK(json_object_get_uint64(tu_get(e, "id")) == UINT64_MAX);
	CHECK_STRM(e, "addr", "0x7f00deadbeef");
	args = tu_get(e, "args");
	CHECK_STRM(args, "str", hostile_dec);
	CHECK_STRM(args, "str_n", arg_dec);
	CHECK(json_object_get_uint64(tu_get(args, "u64")) == UINT64_MAX);
	CHECK(json_object_get_int64(tu_get(args, "i64")) == INT64_MIN);
	CHECK_STRM(args, "hex", "0xffffffffffffffff");
	CHECK(json_object_is_type(tu_get(args, "yes"), json_type_boolean) &&
	      json_object_get_boolean(tu_get(args, "yes")));
	CHECK(json_object_is_type(tu_get(args, "no"), json_type_boolean) &&
	      !json_object_get_boolean(tu_get(args, "no")));
	CHECK(json_object_get_double(tu_get(args, "dbl")) == 0.25);
	CHECK(args && json_object_object_get_ex(args, "nan", NULL) && tu_get(args, "nan") == NULL);
	CHECK(args && json_object_object_get_ex(args, "inf", NULL) && tu_get(args, "inf") == NULL);
	CHECK(tu_len(tu_get(args, "grid")) == 3);
	CHECK(args && json_object_object_get_ex(args, "empty_raw", NULL) &&
	      tu_get(args, "empty_raw") == NULL);
	CHECK_STRM(args, hostile_dec, "key is hostile");

	e = arr ? tu_idx(arr, 2) : NULL;
	CHECK_STRM(e, "name", "ab\0cd");
	CHECK_STRM(e, "cat", "");
	CHECK_EQ_INT(json_object_get_int64(tu_get(e, "pid")), -1);
	CHECK(json_object_get_double(tu_get(e, "ts")) == -1.5);
	CHECK(tu_get(e, "args") == NULL);

	e = arr ? tu_idx(arr, 3) : NULL;
	CHECK_STRM(e, "name", "");
	CHECK(json_object_is_type(tu_get(e, "args"), json_type_object) &&
	      json_object_object_length(tu_get(e, "args")) == 0);

	for (int i = 0; arr && i < N_BULK; i++) {
		e = tu_idx(arr, (size_t)(4 + i));
		if (json_object_get_int64(tu_get(tu_get(e, "args"), "i")) != i ||
		    json_object_get_int64(tu_get(e, "tid")) != i % 7) {
			CHECK_FAILED_("%s:%d: bulk event %d wrong\n", __FILE__, __LINE__, i);
			break;
		}
	}
	e = arr ? tu_idx(arr, n_events - 1) : NULL;
	CHECK_STRM(e, "name", "gpuprof.end");
	CHECK(json_object_get_boolean(tu_get(tu_get(e, "args"), "clean")));
	json_object_put(arr);
	tu_bytes_free(&t);
}

/* Closing with no final event still ends in valid JSON. */
static void test_close_without_final(void)
{
	static const char minimal[] =
		"{\"ph\":\"i\",\"s\":\"g\",\"name\":\"gpuprof.end\",\"cat\":\"gpuprof\","
		"\"pid\":0,\"tid\":0,\"ts\":0.000,\"args\":{}}\n]\n";
	char path[PATH_MAX];
	struct gp_trace_writer *tw;
	struct gp_tw_stats st;
	struct tu_bytes t;
	struct json_object *arr;

	tw = open_writer("empty.json.gz", path);
	CHECK_EQ_INT(gp_tw_close(tw, &st), 0);
	CHECK_EQ_U64(st.events, 1);
	t = inflate_file(path, 1);
	CHECK(t.n == 2 + sizeof(minimal) - 1 && memcmp(t.p + 2, minimal, sizeof(minimal) - 1) == 0);
	arr = check_closed_text(&t, 1);
	json_object_put(arr);
	tu_bytes_free(&t);

	tw = open_writer("noend.json.gz", path);
	gp_tw_begin(tw, 'i', "gpuprof.meta", "gpuprof", 1, 0, 0);
	CHECK_EQ_INT(gp_tw_end(tw), 0);
	gp_tw_begin(tw, 'i', "cancelled final", "x", 1, 1, 1);
	gp_tw_cancel(tw);
	CHECK_EQ_INT(gp_tw_close(tw, NULL), 0);
	t = inflate_file(path, 1);
	arr = check_closed_text(&t, 2);
	CHECK_STRM(tu_idx(arr, 1), "name", "gpuprof.end");
	json_object_put(arr);
	tu_bytes_free(&t);

	CHECK_EQ_INT(gp_tw_close(NULL, NULL), 0);
	gp_tw_abandon(NULL);
}

static void test_misuse(void)
{
	char path[PATH_MAX];
	struct gp_trace_writer *tw = open_writer("misuse.json.gz", path);
	struct tu_bytes t;
	struct json_object *arr;

	CHECK_EQ_INT(gp_tw_end(tw), -EINVAL); /* nothing begun */
	CHECK_EQ_INT(gp_tw_error(tw), -EINVAL);
	gp_tw_begin(tw, 'i', "gpuprof.meta", "gpuprof", 1, 0, 0);
	CHECK_EQ_INT(gp_tw_end(tw), 0);
	gp_tw_begin(tw, 'X', "late field", "x", 1, 1, 1);
	gp_tw_arg_u64(tw, "a", 1);
	gp_tw_field_u64(tw, "late", 2); /* would land inside args */
	CHECK_EQ_INT(gp_tw_end(tw), -EINVAL);
	gp_tw_begin(tw, 'X', "late dur", "x", 1, 1, 1);
	gp_tw_args_begin(tw);
	gp_tw_dur(tw, 5);
	CHECK_EQ_INT(gp_tw_end(tw), -EINVAL);
	gp_tw_begin(tw, 'X', "fine", "x", 1, 1, 1); /* the writer carries on */
	CHECK_EQ_INT(gp_tw_end(tw), 0);
	/* a broken final event is replaced by the minimal one */
	gp_tw_begin(tw, 'i', "broken final", "x", 1, 1, 1);
	gp_tw_args_begin(tw);
	gp_tw_field_str(tw, "s", "g");
	CHECK_EQ_INT(gp_tw_close(tw, NULL), -EINVAL); /* the first error */
	t = inflate_file(path, 1);
	CHECK(strstr((char *)t.p, "late") == NULL);
	CHECK(strstr((char *)t.p, "broken") == NULL);
	arr = check_closed_text(&t, 3);
	CHECK_STRM(tu_idx(arr, 1), "name", "fine");
	CHECK_STRM(tu_idx(arr, 2), "name", "gpuprof.end");
	json_object_put(arr);
	tu_bytes_free(&t);
}

/* An event longer than GP_TW_MAX_LINE is dropped with -ENOMEM; later events
 * still go out. */
static void test_oversize(void)
{
	char path[PATH_MAX];
	struct gp_trace_writer *tw = open_writer("big.json.gz", path);
	size_t big_n = GP_TW_MAX_LINE;
	char *big = malloc(big_n);
	struct tu_bytes t;
	struct json_object *arr;

	memset(big, 'a', big_n);
	gp_tw_begin(tw, 'i', "gpuprof.meta", "gpuprof", 1, 0, 0);
	CHECK_EQ_INT(gp_tw_end(tw), 0);
	gp_tw_begin(tw, 'i', "big", "x", 1, 1, 1);
	gp_tw_arg_str_n(tw, "blob", big, big_n);
	CHECK_EQ_INT(gp_tw_end(tw), -ENOMEM);
	gp_tw_begin(tw, 'i', "almost big", "x", 1, 1, 1);
	gp_tw_arg_str_n(tw, "blob", big, big_n - 200); /* fits with the rest */
	CHECK_EQ_INT(gp_tw_end(tw), 0);
	gp_tw_begin(tw, 'i', "after", "x", 1, 1, 1);
	CHECK_EQ_INT(gp_tw_end(tw), 0);
	CHECK_EQ_INT(gp_tw_close(tw, NULL), -ENOMEM);
	t = inflate_file(path, 1);
	arr = check_closed_text(&t, 4);
	CHECK_STRM(tu_idx(arr, 1), "name", "almost big");
	CHECK_STRM(tu_idx(arr, 2), "name", "after");
	json_object_put(arr);
	tu_bytes_free(&t);
	free(big);
}

static void test_io_error(void)
{
	struct gp_trace_writer *tw = NULL;
	int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);

	CHECK_EQ_INT(gp_tw_open_fd(&tw, fd, 6), 0);
	gp_tw_begin(tw, 'i', "gpuprof.meta", "gpuprof", 1, 0, 0);
	CHECK_EQ_INT(gp_tw_end(tw), 0); /* buffered in the compressor */
	CHECK_EQ_INT(gp_tw_flush(tw), -ENOSPC);
	CHECK_EQ_INT(gp_tw_error(tw), -ENOSPC);
	gp_tw_begin(tw, 'i', "more", "x", 1, 0, 0);
	CHECK_EQ_INT(gp_tw_end(tw), -ENOSPC);
	CHECK_EQ_INT(gp_tw_close(tw, NULL), -ENOSPC);

	CHECK_EQ_INT(gp_tw_open_fd(&tw, -1, 6), -EINVAL);
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	CHECK_EQ_INT(gp_tw_open_fd(&tw, fd, 42), -EINVAL);
	CHECK(fcntl(fd, F_GETFD) == -1 && errno == EBADF); /* consumed anyway */

	/* abandon: nothing more written, fd released */
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	CHECK_EQ_INT(gp_tw_open_fd(&tw, fd, 6), 0);
	gp_tw_begin(tw, 'i', "x", "x", 1, 0, 0);
	gp_tw_abandon(tw);
	CHECK(fcntl(fd, F_GETFD) == -1 && errno == EBADF);
}

static int holds(const struct tu_bytes *t, const char *what)
{
	size_t n = strlen(what);

	for (size_t i = 0; i + n <= t->n; i++)
		if (!memcmp(t->p + i, what, n))
			return 1;
	return 0;
}

/* gp_tw_divert: the file's sink handed over holds the lines before it
 * (the caller ends it), the ring those after; the stats count both;
 * gp_tw_fail stops the writer. */
static void test_divert(void)
{
	char path[PATH_MAX], ring_path[PATH_MAX];
	struct gp_trace_writer *tw = open_writer("divert.json.gz", path);
	struct gp_gz_ring *ring = NULL;
	struct gp_gz_sink *file = NULL, *again = NULL;
	struct gp_tw_stats st;
	struct tu_bytes text;
	uint64_t file_out;
	int fd;

	CHECK_EQ_INT(gp_gz_ring_new(&ring, 1 << 20, 1), 0);
	gp_tw_begin(tw, 'i', "before", "x", 1, 0, 1000);
	CHECK_EQ_INT(gp_tw_end(tw), 0);
	gp_tw_begin(tw, 'i', "half", "x", 1, 0, 1000);
	CHECK_EQ_INT(gp_tw_divert(tw, ring, &file), -EINVAL); /* an event under way */
	CHECK(!file);
	gp_tw_cancel(tw);
	CHECK_EQ_INT(gp_tw_divert(tw, NULL, &file), -EINVAL);
	CHECK_EQ_INT(gp_tw_divert(tw, ring, &file), 0);
	CHECK(file != NULL);
	CHECK_EQ_INT(gp_tw_divert(tw, ring, &again), -EINVAL); /* once */
	CHECK(!again);
	file_out = gp_gz_bytes_out(file);
	gp_tw_begin(tw, 'i', "after", "x", 1, 0, 2000);
	CHECK_EQ_INT(gp_tw_end(tw), 0);
	CHECK_EQ_INT(gp_gz_write(file, "{}\n]\n", 6), 0);
	CHECK_EQ_INT(gp_gz_close(file), 0);
	text = inflate_file(path, 1);
	CHECK(holds(&text, "\"name\":\"before\""));
	CHECK(!holds(&text, "\"after\""));
	tu_bytes_free(&text);
	CHECK_EQ_INT(gp_gz_ring_seal(ring, 1), 0);
	tu_path(ring_path, dir, "divert_ring.json.gz");
	fd = open(ring_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK_EQ_INT(gp_gz_ring_dump(ring, fd, 0, "[\n", 2, "{}\n]\n", 5), 0);
	close(fd);
	text = inflate_file(ring_path, 1);
	CHECK(holds(&text, "\"name\":\"after\""));
	CHECK(!holds(&text, "\"before\""));
	tu_bytes_free(&text);
	gp_tw_get_stats(tw, &st);
	CHECK_EQ_INT(st.events, 2);
	CHECK(st.bytes_out > file_out);
	gp_tw_fail(tw, -EFBIG);
	CHECK_EQ_INT(gp_tw_flush(tw), -EFBIG);
	gp_tw_begin(tw, 'i', "stopped", "x", 1, 0, 3000);
	CHECK_EQ_INT(gp_tw_end(tw), -EFBIG);
	CHECK_EQ_INT(gp_tw_close(tw, NULL), -EFBIG);
	gp_gz_ring_free(ring);

	/* a file's writer told to stop: its flush says so (the writer thread
	 * stops there) */
	tw = open_writer("stopped.json.gz", path);
	gp_tw_fail(tw, -EFBIG);
	CHECK_EQ_INT(gp_tw_flush(tw), -EFBIG);
	gp_tw_abandon(tw);
}

int main(void)
{
	tu_mkdtemp(dir, "tw");
	test_full();
	test_close_without_final();
	test_misuse();
	test_oversize();
	test_io_error();
	test_divert();
	tu_rmtree(dir);
	return CHECK_DONE();
}
