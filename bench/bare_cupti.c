/*
 * The floor under any CUPTI-based tracer: a CUPTI subscriber that is not
 * gpuprof and does as little as CUPTI allows. Loaded like gpuprof
 * (CUDA_INJECTION64_PATH=libbare_cupti.so), it enables the activity kinds
 * named in BARE_CUPTI_KINDS (default "kernel,memory,copy,set": what the
 * issue's "bare CUPTI kernels + memory + copies" measured), counts the
 * records CUPTI hands back and drops them. No callbacks, no API records, no
 * NVTX, no writer, no trace. bench/overhead.sh's modes bare-native and
 * bare-tensor run the unprofiled program under it, so that what gpuprof's
 * recorder costs above what CUPTI itself costs can be read across processes.
 *
 * At exit it flushes CUPTI and says on stderr, in one line, how many records
 * of each kind came and how many CUPTI dropped; like gpuprof it never prints
 * to stdout and, on any failure, says one line and stays off.
 */
#include <cupti.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BARE_BUF_SIZE (8u << 20)

static atomic_ulong n_kernel, n_memory, n_copy, n_set, n_other, n_dropped;

static void CUPTIAPI buf_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
	/* calloc: CUPTI wants 8-byte alignment and, by default, zeroes itself */
	*buf = calloc(1, BARE_BUF_SIZE);
	*size = *buf ? BARE_BUF_SIZE : 0;
	*max_records = 0;
}

static void CUPTIAPI buf_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buf, size_t size,
				   size_t valid)
{
	CUpti_Activity *rec = NULL;
	size_t dropped = 0;
	(void)size;
	while (buf && valid && cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS) {
		switch (rec->kind) {
		case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		case CUPTI_ACTIVITY_KIND_KERNEL:
			atomic_fetch_add(&n_kernel, 1);
			break;
		case CUPTI_ACTIVITY_KIND_MEMORY2:
			atomic_fetch_add(&n_memory, 1);
			break;
		case CUPTI_ACTIVITY_KIND_MEMCPY:
			atomic_fetch_add(&n_copy, 1);
			break;
		case CUPTI_ACTIVITY_KIND_MEMSET:
			atomic_fetch_add(&n_set, 1);
			break;
		default:
			atomic_fetch_add(&n_other, 1);
		}
	}
	if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS)
		atomic_fetch_add(&n_dropped, dropped);
	free(buf);
}

static void at_exit(void)
{
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	fprintf(stderr, "bare_cupti: kernels=%lu memory=%lu copies=%lu sets=%lu other=%lu dropped=%lu\n",
		atomic_load(&n_kernel), atomic_load(&n_memory), atomic_load(&n_copy),
		atomic_load(&n_set), atomic_load(&n_other), atomic_load(&n_dropped));
}

static const struct {
	const char *name;
	CUpti_ActivityKind kind;
} kinds[] = {
	{"kernel", CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL},
	{"memory", CUPTI_ACTIVITY_KIND_MEMORY2},
	{"copy", CUPTI_ACTIVITY_KIND_MEMCPY},
	{"set", CUPTI_ACTIVITY_KIND_MEMSET},
};

/* Enables each kind named in the comma-separated list; 0 or -EINVAL. */
static int enable_kinds(const char *list)
{
	char buf[256];
	if (strlen(list) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, list);
	for (char *save = NULL, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		size_t i;
		for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
			if (strcmp(w, kinds[i].name) == 0)
				break;
		if (i == sizeof(kinds) / sizeof(kinds[0])) {
			fprintf(stderr, "bare_cupti: unknown kind '%s' in BARE_CUPTI_KINDS\n", w);
			return -EINVAL;
		}
		if (cuptiActivityEnable(kinds[i].kind) != CUPTI_SUCCESS) {
			fprintf(stderr, "bare_cupti: cannot enable %s\n", w);
			return -EINVAL;
		}
	}
	return 0;
}

__attribute__((visibility("default"))) int InitializeInjection(void)
{
	const char *list = getenv("BARE_CUPTI_KINDS");
	if (cuptiActivityRegisterCallbacks(buf_requested, buf_completed) != CUPTI_SUCCESS) {
		fprintf(stderr, "bare_cupti: cannot register buffers; off\n");
		return 1;
	}
	if (enable_kinds(list && *list ? list : "kernel,memory,copy,set") != 0) {
		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
			cuptiActivityDisable(kinds[i].kind);
		return 1;
	}
	atexit(at_exit);
	return 1;
}
