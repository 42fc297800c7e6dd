/* Runs the fuzz target's entry point (fuzz_reader.c) over every file of the
 * directories given, plus inputs too large to keep in the repository, so
 * that any compiler's sanitizer build exercises the reader on hostile
 * input. Exit 0 unless a file cannot be read; crashes are the sanitizers'
 * to report. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t cap = 0, n = 0;
	int err = 0;

	if (!f) {
		perror(path);
		return -1;
	}
	for (;;) {
		size_t got;

		if (n == cap) {
			uint8_t *b = realloc(buf, cap ? cap * 2 : 65536);

			if (!b) {
				err = -1;
				goto cleanup;
			}
			buf = b;
			cap = cap ? cap * 2 : 65536;
		}
		got = fread(buf + n, 1, cap - n, f);
		if (!got)
			break;
		n += got;
	}
	LLVMFuzzerTestOneInput(buf, n);
cleanup:
	fclose(f);
	free(buf);
	return err;
}

/* A valid beginning, then body repeated, then the end of the array. */
static void run_made(const char *body, size_t repeat)
{
	size_t body_len = strlen(body);
	static const char head[] =
		"[\n{\"ph\":\"i\",\"s\":\"g\",\"name\":\"gpuprof.meta\",\"pid\":7,\"tid\":0,\"ts\":0,"
		"\"args\":{\"format\":1,\"pid\":7,\"ts_base_ns\":1000,\"mode\":\"tensor\"}},\n";
	size_t n = strlen(head) + body_len * repeat + 3, off;
	uint8_t *buf = malloc(n);

	if (!buf)
		return;
	memcpy(buf, head, strlen(head));
	off = strlen(head);
	for (size_t i = 0; i < repeat; i++, off += body_len)
		memcpy(buf + off, body, body_len);
	memcpy(buf + off, "\n]\n", 3);
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
}

int main(int argc, char **argv)
{
	int files = 0, failed = 0;

	for (int i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		struct dirent *e;

		if (!d) {
			perror(argv[i]);
			return 1;
		}
		while ((e = readdir(d)) != NULL) {
			char path[4096];

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			failed |= run_file(path) != 0;
			files++;
		}
		closedir(d);
	}
	/* deep nesting */
	run_made("{\"a\":", 200000);
	run_made("[", 200000);
	/* pushes that are never popped */
	run_made("{\"ph\":\"B\",\"name\":\"fwd:<M>\",\"cat\":\"nvtx\",\"pid\":7,\"tid\":1,\"ts\":1.0},\n",
		 20000);
	/* every prefix of a small valid trace: each is a cut-short trace */
	{
		static const char t[] =
			"[\n{\"ph\":\"i\",\"s\":\"g\",\"name\":\"gpuprof.meta\",\"pid\":7,\"tid\":0,\"ts\":0,"
			"\"args\":{\"format\":1,\"pid\":7,\"ts_base_ns\":1000,\"mode\":\"tensor\"}},\n"
			"{\"ph\":\"X\",\"name\":\"cudaMallocAsync\",\"cat\":\"cuda_runtime\",\"pid\":7,\"tid\":9,"
			"\"ts\":1.0,\"dur\":5.0,\"args\":{\"corr\":3}},\n"
			"{\"ph\":\"B\",\"name\":\"fwd:<M>\",\"cat\":\"nvtx\",\"pid\":7,\"tid\":9,\"ts\":0.5},\n"
			"{\"ph\":\"i\",\"s\":\"t\",\"name\":\"alloc\",\"cat\":\"memory\",\"pid\":1000000700,"
			"\"tid\":7,\"ts\":2.0,\"args\":{\"addr\":\"0x1000\",\"bytes\":512,\"kind\":\"device\","
			"\"device\":0,\"corr\":3,\"async\":true,\"pool\":\"0x9\",\"pool_size\":2097152}},\n"
			"{\"ph\":\"i\",\"s\":\"p\",\"name\":\"oom\",\"cat\":\"memory\",\"pid\":7,\"tid\":9,"
			"\"ts\":3.0,\"args\":{\"api\":\"cudaMallocAsync\",\"bytes\":99999999,\"device\":0,"
			"\"free\":10,\"total\":100}},\n"
			"{\"ph\":\"i\",\"s\":\"t\",\"name\":\"step:1\",\"cat\":\"nvtx\",\"pid\":7,\"tid\":9,\"ts\":4.0},\n"
			"{\"ph\":\"E\",\"name\":\"\",\"cat\":\"nvtx\",\"pid\":7,\"tid\":9,\"ts\":6.0},\n"
			"{\"ph\":\"i\",\"s\":\"g\",\"name\":\"gpuprof.end\",\"pid\":7,\"tid\":0,\"ts\":9.0,"
			"\"args\":{\"clean\":true}}\n]\n";

		for (size_t n = 0; n <= sizeof(t) - 1; n++)
			LLVMFuzzerTestOneInput((const uint8_t *)t, n);
	}
	printf("%d files run through the reader\n", files);
	return failed;
}
