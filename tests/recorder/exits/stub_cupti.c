/* Stands in for libcupti in tests of the whole recorder without a GPU
 * (test_exits.py): every call the recorder makes succeeds and CUPTI never
 * has a record to hand over, so the trace holds the host events a test
 * program makes (NVTX, PyTorch's allocator entry points). Built under
 * libcupti's file name and put first on LD_LIBRARY_PATH (the recorder's
 * RUNPATH comes after it).
 *
 * gp_stub_cupti_hold(1) takes a lock that cuptiActivityFlushAll needs
 * until gp_stub_cupti_hold(0), as a program's thread inside CUDA holds
 * CUPTI's; $GP_STUB_FLUSH_MS makes each flush take that long.
 *
 * gp_stub_cupti_kernel(name) is a kernel launch as CUPTI sees it: on the
 * calling (program's) thread a record of it goes into the current activity
 * buffer, asked of the recorder's buffer callback when there is none; full
 * buffers are handed back by the stand-in's own thread (CUPTI's), the
 * partly filled one by cuptiActivityFlushAll on its caller's thread (the
 * recorder's writer), so that the buffer pool's hand-over runs on the
 * threads it does under CUDA. $GP_STUB_BUFFER_RECORDS: a buffer counts as
 * full after that many records (default: as many as fit), so that buffers
 * go round the pool often. */
#include <cupti.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;

/* The recorder's buffer callbacks (cuptiActivityRegisterCallbacks). */
static CUpti_BuffersCallbackRequestFunc buffer_requested;
static CUpti_BuffersCallbackCompleteFunc buffer_completed;

/* Records: the buffer being filled and the full ones not yet handed back.
 * The lock is held while buffers are handed back, so a flush returns only
 * once every record made before it is with the recorder. */
struct full_buf {
	uint8_t *data;
	size_t size, valid;
	struct full_buf *next;
};
static pthread_mutex_t records = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *cur;
static size_t cur_size, cur_valid;
static struct full_buf *full_head, **full_tail = &full_head;
static uint32_t correlation;
static int cupti_thread_started;

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&t, NULL);
}

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Under records: the current buffer, if it holds a record, to the full ones. */
static void retire_current(void)
{
	if (!cur || cur_valid == 0)
		return;
	struct full_buf *f = malloc(sizeof(*f));
	if (!f)
		abort(); /* a test's stand-in: no way to go on */
	f->data = cur;
	f->size = cur_size;
	f->valid = cur_valid;
	f->next = NULL;
	*full_tail = f;
	full_tail = &f->next;
	cur = NULL;
	cur_size = cur_valid = 0;
}

/* Under records: every full buffer handed back to the recorder, oldest first. */
static void hand_back(void)
{
	struct full_buf *f = full_head;
	full_head = NULL;
	full_tail = &full_head;
	while (f) {
		struct full_buf *next = f->next;
		buffer_completed(NULL, 0, f->data, f->size, f->valid);
		free(f);
		f = next;
	}
}

/* CUPTI's own thread: hands back full buffers every few ms. */
static void *cupti_thread(void *arg)
{
	(void)arg;
	for (;;) {
		sleep_ms(3);
		pthread_mutex_lock(&records);
		hand_back();
		pthread_mutex_unlock(&records);
	}
	return NULL;
}

__attribute__((visibility("default"))) int gp_stub_cupti_kernel(const char *name)
{
	CUpti_ActivityKernel10 k;
	int ok = 0;

	pthread_mutex_lock(&records);
	if (!cupti_thread_started) {
		pthread_t t;
		if (pthread_create(&t, NULL, cupti_thread, NULL) != 0)
			goto out;
		pthread_detach(t);
		cupti_thread_started = 1;
	}
	if (!cur && buffer_requested) {
		const char *per = getenv("GP_STUB_BUFFER_RECORDS");
		size_t max_records = 0;
		buffer_requested(&cur, &cur_size, &max_records);
		cur_valid = 0;
		if (cur && cur_size < sizeof(k))
			cur = NULL;
		if (cur && per && atol(per) > 0 && (size_t)atol(per) * sizeof(k) < cur_size)
			cur_size = (size_t)atol(per) * sizeof(k);
	}
	if (!cur)
		goto out; /* no buffer: CUPTI drops the record */
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = now_ns();
	k.end = k.start + 1000;
	k.streamId = 7;
	k.correlationId = ++correlation;
	k.name = name; /* borrowed: the caller's name lives as long as the process */
	k.gridX = k.gridY = k.gridZ = 1;
	k.blockX = 32;
	k.blockY = k.blockZ = 1;
	memcpy(cur + cur_valid, &k, sizeof(k));
	cur_valid += sizeof(k);
	if (cur_size - cur_valid < sizeof(k))
		retire_current();
	ok = 1;
out:
	pthread_mutex_unlock(&records);
	return ok ? 0 : -1;
}

__attribute__((visibility("default"))) void gp_stub_cupti_hold(int on)
{
	if (on)
		pthread_mutex_lock(&held);
	else
		pthread_mutex_unlock(&held);
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
	(void)flag;
	const char *ms = getenv("GP_STUB_FLUSH_MS");
	long n = ms ? atol(ms) : 0;
	pthread_mutex_lock(&held);
	if (n > 0) {
		struct timespec t = { n / 1000, (n % 1000) * 1000000L };
		nanosleep(&t, NULL);
	}
	pthread_mutex_unlock(&held);
	/* with records: the one being filled and the full ones handed back
	 * here, on the flushing thread */
	pthread_mutex_lock(&records);
	if (buffer_completed) {
		retire_current();
		hand_back();
	}
	pthread_mutex_unlock(&records);
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
				    void *userdata)
{
	(void)callback;
	(void)userdata;
	static int handle;
	*subscriber = (CUpti_SubscriberHandle)&handle;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
	(void)subscriber;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
					 CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	(void)enable;
	(void)subscriber;
	(void)domain;
	(void)cbid;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
	(void)type;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
						    CUpti_BuffersCallbackCompleteFunc completed)
{
	pthread_mutex_lock(&records);
	buffer_requested = requested;
	buffer_completed = completed;
	pthread_mutex_unlock(&records);
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind)
{
	(void)kind;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind)
{
	(void)kind;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
	(void)cbid;
	(void)enable;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable)
{
	(void)cbid;
	(void)enable;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlushPeriod(uint32_t time)
{
	(void)time;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t *size, void *value)
{
	(void)attr;
	(void)size;
	(void)value;
	return CUPTI_SUCCESS;
}

/* The records gp_stub_cupti_kernel wrote: kernels, one after another. */
CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
	size_t at = *record ? (size_t)((uint8_t *)*record - buffer) + sizeof(CUpti_ActivityKernel10) : 0;
	if (!buffer || at + sizeof(CUpti_ActivityKernel10) > valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*record = (CUpti_Activity *)(buffer + at);
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t stream, size_t *dropped)
{
	(void)context;
	(void)stream;
	*dropped = 0;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char **name)
{
	(void)domain;
	(void)cbid;
	*name = NULL;
	return CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult CUPTIAPI cuptiGetContextId(CUcontext context, uint32_t *id)
{
	(void)context;
	*id = 0;
	return CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult CUPTIAPI cuptiGetDeviceId(CUcontext context, uint32_t *id)
{
	(void)context;
	*id = 0;
	return CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult CUPTIAPI cuptiGetStreamIdEx(CUcontext context, CUstream stream, uint8_t per_thread, uint32_t *id)
{
	(void)context;
	(void)stream;
	(void)per_thread;
	*id = 0;
	return CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char **str)
{
	*str = result == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : "CUPTI_ERROR (stand-in)";
	return CUPTI_SUCCESS;
}
