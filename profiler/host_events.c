/* Hand-over of host-side events (NVTX ranges, OOMs) from the program's
 * threads to the writer thread. Producers append under a mutex held for a
 * copy; the writer swaps the whole array out, so it never holds the lock
 * while encoding. Bounded: past max_events, events are dropped and counted. */
#include "host_events.h"

#include "state.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct gp_host_ev *front, *back; /* front: producers; back: writer */
static size_t front_len, back_len, cap;

int gp_hev_init(size_t max_events)
{
	pthread_mutex_lock(&lock);
	if (!front) {
		front = calloc(max_events, sizeof(*front));
		back = calloc(max_events, sizeof(*back));
		if (!front || !back) {
			free(front);
			free(back);
			front = back = NULL;
			pthread_mutex_unlock(&lock);
			return -ENOMEM;
		}
		cap = max_events;
	}
	pthread_mutex_unlock(&lock);
	return 0;
}

static void free_names(struct gp_host_ev *evs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(evs[i].heap_name);
		evs[i].heap_name = NULL;
	}
}

int gp_hev_push(struct gp_host_ev *ev, const char *name, size_t n)
{
	char *heap_name = NULL;

	if (n > 65535)
		n = 65535; /* names longer than this are cut: one trace line stays sane */
	if (name && n > GP_HEV_INLINE_NAME) {
		heap_name = malloc(n);
		if (heap_name)
			memcpy(heap_name, name, n);
		else
			n = GP_HEV_INLINE_NAME;
	}
	ev->name_len = (uint16_t)(name ? n : 0);
	ev->heap_name = heap_name;
	if (name && !heap_name)
		memcpy(ev->name, name, n);

	pthread_mutex_lock(&lock);
	if (!front || front_len == cap) {
		pthread_mutex_unlock(&lock);
		free(heap_name);
		atomic_fetch_add(&gp_rec.dropped_host, 1);
		return -ENOSPC;
	}
	front[front_len++] = *ev;
	pthread_mutex_unlock(&lock);
	return 0;
}

size_t gp_hev_take(struct gp_host_ev **out)
{
	free_names(back, back_len);
	pthread_mutex_lock(&lock);
	struct gp_host_ev *t = back;
	back = front;
	back_len = front_len;
	front = t;
	front_len = 0;
	pthread_mutex_unlock(&lock);
	*out = back;
	return back_len;
}

const char *gp_hev_name(const struct gp_host_ev *ev, size_t *len)
{
	*len = ev->name_len;
	return ev->heap_name ? ev->heap_name : ev->name;
}

uint32_t gp_gettid(void)
{
	static __thread uint32_t cached;
	if (!cached)
		cached = (uint32_t)syscall(SYS_gettid);
	return cached;
}

/* CUPTI's own clock on Linux is CLOCK_REALTIME in ns (cupti_activity.h,
 * cuptiActivityRegisterTimestampCallback); reading it here through the vDSO
 * costs tens of ns, where a call into CUPTI may cost more on every NVTX range. */
uint64_t gp_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
