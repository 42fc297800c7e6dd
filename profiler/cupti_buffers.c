/* CUPTI activity buffers: a bounded pool and the queue of completed buffers.
 *
 * CUPTI asks for buffers from the threads that produce records and returns
 * them full from its own thread (or from cuptiActivityFlushAll's caller).
 * Both callbacks only move pointers under a short lock; the writer thread
 * decodes. When the pool's memory bound is reached a request gets no buffer
 * and CUPTI drops those records: they are counted, never waited for.
 *
 * Buffers are handed to CUPTI already zeroed (CUPTI needs them so): fresh
 * ones from calloc, used ones zeroed by the writer thread when it gives them
 * back. Otherwise CUPTI zeroes each buffer itself, in the program's thread
 * that asked for it, inside a CUDA call. */
#include "cupti_buffers.h"

#include "state.h"

#include <cupti.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static struct gp_cupti_buf *free_list;                 /* descriptors with data */
static struct gp_cupti_buf *done_head, *done_tail;      /* completed, oldest first */
static struct gp_cupti_buf *outstanding;                /* handed to CUPTI */
static size_t buf_size, max_buffers, nbuffers;
static int woken;

int gp_bufs_init(size_t size, size_t max_bytes)
{
	buf_size = size;
	max_buffers = max_bytes / size;
	if (max_buffers < 4)
		max_buffers = 4;
	return 0;
}

/* Descriptors of buffers CUPTI holds are kept on a list keyed by data pointer,
 * since the completion callback gives back only the pointer. */
static struct gp_cupti_buf *take_outstanding(uint8_t *data)
{
	struct gp_cupti_buf **pp = &outstanding;
	for (; *pp; pp = &(*pp)->next) {
		if ((*pp)->data == data) {
			struct gp_cupti_buf *b = *pp;
			*pp = b->next;
			b->next = NULL;
			return b;
		}
	}
	return NULL;
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	struct gp_cupti_buf *b = NULL;

	*buffer = NULL;
	*size = 0;
	*max_records = 0;
	/* A fork()ed child must not touch locks the parent's threads may have held. */
	if (atomic_load(&gp_rec.state) == GP_REC_FORKED)
		return;
	pthread_mutex_lock(&lock);
	if (free_list) {
		b = free_list;
		free_list = b->next;
	} else if (nbuffers < max_buffers) {
		b = calloc(1, sizeof(*b));
		if (b) {
			/* calloc: malloc's alignment (16) is more than CUPTI's 8, and
			 * fresh pages come zeroed without a memset here */
			b->data = calloc(1, buf_size);
			if (!b->data) {
				free(b);
				b = NULL;
			} else {
				nbuffers++;
			}
		}
	}
	if (b) {
		b->next = outstanding;
		outstanding = b;
	}
	pthread_mutex_unlock(&lock);
	if (!b) {
		atomic_fetch_add(&gp_rec.dropped_buffers, 1);
		return;
	}
	*buffer = b->data;
	*size = buf_size;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *data,
				      size_t size, size_t valid)
{
	size_t dropped = 0;
	(void)size;

	if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS && dropped)
		atomic_fetch_add(&gp_rec.dropped_cupti, dropped);
	if (!data || atomic_load(&gp_rec.state) == GP_REC_FORKED)
		return;
	pthread_mutex_lock(&lock);
	struct gp_cupti_buf *b = take_outstanding(data);
	if (!b) {
		/* Not ours: someone else (torch.profiler) registered callbacks and
		 * CUPTI gave us their buffer. It is not ours to free or decode. */
		pthread_mutex_unlock(&lock);
		return;
	}
	b->valid = valid;
	if (valid == 0) {
		/* nothing valid, but CUPTI may have begun a record: zeroed again */
		memset(b->data, 0, buf_size);
		b->next = free_list;
		free_list = b;
	} else {
		if (done_tail)
			done_tail->next = b;
		else
			done_head = b;
		done_tail = b;
		pthread_cond_signal(&cond);
	}
	pthread_mutex_unlock(&lock);
}

/* Whether CUPTI may count on the buffers it is given being zeroed: true
 * for ours; set back to false while someone else's callbacks (torch.profiler)
 * hand out buffers. Older CUPTI may not know the attribute: it then zeroes
 * every buffer itself, as before. */
void gp_bufs_zeroed(int ours)
{
	uint8_t zeroed = ours ? 1 : 0;
	size_t len = sizeof(zeroed);
	cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &len, &zeroed);
}

int gp_bufs_register(void)
{
	gp_bufs_zeroed(1);
	return (int)cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
}

struct gp_cupti_buf *gp_bufs_take_completed(void)
{
	pthread_mutex_lock(&lock);
	struct gp_cupti_buf *l = done_head;
	done_head = done_tail = NULL;
	pthread_mutex_unlock(&lock);
	return l;
}

/* Called by the writer thread: the zeroing happens here, off the program's
 * threads. */
void gp_bufs_release(struct gp_cupti_buf *b)
{
	memset(b->data, 0, buf_size);
	pthread_mutex_lock(&lock);
	b->valid = 0;
	b->next = free_list;
	free_list = b;
	pthread_mutex_unlock(&lock);
}

void gp_bufs_wait(int ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	ts.tv_sec += ms / 1000 + ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&lock);
	while (!done_head && !woken) {
		if (pthread_cond_timedwait(&cond, &lock, &ts) == ETIMEDOUT)
			break;
	}
	woken = 0;
	pthread_mutex_unlock(&lock);
}

void gp_bufs_wake(void)
{
	pthread_mutex_lock(&lock);
	woken = 1;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&lock);
}
