/* Stands in for libcupti in tests of the whole recorder without a GPU
 * (test_exits.py): every call the recorder makes succeeds and CUPTI never
 * has a record to hand over, so the trace holds the host events a test
 * program makes (NVTX, PyTorch's allocator entry points). Built under
 * libcupti's file name and put first on LD_LIBRARY_PATH (the recorder's
 * RUNPATH comes after it).
 *
 * gp_stub_cupti_hold(1) takes a lock that cuptiActivityFlushAll needs
 * until gp_stub_cupti_hold(0), as a program's thread inside CUDA holds
 * CUPTI's; $GP_STUB_FLUSH_MS makes each flush take that long. */
#include <cupti.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;

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
	(void)requested;
	(void)completed;
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

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
	(void)buffer;
	(void)valid;
	(void)record;
	return CUPTI_ERROR_MAX_LIMIT_REACHED;
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
