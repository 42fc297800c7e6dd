/* CUPTI's activity buffers (cupti_buffers.c): a bounded pool that CUPTI
 * fills on its threads and the writer thread empties. */
#ifndef GPUPROF_CUPTI_BUFFERS_H
#define GPUPROF_CUPTI_BUFFERS_H

#include <stddef.h>
#include <stdint.h>

struct gp_cupti_buf {
	uint8_t *data;      /* owned by the pool */
	size_t valid;       /* bytes of records */
	struct gp_cupti_buf *next;
};
int gp_bufs_init(size_t buf_size, size_t max_bytes);
/* Registers the CUPTI buffer callbacks. 0 or a CUptiResult (positive). */
int gp_bufs_register(void);
/* Tells CUPTI whether its buffers come zeroed (ours do); see cupti_buffers.c. */
void gp_bufs_zeroed(int ours);
/* Writer: takes every completed buffer (a list, oldest first). */
struct gp_cupti_buf *gp_bufs_take_completed(void);
void gp_bufs_release(struct gp_cupti_buf *b);
/* Writer waits up to ms for work; returns early when a buffer completes or
 * gp_bufs_wake() is called. */
void gp_bufs_wait(int ms);
void gp_bufs_wake(void);

#endif
